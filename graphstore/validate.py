"""Explain what a hand-written task (Cypher, Neo4j Browser, Turtle) lacks before it can run.

`TaskGraph.validate` stops at the first problem; authors want the whole list, in words
that name the node and action.
"""

from __future__ import annotations

from collections import defaultdict

from .errors import GraphStoreError
from .schema import validate_properties
from .taskgraph import PROBABILITY_TOLERANCE, TASK_LOCAL_ID, TaskGraph


def explain(graph: TaskGraph) -> list[str]:
    """Every problem found in `graph`, one sentence each; empty if the task can run."""
    problems: list[str] = []
    schema = graph.schema
    for local_id, data in graph.graph.nodes(data=True):
        declared = tuple(p for p in schema.node_type(data["label"]).properties if p.name not in ("uid", "task"))
        try:
            validate_properties(f"{data['label']} {local_id or '(task)'!r}", declared, data["props"])
        except GraphStoreError as exc:
            problems.append(str(exc))
    starts = [t for s, t, _ in graph.edges("START") if s == TASK_LOCAL_ID]
    if not starts:
        problems.append("no start state: add (:Task)-[:START]->(:State) from the Task node to the first state")
    elif len(starts) > 1:
        problems.append(f"{len(starts)} START edges ({', '.join(sorted(starts))}); a task has one start state")
    indices: dict[int, list[str]] = defaultdict(list)
    for local_id, props in graph.nodes("State"):
        if isinstance(props.get("index"), int):
            indices[props["index"]].append(local_id)
    for index, ids in sorted(indices.items()):
        if len(ids) > 1:
            problems.append(f"states {', '.join(sorted(ids))} share index {index}")
    if indices and sorted(indices) != list(range(len(indices))):
        problems.append(f"state indices must be 0..{len(indices) - 1}; found {sorted(indices)}")
    sums: dict[tuple[str, int], float] = defaultdict(float)
    for source, target, data in graph.graph.edges(data=True):
        rel = data["rel"]
        pair = (graph.label(source), graph.label(target))
        if pair not in schema.rel_type(rel).endpoints:
            problems.append(f"{rel} edge {source or '(task)'!r} -> {target!r} connects {pair[0]} to {pair[1]}")
        if rel == "MOVE":
            action, p = data["props"].get("action"), data["props"].get("p")
            if action is None or p is None:
                problems.append(f"MOVE edge {source!r} -> {target!r} needs both 'action' and 'p'")
                continue
            sums[(source, action)] += p
    for (source, action), total in sorted(sums.items()):
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            problems.append(f"state {source!r}, action {action}: MOVE probabilities sum to {total:.6g}, not 1")
    return problems
