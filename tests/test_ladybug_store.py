import pytest

import tasks
from graphstore import GraphStoreError, QueryError, TaskGraph, TaskNotFound, open_store
from graphstore.cypher_text import quote_reserved_properties


@pytest.mark.slow  # one task per family: test_builtin_round_trip[embedded-...] in the quick run
def test_every_builtin_task_round_trips(loaded_store):
    """The session store was written with put (each returning True); every task reads back equal."""
    for task_id in tasks.builtin_ids():
        assert loaded_store.get(task_id) == tasks.build(task_id), task_id


def test_same_task_twice_changes_nothing(memory_store):
    graph = tasks.build("rewardgym/two-step")
    assert memory_store.put(graph) is True
    before = memory_store.cypher("MATCH (n) RETURN count(n)").rows
    assert memory_store.put(tasks.build("rewardgym/two-step")) is False
    assert memory_store.cypher("MATCH (n) RETURN count(n)").rows == before


def test_changed_task_is_replaced_whole(memory_store):
    memory_store.put(tasks.build("rewardgym/two-step"))
    changed = tasks.build("rewardgym/two-step")
    changed.graph.remove_node("condition/unexpected")
    memory_store.put(changed)
    stored = memory_store.get("rewardgym/two-step")
    assert stored == changed
    names = memory_store.cypher("MATCH (c:Condition) WHERE c.task = 'rewardgym/two-step' RETURN c.name").rows
    assert names == [["expected"]]


def _one_state_task(task_id, local_ids):
    g = TaskGraph(task_id, "test")
    for i, local in enumerate(local_ids):
        g.add_node(local, "State", index=i)
    g.add_edge("", local_ids[0], "START")
    return g


def test_failed_write_leaves_the_store_unchanged(memory_store):
    # task 'x' owns uid 'x/y/s0'; version 2 of task 'x/y' collides with it half-way through its write
    memory_store.put(_one_state_task("x", ["y/s0"]))
    memory_store.put(_one_state_task("x/y", ["s1"]))
    before = memory_store.get("x/y")
    with pytest.raises(GraphStoreError, match=r"writing task 'x/y'.*nothing written"):
        memory_store.put(_one_state_task("x/y", ["s1", "s0"]))
    assert memory_store.get("x/y") == before
    assert memory_store.get("x") == _one_state_task("x", ["y/s0"]).seal()


def test_delete_and_list(memory_store):
    memory_store.put(tasks.build("rewardgym/hcp"))
    memory_store.put(tasks.build("neuronav/graph/ring"))
    listed = memory_store.list()
    assert [t.task_id for t in listed] == ["neuronav/graph/ring", "rewardgym/hcp"]
    assert listed[1].family == "rewardgym" and listed[1].n_states == 3 and listed[1].n_actions == 2
    assert memory_store.delete("rewardgym/hcp") is True
    assert memory_store.delete("rewardgym/hcp") is False
    assert memory_store.cypher("MATCH (n) WHERE n.task = 'rewardgym/hcp' RETURN count(n)").rows == [[0]]
    with pytest.raises(TaskNotFound, match="rewardgym/hcp"):
        memory_store.get("rewardgym/hcp")


@pytest.mark.parametrize(
    "query",
    [
        "CREATE (:State {uid: 'a', task: 'b', index: 1})",
        "MATCH (n:State) SET n.name = 'x'",
        "MATCH (n) DETACH DELETE n",
        "COMMIT; CREATE (:State {uid: 'a', task: 'b', index: 1})",
        "MATCH (n) RETURN n; MATCH (m) DELETE m",
        "COPY (MATCH (n) RETURN n.uid) TO 'leak.csv'",
        "EXPORT DATABASE 'elsewhere'",
    ],
)
def test_cypher_is_read_only(memory_store, query, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    memory_store.put(tasks.build("rewardgym/hcp"))
    before = memory_store.cypher("MATCH (n) RETURN count(n)").rows
    with pytest.raises(QueryError):
        memory_store.cypher(query)
    assert memory_store.cypher("MATCH (n) RETURN count(n)").rows == before
    assert list(tmp_path.iterdir()) == []


def test_cypher_with_parameters_and_reserved_property_names(memory_store):
    memory_store.put(tasks.build("rewardgym/two-step"))
    rows = memory_store.cypher(
        "MATCH (s:State)-[e:MOVE]->(t:State) WHERE s.task = $task AND s.index = 0 "
        "RETURN e.action, e.p, t.index ORDER BY e.action, t.index",
        {"task": "rewardgym/two-step"},
    ).rows
    assert rows == [[0, 0.7, 1], [0, pytest.approx(0.3), 2], [1, pytest.approx(0.3), 1], [1, 0.7, 2]]
    assert quote_reserved_properties("RETURN s.index, 's.index'") == "RETURN s.`index`, 's.index'"


def test_injection_strings_are_stored_verbatim(memory_store):
    nasty = "x'}) DETACH DELETE n //"
    g = TaskGraph(f"user/{nasty}", "test", name=nasty, description="'; MATCH (n) DETACH DELETE n; //")
    g.add_node("s0", "State", index=0, name="\" OR 1=1 --")
    g.add_edge("", "s0", "START")
    memory_store.put(tasks.build("rewardgym/hcp"))
    memory_store.put(g)
    back = memory_store.get(f"user/{nasty}")
    assert back == g and back.props("s0")["name"] == "\" OR 1=1 --"
    assert "rewardgym/hcp" in memory_store


def test_on_disk_store_persists_and_default_location_is_overridable(tmp_path, monkeypatch):
    location = tmp_path / "elsewhere.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(location))
    with open_store() as store:
        store.put(tasks.build("neuronav/graph/linear"))
    assert location.exists()
    with open_store(location) as store:
        assert [t.task_id for t in store.list()] == ["neuronav/graph/linear"]
