"""Real stores for the store tests: embedded LadybugDB, ArcadeDB over Bolt, and Neo4j if configured.

ArcadeDB comes from the `arcadedb-embedded` package (test extra). One server is started
for the whole test run on 127.0.0.1 with free ports and its data in a temporary folder,
and stopped at the end. When `NEO4J_URI` is set (with `NEO4J_USER`, `NEO4J_PASSWORD`,
optionally `NEO4J_DATABASE`), the same tests also run against that Neo4j. WARNING: the
tests delete every node with a graphtasks label in that database; use a throwaway one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

import tasks
from graphstore import SCHEMA, ConflictError, GraphStore
from graphstore.bolt_revisions import REVISION_LABEL
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


@pytest.fixture(scope="session")
def arcadedb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """ArcadeDB with its Bolt plugin, on loopback, for the whole run, in a process of its own."""
    pytest.importorskip("arcadedb_embedded.server", reason="arcadedb-embedded (test extra) missing")
    password = "gt-" + os.urandom(8).hex()
    root = tmp_path_factory.mktemp("arcadedb")
    script = Path(__file__).with_name("arcadedb_process.py")
    process = subprocess.Popen(
        [sys.executable, str(script), str(root), password, ARCADE_DATABASE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(root / "server.err").open("wb"),
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    line = process.stdout.readline()
    try:
        ports = json.loads(line) if line else {"error": "the server process exited"}
        if "error" in ports:
            raise RuntimeError(f"{ports['error']}; see {root / 'server.err'}")
        yield BoltServer("arcadedb", f"bolt://127.0.0.1:{ports['bolt_port']}", ARCADE_USER, password, ARCADE_DATABASE)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
    driver = getattr(store, "_driver", None)
    if driver is None:
        for task in store.list():
            store.delete(task.task_id)
        return
    labels = [REVISION_LABEL, *SCHEMA.nodes]  # also leftovers without a Task node (authoring tests)
    with driver.session(database=store.database) as session:  # type: ignore[attr-defined]
        # one query, not one per label (33 round trips before and after every Bolt test)
        session.run("MATCH (n) WHERE any(l IN labels(n) WHERE l IN $labels) DETACH DELETE n", labels=labels).consume()


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
    # The Bolt variants are `slow`: the quick run (-m "not slow") tests the embedded store only,
    # without starting a server; the full run (CI) tests every store.
    bolt = [
        pytest.param(name, marks=pytest.mark.slow)
        for name in bolt_names(metafunc.definition.get_closest_marker("server_specific") is not None)
    ]
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
