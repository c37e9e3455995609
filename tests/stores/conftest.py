"""Real stores for the store tests: embedded LadybugDB, ArcadeDB over Bolt, and Neo4j if configured.

ArcadeDB comes from the `arcadedb-embedded` package (test extra). One server is started
for the whole test run on 127.0.0.1 with free ports and its data in a temporary folder,
and stopped at the end. When `NEO4J_URI` is set (with `NEO4J_USER`, `NEO4J_PASSWORD`,
optionally `NEO4J_DATABASE`), the same tests also run against that Neo4j. WARNING: the
tests delete every node with a graphtasks label in that database; use a throwaway one.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

import tasks
from graphstore import SCHEMA, ConflictError, GraphStore
from graphstore.entities import select
from graphstore.ladybug_store import LadybugStore

ARCADE_DATABASE = "graphtasks"
ARCADE_USER = "root"


@dataclass(frozen=True)
class BoltServer:
    """How to reach a running Bolt server."""

    name: str
    uri: str
    user: str
    password: str
    database: str | None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def arcadedb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """ArcadeDB with its Bolt plugin, on loopback, for the whole run."""
    server_module = pytest.importorskip("arcadedb_embedded.server", reason="arcadedb-embedded (test extra) missing")
    password = "gt-" + os.urandom(8).hex()
    last_error: Exception | None = None
    for _attempt in range(3):  # a free port can be taken between probing and binding
        root = tmp_path_factory.mktemp("arcadedb")
        bolt_port, http_port = _free_port(), _free_port()
        # The JVM writes its logs under ./log of the working directory it starts in: keep
        # them in the temporary folder, not in the checkout.
        cwd = os.getcwd()
        os.environ.setdefault("ARCADEDB_JVM_ERROR_FILE", str(root / "hs_err_pid%p.log"))
        try:
            os.chdir(root)
            server = server_module.ArcadeDBServer(
                root_path=str(root),
                root_password=password,
                config={
                    "host": "127.0.0.1",
                    "http_port": http_port,
                    "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
                    "bolt_port": bolt_port,
                },
            )
            server.start()
        except Exception as exc:  # noqa: BLE001 - retried with other ports, reported below
            last_error = exc
            time.sleep(0.5)
            continue
        finally:
            os.chdir(cwd)
        server.create_database(ARCADE_DATABASE)
        try:
            yield BoltServer("arcadedb", f"bolt://127.0.0.1:{bolt_port}", ARCADE_USER, password, ARCADE_DATABASE)
        finally:
            server.stop()
        return
    raise RuntimeError(f"ArcadeDB did not start: {last_error}")


@pytest.fixture(scope="session")
def loaded_rdf(loaded_store: GraphStore):
    """The RDF view of every built-in task, built once per run (the large grids make it slow)."""
    from graphstore import rdf

    return rdf.store_to_rdf(loaded_store)


def neo4j_server() -> BoltServer | None:
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        return None
    return BoltServer(
        "neo4j",
        uri,
        os.environ.get("NEO4J_USER", "neo4j"),
        os.environ.get("NEO4J_PASSWORD", ""),
        os.environ.get("NEO4J_DATABASE") or None,
    )


def wipe(store: GraphStore) -> None:
    """Remove every graphtasks node (only labels of the schema) so each test starts empty."""
    for task in store.list():
        store.delete(task.task_id)
    driver = getattr(store, "_driver", None)
    if driver is not None:  # also leftovers without a Task node (authoring tests)
        with driver.session(database=store.database) as session:  # type: ignore[attr-defined]
            for label in SCHEMA.nodes:
                session.run(f"MATCH (n:`{label}`) DETACH DELETE n").consume()


def resolve_server(request: pytest.FixtureRequest, name: str) -> BoltServer:
    """The Bolt server called `name`: ArcadeDB always, Neo4j only when NEO4J_URI is set."""
    if name == "neo4j":
        server = neo4j_server()
        if server is None:
            pytest.skip("NEO4J_URI not set: no Neo4j server to test against")
        return server
    return request.getfixturevalue("arcadedb_server")


def open_bolt(server: BoltServer, **options) -> GraphStore:
    from graphstore.neo4j_store import Neo4jStore

    return Neo4jStore(server.uri, user=server.user, password=server.password, database=server.database, **options)


@pytest.fixture
def bolt_server(request: pytest.FixtureRequest) -> BoltServer:
    """The Bolt server of the current parameter."""
    return resolve_server(request, request.param)


@pytest.fixture
def bolt_store(bolt_server: BoltServer) -> Iterator[GraphStore]:
    """An empty Bolt store on the server of the current parameter."""
    store = open_bolt(bolt_server)
    wipe(store)
    try:
        yield store
    finally:
        wipe(store)
        store.close()


@pytest.fixture
def embedded_store(tmp_path) -> Iterator[GraphStore]:
    """An empty on-disk embedded store."""
    store = LadybugStore(str(tmp_path / "store.lbug"))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path) -> Iterator[GraphStore]:
    """Every backend in turn: the semantics tests hold for each of them."""
    if request.param == "embedded":
        opened: GraphStore = LadybugStore(str(tmp_path / "store.lbug"))
    else:
        opened = open_bolt(resolve_server(request, request.param))
        wipe(opened)
    try:
        yield opened
    finally:
        if request.param != "embedded":
            wipe(opened)
        opened.close()


def bolt_names(server_specific: bool = False) -> list[str]:
    """The Bolt servers a test runs on: ArcadeDB always; Neo4j when NEO4J_URI is set.

    Without NEO4J_URI a test of behaviour that depends on the server (marked
    `server_specific`: authentication, errors, DDL, transactions under concurrency) still
    gets its Neo4j variant, which is skipped and so reported as untested; the others are
    the same code over the same protocol and run on ArcadeDB only.
    """
    return ["arcadedb", "neo4j"] if server_specific or neo4j_server() is not None else ["arcadedb"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise `store` over every backend and `bolt_server` over the Bolt servers."""
    bolt = bolt_names(metafunc.definition.get_closest_marker("server_specific") is not None)
    if "store" in metafunc.fixturenames:
        metafunc.parametrize("store", ["embedded", *bolt], indirect=True)
    if "bolt_server" in metafunc.fixturenames:
        metafunc.parametrize("bolt_server", bolt, indirect=True)


def race_creates_lose_nothing(stores: list[GraphStore], task_id: str, requests: list[dict[str, Any]]) -> list[str]:
    """Store i sends `requests[i]` (groups starting with 'w') at the same moment as the others,
    one thread each; every create must land or raise ConflictError, none may be lost, and the
    stored hash must still match the stored content. Returns the outcomes."""
    outcomes: list[str] = []
    guard = threading.Lock()
    barrier = threading.Barrier(len(stores))

    def worker(i: int) -> None:
        barrier.wait()
        try:
            tasks.create(stores[i], task_id, requests[i])
            result = "ok"
        except ConflictError:
            result = "conflict"
        except Exception as exc:  # noqa: BLE001 - reported in the assertion below
            result = f"error: {exc}"
        with guard:
            outcomes.append(result)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o in ("ok", "conflict") for o in outcomes), outcomes
    created = [e for e in select(stores[0], task_id) if e.group.startswith("w")]
    assert len(created) == outcomes.count("ok") >= 1
    assert stores[0].get(task_id).content_hash() == stores[0].content_hash(task_id)
    return outcomes
