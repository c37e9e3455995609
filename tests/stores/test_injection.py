"""Injection strings as task ids, property values and group names: stored verbatim, nothing runs.

Each case is checked on the embedded store and on ArcadeDB over Bolt: a neighbour task
must survive untouched, the hostile text must read back exactly, and selections by it
must find exactly what was written.
"""

from __future__ import annotations

import pytest

import tasks
from graphstore import rdf as R
from graphstore.entities import select

from .test_store_semantics import small_task, total_nodes

HOSTILE = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'x"}) MATCH (n) DETACH DELETE n //',
    "x`) DETACH DELETE n; MATCH (m",
    "t'; DROP TABLE State; --",
    "$task",
    "a\\' OR 1=1 OR '",
    "}]->(b) CREATE (:Task {uid: 'evil', family: 'x', name: 'x'})",
    "line\nbreak\r\n\ttab \u0000nul",
    "zwj\u200d\U0001F600 \"quotes\" <iri> _:blank ^^xsd:int @en",
    "CALL db.clearQueryCaches() RETURN 1 UNION MATCH (n) DETACH DELETE n",
]
IDS = [f"inj/{i}" for i in range(len(HOSTILE))]


def neighbour(store) -> str:
    """An ordinary task that every hostile write must leave alone."""
    store.put(small_task("t/neighbour", n=3))
    return store.content_hash("t/neighbour")


def intact(store, neighbour_hash: str) -> None:
    assert store.content_hash("t/neighbour") == neighbour_hash
    assert store.get("t/neighbour") == small_task("t/neighbour", n=3)
    assert [t.task_id for t in store.list() if t.task_id == "evil"] == []


@pytest.mark.parametrize("text", HOSTILE, ids=IDS)
def test_hostile_task_ids_are_stored_verbatim(store, text):
    before = neighbour(store)
    nodes_before = total_nodes(store)
    graph = small_task(text, n=2)
    assert store.put(graph) is True
    assert text in [t.task_id for t in store.list()]
    assert store.get(text) == graph
    assert store.content_hash(text) == graph.task["content_hash"]
    assert total_nodes(store) == nodes_before + 4  # Task, 2 states, 1 reward
    intact(store, before)
    tasks.create(store, text, {"Reward": {"params": {"state": 0, "value": 2}, "group": "g"}})
    assert [e.uid for e in select(store, text, group="g")] == [f"{text}/created/reward/0"]
    assert store.delete(text) is True
    assert total_nodes(store) == nodes_before
    intact(store, before)


@pytest.mark.parametrize("text", HOSTILE, ids=IDS)
def test_hostile_property_values_are_stored_verbatim(store, text):
    before = neighbour(store)
    graph = small_task("t/values", n=2, description=text, params={"n": 2, text: text})
    for local_id, props in graph.nodes("State"):
        props["name"] = text
        props["info"] = {text: [text]}
    store.put(graph)
    back = store.get("t/values")
    assert back == graph
    assert back.task["description"] == text and back.task["params"][text] == text
    assert {props["name"] for _, props in back.nodes("State")} == {text}
    rows = store.cypher("MATCH (s:State) WHERE s.name = $name RETURN s.uid ORDER BY s.uid", {"name": text}).rows
    assert [r[0] for r in rows] == ["t/values/s0", "t/values/s1"]
    intact(store, before)
    # and the RDF view keeps them exactly (Turtle written by graphtasks itself)
    (again,) = R.from_rdf(R.parse(R.to_turtle(R.to_rdf(back))))
    assert again == back


@pytest.mark.parametrize("text", HOSTILE, ids=IDS)
def test_hostile_group_names_are_stored_verbatim(store, text):
    before = neighbour(store)
    store.put(small_task("t/groups", n=3))
    uids = tasks.create(
        store, "t/groups", {"Reward": {"params": {"state": [0, 1], "value": 1}, "count": 2, "group": text}}
    )
    found = select(store, "t/groups", group=text)
    assert [e.uid for e in found] == uids and {e.group for e in found} == {text}
    assert select(store, "t/groups", group=text + " ") == []
    assert len(select(store, "t/groups")) == 6
    assert store.get("t/groups").props("created/reward/0")["group"] == text
    intact(store, before)
