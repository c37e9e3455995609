"""An in-memory typed task graph (networkx) that every store reads and writes whole.

Nodes are keyed by local id; a node's global uid is '<task id>/<local id>'. The Task node
itself has local id '' and uid equal to the task id.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from typing import Any, Iterator

import networkx as nx

from .errors import SchemaError
from .schema import SCHEMA, Schema, validate_properties

TASK_LOCAL_ID = ""
PROBABILITY_TOLERANCE = 1e-6


def uid_of(task_id: str, local_id: str) -> str:
    return task_id if local_id == TASK_LOCAL_ID else f"{task_id}/{local_id}"


class TaskGraph:
    """One task as a typed property graph: the unit every store puts and gets.

    A task is read and written whole, so every store (embedded or a server) sees the same
    nodes, edges and content hash; builders (`tasks.build`) make one, environments compile one.
    The Task node itself has local id ``""``; other nodes get the uid ``<task id>/<local id>``.

    Parameters
    ----------
    task_id : str
        The task's id, e.g. ``"user/demo"``; a non-empty string.
    family : str
        The `family` property of its Task node: the kind of task (``"neuronav/graph"``),
        which `tasks.family_of` maps to its family.
    name : str, optional
        The task's name; by default the last part of the id.
    schema : Schema, optional
        The node and relationship types it may hold; the built-in schema by default.
    **task_props
        Further properties of the Task node (``n_actions=2``, ...).

    Raises
    ------
    SchemaError
        The task id is not a non-empty string.

    Examples
    --------
    >>> from graphstore import TaskGraph
    >>> graph = TaskGraph("user/demo", "user", n_actions=2)
    >>> graph.add_node("s0", "State", index=0)
    'user/demo/s0'
    >>> graph.task
    {'family': 'user', 'name': 'demo', 'n_actions': 2}
    >>> graph
    TaskGraph('user/demo', family='user', nodes=2, edges=0)
    """

    def __init__(self, task_id: str, family: str, name: str | None = None, schema: Schema = SCHEMA, **task_props: Any):
        if not isinstance(task_id, str) or not task_id.strip():
            raise SchemaError(f"task id must be a non-empty string, got {task_id!r}")
        self.task_id = task_id
        self.schema = schema
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.graph.add_node(
            TASK_LOCAL_ID,
            label="Task",
            props={"family": family, "name": name or task_id.rsplit("/", 1)[-1], **task_props},
        )

    # -- building -----------------------------------------------------------------
    @property
    def task(self) -> dict[str, Any]:
        """Properties of the Task node (mutable)."""
        return self.graph.nodes[TASK_LOCAL_ID]["props"]

    @property
    def family(self) -> str:
        return self.task["family"]

    def add_node(self, local_id: str, label: str, /, **props: Any) -> str:
        if not local_id:
            raise SchemaError(f"task {self.task_id!r}: a node needs a non-empty local id")
        if local_id in self.graph:
            raise SchemaError(f"task {self.task_id!r}: node {local_id!r} added twice")
        self.schema.node_type(label)
        self.graph.add_node(local_id, label=label, props={k: v for k, v in props.items() if v is not None})
        return uid_of(self.task_id, local_id)

    def add_edge(self, source: str, target: str, rel: str, /, **props: Any) -> None:
        for end in (source, target):
            if end not in self.graph:
                raise SchemaError(f"task {self.task_id!r}: {rel} edge {source!r} -> {target!r}: no node {end!r}")
        self.graph.add_edge(source, target, rel=rel, props={k: v for k, v in props.items() if v is not None})

    # -- reading ------------------------------------------------------------------
    def label(self, local_id: str) -> str:
        return self.graph.nodes[local_id]["label"]

    def props(self, local_id: str) -> dict[str, Any]:
        return self.graph.nodes[local_id]["props"]

    def nodes(self, label: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        for local_id, data in self.graph.nodes(data=True):
            if label is None or data["label"] == label:
                yield local_id, data["props"]

    def edges(self, rel: str | None = None) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for source, target, data in self.graph.edges(data=True):
            if rel is None or data["rel"] == rel:
                yield source, target, data["props"]

    def copy(self, task_id: str | None = None) -> "TaskGraph":
        """An independent copy (property dicts included), under `task_id` if given: a changed
        version of a task starts as a copy, so the original is never touched."""
        out = TaskGraph(task_id or self.task_id, self.family, schema=self.schema)
        out.graph = self.graph.copy()
        for node in out.graph.nodes:
            out.graph.nodes[node]["props"] = dict(out.graph.nodes[node]["props"])
        for _, _, data in out.graph.edges(data=True):
            data["props"] = dict(data["props"])
        out.task.pop("content_hash", None)
        return out

    def count(self, label: str) -> int:
        return sum(1 for _ in self.nodes(label))

    # -- validation and identity ----------------------------------------------------
    def validate(self) -> None:
        """Check every node and edge against the schema and every MOVE distribution sums to 1."""
        for local_id, data in self.graph.nodes(data=True):
            node_type = self.schema.node_type(data["label"])
            declared = tuple(p for p in node_type.properties if p.name not in ("uid", "task"))
            owner = f"task {self.task_id!r}, {data['label']} node {local_id or '(task)'!r}"
            data["props"] = validate_properties(owner, declared, data["props"])
        sums: dict[tuple[str, int], float] = defaultdict(float)
        for source, target, data in self.graph.edges(data=True):
            rel = self.schema.rel_type(data["rel"])
            pair = (self.label(source), self.label(target))
            owner = f"task {self.task_id!r}, {data['rel']} edge {source or '(task)'!r} -> {target!r}"
            if pair not in rel.endpoints:
                allowed = ", ".join(f"{a}->{b}" for a, b in rel.endpoints)
                raise SchemaError(f"{owner}: {pair[0]}->{pair[1]} not allowed (allowed: {allowed})")
            data["props"] = validate_properties(owner, rel.properties, data["props"])
            if data["rel"] == "MOVE":
                p = data["props"]["p"]
                if not 0.0 <= p <= 1.0:
                    raise SchemaError(f"{owner}: action {data['props']['action']}: probability {p} outside [0, 1]")
                sums[(source, data["props"]["action"])] += p
        for (source, action), total in sums.items():
            if abs(total - 1.0) > PROBABILITY_TOLERANCE:
                raise SchemaError(
                    f"task {self.task_id!r}, node {source!r}, action {action}: "
                    f"probabilities of MOVE edges sum to {total:.6g}, not 1"
                )

    def canonical(self) -> dict[str, Any]:
        """A deterministic plain-data form: sorted nodes and edges, no content hash."""
        nodes = []
        for local_id, data in self.graph.nodes(data=True):
            props = {k: v for k, v in data["props"].items() if k != "content_hash"}
            nodes.append([local_id, data["label"], props])
        edges = [[s, t, d["rel"], d["props"]] for s, t, d in self.graph.edges(data=True)]
        nodes.sort(key=lambda n: (n[1], n[0]))
        edges.sort(key=lambda e: json.dumps(e, sort_keys=True))
        return {"task_id": self.task_id, "nodes": nodes, "edges": edges}

    def content_hash(self) -> str:
        text = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def seal(self) -> "TaskGraph":
        """Validate and stamp the content hash; stores call this before writing."""
        self.validate()
        self.task["content_hash"] = self.content_hash()
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskGraph) and self.canonical() == other.canonical()

    def __repr__(self) -> str:
        return (
            f"TaskGraph({self.task_id!r}, family={self.family!r}, nodes={len(self.graph)}, "
            f"edges={self.graph.number_of_edges()})"
        )
