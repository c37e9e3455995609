"""The server store: Neo4j (or any Bolt server, e.g. ArcadeDB) through the official driver.

Same contract as the embedded store: a task is written in one transaction (delete its
old nodes, then batched `UNWIND $rows` creates: one round trip per label and per
relationship type / endpoint pair, per batch), the same content hash changes nothing,
a failure leaves the store as it was, and `cypher` only reads.

Connection settings (argument > environment > default):
- URI:      argument, else `GRAPHTASKS_STORE` (must be bolt://, neo4j:// or a +s/+ssc variant)
- user:     `GRAPHTASKS_NEO4J_USER`, default 'neo4j'
- password: `GRAPHTASKS_NEO4J_PASSWORD` (a 'user:password@' part of the URI also works)
- database: `GRAPHTASKS_NEO4J_DATABASE`, default: the server's default database
The password never appears in `location`, in error messages or in `repr`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import neo4j
from neo4j import exceptions as neo4j_errors

from . import bolt_revisions
from .cypher_text import check_read_only, named_sources
from .errors import ConflictError, GraphStoreError, QueryError, SchemaError, StoreLocationError, TaskNotFound
from .schema import SCHEMA, TASK_PROPERTY, Property, Schema
from .schema import quote_name as _q
from .store import (
    STORE_ENV_VAR,
    GraphStore,
    QueryResult,
    SharedEdges,
    SharedNodes,
    TaskSummary,
    check_shared_request,
    shared_labels,
)
from .taskgraph import TASK_LOCAL_ID, TaskGraph, uid_of

USER_ENV_VAR = "GRAPHTASKS_NEO4J_USER"
PASSWORD_ENV_VAR = "GRAPHTASKS_NEO4J_PASSWORD"
DATABASE_ENV_VAR = "GRAPHTASKS_NEO4J_DATABASE"
BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
DEFAULT_BATCH_SIZE = 5000  # rows per UNWIND; ArcadeDB and Neo4j both take this comfortably

log = logging.getLogger(__name__)

Row = TypeVar("Row")
NodeRows = dict[tuple[str, tuple[str, ...]], list[list[Any]]]
EdgeRows = dict[tuple[str, str, str, tuple[str, ...]], dict[str, list[list[Any]]]]
SharedEdgeRows = dict[tuple[str, str, str], list[dict[str, Any]]]


def _to_store(prop: Property, value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if prop.kind == "json" else value


def _coerce(kind: str, value: Any) -> Any:
    """Bring a value read from the server back to the schema's Python type.

    Servers may widen or narrow numbers (e.g. 1.0 read back as 1); the task graph must
    compare equal and hash the same as what was written.
    """
    if value is None:
        return None
    if kind == "json":
        return json.loads(value) if isinstance(value, str) else value
    if kind.endswith("[]"):
        return [_coerce(kind[:-2], v) for v in value]
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    return value


def _plain(value: Any) -> Any:
    """Driver graph values as plain data, so query results print and serialise like the embedded store's."""
    if isinstance(value, neo4j.graph.Node):
        labels = sorted(value.labels)
        return {"_label": labels[0] if len(labels) == 1 else labels, **{k: _plain(v) for k, v in value.items()}}
    if isinstance(value, neo4j.graph.Relationship):
        return {"_label": value.type, **{k: _plain(v) for k, v in value.items()}}
    if isinstance(value, neo4j.graph.Path):
        return {"_nodes": [_plain(n) for n in value.nodes], "_rels": [_plain(r) for r in value.relationships]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# A read that met a version being written is read again, waiting a little longer each time
# (10 ms growing by half up to 200 ms): under eight writers hammering one task a reader may
# lose many races running, and must still get a whole version (about 7 s at the most).
TORN_READ_RETRIES = 40
TORN_READ_PAUSE = (0.01, 1.5, 0.2)  # first pause, growth, largest pause (seconds)


def torn_read_pause(attempt: int) -> float:
    first, growth, largest = TORN_READ_PAUSE
    return min(largest, first * growth**attempt)


# A write the server refused with a transient error (ArcadeDB: a concurrent commit in flight)
# is run again after 10 ms, growing by half up to 0.2 s, for up to 30 s (the driver's own limit).
TRANSIENT_RETRY_SECONDS = 30.0
TRANSIENT_PAUSE = (0.01, 1.5, 0.2)


def transient_pause(attempt: int) -> float:
    first, growth, largest = TRANSIENT_PAUSE
    return min(largest, first * growth**attempt)


# The Task node names the labels its task's nodes have (and the version it names them for), so a
# read or a replacing write touches those labels only: one statement per label or relationship
# pair of the whole schema was 65 round trips per read (29 per write) with every family's and
# the experiment records' labels, whatever the task held.
LABELS_PROPERTY = "stored_labels"
LABELS_HASH_PROPERTY = "stored_labels_hash"

# Stores written before records named their owner `owner` (it was in `task`, a run's task in
# `task_id`) have their properties renamed (NodeType.renamed) the first time a store object
# uses them, in batches; this node then records the schema version so later openings skip it.
SCHEMA_VERSION_LABEL = "GraphtasksSchema"
SCHEMA_VERSION = 2  # 2: records' owner in `owner`, a run's task in `task`
RENAME_BATCH = 10_000

RACE_RETRIES = 10  # an unchecked write that lost a race with another writer of the same task is run again
RACE_PAUSE = 0.05  # seconds
# how servers word a unique-key refusal (ArcadeDB, Neo4j): when a write found no task to
# replace, this can only mean another writer created the same task meanwhile
_DUPLICATE_KEY = ("Duplicated key", "already exists with label")


class _TornRead(Exception):
    """A read saw parts of two versions: an edge to a node written after the nodes were read,
    or content whose hash is not the hash stored with it (`graph` is what was read)."""

    def __init__(self, task_id: str, graph: TaskGraph | None = None, hashes: tuple[str, str] | None = None) -> None:
        super().__init__(task_id)
        self.graph = graph
        self.hashes = hashes


class _MissingEndpoint(GraphStoreError):
    """An edge's endpoint was not found: on an optimistic server (ArcadeDB), what a write that
    raced another write of the same task can see; an unchecked write is run again."""


def _created_meanwhile(claims: list[bolt_revisions.Claim], failure: GraphStoreError) -> bool:
    """True if a write that found no such task was refused a unique key: a racing writer
    created the task between its read and its commit (and may have deleted it again since,
    so the stored hash need not show it)."""
    return bool(claims) and not claims[-1].existed and any(m in str(failure) for m in _DUPLICATE_KEY)


def _without_nulls(declared: tuple[Property, ...], row: dict[str, Any]) -> dict[str, Any]:
    """A checked row as the server stores it: JSON as text, no nulls (SET += would erase)."""
    return {p.name: _to_store(p, row[p.name]) for p in declared if row.get(p.name) is not None}


def _chunks(rows: list[Row], size: int) -> Iterable[list[Row]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _edge_batches(sources: dict[str, list[list[Any]]], size: int) -> Iterable[tuple[list[list[Any]], int]]:
    """Rows [source, [[target, values...], ...]] in batches of about `size` edges, with each batch's edge count."""
    batch: list[list[Any]] = []
    count = 0
    for source, out in sources.items():
        batch.append([source, out])
        count += len(out)
        if count >= size:
            yield batch, count
            batch, count = [], 0
    if batch:
        yield batch, count


def _rename_batch(tx: neo4j.ManagedTransaction, query: str) -> Any:
    """One batch of a renaming (`Neo4jStore._ensure_renamed`): the record with the count `c`."""
    return tx.run(query, batch=RENAME_BATCH).single()


def split_credentials(uri: str) -> tuple[str, str | None, str | None]:
    """Remove a 'user:password@' part from a Bolt URI; return (clean uri, user, password)."""
    parts = urlsplit(uri)
    if parts.username is None and parts.password is None:
        return uri, None, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return clean, user, password


class Neo4jStore(GraphStore):
    """GraphStore on a Bolt server (Neo4j 5, ArcadeDB) through the official `neo4j` driver."""

    def __init__(
        self,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        schema: Schema = SCHEMA,
        read_only: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        on_wait: Any = None,
        **driver_options: Any,
    ) -> None:
        """`on_wait` is accepted and not used: a server takes no lock file, nobody waits for one."""
        raw_uri = uri or os.environ.get(STORE_ENV_VAR) or ""
        scheme = raw_uri.split("://", 1)[0].lower() if "://" in raw_uri else ""
        if scheme not in BOLT_SCHEMES:
            raise StoreLocationError(
                f"not a Bolt URI: {split_credentials(raw_uri)[0] if raw_uri else '(none given)'!r}; "
                f"use bolt://host:7687 or neo4j://host:7687 (argument or ${STORE_ENV_VAR})"
            )
        clean_uri, uri_user, uri_password = split_credentials(raw_uri)
        self.uri = clean_uri
        self.user = user or uri_user or os.environ.get(USER_ENV_VAR) or "neo4j"
        self._password = password if password is not None else (uri_password or os.environ.get(PASSWORD_ENV_VAR, ""))
        self.database = database or os.environ.get(DATABASE_ENV_VAR) or None
        self.location = clean_uri + (f" (database {self.database})" if self.database else "")
        self.schema = schema
        self.read_only = read_only
        self.batch_size = max(1, int(batch_size))
        self.schema_warnings: list[str] = []
        self._schema_ready = False
        self._renames_checked = False
        self._lock = threading.RLock()
        try:
            # transient errors are retried by _write and _read with short pauses, not by the driver
            driver_options.setdefault("max_transaction_retry_time", 0)
            self._driver = neo4j.GraphDatabase.driver(clean_uri, auth=(self.user, self._password), **driver_options)
        except (neo4j_errors.ConfigurationError, ValueError, TypeError) as exc:
            raise StoreLocationError(f"cannot use Bolt URI {self.location!r}: {self._scrub(exc)}") from None
        try:
            with self._session() as session:
                session.run("RETURN 1").consume()
        except Exception as exc:
            self._driver.close()
            raise self._connection_error(exc) from None

    # -- connection and errors -----------------------------------------------------------
    def _session(self, access_mode: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        return self._driver.session(database=self.database, default_access_mode=access_mode, fetch_size=-1)

    def _scrub(self, exc: BaseException | str) -> str:
        """The error text with the password blanked out, whatever the server echoed."""
        text = str(exc)
        if self._password:
            text = text.replace(self._password, "***")
        return text

    def _connection_error(self, exc: BaseException) -> GraphStoreError:
        if isinstance(exc, neo4j_errors.AuthError):
            return StoreLocationError(
                f"authentication to {self.location!r} as user {self.user!r} failed; set the user and password "
                f"(${USER_ENV_VAR}, ${PASSWORD_ENV_VAR}): {self._scrub(exc.message or exc)}"
            )
        if isinstance(exc, (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError)):
            return StoreLocationError(f"cannot connect to {self.location!r}: {self._scrub(exc)}")
        if isinstance(exc, neo4j_errors.Neo4jError) and "Database" in (exc.code or ""):
            return StoreLocationError(
                f"database {self.database!r} is not available on {self.uri!r} (set ${DATABASE_ENV_VAR}): "
                f"{self._scrub(exc.message or exc)}"
            )
        if isinstance(exc, neo4j_errors.Neo4jError):
            return StoreLocationError(f"{self.location!r} refused the connection: {self._scrub(exc.message or exc)}")
        return StoreLocationError(f"cannot use {self.location!r}: {type(exc).__name__}: {self._scrub(exc)}")

    def _failure(self, what: str, exc: BaseException) -> GraphStoreError:
        if isinstance(exc, GraphStoreError):
            return exc
        if isinstance(exc, (neo4j_errors.AuthError, neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired)):
            return self._connection_error(exc)
        message = exc.message if isinstance(exc, neo4j_errors.Neo4jError) and exc.message else exc
        return GraphStoreError(f"{what} on {self.location!r} failed, nothing written: {self._scrub(message)}")

    def _write(
        self,
        what: str,
        work: Callable[[neo4j.ManagedTransaction], Any],
        superseded: Callable[[], bool] | None = None,
    ) -> Any:
        """Run `work` in one write transaction, again after a transient error (a lock or commit
        race the server asks to retry) after a short pause growing to 0.2 s, for up to
        TRANSIENT_RETRY_SECONDS.

        The driver's own retry waits about 1 s, then 2 s, ...: on ArcadeDB, where racing
        writers of one task meet such errors often, those waits were most of a version-checked
        writer's time (and the retry was then refused anyway: the version had moved on).
        `superseded` (a version-checked write): asked after a transient error; True means the
        version the write was built on is gone, so the error is raised at once (the caller
        reports a ConflictError) instead of trying again.
        """
        if self.read_only:
            raise GraphStoreError(f"store {self.location!r} was opened read-only; cannot {what}")
        with self._lock:
            self._ensure_renamed()
            self._ensure_schema()
            started = time.monotonic()
            attempt = 0
            while True:
                try:
                    with self._session() as session:
                        # managed: the driver retries nothing, the loop here does
                        return session.execute_write(work)
                except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
                    retry = (
                        exc.is_retryable()
                        and time.monotonic() - started < TRANSIENT_RETRY_SECONDS
                        and not (superseded is not None and superseded())
                    )
                    if not retry:
                        raise self._failure(what, exc) from exc
                except Exception as exc:
                    raise self._failure(what, exc) from exc
                time.sleep(transient_pause(attempt))
                attempt += 1

    def _read(self, work: Callable[[neo4j.ManagedTransaction], Any]) -> Any:
        """Run `work` in a read transaction, again after a transient error (as `_write`)."""
        with self._lock:
            self._ensure_renamed()
            started = time.monotonic()
            attempt = 0
            while True:
                try:
                    with self._session(neo4j.READ_ACCESS) as session:
                        return session.execute_read(work)
                except GraphStoreError:
                    raise
                except (neo4j_errors.AuthError, neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
                    raise self._connection_error(exc) from None
                except (neo4j_errors.Neo4jError, neo4j_errors.DriverError) as exc:
                    if not exc.is_retryable() or time.monotonic() - started >= TRANSIENT_RETRY_SECONDS:
                        raise
                time.sleep(transient_pause(attempt))
                attempt += 1

    # -- schema: properties of earlier versions, constraints and indexes --------------------
    def _ensure_renamed(self) -> None:
        """Rename the properties an earlier schema named otherwise (`NodeType.renamed`: records'
        owner was `task`, a run's task `task_id`), once per store object, in batches of
        RENAME_BATCH nodes (each its own transaction: an interrupted renaming goes on where it
        stopped), then record SCHEMA_VERSION in a `GraphtasksSchema` node so that later openings
        read one node instead. Done for readers too (the store is read as the schema says); a
        server that refuses the write (a read-only user) is noted in `schema_warnings`."""
        if self._renames_checked:
            return
        self._renames_checked = True
        try:
            with self._session() as session:
                found = session.run(
                    f"MATCH (m:{SCHEMA_VERSION_LABEL}) RETURN max(m.version) AS v"
                ).single()
                if found is not None and found["v"] is not None and int(found["v"]) >= SCHEMA_VERSION:
                    return
                for label, node_type in self.schema.nodes.items():
                    for old, new in node_type.renamed:
                        query = (
                            # the value is taken first; setting null removes a property (ArcadeDB ignores a
                            # REMOVE after SET in one statement)
                            f"MATCH (n:{_q(label)}) WHERE n.{_q(new)} IS NULL AND n.{_q(old)} IS NOT NULL "
                            f"WITH n, n.{_q(old)} AS v LIMIT $batch SET n.{_q(new)} = v, n.{_q(old)} = null "
                            "RETURN count(n) AS c"
                        )
                        while True:
                            moved = session.execute_write(_rename_batch, query)
                            if moved is None or not moved["c"]:
                                break
                            log.info("%s: renamed %s.%s to %s on %d nodes", self.location, label, old, new, moved["c"])
                session.run(
                    f"MERGE (m:{SCHEMA_VERSION_LABEL} {{key: 'graphtasks'}}) SET m.version = $v", v=SCHEMA_VERSION
                ).consume()
        except (neo4j_errors.AuthError, neo4j_errors.ServiceUnavailable) as exc:
            raise self._connection_error(exc) from None
        except neo4j_errors.Neo4jError as exc:
            warning = (
                f"{self.location}: could not rename the properties of an earlier schema (records' owner from "
                f"`task` to `owner`): {self._scrub(exc.message or exc)}"
            )
            log.warning(warning)
            self.schema_warnings.append(warning)

    # -- schema: constraints and indexes ---------------------------------------------------
    def _ensure_schema(self) -> None:
        """Create the schema's declared constraints and indexes once per store object.

        Neo4j 5 syntax; servers with other DDL (older Neo4j, some Bolt servers) keep working
        without them: the failure is logged and kept in `schema_warnings`.
        """
        if self._schema_ready:
            return
        statements = list(bolt_revisions.SCHEMA_STATEMENTS)
        for index in self.schema.indexes():  # declared in the schema: uid unique, task, (task, group)
            keys = ", ".join(f"n.{_q(p)}" for p in index.properties)
            if index.unique:
                statements.append(
                    f"CREATE CONSTRAINT {index.name} IF NOT EXISTS FOR (n:{_q(index.label)}) REQUIRE {keys} IS UNIQUE"
                )
            else:
                statements.append(f"CREATE INDEX {index.name} IF NOT EXISTS FOR (n:{_q(index.label)}) ON ({keys})")
        with self._session() as session:
            for statement in statements:
                try:
                    session.run(statement).consume()
                except (neo4j_errors.AuthError, neo4j_errors.ServiceUnavailable) as exc:
                    raise self._connection_error(exc) from None
                except neo4j_errors.Neo4jError as exc:
                    warning = f"{self.location}: could not run {statement!r}: {self._scrub(exc.message or exc)}"
                    log.warning(warning)
                    self.schema_warnings.append(warning)
        self._schema_ready = True

    # -- writing ---------------------------------------------------------------------------
    # Rows travel as short positional lists with local ids (the server adds the task prefix):
    # the driver's packing of many small maps with repeated keys and long uids was a third
    # of the time of putting a 17x17 grid.
    def _rows(
        self, graph: TaskGraph, only: set[str] | None = None
    ) -> tuple[NodeRows, EdgeRows, dict[str, list[dict[str, Any]]], SharedEdgeRows]:
        """Per-task node rows per (label, keys), edge rows per (type, labels, keys) grouped by
        source, dict rows of shared nodes (merged by their global uid) and of edges touching
        them (matched by global uid); no None values.
        With `only`: just those nodes and the edges touching them."""
        task_id = graph.task_id
        nodes: NodeRows = defaultdict(list)
        shared: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for local_id, props in graph.nodes():
            if only is not None and local_id not in only:
                continue
            label = graph.label(local_id)
            node_type = self.schema.nodes[label]
            owner = node_type.owner_property
            present = [
                p for p in node_type.properties if p.name not in ("uid", owner) and props.get(p.name) is not None
            ]
            if node_type.shared:
                row = {p.name: _to_store(p, props[p.name]) for p in present}
                shared[label].append({**row, "uid": uid_of(task_id, local_id), owner: task_id})
                continue
            key = (label, tuple(p.name for p in present))
            nodes[key].append([local_id, *(_to_store(p, props[p.name]) for p in present)])
        edges: EdgeRows = defaultdict(lambda: defaultdict(list))
        shared_edges: SharedEdgeRows = defaultdict(list)
        labels = {local_id: data["label"] for local_id, data in graph.graph.nodes(data=True)}
        for source, target, data in graph.graph.edges(data=True):
            if only is not None and source not in only and target not in only:
                continue
            rel = self.schema.rels[data["rel"]]
            values = data["props"]
            if self.schema.nodes[labels[source]].shared or self.schema.nodes[labels[target]].shared:
                props = {p.name: values[p.name] for p in rel.properties if values.get(p.name) is not None}
                row = {"s": uid_of(task_id, source), "t": uid_of(task_id, target), "p": props}
                shared_edges[(data["rel"], labels[source], labels[target])].append(row)
                continue
            names = tuple(p.name for p in rel.properties if values.get(p.name) is not None)
            edges[(data["rel"], labels[source], labels[target], names)][source].append(
                [target, *(values[name] for name in names)]
            )
        return nodes, edges, shared, shared_edges

    def _prefix(self, task_id: str, label: str) -> str:
        """What the server puts before a local id to make the uid (the Task node's local id is '')."""
        return task_id if label == "Task" else task_id + "/"

    def put(self, graph: TaskGraph, expected_hash: str | None = None) -> bool:
        return self._put(graph, expected_hash, None)

    def extend(self, graph: TaskGraph, new_nodes: Iterable[str], expected_hash: str) -> bool:
        """Write only `new_nodes` and their edges, and the new content hash (see GraphStore.extend)."""
        return self._put(graph, expected_hash, set(new_nodes))

    def _put(self, graph: TaskGraph, expected_hash: str | None, only: set[str] | None) -> bool:
        graph.seal()
        task_id = graph.task_id
        new_hash = graph.task["content_hash"]
        nodes, edges, shared, shared_edges = self._rows(graph, only)
        labels = sorted({graph.label(local_id) for local_id, _ in graph.nodes()} - {"Task"})

        # Every write first changes the Task node (its hash becomes the new one), reading the
        # old hash in the same statement: on Neo4j that takes the node's write lock, so a racing
        # writer waits and then reads the committed hash. On optimistic servers (ArcadeDB) the
        # revision claim is what refuses the second of two writes built on one version
        # (see bolt_revisions).
        claims: list[bolt_revisions.Claim] = []

        def work(tx: neo4j.ManagedTransaction) -> bool:
            made = bolt_revisions.claim(tx, task_id, new_hash)
            claims.append(made)
            # The version check first: a write built on a version that is gone is refused even
            # if another writer already stored the same content (answering "unchanged" would
            # lose a read-modify-write increment). Same content on the expected version: nothing to write.
            if expected_hash is not None and made.stored_hash != expected_hash:
                raise ConflictError(
                    f"task {task_id!r} in {self.location!r} changed since it was read "
                    f"(content hash {made.stored_hash or 'none: deleted'}, expected {expected_hash}); nothing written"
                )
            if made.stored_hash == new_hash:
                return False
            if only is None and made.existed:
                self._delete_in(tx, task_id, self._stored_labels(tx, task_id, made.stored_hash))
            for label, rows in shared.items():
                query = f"UNWIND $rows AS r MERGE (n:{_q(label)} {{uid: r.uid}}) SET n += r"
                for chunk in _chunks(rows, self.batch_size):
                    tx.run(query, rows=chunk).consume()
            for (label, keys), node_rows in nodes.items():
                self._create_nodes(tx, task_id, label, keys, node_rows)
            for (rel_name, a, b, keys), sources in edges.items():
                self._create_edges(tx, task_id, rel_name, a, b, keys, sources)
            for (rel_name, a, b), rows in shared_edges.items():  # edges touching shared nodes: global uids
                self._create_edges_by_uid(tx, rel_name, a, b, rows)
            tx.run(
                f"MATCH (t:Task) WHERE t.uid = $id SET t.{LABELS_PROPERTY} = $labels, t.{LABELS_HASH_PROPERTY} = $h",
                id=task_id,
                labels=labels,
                h=new_hash,
            ).consume()
            bolt_revisions.record(tx, made)
            return True

        if expected_hash is None:
            return self._write_task(f"writing task {task_id!r}", task_id, work, claims)
        try:
            return self._write(
                f"writing task {task_id!r}", work, superseded=lambda: self.content_hash(task_id) != expected_hash
            )
        except ConflictError:
            raise
        except GraphStoreError as exc:
            time.sleep(RACE_PAUSE)  # a racing commit may still be becoming visible
            stored = self.content_hash(task_id)
            if stored == expected_hash and not self._lost_race(claims, exc):
                raise
            raise ConflictError(
                f"task {task_id!r} in {self.location!r} was changed by a concurrent writer "
                f"(content hash now {stored or 'none: deleted'}, expected {expected_hash}); nothing written"
            ) from exc

    def _lost_race(self, claims: list[bolt_revisions.Claim], failure: GraphStoreError) -> bool:
        """True if a failed write lost its revision claim to another write: the server named the
        claim index, or the key its last try claimed is held now (unless pruned since)."""
        if bolt_revisions.REVISION_LABEL in str(failure):
            return True
        key = claims[-1].key if claims else None
        if key is None:
            return False
        with self._lock, self._session(neo4j.READ_ACCESS) as session:
            return bolt_revisions.taken(session, key)

    def _create_nodes(
        self, tx: neo4j.ManagedTransaction, task_id: str, label: str, keys: tuple[str, ...], rows: list[list[Any]]
    ) -> None:
        props = "".join(f", {_q(k)}: r[{i}]" for i, k in enumerate(keys, 1))
        query = f"UNWIND $rows AS r CREATE (n:{_q(label)} {{uid: $prefix + r[0], task: $task{props}}})"
        for chunk in _chunks(rows, self.batch_size):
            tx.run(query, rows=chunk, prefix=self._prefix(task_id, label), task=task_id).consume()

    def _create_edges(
        self,
        tx: neo4j.ManagedTransaction,
        task_id: str,
        rel_name: str,
        a: str,
        b: str,
        keys: tuple[str, ...],
        sources: dict[str, list[list[Any]]],
    ) -> None:
        """Edges grouped by source node, properties written inline from the schema.

        One row per source (its outgoing edges in a list) looks each source up once by its
        indexed uid; inline properties avoid a map SET per edge. On ArcadeDB this halves the
        server time of the MOVE edges of a 17x17 grid against one row per edge with `SET e = r.p`.
        """
        inline = ", ".join(f"{_q(k)}: o[{i}]" for i, k in enumerate(keys, 1))
        query = (
            f"UNWIND $rows AS r MATCH (a:{_q(a)} {{uid: $pa + r[0]}}) UNWIND r[1] AS o "
            f"MATCH (b:{_q(b)} {{uid: $pb + o[0]}}) "
            f"CREATE (a)-[e:{_q(rel_name)}{' {' + inline + '}' if inline else ''}]->(b) "
            f"RETURN count(e) AS n"
        )
        pa, pb = self._prefix(task_id, a), self._prefix(task_id, b)
        for chunk, expected in _edge_batches(sources, self.batch_size):
            created = tx.run(query, rows=chunk, pa=pa, pb=pb).single()
            if created is None or created["n"] != expected:
                got = created["n"] if created is not None else 0
                raise _MissingEndpoint(
                    f"{rel_name} edges {a}->{b}: created {got} of {expected}; an endpoint node was not found"
                )

    def merge_shared(
        self,
        nodes: SharedNodes,
        edges: SharedEdges = (),
    ) -> tuple[int, int]:
        """Create or update shared knowledge (see GraphStore.merge_shared) in one transaction."""
        checked_nodes, checked_edges = check_shared_request(self.schema, nodes, edges)
        node_batches = [(t, [_without_nulls(t.properties, r) for r in rows]) for t, rows in checked_nodes]
        edge_batches = []
        for rel, a, b, rows in checked_edges:
            encoded = [
                {"s": r["s"], "t": r["t"], "key": r["key"], "p": _without_nulls(rel.properties, r)} for r in rows
            ]
            edge_batches.append((rel.name, a, b, encoded))

        def work(tx: neo4j.ManagedTransaction) -> tuple[int, int]:
            created_nodes = created_edges = 0
            for node_type, rows in node_batches:
                label = _q(node_type.label)
                for chunk in _chunks(rows, self.batch_size):
                    found = tx.run(
                        f"UNWIND $u AS x MATCH (n:{label} {{uid: x}}) RETURN n.uid AS uid", u=[r["uid"] for r in chunk]
                    )
                    have = {record["uid"] for record in found}
                    created_nodes += sum(r["uid"] not in have for r in chunk)
                    tx.run(f"UNWIND $rows AS r MERGE (n:{label} {{uid: r.uid}}) SET n += r", rows=chunk).consume()
            for rel_name, a, b, rows in edge_batches:
                pattern = f"(a:{_q(a)} {{uid: r.s}})-[e:{_q(rel_name)}]->(b:{_q(b)} {{uid: r.t}})"
                for chunk in _chunks(rows, self.batch_size):
                    probe = [{"s": r["s"], "t": r["t"], "key": r["key"]} for r in chunk]
                    found = tx.run(
                        f"UNWIND $rows AS r MATCH {pattern} WHERE e.key = r.key RETURN r.key AS key", rows=probe
                    )
                    have = {record["key"] for record in found}
                    fresh = [r for r in chunk if r["key"] not in have]
                    old = [r for r in chunk if r["key"] in have]
                    if fresh:
                        self._create_edges_by_uid(tx, rel_name, a, b, fresh)
                    if old:
                        tx.run(
                            f"UNWIND $rows AS r MATCH {pattern} WHERE e.key = r.key SET e += r.p", rows=old
                        ).consume()
                    created_edges += len(fresh)
            return created_nodes, created_edges

        return self._write("merging shared knowledge", work)

    def delete_shared(self, owner: str, labels: Iterable[str]) -> dict[str, int]:
        chosen = shared_labels(self.schema, labels)

        def work(tx: neo4j.ManagedTransaction) -> dict[str, int]:
            counts = {}
            for label in chosen:
                match = f"MATCH (n:{_q(label)}) WHERE n.{_q(self.schema.nodes[label].owner_property)} = $o"
                found = tx.run(f"{match} RETURN count(n) AS n", o=owner).single()
                counts[label] = int(found["n"]) if found else 0
                if counts[label]:
                    tx.run(f"{match} DETACH DELETE n", o=owner).consume()
            return counts

        return self._write(f"deleting the records of {owner!r}", work)

    def _create_edges_by_uid(
        self, tx: neo4j.ManagedTransaction, rel_name: str, a: str, b: str, rows: list[dict[str, Any]]
    ) -> None:
        """Edges between nodes named by global uid (shared knowledge): rows {s, t, p}."""
        query = (
            f"UNWIND $rows AS r MATCH (a:{_q(a)} {{uid: r.s}}) MATCH (b:{_q(b)} {{uid: r.t}}) "
            f"CREATE (a)-[e:{_q(rel_name)}]->(b) SET e = r.p RETURN count(e) AS n"
        )
        for chunk in _chunks(rows, self.batch_size):
            created = tx.run(query, rows=chunk).single()
            if created is None or created["n"] != len(chunk):
                got = created["n"] if created is not None else 0
                raise _MissingEndpoint(
                    f"{rel_name} edges {a}->{b}: created {got} of {len(chunk)}; an endpoint node was not found"
                )

    @staticmethod
    def _named_labels(task: Mapping[str, Any]) -> set[str] | None:
        """The labels a Task node names for its version, or None (not named, or named for
        another version: written by an older graphtasks): then every label of the schema."""
        named = task.get(LABELS_PROPERTY)
        if named is None or task.get(LABELS_HASH_PROPERTY) != task.get("content_hash"):
            return None
        return {"Task", *named}

    def _stored_labels(self, tx: neo4j.ManagedTransaction, task_id: str, version: str | None) -> set[str] | None:
        """The labels of the stored nodes of `task_id` at `version` (the hash a write read), or None."""
        rows = tx.run(
            f"MATCH (t:Task) WHERE t.uid = $id RETURN t.{LABELS_PROPERTY}, t.{LABELS_HASH_PROPERTY}", id=task_id
        ).values()
        if not rows or rows[0][0] is None or rows[0][1] != version:
            return None
        return {"Task", *rows[0][0]}

    def _delete_in(self, tx: neo4j.ManagedTransaction, task_id: str, labels: set[str] | None = None) -> None:
        for label, node_type in self.schema.nodes.items():
            if not node_type.shared and (labels is None or label in labels):
                tx.run(f"MATCH (n:{_q(label)}) WHERE n.task = $t DETACH DELETE n", t=task_id).consume()

    def delete(self, task_id: str) -> bool:
        claims: list[bolt_revisions.Claim] = []

        def work(tx: neo4j.ManagedTransaction) -> bool:
            made = bolt_revisions.claim(tx, task_id, None)
            claims.append(made)
            if not made.existed:
                return False
            self._delete_in(tx, task_id, self._stored_labels(tx, task_id, made.stored_hash))
            bolt_revisions.record(tx, made, deleted=True)
            return True

        return self._write_task(f"deleting task {task_id!r}", task_id, work, claims)

    def _write_task(
        self,
        what: str,
        task_id: str,
        work: Callable[[neo4j.ManagedTransaction], Any],
        claims: list[bolt_revisions.Claim],
    ) -> Any:
        """`_write` of an unchecked write (put without expected hash, delete), run again while
        it fails because another writer changed the same task meanwhile: optimistic servers
        (ArcadeDB) report two racing creates of a task as a duplicate key or a missing edge
        endpoint, and two racing writes of one version as a taken revision claim, not as an
        error the driver retries. Last writer wins, as on Neo4j."""
        for attempt in range(RACE_RETRIES):
            before = self.content_hash(task_id)
            try:
                return self._write(what, work)
            except ConflictError:
                raise
            except GraphStoreError as exc:
                time.sleep(RACE_PAUSE * (attempt + 1))  # a racing commit may still be becoming visible
                raced = (
                    isinstance(exc, _MissingEndpoint)
                    or _created_meanwhile(claims, exc)
                    or self.content_hash(task_id) != before
                    or self._lost_race(claims, exc)
                )
                if attempt == RACE_RETRIES - 1 or not raced:
                    raise
        raise AssertionError("unreachable")

    # -- reading ---------------------------------------------------------------------------
    def get(self, task_id: str) -> TaskGraph:
        def work(tx: neo4j.ManagedTransaction) -> TaskGraph | None:
            rows = tx.run("MATCH (t:Task) WHERE t.uid = $id RETURN t", id=task_id).values()
            if not rows:
                return None
            task_type = self.schema.nodes["Task"]
            named = self._named_labels(rows[0][0])
            task_props = self._props(task_type.properties, rows[0][0], skip=("uid", "task"))
            family, name = task_props.pop("family", None), task_props.pop("name", None)
            if family is None:
                raise GraphStoreError(f"task {task_id!r} in {self.location!r}: the Task node has no 'family'")
            graph = TaskGraph(task_id, family, name, schema=self.schema, **task_props)
            prefix = task_id + "/"
            for label, node_type in self.schema.nodes.items():
                if label == "Task" or node_type.shared or named is not None and label not in named:
                    continue
                # explicit columns: much faster than whole nodes on some servers (ArcadeDB: 2x)
                props = [p for p in node_type.properties if p.name not in ("uid", "task")]
                cols = "".join(f", n.{_q(p.name)} AS {_q(p.name)}" for p in props)
                query = f"MATCH (n:{_q(label)}) WHERE n.task = $id RETURN n.uid AS uid{cols}"
                for record in tx.run(query, id=task_id):
                    uid, node = record["uid"], record
                    if not isinstance(uid, str) or not uid.startswith(prefix):
                        raise GraphStoreError(
                            f"task {task_id!r} in {self.location!r}: {label} node uid {uid!r} does not start "
                            f"with {prefix!r}"
                        )
                    graph.add_node(
                        uid[len(prefix) :], label, **self._props(node_type.properties, node, ("uid", "task"))
                    )
            for rel_name, rel in self.schema.rels.items():
                for a, b in rel.endpoints:
                    if named is not None and (a not in named or b not in named and not self.schema.nodes[b].shared):
                        continue  # no node of this task has that label
                    if self.schema.nodes[a].owner_property != TASK_PROPERTY:
                        continue  # a record's edge (a run's `task` is the task it ran on, not its owner)
                    query = (
                        f"MATCH (a:{_q(a)})-[r:{_q(rel_name)}]->(b:{_q(b)}) WHERE a.task = $id "
                        f"RETURN a.uid, b.uid, properties(r)"
                    )
                    for s, t, edge in tx.run(query, id=task_id).values():
                        source = TASK_LOCAL_ID if s == task_id else s[len(prefix) :]
                        target = TASK_LOCAL_ID if t == task_id else str(t)[len(prefix) :]
                        if source not in graph.graph or target not in graph.graph and str(t).startswith(prefix):
                            raise _TornRead(task_id)  # written while we read: read again
                        if target not in graph.graph or not str(t).startswith(prefix) and t != task_id:
                            raise SchemaError(
                                f"task {task_id!r} in {self.location!r}: {rel_name} edge from {source or '(task)'!r} "
                                f"to unknown {b} {t!r} (not a node of this task)"
                            )
                        graph.add_edge(source, target, rel_name, **self._props(rel.properties, edge))
            stored = graph.task.get("content_hash")
            if stored and graph.content_hash() != stored:
                raise _TornRead(task_id, graph, (graph.content_hash(), stored))
            return graph

        # Some servers (ArcadeDB) give no snapshot across a read's statements, and make a
        # commit visible record by record: a read that mixes versions is read again. The
        # same mismatch twice running is what is stored (e.g. a task edited by hand).
        last: tuple[str, str] | None = None
        for attempt in range(TORN_READ_RETRIES):
            try:
                graph = self._read(work)
                break
            except _TornRead as torn:
                if torn.hashes is not None and torn.hashes == last:
                    graph = torn.graph
                    break
                last = torn.hashes
                time.sleep(torn_read_pause(attempt))
            except neo4j_errors.ClientError as exc:
                # a record deleted by a concurrent writer between two statements of the read
                if not (exc.code or "").endswith("EntityNotFound"):
                    raise
                last = None
                time.sleep(torn_read_pause(attempt))
        else:
            raise GraphStoreError(
                f"task {task_id!r} in {self.location!r} kept changing while being read ({TORN_READ_RETRIES} tries)"
            )
        if graph is None:
            raise TaskNotFound(task_id, self.location, [t.task_id for t in self.list()])
        return graph

    @staticmethod
    def _props(declared: tuple[Property, ...], entity: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """Declared properties of a driver node/relationship, typed as the schema says."""
        out = {}
        for p in declared:
            if p.name in skip:
                continue
            value = entity.get(p.name)
            if value is not None:
                out[p.name] = _coerce(p.kind, value)
        return out

    def list(self) -> list[TaskSummary]:
        query = (
            "MATCH (t:Task) RETURN t.uid, t.family, t.n_states, t.n_actions, t.source, t.content_hash ORDER BY t.uid"
        )
        rows = self._read(lambda tx: tx.run(query).values())
        return [TaskSummary(r[0], r[1], r[2], r[3], r[4] or "", r[5] or "") for r in rows]

    def content_hash(self, task_id: str) -> str | None:
        rows = self._read(
            lambda tx: tx.run("MATCH (t:Task) WHERE t.uid = $id RETURN t.content_hash", id=task_id).values()
        )
        return rows[0][0] if rows else None

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, sources: Mapping[str, Any] | None = None
    ) -> QueryResult:
        """Run a read-only query: checked lexically, then run in a read transaction.

        Neo4j also refuses writes in read transactions; some Bolt servers (ArcadeDB) do not,
        so the lexical check is what stops writes there. A server scans no files: `LOAD FROM`
        is refused (a Bolt store keeps experiment records as Episode and Trial nodes).
        """
        if named_sources(query):
            raise QueryError(
                f"read-only query: LOAD FROM ${named_sources(query)[0]}: store {self.location!r} is a server, "
                "which scans no files; "
                "its experiment records are Episode and Trial nodes (MATCH (e:Episode) ...)"
            )
        check_read_only(query)

        def work(tx: neo4j.ManagedTransaction) -> QueryResult:
            result = tx.run(query, params or {})
            columns = list(result.keys())
            rows = [[_plain(v) for v in record.values()] for record in result]
            return QueryResult(columns, rows)

        try:
            return self._read(work)
        except GraphStoreError:
            raise
        except neo4j_errors.Neo4jError as exc:
            raise QueryError(f"query failed on {self.location!r}: {self._scrub(exc.message or exc)}") from None
        except neo4j_errors.DriverError as exc:
            raise QueryError(f"query failed on {self.location!r}: {self._scrub(exc)}") from None

    def close(self) -> None:
        driver = vars(self).pop("_driver", None)  # gone: a closed store cannot be used by mistake
        if driver is not None:
            driver.close()

    def __repr__(self) -> str:
        return f"Neo4jStore({self.location!r}, user={self.user!r})"
