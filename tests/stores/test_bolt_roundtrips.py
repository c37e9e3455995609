"""The Bolt store's statements scale with the task, not with the schema; concurrent checked writers lose nothing.

Issue 43: 8 writers doing version-checked increments on ArcadeDB made 15x fewer operations
than at an earlier probe. The cause: a read ran one statement per label and per relationship
pair of the whole schema (65 round trips for a three-state task, once every family and the
experiment records had declared theirs), a replacing write one delete per label (29 in all),
and the driver waited about 1 s before retrying a transient error. The statements a call runs
are counted from the driver's own debug log ("C: RUN"), on the session's ArcadeDB.
"""

from __future__ import annotations

import logging
import threading

import pytest

from graphstore import ConflictError
from graphstore.neo4j_store import LABELS_HASH_PROPERTY

from .bolt_load import tally_task, tally_value
from .conftest import open_bolt, wipe
from .test_store_semantics import small_task

WRITERS = 8
INCREMENTS = 4


@pytest.fixture
def arcade(arcadedb_server):
    store = open_bolt(arcadedb_server)
    wipe(store)
    try:
        yield store
    finally:
        wipe(store)
        store.close()


def statements(caplog: pytest.LogCaptureFixture, call) -> tuple[object, int]:
    """(what `call` returned, how many Cypher statements the driver sent meanwhile)."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        result = call()
    return result, sum(" C: RUN " in r.getMessage() for r in caplog.records)


def test_read_and_write_run_statements_for_the_tasks_labels_only(arcade, caplog):
    arcade.put(small_task("rt/one"))
    graph, reads = statements(caplog, lambda: arcade.get("rt/one"))
    # the Task node, State and Reward nodes, START, MOVE, HAS_REWARD edges (was 65)
    assert reads <= 8, reads
    base = graph.task["content_hash"]
    _, writes = statements(caplog, lambda: arcade.put(small_task("rt/one", reward=2.0), expected_hash=base))
    assert writes <= 20, writes  # was 29: a delete per label of the schema
    assert arcade.get("rt/one").content_hash() == small_task("rt/one", reward=2.0).content_hash()


def test_a_version_with_other_labels_replaces_the_old_one_whole(arcade):
    arcade.put(small_task("rt/two", n=4))
    changed = small_task("rt/two", n=2)
    changed.add_node("c", "Condition", name="cue")
    changed.add_edge("", "c", "HAS_CONDITION")
    arcade.put(changed, expected_hash=arcade.content_hash("rt/two"))
    assert arcade.get("rt/two").content_hash() == changed.content_hash()
    back = small_task("rt/two", n=3)
    arcade.put(back)
    got = arcade.get("rt/two")
    assert got.content_hash() == back.content_hash()
    assert sorted({got.label(n) for n, _ in got.nodes()}) == ["Reward", "State", "Task"]


def test_a_task_whose_labels_name_another_version_is_read_whole(arcade):
    """A Task node last written by an older graphtasks names no labels, or names them for an
    older version: the read then looks at every label, as before."""
    task = small_task("rt/three")
    task.add_node("c", "Condition", name="cue")
    task.add_edge("", "c", "HAS_CONDITION")
    arcade.put(task)
    with arcade._driver.session(database=arcade.database) as session:
        session.run(f"MATCH (t:Task) WHERE t.uid = 'rt/three' SET t.{LABELS_HASH_PROPERTY} = 'older'").consume()
    assert arcade.get("rt/three").content_hash() == task.content_hash()
    arcade.put(small_task("rt/three"))  # the replacing write deletes every label's nodes
    assert arcade.get("rt/three").content_hash() == small_task("rt/three").content_hash()


def test_eight_checked_writers_apply_every_increment_exactly_once(arcadedb_server, arcade):
    """Eight threads, each with its own store, each add one to the tally INCREMENTS times,
    reading and writing again on every ConflictError: all finish, and the tally is the sum."""
    arcade.put(tally_task(0))
    errors: list[str] = []
    refused = [0] * WRITERS

    def writer(w: int) -> None:
        store = open_bolt(arcadedb_server)
        try:
            done = 0
            while done < INCREMENTS:
                graph = store.get("load/tally")
                try:
                    store.put(tally_task(tally_value(graph) + 1), expected_hash=graph.task["content_hash"])
                except ConflictError:
                    refused[w] += 1
                    continue
                done += 1
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"writer {w}: {type(exc).__name__}: {exc}"[:300])
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert tally_value(arcade.get("load/tally")) == WRITERS * INCREMENTS, f"{sum(refused)} refused"
