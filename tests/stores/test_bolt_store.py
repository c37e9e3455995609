"""Bolt-only behaviour: connection settings, errors that name the URI but not the password, schema DDL."""

from __future__ import annotations

import socket

import pytest

from graphstore import StoreLocationError, open_store
from graphstore.neo4j_store import Neo4jStore, split_credentials

from .conftest import open_bolt

# connection settings, server errors, DDL and access modes are the server's: Neo4j's own
# variants are listed (and skipped without NEO4J_URI)
pytestmark = pytest.mark.server_specific


def test_open_store_dispatches_bolt_uri_with_env_credentials(bolt_server, monkeypatch):
    monkeypatch.setenv("GRAPHTASKS_STORE", bolt_server.uri)
    monkeypatch.setenv("GRAPHTASKS_NEO4J_USER", bolt_server.user)
    monkeypatch.setenv("GRAPHTASKS_NEO4J_PASSWORD", bolt_server.password)
    if bolt_server.database:
        monkeypatch.setenv("GRAPHTASKS_NEO4J_DATABASE", bolt_server.database)
    else:
        monkeypatch.delenv("GRAPHTASKS_NEO4J_DATABASE", raising=False)
    with open_store() as store:
        assert isinstance(store, Neo4jStore)
        assert store.cypher("RETURN 1 AS one").rows == [[1]]
        assert bolt_server.password not in repr(store) + store.location


def test_bad_password_names_uri_not_password(bolt_server):
    wrong = "Wr0ng-pass-" + bolt_server.password[::-1]
    with pytest.raises(StoreLocationError) as info:
        Neo4jStore(bolt_server.uri, user=bolt_server.user, password=wrong, database=bolt_server.database)
    message = str(info.value)
    assert bolt_server.uri in message
    assert "authentication" in message
    assert wrong not in message
    assert bolt_server.password not in message


def test_password_inside_uri_is_hidden(bolt_server):
    host = bolt_server.uri.split("://", 1)[1]
    wrong = "s3cr3t-in-uri"
    uri = f"bolt://{bolt_server.user}:{wrong}@{host}"
    with pytest.raises(StoreLocationError) as info:
        Neo4jStore(uri, database=bolt_server.database)
    assert wrong not in str(info.value)
    assert f"bolt://{host}" in str(info.value)


def test_credentials_in_uri_work(bolt_server):
    scheme, host = bolt_server.uri.split("://", 1)
    from urllib.parse import quote

    uri = f"{scheme}://{quote(bolt_server.user, safe='')}:{quote(bolt_server.password, safe='')}@{host}"
    with Neo4jStore(uri, database=bolt_server.database) as store:
        assert store.cypher("RETURN 2 AS two").rows == [[2]]
        assert bolt_server.password not in store.location


def test_unreachable_server_names_uri():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    uri = f"bolt://127.0.0.1:{port}"
    with pytest.raises(StoreLocationError) as info:
        Neo4jStore(uri, user="u", password="pw-never-shown", connection_timeout=2)
    assert uri in str(info.value)
    assert "pw-never-shown" not in str(info.value)


def test_missing_database_is_named(bolt_server):
    if bolt_server.name == "neo4j":
        pytest.skip("Neo4j community has one database; the name check is the same code")
    with pytest.raises(StoreLocationError) as info:
        Neo4jStore(bolt_server.uri, user=bolt_server.user, password=bolt_server.password, database="no_such_db")
    assert "no_such_db" in str(info.value)
    assert bolt_server.password not in str(info.value)


def test_not_a_bolt_uri():
    with pytest.raises(StoreLocationError) as info:
        Neo4jStore("http://user:pw@localhost:7474")
    assert "pw" not in str(info.value).replace("http://localhost", "")
    assert "localhost:7474" in str(info.value)


def test_split_credentials():
    assert split_credentials("bolt://a:b%40c@h:7687") == ("bolt://h:7687", "a", "b@c")
    assert split_credentials("neo4j://h:7687") == ("neo4j://h:7687", None, None)


def test_uid_constraints_created_on_first_write(bolt_server):
    from .conftest import wipe
    from .test_store_semantics import small_task

    store = open_bolt(bolt_server)
    try:
        wipe(store)
        store.put(small_task("t/ddl"))
        assert store.schema_warnings == []
        with store._driver.session(database=store.database) as session:
            names = {r["name"] for r in session.run("SHOW CONSTRAINTS")}
        assert {"graphtasks_state_uid", "graphtasks_task_uid"} <= names
    finally:
        wipe(store)
        store.close()


def test_read_only_store_refuses_writes(bolt_server):
    from graphstore import GraphStoreError

    from .test_store_semantics import small_task

    with open_bolt(bolt_server, read_only=True) as store:
        with pytest.raises(GraphStoreError) as info:
            store.put(small_task("t/ro-store"))
        assert "read-only" in str(info.value)
        assert "t/ro-store" not in store


def _claims(store, task_id: str) -> list[int]:
    rows = store.cypher(
        "MATCH (m:TaskRevision) WHERE m.task = $t RETURN m.revision ORDER BY m.revision", {"t": task_id}
    )
    return [r[0] for r in rows.rows]


def test_write_on_a_version_another_write_claimed_is_refused(bolt_server):
    """The stale read a lock-free server allows cannot be timed from a test, so the claim is
    taken by hand: a checked write built on that version must be a ConflictError and write nothing."""
    from graphstore import ConflictError

    from .conftest import wipe
    from .test_store_semantics import small_task

    store = open_bolt(bolt_server)
    try:
        wipe(store)
        store.put(small_task("t/claimed", n=3))
        store.put(small_task("t/claimed", n=4))  # a version with a revision token
        before = store.get("t/claimed")
        (token,) = store.cypher("MATCH (t:Task) WHERE t.uid = 't/claimed' RETURN t.revision_token").rows[0]
        with store._driver.session(database=store.database) as session:
            session.run(
                "CREATE (:TaskRevision {key: $key, task: 't/claimed', revision: 99})", key=f"t/claimed@{token}"
            ).consume()
        with pytest.raises(ConflictError, match="concurrent writer"):
            store.put(small_task("t/claimed", n=5), expected_hash=before.content_hash())
        after = store.get("t/claimed")
        assert after.content_hash() == before.content_hash()
        assert after.graph.number_of_nodes() == before.graph.number_of_nodes()
    finally:
        wipe(store)
        store.close()


def test_claims_are_pruned_and_a_delete_keeps_only_its_own(bolt_server):
    from graphstore.bolt_revisions import REVISIONS_KEPT

    from .conftest import wipe
    from .test_store_semantics import small_task

    store = open_bolt(bolt_server)
    try:
        wipe(store)
        writes = REVISIONS_KEPT + 5
        for n in range(2, 2 + writes):
            store.put(small_task("t/pruned", n=n))
        # the first write created the task (no claim); each later one claimed the version before it
        assert _claims(store, "t/pruned") == list(range(writes - REVISIONS_KEPT + 1, writes + 1))
        store.delete("t/pruned")
        assert _claims(store, "t/pruned") == [writes + 1]
        store.put(small_task("t/pruned"))  # a task created anew starts with no claims
        assert _claims(store, "t/pruned") == []
        assert store.get("t/pruned").content_hash() == small_task("t/pruned").content_hash()
    finally:
        wipe(store)
        store.close()
