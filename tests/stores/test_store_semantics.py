"""The store contract, checked on every backend: embedded LadybugDB, ArcadeDB over Bolt, Neo4j."""

from __future__ import annotations

import pytest

import tasks
from graphstore import ConflictError, GraphStoreError, QueryError, TaskGraph, TaskNotFound
from tests.conftest import builtin_params


def small_task(task_id: str, reward: float = 1.0, n: int = 3, params: dict | None = None, **extra) -> TaskGraph:
    """A linear chain of `n` states with a reward at the end."""
    params = {"n": n} if params is None else params
    g = TaskGraph(task_id, "neuronav/graph", params=params, reward_on="arrival", n_states=n, n_actions=1, **extra)
    for i in range(n):
        g.add_node(f"s{i}", "State", index=i, name=str(i), terminal=i == n - 1, skip=False)
    for i in range(n - 1):
        g.add_edge(f"s{i}", f"s{i + 1}", "MOVE", action=0, p=1.0)
    g.add_node("r", "Reward", kind="fixed", values=[reward])
    g.add_edge(f"s{n - 1}", "r", "HAS_REWARD")
    g.add_edge("", "s0", "START")
    return g


def node_count(store, task_id: str) -> int:
    rows = store.cypher("MATCH (n:State) WHERE n.task = $t RETURN count(n) AS c", {"t": task_id}).rows
    return rows[0][0]


def total_nodes(store) -> int:
    total = 0
    for label in ("Task", "State", "Reward", "Condition"):
        total += store.cypher(f"MATCH (n:{label}) RETURN count(n)").rows[0][0]
    return total


@pytest.mark.parametrize("task_id", builtin_params())
def test_builtin_round_trip(store, task_id):
    graph = tasks.build(task_id)
    assert store.put(graph) is True
    back = store.get(task_id)
    assert back == graph
    assert back.content_hash() == graph.content_hash()
    assert store.content_hash(task_id) == graph.task["content_hash"]
    # putting the same content again changes nothing
    assert store.put(tasks.build(task_id)) is False


def test_get_many_reads_tasks_in_the_order_asked_and_names_a_missing_one(store):
    """One pass over several tasks gives what one `get` each gives (the RDF view reads them so)."""
    ids = ["neuronav/graph/t_graph", "rewardgym/two-step", "neuronav/grid/four_rooms/micro"]
    for task_id in ids:
        store.put(tasks.build(task_id))
    store.put(small_task("t/chain"))
    asked = ["t/chain", *reversed(ids)]
    got = store.get_many(asked)
    assert [g.task_id for g in got] == asked
    assert got == [store.get(task_id) for task_id in asked]
    assert got[1:] == [tasks.build(task_id) for task_id in reversed(ids)]
    assert store.get_many([]) == []
    with pytest.raises(TaskNotFound, match="t/none"):
        store.get_many(["t/chain", "t/none"])


def test_idempotent_put_changes_nothing(store):
    g = small_task("t/idem")
    assert store.put(g) is True
    before = total_nodes(store)
    assert store.put(small_task("t/idem")) is False
    assert total_nodes(store) == before
    assert [t.task_id for t in store.list()] == ["t/idem"]


def test_a_stale_version_is_a_conflict_even_with_the_stored_content(store):
    """Two writers read one version and build the same next one (an increment): the second is
    refused with ConflictError naming the task and both hashes, by put and by extend; it must
    not be told "same content: unchanged", which would lose its increment."""
    store.put(small_task("t/count", reward=1.0))
    base = store.content_hash("t/count")
    assert store.put(small_task("t/count", reward=2.0), expected_hash=base) is True  # the first writer
    stored = store.content_hash("t/count")
    with pytest.raises(ConflictError) as caught:
        store.put(small_task("t/count", reward=2.0), expected_hash=base)  # the second: same content
    message = str(caught.value)
    assert "'t/count'" in message and base in message and stored in message and "\n" not in message

    grown = small_task("t/count", reward=2.0)
    grown.add_node("extra", "State", index=9, name="9", terminal=True, skip=False)
    grown.add_edge("s2", "extra", "MOVE", action=0, p=1.0)
    assert store.extend(grown, ["extra"], expected_hash=stored) is True
    again = small_task("t/count", reward=2.0)
    again.add_node("extra", "State", index=9, name="9", terminal=True, skip=False)
    again.add_edge("s2", "extra", "MOVE", action=0, p=1.0)
    with pytest.raises(ConflictError, match="changed since it was read"):
        store.extend(again, ["extra"], expected_hash=stored)
    assert store.get("t/count") == grown

    # on the version it read, the same content is still "nothing to write"
    assert store.put(again, expected_hash=store.content_hash("t/count")) is False
    store.delete("t/count")
    with pytest.raises(ConflictError, match="none: deleted"):
        store.put(again, expected_hash=grown.task["content_hash"])


def test_changed_task_is_replaced_whole(store):
    store.put(small_task("t/change", n=5))
    store.put(small_task("t/other", n=2))
    changed = small_task("t/change", reward=7.5, n=3)
    assert store.put(changed) is True
    back = store.get("t/change")
    assert back == changed
    assert node_count(store, "t/change") == 3  # the two extra states of the old version are gone
    rewards = store.cypher("MATCH (r:Reward) WHERE r.task = $t RETURN r.values", {"t": "t/change"}).rows
    assert rewards == [[[7.5]]]
    assert store.get("t/other") == small_task("t/other", n=2)


@pytest.mark.server_specific
def test_failed_put_leaves_store_unchanged(store):
    """A uid collision (task 'c' with local id 'b/s0' vs task 'c/b' with 's0') fails mid-write."""
    first = small_task("c/b")
    store.put(first)
    v1 = small_task("c", n=2)
    store.put(v1)
    before = total_nodes(store)
    v2 = small_task("c", n=4)
    v2.add_node("b/s0", "State", index=99)  # uid 'c/b/s0' is already task 'c/b''s
    with pytest.raises(GraphStoreError) as info:
        store.put(v2)
    assert "'c'" in str(info.value)
    assert store.get("c") == v1
    assert store.get("c/b") == first
    assert total_nodes(store) == before


@pytest.mark.server_specific
def test_failure_in_a_later_batch_rolls_back_earlier_batches(bolt_server):
    from .conftest import open_bolt, wipe

    store = open_bolt(bolt_server, batch_size=2)
    wipe(store)
    try:
        store.put(small_task("d/x"))
        g = small_task("d", n=7)  # states written in batches of 2; the colliding one comes last
        g.add_node("x/s2", "State", index=50)
        with pytest.raises(GraphStoreError):
            store.put(g)
        assert "d" not in store
        assert store.cypher("MATCH (n:State) WHERE n.task = 'd' RETURN count(n)").rows == [[0]]
        assert store.get("d/x") == small_task("d/x")
    finally:
        wipe(store)
        store.close()


def test_delete(store):
    store.put(small_task("t/a"))
    store.put(small_task("t/b"))
    assert store.delete("t/a") is True
    assert store.delete("t/a") is False
    with pytest.raises(TaskNotFound) as info:
        store.get("t/a")
    assert "t/a" in str(info.value)
    assert node_count(store, "t/a") == 0
    assert store.cypher("MATCH (r:Reward) WHERE r.task = 't/a' RETURN count(r)").rows == [[0]]
    assert store.get("t/b") == small_task("t/b")


def test_list_sorted_with_summaries(store):
    for task_id in ("z/last", "a/first", "m/middle"):
        store.put(small_task(task_id))
    listed = store.list()
    assert [t.task_id for t in listed] == ["a/first", "m/middle", "z/last"]
    assert all(t.family == "neuronav/graph" and t.n_states == 3 and len(t.content_hash) == 32 for t in listed)


@pytest.mark.parametrize(
    "query",
    [
        "CREATE (n:Task {uid: 'evil', task: 'evil'})",
        "MATCH (n) DETACH DELETE n",
        "MATCH (n:State) SET n.index = 0 RETURN n",
        "MATCH (n) RETURN n; MATCH (m) DETACH DELETE m",
        "MERGE (n:Task {uid: 'evil'}) RETURN n",
        "match (n:State) remove n.name return n",
    ],
)
def test_cypher_is_read_only(store, query):
    store.put(small_task("t/ro"))
    before = total_nodes(store)
    with pytest.raises(QueryError):
        store.cypher(query)
    assert total_nodes(store) == before
    assert store.get("t/ro") == small_task("t/ro")


def test_cypher_reads_with_parameters(store):
    store.put(small_task("t/q", n=4))
    result = store.cypher(
        "MATCH (a:State)-[m:MOVE]->(b:State) WHERE a.task = $t RETURN a.index AS src, b.index AS dst, m.p AS p "
        "ORDER BY src",
        {"t": "t/q"},
    )
    assert result.columns == ["src", "dst", "p"]
    assert result.rows == [[0, 1, 1.0], [1, 2, 1.0], [2, 3, 1.0]]


INJECTIONS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'x"}) MATCH (n) DETACH DELETE n //',
    "x` DETACH DELETE n //",
    "$rows; MATCH (n) DETACH DELETE n",
    "line\nbreak \\' \u00e9\u00e8 \U0001F600",
]


@pytest.mark.parametrize("evil", INJECTIONS)
def test_injection_strings_are_stored_verbatim(store, evil):
    store.put(small_task("t/victim"))
    task_id = "inj/" + evil
    g = small_task(task_id, description=evil, params={"note": evil, evil: [evil]})
    g.add_node("named", "State", index=10, name=evil)
    g.add_edge("named", "named", "MOVE", action=0, p=1.0)
    assert store.put(g) is True
    back = store.get(task_id)
    assert back == g
    assert back.task["description"] == evil
    assert back.props("named")["name"] == evil
    rows = store.cypher("MATCH (s:State) WHERE s.name = $n RETURN s.task", {"n": evil}).rows
    assert rows == [[task_id]]
    assert store.get("t/victim") == small_task("t/victim")
    assert sorted(t.task_id for t in store.list()) == sorted([task_id, "t/victim"])
    assert store.delete(task_id) is True
    assert store.get("t/victim") == small_task("t/victim")
