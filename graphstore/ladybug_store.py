"""The embedded default store: LadybugDB (the maintained Kuzu fork), on disk or in memory.

Tables are generated from the schema on open; a store written by an older schema gets
the missing tables, columns and relationship endpoints added in place.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Sequence, cast

import ladybug

from .arrow_columns import arrow_array
from .cypher_text import check_read_only, named_sources, quote_reserved_properties, registered_sources
from .errors import (
    ConflictError,
    GraphStoreError,
    QueryError,
    StoreFullError,
    StoreLocationError,
    StoreLockedError,
    StoreMissingError,
    TaskNotFound,
)
from .filelock import StoreLock, WaitCallback
from .schema import KINDS, SCHEMA, TASK_PROPERTY, NodeType, Property, RelType, Schema
from .schema import quote_name as _q
from .store import (
    MEMORY,
    GraphStore,
    QueryResult,
    SharedEdges,
    SharedNodes,
    TaskSummary,
    check_shared_request,
    shared_labels,
)
from .taskgraph import TASK_LOCAL_ID, TaskGraph, uid_of

BATCH = 5000  # rows per UNWIND statement
FULL_BYTES = 1 << 20  # a file system with less free space than this counts as full
CHECKPOINT_WAL_BYTES = 16 << 20  # checkpoint once the log is this big (LadybugDB's own threshold)
CHECKPOINT_SPARE_BYTES = 32 << 20  # room a checkpoint needs besides the size of the store's files
# what LadybugDB says when a read-only opening meets a checkpoint a failed write left unfinished
RECOVERY_PENDING = "read-only mode while checkpoint recovery is pending"
# what LadybugDB's errors say when writing the store's files failed (a full disk, an I/O error)
_STORAGE_FAILURES = ("IO exception", "Cannot write to file", "panic state", "post-commit checkpoint failed")

log = logging.getLogger(__name__)


class _RecoveryPending(StoreLocationError):
    """A read-only opening met an unfinished checkpoint (finished by a writer's opening)."""


def _storage_failure(exc: BaseException) -> bool:
    return any(marker in str(exc) for marker in _STORAGE_FAILURES)


def _descriptors_of(path: str, message: str = "") -> list[int]:
    """This process's open file descriptors on the file at `path` (one that LadybugDB opened)."""
    try:
        target = os.stat(path)
    except OSError:
        return []
    candidates: list[int] = []
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            candidates = [int(name) for name in os.listdir(listing) if name.isdigit()]
            break
        except OSError:
            continue
    named = re.search(r"fileDescriptor: (\d+)", message)
    if named:
        candidates.append(int(named.group(1)))
    found = []
    for fd in sorted(set(candidates)):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            found.append(fd)
    return found


def _disarm(descriptors: list[int]) -> None:
    """Point each descriptor at /dev/null: what LadybugDB still writes to it when it closes (the
    bytes a failed write left in its buffer) goes nowhere instead of failing in a destructor."""
    if not descriptors:
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in descriptors:
            os.dup2(null, fd)
    finally:
        os.close(null)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = n / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _to_store(prop: Property, value: Any) -> Any:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True) if prop.kind == "json" else value


USE_ARROW = True  # COPY from Arrow when pyarrow is installed (the tables extra); False: always CSV files
_ARROW_TYPES: dict[str, Callable[[Any], Any]] = {
    "STRING": lambda pa: pa.string(),
    "INT64": lambda pa: pa.int64(),
    "DOUBLE": lambda pa: pa.float64(),
    "BOOL": lambda pa: pa.bool_(),
}


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _csv_column(prop: Property | None, column: list[Any]) -> list[Any] | None:
    """A column as COPY FROM a CSV file reads it back, or None where it would not: lists, and
    text that is empty (an empty field reads as NULL) or holds a line break."""
    if prop is None:
        return [None] * len(column)
    if prop.kind.endswith("[]"):
        return None
    if prop.kind == "json":
        return [None if v is None else json.dumps(v, sort_keys=True) for v in column]
    if prop.kind == "str" and any(v is not None and (not v or "\n" in v or "\r" in v) for v in column):
        return None
    return column  # numbers and booleans as Python writes them (str(float) is exact), text as it is


def _from_store(prop: Property, value: Any) -> Any:
    if value is None:
        return None
    return json.loads(value) if prop.kind == "json" else value


def _assignments(
    properties: tuple[Property, ...], rows: list[dict[str, Any]], keep: tuple[str, ...] = ()
) -> tuple[str, list[dict[str, Any]]]:
    """The `{key: r.key, ...}` text and the rows for an UNWIND write.

    Columns that are None in every row are left out: UNWIND cannot type them.
    """
    present = {k for row in rows for k, v in row.items() if v is not None} | set(keep)
    sets = ", ".join(f"{_q(p.name)}: r.{_q(p.name)}" for p in properties if p.name in present)
    return sets, [{k: row.get(k) for k in present} for row in rows]


class LadybugStore(GraphStore):
    """GraphStore on an embedded LadybugDB database."""

    def __init__(
        self,
        location: str = MEMORY,
        schema: Schema = SCHEMA,
        read_only: bool = False,
        on_wait: WaitCallback | None = None,
    ) -> None:
        """`on_wait`: called while this process waits its turn for the store's lock (see `filelock`)."""
        self.location = location
        self.schema = schema
        self.read_only = read_only
        self._on_wait = on_wait
        self._lock = threading.RLock()
        self._file_lock: StoreLock | None = None
        if location == MEMORY:
            self._connect(MEMORY, read_only=False)
            self._sync_schema()
            return
        p = Path(location).expanduser()
        if read_only:
            if not p.exists() or (p.is_dir() and not any(p.iterdir())):
                raise StoreMissingError(
                    f"store {location!r} does not exist; commands that write (e.g. `graphtasks tasks load`) create it"
                )
        else:
            if p.exists() and p.is_dir() and not any(p.iterdir()):
                p.rmdir()  # an empty folder (e.g. from mkdtemp) becomes the database file
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreLocationError(f"cannot create the folder of store {location!r}: {exc}") from None
        self._path = p
        self._new = False  # True while this process creates the store (under the writer lock)
        self._open_locked(read_only)
        try:
            if read_only and self._sync_schema(apply=False):
                # written by an older schema: add what is missing once, as a writer, then read
                self.close()
                self._open_locked(False)
                self._sync_schema()
                self.close()
                self._open_locked(True)
            elif not read_only:
                self._sync_schema()
        except BaseException:
            if self._new:  # a store this process was creating (e.g. on a full disk): nothing of it stays
                self._close_database(checkpoint=False)
                self._remove_new_store()
            self.close()
            raise
        self._new = False

    def _open_locked(self, read_only: bool) -> None:
        """Take the store's lock (shared to read, alone to write), then open the database.

        A write that failed on a full disk can leave an unfinished checkpoint, which LadybugDB
        finishes only when a writer opens the store; a reader then does that first, as a
        writer under the lock (see `_finish_recovery`), and reads."""
        self._file_lock = StoreLock(self._path, exclusive=not read_only, on_wait=self._on_wait)
        self._new = not read_only and not self._path.exists()  # looked at under the lock
        try:
            self._refuse_empty_file()
            try:
                self._connect(str(self._path), read_only)
            except _RecoveryPending:
                self._file_lock.release()
                self._file_lock = None
                self._finish_recovery()
                self._file_lock = StoreLock(self._path, exclusive=False, on_wait=self._on_wait)
                self._connect(str(self._path), read_only)
        except BaseException:
            if self._new:
                self._remove_new_store()
            if self._file_lock is not None:
                self._file_lock.release()
                self._file_lock = None
            raise

    def _refuse_empty_file(self) -> None:
        """A store is created only where no file exists: LadybugDB writes its header when it
        creates one (under the writer lock, so a store being created is never seen empty), and
        would take an empty file (a store truncated to 0 bytes) for a new, empty store."""
        try:
            empty = self._path.is_file() and self._path.stat().st_size == 0
        except OSError:
            return  # what cannot be looked at is reported by the opening
        if empty:
            raise StoreLocationError(
                f"store {self.location!r} is damaged: the file is empty (0 bytes), not a LadybugDB store; "
                "a store is created only where no file exists (restore it from a copy, or remove the file "
                "to start a new store)"
            )

    def _remove_new_store(self) -> None:
        """Remove the files of a store whose creation failed (the lock file stays: others may hold it)."""
        for path in (self._path, self._wal_path()):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)

    def _connect(self, path: str, read_only: bool) -> None:
        try:
            self._db = ladybug.Database(path, read_only=read_only) if path != MEMORY else ladybug.Database(MEMORY)
            self._conn = ladybug.Connection(self._db)
        except Exception as exc:
            held = re.search(r"held by PID (\d+)", str(exc))
            if held:  # a process outside graphtasks (which takes no store lock) has it open
                raise StoreLockedError(f"store {self.location!r} is locked by PID {held.group(1)} (writing)") from None
            if read_only and RECOVERY_PENDING in str(exc):
                raise _RecoveryPending(str(exc)) from None
            if not read_only and path != MEMORY and _storage_failure(exc):
                if vars(self).get("_new", False):
                    free = self._free_bytes()
                    raise self._storage_error("creating the store", exc, free, "(no store was created)") from None
                raise self._unfinished_checkpoint_error(exc) from None
            raise StoreLocationError(f"cannot open embedded store {self.location!r}: {exc}") from None
        self._writer = not read_only and path != MEMORY
        if self._writer:  # this store checkpoints itself, when the disk has room (see _checkpoint)
            self._raw("CALL auto_checkpoint=false")
            self._raw("CALL force_checkpoint_on_close=false")

    def _finish_recovery(self) -> None:
        """Open the store as a writer, under the writer lock, so that LadybugDB finishes the
        checkpoint a failed write left unfinished; close it without checkpointing again (the
        disk may still be full: the committed writes stay in the write-ahead log)."""
        lock = StoreLock(self._path, exclusive=True, on_wait=self._on_wait)
        try:
            db = ladybug.Database(str(self._path), read_only=False)
            conn = ladybug.Connection(db)
            try:
                conn.execute("CALL force_checkpoint_on_close=false")
            finally:
                conn.close()
                db.close()
        except Exception as exc:
            raise self._unfinished_checkpoint_error(exc) from None
        finally:
            lock.release()

    def _unfinished_checkpoint_error(self, exc: BaseException) -> GraphStoreError:
        """Opening failed writing: LadybugDB finishes a checkpoint that a failure interrupted
        before anyone may read, and that can need free space."""
        reason = " ".join(str(exc).split())
        free = self._free_bytes()
        folder = str(self._path.parent)
        failed = vars(self).get("_failed")
        if failed:  # opening again after a failed write or checkpoint
            what = (
                f"{failed}, and the store cannot be opened again until LadybugDB finishes the checkpoint it "
                f"interrupted, which needs free space: free some in {folder!r} and run the command again ({reason})"
            )
        else:
            what = (
                f"the store cannot be opened until LadybugDB finishes a checkpoint that a failed write interrupted, "
                f"which needs free space: free some in {folder!r} and run the command again "
                f"(nothing was changed; {reason})"
            )
        if free < FULL_BYTES or "No space left" in reason:
            return StoreFullError(f"store {self.location!r}: the disk is full ({_size(free)} free); {what}")
        return StoreLocationError(f"cannot open embedded store {self.location!r}: {what}")

    # -- schema ---------------------------------------------------------------------
    def _raw(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        conn = vars(self).get("_conn")
        if conn is None:
            raise GraphStoreError(f"store {self.location!r} is closed")
        result = conn.execute(query, params or {})
        results = result if isinstance(result, list) else [result]
        rows = results[-1].get_all()
        for r in results:
            r.close()
        return cast(list[list[Any]], rows)  # rows come as lists: the connection never asks for dicts

    def _sync_schema(self, apply: bool = True) -> bool:
        """Add missing tables, columns and endpoints (one transaction); with apply=False only
        tell whether any are missing."""
        statements: list[str] = []
        tables = {name: kind for _, name, kind, *_ in self._raw("CALL show_tables() RETURN *")}
        for label, node_type in self.schema.nodes.items():
            if label not in tables:
                cols = ", ".join(f"{_q(p.name)} {KINDS[p.kind]}" for p in node_type.properties)
                statements.append(f"CREATE NODE TABLE {_q(label)}({cols}, PRIMARY KEY(uid))")
            else:
                # a property an earlier schema named otherwise (records' owner was `task`) is renamed first
                columns = self._columns(label)
                for old, new in node_type.renames(columns):
                    statements.append(f"ALTER TABLE {_q(label)} RENAME {_q(old)} TO {_q(new)}")
                    columns[new] = columns.pop(old)
                self._add_missing_columns(label, node_type.properties, statements.append, columns)
        for name, rel in self.schema.rels.items():
            if name not in tables:
                pairs = ", ".join(f"FROM {_q(a)} TO {_q(b)}" for a, b in rel.endpoints)
                cols = "".join(f", {_q(p.name)} {KINDS[p.kind]}" for p in rel.properties)
                statements.append(f"CREATE REL TABLE {_q(name)}({pairs}{cols})")
            else:
                have = {(a, b) for a, b, *_ in self._raw(f"CALL show_connection('{name}') RETURN *")}
                for a, b in rel.endpoints:
                    if (a, b) not in have:
                        statements.append(f"ALTER TABLE {_q(name)} ADD FROM {_q(a)} TO {_q(b)}")
                self._add_missing_columns(name, rel.properties, statements.append)
        if apply and statements:
            with self._transaction(
                f"creating the tables of store {self.location!r} failed, nothing written", "creating its tables"
            ):
                for statement in statements:
                    self._raw(statement)
        return bool(statements)

    def _columns(self, table: str) -> dict[str, str]:
        """The table's columns and their types."""
        return {row[1]: row[2] for row in self._raw(f"CALL table_info('{table}') RETURN *")}

    def _add_missing_columns(
        self,
        table: str,
        properties: tuple[Property, ...],
        change: Callable[[str], None],
        have: dict[str, str] | None = None,
    ) -> None:
        have = self._columns(table) if have is None else have
        for p in properties:
            if p.name not in have:
                change(f"ALTER TABLE {_q(table)} ADD {_q(p.name)} {KINDS[p.kind]}")
            elif have[p.name] != KINDS[p.kind]:
                raise StoreLocationError(
                    f"store {self.location!r}: column {table}.{p.name} is {have[p.name]}, the schema says "
                    f"{KINDS[p.kind]}; export the tasks and load them into a new store"
                )

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise GraphStoreError(f"cannot {what}: store {self.location!r} was opened read-only")

    # -- writing ----------------------------------------------------------------------
    def put(self, graph: TaskGraph, expected_hash: str | None = None) -> bool:
        self._writable(f"put task {graph.task_id!r}")
        graph.seal()
        with self._lock:  # one connection, serialised by the lock: the check and the write are atomic here
            if not self._check_version(graph, expected_hash):
                return False
            self._write(graph, None)
        return True

    def extend(self, graph: TaskGraph, new_nodes: Iterable[str], expected_hash: str) -> bool:
        """Write only `new_nodes` and their edges, and the new content hash (see GraphStore.extend)."""
        self._writable(f"extend task {graph.task_id!r}")
        graph.seal()
        only = set(new_nodes)
        with self._lock:
            if not self._check_version(graph, expected_hash):
                return False
            self._write(graph, only)
        return True

    def _check_version(self, graph: TaskGraph, expected_hash: str | None) -> bool:
        """True if the graph must be written. The version check comes first: ConflictError if
        `expected_hash` is given and the stored version is not it, even when the new content is
        what is stored now (another writer wrote it: this write was built on a version that is
        gone). Only then does the same content mean nothing to write (False)."""
        stored = self.content_hash(graph.task_id)
        if expected_hash is not None and stored != expected_hash:
            raise ConflictError(
                f"task {graph.task_id!r} in {self.location!r} changed since it was read "
                f"(content hash {stored or 'none: deleted'}, expected {expected_hash}); nothing written"
            )
        return stored != graph.task["content_hash"]

    def _write(self, graph: TaskGraph, only: set[str] | None) -> None:
        """One transaction: the whole task (old version removed) or, with `only`, those nodes and their edges."""
        task_id = graph.task_id
        node_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for local_id, props in graph.nodes():
            if only is not None and local_id not in only:
                continue
            label = graph.label(local_id)
            node_type = self.schema.nodes[label]
            row = {p.name: _to_store(p, props.get(p.name)) for p in node_type.properties}
            row["uid"] = uid_of(task_id, local_id)
            row[node_type.owner_property] = task_id
            node_rows[label].append(row)
        edge_rows: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
        for source, target, data in graph.graph.edges(data=True):
            if only is not None and source not in only and target not in only:
                continue
            rel = self.schema.rels[data["rel"]]
            row = {p.name: data["props"].get(p.name) for p in rel.properties}
            row["s"] = uid_of(task_id, source)
            row["t"] = uid_of(task_id, target)
            edge_rows[(data["rel"], graph.label(source), graph.label(target))].append(row)
        with self._transaction(
            f"writing task {task_id!r} to {self.location!r} failed, nothing written", f"writing task {task_id!r}"
        ):
            if only is None:
                self._delete_task_nodes(task_id)
            else:
                self._raw(
                    "MATCH (t:Task) WHERE t.uid = $id SET t.content_hash = $h",
                    {"id": task_id, "h": graph.task["content_hash"]},
                )
            for label, rows in node_rows.items():
                self._create_nodes(self.schema.nodes[label], rows)
            for (rel_name, a, b), rows in edge_rows.items():
                sets, slim = _assignments(self.schema.rels[rel_name].properties, rows, ("s", "t"))
                # Two chained MATCHes: each endpoint is a primary-key lookup. One MATCH
                # with both patterns joins instead (25x slower at 40,000 edges).
                query = (
                    f"UNWIND $rows AS r MATCH (a:{_q(a)} {{uid: r.s}}) WITH a, r "
                    f"MATCH (b:{_q(b)} {{uid: r.t}}) CREATE (a)-[:{_q(rel_name)} {{{sets}}}]->(b)"
                )
                for start in range(0, len(slim), BATCH):
                    self._raw(query, {"rows": slim[start : start + BATCH]})

    def merge_shared(
        self,
        nodes: SharedNodes,
        edges: SharedEdges = (),
    ) -> tuple[int, int]:
        self._writable("merge shared knowledge")
        checked_nodes, checked_edges = check_shared_request(self.schema, nodes, edges)
        node_batches = [
            (t, [{p.name: _to_store(p, r.get(p.name)) for p in t.properties} for r in rows])
            for t, rows in checked_nodes
        ]
        edge_batches = [
            (
                rel,
                a,
                b,
                [
                    {**{p.name: _to_store(p, r.get(p.name)) for p in rel.properties}, "s": r["s"], "t": r["t"]}
                    for r in rows
                ],
            )
            for rel, a, b, rows in checked_edges
        ]
        created_nodes = created_edges = 0
        created: dict[str, set[Any]] = {}  # the uids of the nodes this write creates, by label
        with self._lock:
            with self._transaction(
                f"merging shared knowledge into {self.location!r} failed, nothing written", "writing shared records"
            ):
                # MERGE is slow on relationships without an index: look up what exists, then
                # CREATE the new rows and SET the existing ones.
                for node_type, rows in node_batches:
                    if not rows:
                        continue
                    label = _q(node_type.label)
                    uids = [r["uid"] for r in rows]
                    have = {
                        x[0]
                        for x in self._raw(
                            f"UNWIND $u AS x MATCH (n:{label}) WHERE n.uid = x RETURN n.uid", {"u": uids}
                        )
                    }
                    fresh = [r for r in rows if r["uid"] not in have]
                    old = [r for r in rows if r["uid"] in have]
                    if fresh:
                        self._create_nodes(node_type, fresh)
                        created.setdefault(node_type.label, set()).update(r["uid"] for r in fresh)
                    if old:
                        sets, slim = _assignments(node_type.properties, old, ("uid",))
                        updates = ", ".join(f"n.{_q(p.name)} = r.{_q(p.name)}" for p in node_type.properties
                                            if p.name != "uid" and p.name in slim[0])
                        self._raw(f"UNWIND $rows AS r MATCH (n:{label} {{uid: r.uid}}) SET {updates}", {"rows": slim})
                    created_nodes += len(fresh)
                for rel, a, b, rows in edge_batches:
                    if not rows:
                        continue
                    name, qa, qb = _q(rel.name), _q(a), _q(b)
                    # an edge to or from a node created above is new: only the others are looked up
                    new_a, new_b = created.get(a, set()), created.get(b, set())
                    probe = [{"s": r["s"], "t": r["t"], "key": r["key"]} for r in rows
                             if r["s"] not in new_a and r["t"] not in new_b]
                    have = {x[0] for x in self._raw(
                        f"UNWIND $rows AS r MATCH (a:{qa} {{uid: r.s}})-[e:{name}]->(b:{qb} {{uid: r.t}}) "
                        f"WHERE e.key = r.key RETURN r.key", {"rows": probe})} if probe else set()
                    fresh = [r for r in rows if r["key"] not in have]
                    old = [r for r in rows if r["key"] in have]
                    if fresh:
                        sets, slim = _assignments(rel.properties, fresh, ("s", "t", "key"))
                        self._raw(
                            f"UNWIND $rows AS r MATCH (a:{qa}) WHERE a.uid = r.s MATCH (b:{qb}) WHERE b.uid = r.t "
                            f"CREATE (a)-[:{name} {{{sets}}}]->(b)",
                            {"rows": slim},
                        )  # 60x faster than MATCH (a {{..}}), (b {{..}})
                    if old:
                        sets, slim = _assignments(rel.properties, old, ("s", "t", "key"))
                        updates = ", ".join(f"e.{_q(p.name)} = r.{_q(p.name)}" for p in rel.properties
                                            if p.name != "key" and p.name in slim[0])
                    if old and updates:  # an edge with nothing but its key has nothing to update
                        self._raw(
                            f"UNWIND $rows AS r MATCH (a:{qa} {{uid: r.s}})-[e:{name}]->(b:{qb} {{uid: r.t}}) "
                            f"WHERE e.key = r.key SET {updates}", {"rows": slim})
                    created_edges += len(fresh)
        return created_nodes, created_edges

    def create_shared(self, nodes: SharedNodes, edges: SharedEdges = ()) -> tuple[int, int]:
        """New shared rows loaded with COPY FROM (Arrow tables, or CSV files in a temporary
        directory), one transaction: about 6x faster than UNWIND ... CREATE. COPY FROM's rows
        become durable only in the checkpoint made after its commit, CREATE's in the log; so
        one transaction does not mix them (a failed checkpoint would keep half of it): if a
        table's values cannot be copied unchanged (lists; in a CSV also empty or multi-line
        text), or the disk has no room for a checkpoint, every table is written with CREATE."""
        self._writable("create shared knowledge")
        checked_nodes, checked_edges = check_shared_request(self.schema, nodes, edges)
        tables: list[tuple[str, tuple[Property, ...], list[dict[str, Any]], tuple[str, str] | None]] = [
            (t.label, t.properties, rows, None) for t, rows in checked_nodes if rows
        ]
        tables += [(rel.name, rel.properties, rows, (a, b)) for rel, a, b, rows in checked_edges if rows]
        with self._lock:
            self._check_ends(checked_nodes, checked_edges)

        def kept() -> bool:  # the checkpoint after COPY FROM's commit failed: are its rows there?
            found = wanted = 0
            for table, _, rows, endpoints in tables:
                if endpoints is None:
                    query = f"UNWIND $k AS x MATCH (n:{_q(table)}) WHERE n.uid = x RETURN count(n)"
                    keys = [r["uid"] for r in rows]
                else:
                    pattern = f"(:{_q(endpoints[0])})-[e:{_q(table)}]->(:{_q(endpoints[1])})"
                    query = f"UNWIND $k AS x MATCH {pattern} WHERE e.key = x RETURN count(e)"
                    keys = [r["key"] for r in rows]
                found += self._raw(query, {"k": keys})[0][0]
                wanted += len(keys)
            return found == wanted > 0

        with self._lock, tempfile.TemporaryDirectory(prefix="graphtasks-copy-") as directory:
            with self._transaction(
                f"creating shared knowledge in {self.location!r} failed, nothing written", "writing shared records",
                kept=kept,
            ):
                plans = [self._copy_plan(table, properties, rows, endpoints) for table, properties, rows, endpoints
                         in tables]
                # COPY FROM's rows need a checkpoint to last: without room for one, CREATE's go to the log
                copy = all(p is not None for p in plans) and (self.location == MEMORY or self._checkpoint_room())
                for (table, properties, rows, endpoints), plan in zip(tables, plans):
                    if copy:
                        self._copy(table, rows, endpoints, plan, directory)
                    else:
                        self._create_rows(table, properties, rows, endpoints)
        return sum(len(r) for _, r in checked_nodes), sum(len(r) for *_, r in checked_edges)

    def _check_ends(
        self,
        checked_nodes: list[tuple[NodeType, list[dict[str, Any]]]],
        checked_edges: list[tuple[RelType, str, str, list[dict[str, Any]]]],
    ) -> None:
        """Refuse, before anything is written, relationships whose ends are neither in this
        request nor stored: COPY FROM would refuse them inside the transaction, and LadybugDB
        0.22 can crash the process after such a refusal (scripts/ladybug_copy_after_delete.py)."""
        new: dict[str, set[str]] = defaultdict(set)
        for node_type, rows in checked_nodes:
            new[node_type.label].update(r["uid"] for r in rows)
        for rel, a, b, rows in checked_edges:
            for label, end in ((a, "s"), (b, "t")):
                wanted = {r[end] for r in rows} - new[label]
                if not wanted:
                    continue
                found = {
                    row[0]
                    for row in self._raw(
                        f"UNWIND $k AS x MATCH (n:{_q(label)}) WHERE n.uid = x RETURN n.uid", {"k": sorted(wanted)}
                    )
                }
                missing = sorted(wanted - found)
                if missing:
                    row = next(r for r in rows if r[end] == missing[0])
                    raise GraphStoreError(
                        f"creating shared knowledge in {self.location!r} failed, nothing written: {rel.name} "
                        f"{row.get('key')!r} names {label} {missing[0]!r}, which is not stored"
                        + (f" ({len(missing) - 1} more missing)" if len(missing) > 1 else "")
                    )

    def _copy_plan(
        self,
        table: str,
        properties: tuple[Property, ...],
        rows: list[dict[str, Any]],
        endpoints: tuple[str, str] | None,
    ) -> tuple[str, list[str], dict[str, str], list[list[Any]]] | None:
        """How COPY FROM would load the rows: ('arrow' or 'csv', the table's columns, their
        types, the column values as stored); None if they cannot be copied unchanged."""
        by_name = {p.name: p for p in properties}
        info = self._raw(f"CALL table_info('{table}') RETURN *")
        columns = [row[1] for row in info]  # the table's own order
        types = {row[1]: row[2] for row in info}
        if USE_ARROW and _pyarrow() is not None and all(t in _ARROW_TYPES for t in types.values()):
            # Arrow carries every value as it is
            raw = [[_to_store(by_name[c], r.get(c)) for r in rows] if c in by_name else [None] * len(rows)
                   for c in columns]
            return "arrow", columns, types, raw
        values = [_csv_column(by_name.get(c), [r.get(c) for r in rows]) for c in columns]
        if any(v is None for v in values):
            return None
        return "csv", columns, types, cast(list[list[Any]], values)

    def _copy(
        self,
        table: str,
        rows: list[dict[str, Any]],
        endpoints: tuple[str, str] | None,
        plan: tuple[str, list[str], dict[str, str], list[list[Any]]] | None,
        directory: str,
    ) -> None:
        assert plan is not None
        self._copied = True
        how, columns, types, values = plan
        if how == "arrow":
            self._copy_arrow(table, columns, types, values, rows, endpoints, directory)
            return
        path = os.path.join(directory, f"{table}-{len(os.listdir(directory))}.csv")
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            if endpoints is None:
                writer.writerow(columns)
                writer.writerows(zip(*values))
            else:
                writer.writerow(["from", "to", *columns])
                writer.writerows(zip([r["s"] for r in rows], [r["t"] for r in rows], *values))
        options = "HEADER=true" + (f", from='{endpoints[0]}', to='{endpoints[1]}'" if endpoints else "")
        self._raw(f"COPY {_q(table)} FROM '{path}' ({options})")

    def _create_rows(
        self,
        table: str,
        properties: tuple[Property, ...],
        rows: list[dict[str, Any]],
        endpoints: tuple[str, str] | None,
    ) -> None:
        """New rows written with UNWIND ... CREATE (what cannot be copied)."""
        if endpoints is None:
            node_type = self.schema.nodes[table]
            self._create_nodes(node_type, [{p.name: _to_store(p, r.get(p.name)) for p in properties} for r in rows])
            return
        stored = [{**{p.name: _to_store(p, r.get(p.name)) for p in properties}, "s": r["s"], "t": r["t"]}
                  for r in rows]
        sets, slim = _assignments(properties, stored, ("s", "t"))
        a, b = endpoints
        for start in range(0, len(slim), BATCH):
            self._raw(
                f"UNWIND $rows AS r MATCH (a:{_q(a)}) WHERE a.uid = r.s MATCH (b:{_q(b)}) WHERE b.uid = r.t "
                f"CREATE (a)-[:{_q(table)} {{{sets}}}]->(b)",
                {"rows": slim[start : start + BATCH]},
            )

    def _copy_arrow(
        self,
        table: str,
        columns: list[str],
        types: dict[str, str],
        values: list[list[Any]],
        rows: list[dict[str, Any]],
        endpoints: tuple[str, str] | None,
        directory: str,
    ) -> None:
        """COPY from an Arrow table written as a Parquet file: about three times faster than CSV.

        Not from the table in memory (`COPY ... FROM variable`): LadybugDB's binding imports
        pandas to look at a Python variable, 0.3 s or more of the first write of every process."""
        import pyarrow.parquet as pq

        arrow = _pyarrow()
        data = {}
        if endpoints is not None:
            data["from"] = arrow_array([r["s"] for r in rows], arrow.string())
            data["to"] = arrow_array([r["t"] for r in rows], arrow.string())
        for column, column_values in zip(columns, values):
            data[column] = arrow_array(column_values, _ARROW_TYPES[types[column]](arrow))
        path = os.path.join(directory, f"{table}-{len(os.listdir(directory))}.parquet")
        pq.write_table(arrow.Table.from_arrays(list(data.values()), names=list(data)), path, compression="none")
        options = f" (from='{endpoints[0]}', to='{endpoints[1]}')" if endpoints else ""
        self._raw(f"COPY {_q(table)} FROM '{path}'{options}")

    def _create_nodes(self, node_type: NodeType, rows: list[dict[str, Any]]) -> None:
        sets, slim = _assignments(node_type.properties, rows)
        for start in range(0, len(slim), BATCH):
            self._raw(
                f"UNWIND $rows AS r CREATE (:{_q(node_type.label)} {{{sets}}})", {"rows": slim[start : start + BATCH]}
            )

    def _delete_task_nodes(self, task_id: str) -> None:
        for label, node_type in self.schema.nodes.items():
            if not node_type.shared:
                self._raw(f"MATCH (n:{_q(label)}) WHERE n.task = $t DETACH DELETE n", {"t": task_id})

    @contextlib.contextmanager
    def _transaction(self, failure: str, action: str, kept: Callable[[], bool] | None = None) -> Iterator[None]:
        """One write transaction: committed at the end, rolled back on any error, which is
        reported as `failure` ("... failed, nothing written") with the engine's reason.

        A failure to write the store's files (a full disk) leaves the store as it was before
        `action` ("writing task 'x'") and raises StoreFullError (see "A full disk" below).
        `kept` tells whether a write that used COPY FROM is there after all when the checkpoint
        that makes its rows durable failed (a failure half-way can have finished it)."""
        wal_before = self._wal_size()
        self._copied = False
        committed = False
        try:
            self._raw("BEGIN TRANSACTION")
            yield
            self._raw("COMMIT")
            committed = True
            if self._copied and self.location != MEMORY:  # COPY FROM's rows are in no log: a checkpoint keeps them
                self._raw("CHECKPOINT")
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C mid-write: nothing of it stays open or half-done
            if not committed:
                self._rollback()
            raise
        except Exception as exc:
            if not committed:
                self._rollback()
            if self.location == MEMORY:
                raise GraphStoreError(f"{failure}: {exc}") from exc
            if not committed and not _storage_failure(exc):
                if self._copied:
                    # LadybugDB 0.22: after a refused COPY FROM (e.g. a duplicated key) the next
                    # checkpoint can crash the process (heap corruption); start again from the files
                    self._reopen(f"{action} failed")
                raise GraphStoreError(f"{failure}: {exc}") from exc
            free = self._free_bytes()  # before the failed write's part of the log is cut off
            if self._after_storage_failure(exc, action, wal_before, committed, kept):
                log.info("store %r: %s was kept after all, its checkpoint failed: %s", self.location, action, exc)
                return
            if vars(self).get("_new"):  # the store this process was creating: it is removed (see __init__)
                raise self._storage_error("creating the store", exc, free, "(no store was created)") from exc
            raise self._storage_error(action, exc, free) from exc
        if (self._wal_size() or 0) >= CHECKPOINT_WAL_BYTES:
            self._checkpoint()

    # -- a full disk ---------------------------------------------------------------------
    # What LadybugDB 0.22 does on a full disk, and what is done about it here:
    # - a commit appends the transaction to the write-ahead log (`<store>.wal`); when that
    #   write fails, the log ends in part of the transaction and the log's writer keeps the
    #   bytes it could not write. Closing the database then writes them again from a C++
    #   destructor, fails again and aborts the process (std::terminate, exit -6), leaving a
    #   log whose checksum fails, which no later opening accepts. So the log is cut back to
    #   where the failed transaction began and the writer's file descriptor is pointed at
    #   /dev/null before the database is closed and opened again: the store is as it was.
    # - a checkpoint (LadybugDB's own after a commit once the log passes 16 MB, when closing,
    #   and always after COPY FROM) that fails half-way can leave a store that only a writer
    #   may open, and that needs free space to open at all. So this store turns LadybugDB's
    #   checkpoints off and checkpoints itself, only when the disk has room for it
    #   (`_checkpoint_room`); otherwise the committed writes stay in the log, which every
    #   opening replays, until a writer finds room. Without room COPY FROM is not used either.
    # - a checkpoint that fails all the same leaves a shadow file that read-only openings
    #   refuse until a writer opens the store; readers do that themselves (`_finish_recovery`).
    def _wal_path(self) -> Path:
        return self._path.with_name(self._path.name + ".wal")

    def _wal_size(self) -> int | None:
        if self.location == MEMORY:
            return None
        try:
            return os.stat(self._wal_path()).st_size
        except FileNotFoundError:
            return None

    def _checkpoint_room(self) -> bool:
        """True if the disk has room for a checkpoint: the size of the store's files plus
        CHECKPOINT_SPARE_BYTES (a checkpoint copies pages it changes to a shadow file and can
        grow the database by megabytes for a small log)."""
        if not vars(self).get("_writer"):
            return False
        try:
            free = shutil.disk_usage(self._path.parent).free
            used = sum(os.stat(f).st_size for f in (self._path, self._wal_path()) if f.exists())
        except OSError:
            return False
        return free >= used + CHECKPOINT_SPARE_BYTES

    def _checkpoint(self) -> None:
        """Checkpoint if there is a log and room for it. A failure is not an error (the committed
        writes stay in the log); a torn log record is cut off (see `_after_storage_failure`)."""
        wal_before = self._wal_size()
        if not wal_before or not self._checkpoint_room():
            return
        try:
            self._raw("CHECKPOINT")
        except Exception as exc:
            log.info("store %r: checkpoint failed, the writes stay in its log: %s", self.location, exc)
            if self._log_was_torn(exc, wal_before):
                self._reopen()

    def _log_was_torn(self, exc: BaseException, wal_size: int | None) -> bool:
        """If the failed write was the log's: cut the log back (`_cut_log`); True if so (the
        database must then be opened again)."""
        if f"path: {self._wal_path()} " not in str(exc):
            return False
        self._cut_log(wal_size, str(exc))
        return True

    def _cut_log(self, wal_size: int | None, message: str) -> None:
        """Cut the log back to `wal_size` bytes (remove it if None) and point the database's
        descriptors of it at /dev/null, so that closing the database writes nothing more to it."""
        wal = str(self._wal_path())
        _disarm(_descriptors_of(wal, message))
        if wal_size is None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(wal)
        else:
            with contextlib.suppress(FileNotFoundError):
                if os.stat(wal).st_size > wal_size:
                    os.truncate(wal, wal_size)

    def _after_storage_failure(
        self, exc: BaseException, action: str, wal_before: int | None, committed: bool, kept: Callable[[], bool] | None
    ) -> bool:
        """Put the store back to its state before the failed write and open it again. True if
        the write had been committed (only the checkpoint after it failed) and `kept` finds it
        there after all.

        Before its commit returns, whatever the log gained belongs to the failed transaction
        (this process holds the writer lock): it is cut off, whether the append failed or the
        flush to disk after it (then the write is not kept either, as reported)."""
        if committed:
            torn = self._log_was_torn(exc, wal_before)
        else:
            self._cut_log(wal_before, str(exc))
            torn = True
        self._reopen(f"{action} failed" + (" in the checkpoint that makes it last" if committed else ""))
        return not torn and kept is not None and kept()

    def _reopen(self, failed: str = "a checkpoint failed half-way") -> None:
        """Close the database without a checkpoint and open it again (as the writer; the lock is
        still held): what it holds is then what its files hold. If it cannot be opened (a
        checkpoint that failed half-way must be finished first, with free space), say so: the
        store object is closed then."""
        self._close_database(checkpoint=False)
        self._failed = failed  # what went wrong before, for the error if it cannot be opened
        try:
            self._connect(str(self._path), read_only=False)
        finally:
            self._failed = ""

    def _free_bytes(self) -> int:
        try:
            return shutil.disk_usage(self._path.parent).free
        except OSError:
            return 0

    def _storage_error(
        self, action: str, exc: BaseException, free: int, outcome: str = "(the store is as it was before it)"
    ) -> GraphStoreError:
        """One line: the store, that the disk is full (or what failed), that nothing was kept."""
        reason = " ".join(str(exc).split())
        short = re.search(r"numBytesToWrite: (\d+) numBytesWritten: (\d+)", reason)  # a short write: no room
        if (
            free < FULL_BYTES
            or (short is not None and int(short.group(2)) < int(short.group(1)))
            or any(m in reason for m in ("No space left", "quota", "Quota"))
        ):
            return StoreFullError(
                f"store {self.location!r}: the disk is full ({_size(free)} free in {str(self._path.parent)!r}); "
                f"{action} failed and nothing of it was kept {outcome}"
            )
        return GraphStoreError(
            f"store {self.location!r}: cannot write its files ({reason}); {action} failed and nothing of it "
            f"was kept {outcome}"
        )

    def _rollback(self) -> None:
        try:
            self._raw("ROLLBACK")
        except Exception:
            pass  # the engine already ended the transaction

    def delete_shared(self, owner: str, labels: Iterable[str]) -> dict[str, int]:
        chosen = shared_labels(self.schema, labels)
        self._writable(f"delete the records of {owner!r}")
        counts: dict[str, int] = {}
        with self._lock:
            with self._transaction(
                f"deleting the records of {owner!r} failed, nothing deleted", f"deleting the records of {owner!r}"
            ):
                for label in chosen:
                    match = f"MATCH (n:{_q(label)}) WHERE n.{_q(self.schema.nodes[label].owner_property)} = $o"
                    found = self._raw(f"{match} RETURN count(n)", {"o": owner})
                    counts[label] = int(found[0][0])
                    if counts[label]:
                        self._raw(f"{match} DETACH DELETE n", {"o": owner})
        return counts

    def delete(self, task_id: str) -> bool:
        self._writable(f"delete task {task_id!r}")
        with self._lock:
            if self.content_hash(task_id) is None:
                return False
            with self._transaction(f"deleting task {task_id!r} failed, nothing deleted", f"deleting task {task_id!r}"):
                self._delete_task_nodes(task_id)
            return True

    # -- reading ----------------------------------------------------------------------
    def get(self, task_id: str) -> TaskGraph:
        return self.get_many([task_id])[0]

    def get_many(self, task_ids: Sequence[str]) -> list[TaskGraph]:
        """The tasks in one query per label and relationship, whatever their number."""
        ids = list(dict.fromkeys(task_ids))
        with self._lock:
            task_type = self.schema.nodes["Task"]
            cols = ", ".join(f"t.{_q(p.name)}" for p in task_type.properties)
            graphs: dict[str, TaskGraph] = {}
            for row in self._raw(f"MATCH (t:Task) WHERE t.uid IN $ids RETURN {cols}", {"ids": ids}):
                task_props = {p.name: _from_store(p, v) for p, v in zip(task_type.properties, row)}
                task_id = task_props.pop("uid")
                task_props.pop("task", None)
                family, name = task_props.pop("family"), task_props.pop("name")
                graphs[task_id] = TaskGraph(
                    task_id, family, name, schema=self.schema, **{k: v for k, v in task_props.items() if v is not None}
                )
            missing = next((task_id for task_id in ids if task_id not in graphs), None)
            if missing is not None:
                raise TaskNotFound(missing, self.location, [t.task_id for t in self.list()])
            for label, node_type in self.schema.nodes.items():
                if label == "Task" or node_type.shared:
                    continue
                stored = [p for p in node_type.properties if p.name != "task"]
                cols = ", ".join(f"n.{_q(p.name)}" for p in stored)
                query = f"MATCH (n:{_q(label)}) WHERE n.task IN $ids RETURN n.task, {cols}"
                for row in self._raw(query, {"ids": ids}):
                    values = {p.name: _from_store(p, v) for p, v in zip(stored, row[1:])}
                    uid = values.pop("uid")
                    graphs[row[0]].add_node(uid[len(row[0]) + 1 :], label, **values)
            for rel_name, rel in self.schema.rels.items():
                cols = "".join(f", r.{_q(p.name)}" for p in rel.properties)
                for a, b in rel.endpoints:
                    if self.schema.nodes[a].owner_property != TASK_PROPERTY:
                        continue  # a record's edge (a run's `task` is the task it ran on, not its owner)
                    query = (
                        f"MATCH (a:{_q(a)})-[r:{_q(rel_name)}]->(b:{_q(b)}) WHERE a.task IN $ids "
                        f"RETURN a.task, a.uid, b.uid{cols}"
                    )
                    for row in self._raw(query, {"ids": ids}):
                        task_id, prefix = row[0], len(row[0]) + 1
                        source = TASK_LOCAL_ID if row[1] == task_id else row[1][prefix:]
                        target = TASK_LOCAL_ID if row[2] == task_id else row[2][prefix:]
                        props = {p.name: _from_store(p, v) for p, v in zip(rel.properties, row[3:])}
                        graphs[task_id].add_edge(source, target, rel_name, **props)
            return [graphs[task_id] for task_id in task_ids]

    def list(self) -> list[TaskSummary]:
        with self._lock:
            rows = self._raw(
                "MATCH (t:Task) RETURN t.uid, t.family, t.n_states, t.n_actions, t.source, t.content_hash "
                "ORDER BY t.uid"
            )
        return [TaskSummary(r[0], r[1], r[2], r[3], r[4] or "", r[5] or "") for r in rows]

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, sources: Mapping[str, Any] | None = None
    ) -> QueryResult:
        if sources is None and named_sources(query):
            sources = registered_sources(self)
        check_read_only(query, sources or ())
        text = quote_reserved_properties(query)
        params = dict(params or {})
        if sources:
            text, params = _with_sources(text, params, sources)
        with self._lock:
            try:
                self._raw("BEGIN TRANSACTION READ ONLY")
            except Exception as exc:
                raise QueryError(f"cannot start a read-only transaction on {self.location!r}: {exc}") from None
            try:
                result = self._conn.execute(text, params or {})
                results = result if isinstance(result, list) else [result]
                columns = results[-1].get_column_names()
                rows = cast(list[list[Any]], results[-1].get_all())
                for r in results:
                    r.close()
                self._raw("COMMIT")
            except Exception as exc:
                self._rollback()
                raise QueryError(f"query failed: {exc}") from None
        return QueryResult(columns, rows)

    def close(self) -> None:
        from .interrupts import interrupts_held

        with self._lock, interrupts_held():  # a Ctrl-C here would leave the files half-closed
            self._close_database(checkpoint=True)
            if self._file_lock is not None:
                self._file_lock.release()  # after the database is closed: the next writer may open it now
                self._file_lock = None

    def _close_database(self, checkpoint: bool) -> None:
        """Close the connection, then the database; a writer checkpoints first if `checkpoint`
        and the disk has room (LadybugDB's own checkpoint on closing is off, see `_connect`)."""
        if checkpoint and vars(self).get("_conn") is not None:
            self._checkpoint()
        for name in ("_conn", "_db"):  # the connection first, then the database
            obj = vars(self).pop(name, None)  # gone: a closed store cannot be used by mistake
            if obj is not None:
                try:
                    obj.close()
                except Exception:
                    pass

    def __repr__(self) -> str:
        return f"LadybugStore({self.location!r})"


def _with_sources(text: str, params: dict[str, Any], sources: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A query's `LOAD FROM $name` clauses made to read their source: a list of files becomes a
    list literal of their paths (LadybugDB scans them, Parquet or CSV), a table (pyarrow) is
    bound as the parameter. A path that a literal could not hold safely is refused."""
    for name in named_sources(text):
        source = sources[name]
        if isinstance(source, (list, tuple)):
            for path in source:
                if "'" in str(path) or "\\" in str(path):
                    raise QueryError(f"source ${name}: the path {str(path)!r} cannot be scanned (a quote or backslash)")
            literal = "[" + ", ".join(f"'{path}'" for path in source) + "]"
            text = re.sub(rf"(\bLOAD\s+FROM\s+)\${name}\b", lambda m: m.group(1) + literal, text, flags=re.IGNORECASE)
            params.pop(name, None)
        else:
            params[name] = source
    return text, params
