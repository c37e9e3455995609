"""The store interface every backend implements, and how a location picks a backend.

Location rules (argument > `GRAPHTASKS_STORE` > default):
- ':memory:'                  embedded store in memory (tests, throwaway runs)
- 'bolt://...', 'neo4j://...' Neo4j (or any Bolt server) through the official driver
- 'scheme://...' of another registered backend (see `backends`); any other scheme is an
                              error (a typo must not become a folder named 'http:')
- anything else               a path of an on-disk embedded (LadybugDB) store
The default path is `$XDG_DATA_HOME/graphtasks/store.lbug` (`~/.local/share/...`).

Mode: 'r' only reads and never creates (a missing store is StoreMissingError); 'w' may
write and creates a missing store. Many processes may read one on-disk store at once; a
writer holds it alone, and others wait their turn: without limit, unless a lock timeout is
set (see `filelock`; `open_store(..., on_wait=callback)` hears about the wait).
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from .backends import backend_for
from .errors import SchemaError, StoreLocationError
from .schema import NodeType, RelType, Schema, plain_rows, validate_properties
from .taskgraph import TaskGraph

# merge_shared's input: (label, rows) of shared nodes and (relationship, from label, to label, rows) of edges
SharedNodes = Sequence[tuple[str, list[dict[str, Any]]]]
SharedEdges = Sequence[tuple[str, str, str, list[dict[str, Any]]]]

STORE_ENV_VAR = "GRAPHTASKS_STORE"
MEMORY = ":memory:"
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):/")
MODES = ("r", "w")


def default_location() -> str:
    """The store location used when neither an argument nor the environment names one."""
    if os.environ.get(STORE_ENV_VAR):
        return os.environ[STORE_ENV_VAR]
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "graphtasks" / "store.lbug")


@dataclass(frozen=True)
class TaskSummary:
    """One line of `graphtasks tasks list`."""

    task_id: str
    family: str
    n_states: int | None
    n_actions: int | None
    source: str
    content_hash: str


@dataclass
class QueryResult:
    """Rows of a query with their column names."""

    columns: list[str]
    rows: list[list[Any]]

    def __iter__(self) -> Iterator[list[Any]]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]


class GraphStore(ABC):
    """put / get / list / delete whole tasks, and read-only Cypher.

    The one interface every backend implements (the embedded store, a Bolt server, ...), so
    tasks, experiments and the study server never depend on which database holds the graphs.
    A task is read and written whole, as a `TaskGraph`; anything else is read with Cypher.
    Get one from `open_store`, not by constructing a subclass.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> with open_store(":memory:") as store:
    ...     store.put(tasks.build("neuronav/graph/linear"))
    ...     [summary.task_id for summary in store.list()]
    True
    ['neuronav/graph/linear']
    """

    location: str

    @abstractmethod
    def put(self, graph: TaskGraph, expected_hash: str | None = None) -> bool:
        """Write the task in one transaction; True if the store changed (False: same content already there).

        Parameters
        ----------
        graph : TaskGraph
            The whole task; it replaces any stored task with the same id.
        expected_hash : str, optional
            The content hash the stored task must still have (read-modify-write such as the
            registry's `create`); otherwise ConflictError and nothing is written. This check
            comes first: a stored version other than `expected_hash` is a ConflictError even
            when it holds exactly the content being put (another writer got there first);
            False ("same content") only when the stored version is the expected one. None
            (the default) writes whatever is stored.

        Returns
        -------
        bool
            True if the store changed, False if the same content was already there.

        Raises
        ------
        ConflictError
            The stored task's content hash is not `expected_hash`; nothing is written.
        SchemaError
            The graph does not fit the schema.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> graph = tasks.build("neuronav/graph/linear")
        >>> store.put(graph), store.put(graph)
        (True, False)
        >>> store.put(graph, expected_hash="abc")
        Traceback (most recent call last):
        ...
        graphstore.errors.ConflictError: task 'neuronav/graph/linear' in ':memory:' changed since it was read ...
        """

    def extend(self, graph: TaskGraph, new_nodes: Iterable[str], expected_hash: str) -> bool:
        """Write a new version that only adds nodes (local ids `new_nodes`) and edges touching them.

        For the registry's `create`: one transaction that checks the stored version is still
        `expected_hash` (else ConflictError, whatever the content), writes the new nodes and
        edges and the new content hash, and leaves the rest alone, instead of rewriting the whole task. The
        caller guarantees nothing else changed. This default rewrites the whole task.

        Parameters
        ----------
        graph : TaskGraph
            The new version of the task: the stored one plus the new nodes and edges.
        new_nodes : iterable of str
            The local ids of the nodes added since the stored version.
        expected_hash : str
            The content hash the stored task must still have.

        Returns
        -------
        bool
            True if the store changed.

        Raises
        ------
        ConflictError
            The stored task's content hash is not `expected_hash`; nothing is written.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> graph = tasks.build("neuronav/graph/linear")
        >>> store.put(graph)
        True
        >>> stored = store.content_hash(graph.task_id)
        >>> bigger = graph.copy()
        >>> bigger.add_node("s6", "State", index=6)
        'neuronav/graph/linear/s6'
        >>> store.extend(bigger, ["s6"], expected_hash=stored)
        True
        >>> store.cypher("MATCH (s:State) WHERE s.task = $id RETURN count(s)", {"id": graph.task_id}).rows
        [[7]]
        """
        return self.put(graph, expected_hash=expected_hash)

    @abstractmethod
    def get(self, task_id: str) -> TaskGraph:
        """Read a whole task.

        Parameters
        ----------
        task_id : str
            The task's id, e.g. ``"neuronav/graph/linear"``.

        Returns
        -------
        TaskGraph
            The task as stored.

        Raises
        ------
        TaskNotFound
            No task with this id is stored.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> store.put(tasks.build("neuronav/graph/linear"))
        True
        >>> store.get("neuronav/graph/linear")
        TaskGraph('neuronav/graph/linear', family='neuronav/graph', nodes=8, edges=7)
        >>> store.get("nope")
        Traceback (most recent call last):
        ...
        graphstore.errors.TaskNotFound: task 'nope' not found in :memory:; `graphtasks tasks list` shows what is stored
        """

    def get_many(self, task_ids: Sequence[str]) -> list[TaskGraph]:
        """Read several whole tasks, in the order given; raises TaskNotFound for the first
        missing one. A store may read them all in one pass (the embedded store does: the RDF
        view of every built-in task reads 108 tasks in 64 queries, not 6,900)."""
        return [self.get(task_id) for task_id in task_ids]

    @abstractmethod
    def list(self) -> list[TaskSummary]:
        """Every stored task, sorted by id.

        Returns
        -------
        list of TaskSummary
            One summary per task: id, family, numbers of states and actions, source and
            content hash (what `graphtasks tasks list` prints).

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> store.put(tasks.build("neuronav/graph/linear"))
        True
        >>> [(t.task_id, t.n_states, t.n_actions) for t in store.list()]
        [('neuronav/graph/linear', 6, 1)]
        """

    @abstractmethod
    def delete(self, task_id: str) -> bool:
        """Remove a task and its nodes.

        Parameters
        ----------
        task_id : str
            The task's id.

        Returns
        -------
        bool
            True if the task was there (and is now gone), False if it was not stored.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> store.put(tasks.build("neuronav/graph/linear"))
        True
        >>> store.delete("neuronav/graph/linear"), store.delete("neuronav/graph/linear")
        (True, False)
        """

    @abstractmethod
    def cypher(
        self, query: str, params: dict[str, Any] | None = None, sources: Mapping[str, Any] | None = None
    ) -> QueryResult:
        """Run a read-only Cypher query; writing raises QueryError and changes nothing.

        Parameters
        ----------
        query : str
            A Cypher query that only reads (it starts with MATCH, OPTIONAL, RETURN, UNWIND or WITH).
        params : dict, optional
            Values for the query's ``$name`` parameters.
        sources : mapping, optional
            Names tables the query may scan with ``LOAD FROM $name`` (a list of Parquet files,
            or an Arrow table): an experiment's record chunks. Any other LOAD FROM is refused;
            a store that cannot scan files refuses every one.

        Returns
        -------
        QueryResult
            The result's column names and its rows (``.rows``, a list of lists).

        Raises
        ------
        QueryError
            The query writes, or the database rejects it.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> store.put(tasks.build("neuronav/graph/linear"))
        True
        >>> store.cypher("MATCH (s:State) WHERE s.task = $id RETURN count(s)", {"id": "neuronav/graph/linear"}).rows
        [[6]]
        >>> store.cypher("CREATE (t:Task {uid: 'x'})")
        Traceback (most recent call last):
        ...
        graphstore.errors.QueryError: read-only queries start with MATCH, ...; this one starts with CREATE
        """

    def merge_shared(
        self,
        nodes: SharedNodes,
        edges: SharedEdges = (),
    ) -> tuple[int, int]:
        """Create or update shared knowledge in one transaction (ingest jobs' write path).

        `nodes`: (label, rows) with labels declared `shared`; a row is matched by `uid` and its
        other properties are overwritten. `edges`: (relationship, from label, to label, rows);
        a row has `s` and `t` (endpoint uids) and the relationship's properties, and is
        matched by (s, t, `key`), so writing the same rows twice changes nothing.
        A failure leaves the store as it was.
        Not abstract so stores written before it still open; each backend overrides it.

        Parameters
        ----------
        nodes : sequence of (str, list of dict)
            (label, rows) with labels declared `shared`; a row is matched by ``uid`` and its
            other properties are overwritten.
        edges : sequence of (str, str, str, list of dict), optional
            (relationship, from label, to label, rows); a row has ``s`` and ``t`` (endpoint
            uids) and the relationship's properties, and is matched by (s, t, ``key``).

        Returns
        -------
        tuple of (int, int)
            The numbers of nodes and of edges created (updated ones are not counted).

        Raises
        ------
        SchemaError
            A label is not a shared node type, a relationship does not connect the two labels,
            or a row's properties do not fit the schema; nothing is written.

        Examples
        --------
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> experiment = {"uid": "experiment/x", "owner": "experiment/x", "name": "x", "spec_hash": "h1"}
        >>> store.merge_shared([("Experiment", [experiment])]), store.merge_shared([("Experiment", [experiment])])
        ((1, 0), (0, 0))
        """
        raise NotImplementedError(f"{type(self).__name__} cannot write shared knowledge yet")

    def create_shared(self, nodes: SharedNodes, edges: SharedEdges = ()) -> tuple[int, int]:
        """`merge_shared` for rows known to be new (a bulk write: experiment records).

        A store may load them faster, and raises GraphStoreError, writing nothing, if a uid or
        edge key exists already; this default merges.

        Parameters
        ----------
        nodes : sequence of (str, list of dict)
            (label, rows) of shared node types, as for `merge_shared`; every uid is new.
        edges : sequence of (str, str, str, list of dict), optional
            (relationship, from label, to label, rows), as for `merge_shared`; every key is new.

        Returns
        -------
        tuple of (int, int)
            The numbers of nodes and of edges created.

        Raises
        ------
        GraphStoreError
            A uid or edge key exists already (stores that load in bulk); nothing is written.

        Examples
        --------
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> experiment = {"uid": "experiment/x", "owner": "experiment/x", "name": "x", "spec_hash": "h1"}
        >>> store.create_shared([("Experiment", [experiment])])
        (1, 0)
        """
        return self.merge_shared(nodes, edges)

    def delete_shared(self, owner: str, labels: Iterable[str]) -> dict[str, int]:
        """Delete, in one transaction, the shared nodes of these labels that `owner` owns.

        A record's owner is its ``owner`` property (an experiment's uid); other shared nodes
        name theirs in ``task`` (`NodeType.owner_property`).

        For example every record of an experiment, with their relationships. Not abstract so
        stores written before it still open; each backend overrides it.

        Parameters
        ----------
        owner : str
            The value of the nodes' owner property, e.g. an experiment's uid.
        labels : iterable of str
            Shared node types to delete from.

        Returns
        -------
        dict of str to int
            The number of nodes deleted, per label.

        Raises
        ------
        SchemaError
            A label is not a shared node type (tasks are deleted with `delete`).

        Examples
        --------
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> experiment = {"uid": "experiment/x", "owner": "experiment/x", "name": "x", "spec_hash": "h1"}
        >>> store.merge_shared([("Experiment", [experiment])])
        (1, 0)
        >>> store.delete_shared("experiment/x", ["Experiment", "Run"])
        {'Experiment': 1, 'Run': 0}
        """
        raise NotImplementedError(f"{type(self).__name__} cannot delete shared knowledge yet")

    def content_hash(self, task_id: str) -> str | None:
        """The stored content hash of a task, or None if it is not stored.

        Parameters
        ----------
        task_id : str
            The task's id.

        Returns
        -------
        str or None
            The hash of the task's canonical content (`TaskGraph.content_hash`), None if no
            such task is stored.

        Examples
        --------
        >>> import tasks
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> graph = tasks.build("neuronav/graph/linear")
        >>> store.put(graph)
        True
        >>> store.content_hash(graph.task_id) == graph.content_hash(), store.content_hash("nope")
        (True, None)
        """
        rows = self.cypher("MATCH (t:Task) WHERE t.uid = $id RETURN t.content_hash", {"id": task_id}).rows
        return rows[0][0] if rows else None

    def __contains__(self, task_id: str) -> bool:
        return self.content_hash(task_id) is not None

    def close(self) -> None:
        """Release the connection; the store object is unusable afterwards.

        A ``with open_store(...) as store:`` block calls it on leaving.

        Examples
        --------
        >>> from graphstore import open_store
        >>> store = open_store(":memory:")
        >>> store.close()
        """

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shared_labels(schema: Schema, labels: Iterable[str]) -> list[str]:
    """The labels, each checked to be a shared node type (tasks are deleted with delete())."""
    chosen = list(labels)
    for label in chosen:
        if label not in schema.nodes or not schema.nodes[label].shared:
            raise SchemaError(f"delete_shared: {label!r} is not a shared node type")
    return chosen


ENDPOINTS = frozenset({"s", "t"})


def check_shared_request(
    schema: Schema,
    nodes: SharedNodes,
    edges: SharedEdges,
) -> tuple[list[tuple[NodeType, list[dict[str, Any]]]], list[tuple[RelType, str, str, list[dict[str, Any]]]]]:
    """Validate a `merge_shared` request against the schema, the first step of every backend.

    Returns (node type, checked rows) and (relationship, from, to, checked rows); an edge row
    keeps its endpoint uids `s` and `t`. Values stay Python values: each store encodes them.
    """
    node_batches = []
    for label, rows in nodes:
        node_type = schema.node_type(label)
        if not node_type.shared:
            raise SchemaError(f"merge_shared: {label!r} is not a shared node type; tasks are written with put()")
        if plain_rows(node_type.properties, rows):
            node_batches.append((node_type, list(rows)))
            continue
        node_batches.append(
            (node_type, [validate_properties(f"{label} {r.get('uid')!r}", node_type.properties, r) for r in rows])
        )
    edge_batches = []
    for rel_name, a, b, rows in edges:
        rel = schema.rel_type(rel_name)
        if (a, b) not in rel.endpoints:
            raise SchemaError(f"merge_shared: {rel_name} does not connect {a} to {b}")
        if rel.property("key") is None:
            raise SchemaError(f"merge_shared: {rel_name} has no 'key' property to merge on")
        ends_ok = all(type(r.get("s")) is str and type(r.get("t")) is str for r in rows)
        if ends_ok and plain_rows(rel.properties, rows, ENDPOINTS):
            edge_batches.append((rel, a, b, list(rows)))
            continue
        checked = []
        for r in rows:
            for end in ("s", "t"):
                if not isinstance(r.get(end), str):
                    raise SchemaError(
                        f"{rel_name}: edge row needs endpoint uid {end!r} as a string, got {r.get(end)!r}"
                    )
            props = {k: v for k, v in r.items() if k not in ("s", "t")}
            checked.append(
                {**validate_properties(f"{rel_name} {r.get('key')!r}", rel.properties, props), "s": r["s"], "t": r["t"]}
            )
        edge_batches.append((rel, a, b, checked))
    return node_batches, edge_batches


def open_store(location: str | Path | None = None, mode: str = "w", **options: Any) -> GraphStore:
    """Open the store at `location` (see module docstring for the rules) to read ('r') or write ('w').

    Parameters
    ----------
    location : str or Path, optional
        ``":memory:"`` (a throwaway embedded store), a ``bolt://`` or ``neo4j://`` URI (a Neo4j
        or other Bolt server), the URI of another registered backend, or the path of an
        embedded store on disk. None: ``$GRAPHTASKS_STORE``, else
        ``$XDG_DATA_HOME/graphtasks/store.lbug``.
    mode : {"w", "r"}
        ``"w"`` may write and creates a missing store; ``"r"`` only reads and never creates one
        (a missing store is a `StoreMissingError`).
    **options
        Go to the backend, e.g. ``on_wait=callback``: an embedded store on disk calls it with a
        `graphstore.filelock.LockWait` while this process waits its turn for the store (when
        the wait starts, about once a second, and once with ``done=True``; other backends ignore
        it); a Bolt store also takes ``user``, ``password`` and ``database`` (else from the
        environment: `graphstore.neo4j_store`).

    Returns
    -------
    GraphStore
        The open store; use it as a context manager, or call `close`.

    Examples
    --------
    A throwaway embedded store; a path keeps it on disk, a ``bolt://`` URI reaches a server.

    >>> import tasks
    >>> from graphstore import open_store
    >>> with open_store(":memory:") as store:
    ...     store.put(tasks.build("neuronav/graph/linear")), store.put(tasks.build("neuronav/graph/linear"))
    ...     store.cypher("MATCH (t:Task) RETURN t.uid, t.n_states").rows
    (True, False)
    [['neuronav/graph/linear', 6]]
    """
    if mode not in MODES:
        raise ValueError(f"open_store: mode must be 'r' (read) or 'w' (write), got {mode!r}")
    if location is not None and not isinstance(location, (str, os.PathLike)):
        # str() of an open store names no file: it would make a new store called "LadybugStore(...)"
        raise TypeError(f"open_store: location must be a path or a URI, got {type(location).__name__} "
                        f"{location!r} (pass an open store itself where a store is taken)")
    loc = str(location) if location is not None else default_location()
    scheme = _URI.match(loc)
    if scheme and len(scheme.group(1)) > 1:  # one letter is a Windows drive, 'C:/...'
        try:
            backend = backend_for(scheme.group(1))
        except StoreLocationError as exc:
            raise StoreLocationError(f"store {loc!r}: {exc}") from None
    else:
        backend = backend_for(None)
    store_class = backend.load()
    return store_class(loc, read_only=mode == "r" or options.pop("read_only", False), **options)
