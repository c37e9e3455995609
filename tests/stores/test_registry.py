"""The entity registry on every store: create, selections by id / group / type, versions, effect on the environment."""

from __future__ import annotations

import pytest

import tasks
from graphstore import ConflictError, SchemaError, TaskGraph, TaskNotFound
from graphstore import rdf as R
from graphstore.entities import ALL, DEFAULT, groups, select
from gym_bridge import GraphTaskEnv, compile_task

from .test_store_semantics import small_task

TASK = "t/registry"


def chain(store, task_id: str = TASK, n: int = 4) -> TaskGraph:
    graph = small_task(task_id, n=n)
    store.put(graph)
    return graph


def test_create_adds_typed_entities_in_a_group(store):
    chain(store)
    before = store.content_hash(TASK)
    uids = tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 5}, "group": "bonus"}})
    assert uids == [f"{TASK}/created/reward/0"]
    assert store.content_hash(TASK) != before  # a new version of the task
    (entity,) = select(store, TASK, group="bonus")
    assert (entity.uid, entity.type, entity.group) == (uids[0], "Reward", "bonus")
    assert entity.props == {"kind": "fixed", "values": [5.0]}
    # by id, by type, and the built-in groups
    assert select(store, TASK, uid=uids[0]) == [entity]
    assert [e.uid for e in select(store, TASK, type="Reward")] == sorted([uids[0], f"{TASK}/r"])
    assert {e.uid for e in select(store, TASK, group=DEFAULT)} == {f"{TASK}/s{i}" for i in range(4)} | {f"{TASK}/r"}
    assert len(select(store, TASK, group=ALL)) == len(select(store, TASK)) == 6
    assert select(store, TASK, group="bonus", type="State") == []
    assert groups(store, TASK) == {"all": 6, "bonus": 1, "default": 5}


def test_created_entities_persist_and_hash_like_any_content(store):
    chain(store)
    tasks.create(store, TASK, {"Reward": {"params": {"state": [1, 2], "value": 2.5}, "count": 2, "group": "g"}})
    back = store.get(TASK)
    assert back.content_hash() == store.content_hash(TASK)
    assert store.put(back) is False  # same content: nothing written
    # the same creation on a fresh copy gives the same ids and the same hash
    other = small_task(TASK, n=4)
    tasks.add_entities(other, {"Reward": {"params": {"state": [1, 2], "value": 2.5}, "count": 2, "group": "g"}})
    assert other.seal() == back and other.content_hash() == back.content_hash()
    assert [e.uid for e in select(store, TASK, group="g")] == [f"{TASK}/created/reward/0", f"{TASK}/created/reward/1"]


def test_created_reward_pays_in_the_environment(store):
    chain(store)
    env = GraphTaskEnv(TASK, store=store)
    env.reset(seed=0)
    assert env.step(0)[1] == 0.0  # state 1 pays nothing yet
    tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 5}}})
    env = GraphTaskEnv(TASK, store=store)
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(0)
    assert (reward, terminated) == (5.0, False)
    assert compile_task(store.get(TASK)).reward_value.tolist() == [0.0, 5.0, 0.0, 1.0]


def test_probabilistic_created_reward_draws_from_the_seeded_stream(store):
    chain(store, n=3)
    spec = {"state": 1, "kind": "probabilistic", "values": [1, 0], "probs": [0.5, 0.5]}
    tasks.create(store, TASK, {"Reward": {"params": spec}})

    def draws(seed: int) -> list[float]:
        env = GraphTaskEnv(TASK, store=store)
        env.reset(seed=seed)
        out = []
        for _ in range(40):
            out.append(env.step(0)[1])
            env.step(0)
            env.reset()
        return out

    first = draws(3)
    assert first == draws(3) and set(first) == {0.0, 1.0}


@pytest.mark.parametrize(
    "request_, message",
    [
        ({"Nope": {}}, "has no entity class 'Nope'"),
        ({"Reward": {"params": {"value": 1}}}, "'state' is required"),
        ({"Reward": {"params": {"state": 9, "value": 1}}}, "has no state 9"),
        ({"Reward": {"params": {"state": 3, "value": 1}}}, "state 3 of task 't/registry' already has a reward"),
        ({"Reward": {"params": {"state": 1, "value": 1}, "group": "all"}}, "'all' is a built-in group"),
        ({"Reward": {"params": {"state": 1, "value": 1}, "group": ""}}, "group name is a non-empty string"),
        ({"Reward": {"params": {"state": 1, "value": 1}, "count": 0}}, "'count' must be an integer"),
        ({"Reward": {"params": {"state": 1, "value": 1}, "count": 2}}, "must list 2 placements"),
        ({"Reward": {"params": {"state": 1, "value": 1}, "colour": "red"}}, "unknown option(s) colour"),
        ({"Reward": {"params": {"state": 1, "kind": "fixed", "values": "x"}}}, "'values' must be a non-empty list"),
        ({"Reward": {"params": {"state": 1, "value": 1, "group": "x"}}}, "set the group with the 'group' option"),
    ],
)
def test_bad_requests_name_the_field_and_write_nothing(store, request_, message):
    chain(store)
    before = store.content_hash(TASK)
    with pytest.raises(SchemaError) as caught:
        tasks.create(store, TASK, request_)
    assert message in str(caught.value)
    assert store.content_hash(TASK) == before
    assert len(select(store, TASK)) == 5


def test_a_failing_class_in_one_request_writes_none_of_it(store):
    chain(store)
    with pytest.raises(SchemaError):
        tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 1}}, "Nope": {}})
    assert select(store, TASK, group="created") == []


def test_unknown_task_and_unknown_type(store):
    with pytest.raises(TaskNotFound):
        tasks.create(store, "t/missing", {"Reward": {"params": {"state": 0, "value": 1}}})
    with pytest.raises(TaskNotFound):
        select(store, "t/missing")
    chain(store)
    with pytest.raises(SchemaError, match="unknown entity type 'Task'"):
        select(store, TASK, type="Task")


def test_stale_version_is_refused(store):
    graph = chain(store)
    stale = graph.task["content_hash"]
    tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 1}}})
    current = store.content_hash(TASK)
    mine = small_task(TASK, n=4)
    tasks.add_entities(mine, {"Reward": {"params": {"state": 2, "value": 7}}})
    with pytest.raises(ConflictError, match="changed since it was read"):
        store.put(mine, expected_hash=stale)
    with pytest.raises(ConflictError, match="changed since it was read"):
        store.extend(mine, ["created/reward/0"], expected_hash=stale)
    assert store.content_hash(TASK) == current
    assert len(select(store, TASK, type="Reward")) == 2


def test_extend_writes_only_the_new_nodes_and_reads_back_whole(store):
    chain(store)
    tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 1}}})
    tasks.create(store, TASK, {"Reward": {"params": {"state": [0, 2], "value": 2}, "count": 2, "group": "more"}})
    expected = small_task(TASK, n=4)
    tasks.add_entities(expected, {"Reward": {"params": {"state": 1, "value": 1}}})
    tasks.add_entities(expected, {"Reward": {"params": {"state": [0, 2], "value": 2}, "count": 2, "group": "more"}})
    expected.seal()
    back = store.get(TASK)
    assert back == expected and store.content_hash(TASK) == expected.task["content_hash"] == back.content_hash()
    rows = store.cypher("MATCH (s:State)-[:HAS_REWARD]->(r:Reward) WHERE s.task = $t RETURN count(r)", {"t": TASK}).rows
    assert rows[0][0] == 4  # each reward attached once, nothing duplicated


def test_builtin_task_gains_entities_and_keeps_its_own_as_default(store):
    task_id = "neuronav/graph/neighborhood"
    store.put(tasks.build(task_id))
    own = select(store, task_id)
    tasks.create(store, task_id, {"Reward": {"params": {"state": 3, "value": 5}, "group": "bonus"}})
    assert select(store, task_id, group=DEFAULT) == own
    assert compile_task(store.get(task_id)).reward_value[3] == 5.0


def test_groups_in_the_rdf_view_and_turtle_round_trip(store):
    chain(store)
    tasks.create(store, TASK, {"Reward": {"params": {"state": [1, 2], "value": 3}, "count": 2, "group": "bonus"}})
    graph = store.get(TASK)
    rdf = R.to_rdf(graph)
    rows = R.sparql(
        rdf,
        'SELECT ?uid WHERE { ?n gt:task "t/registry" ; gt:group "bonus" ; gt:uid ?uid } ORDER BY ?uid',
    ).rows
    assert [r[0] for r in rows] == [f"{TASK}/created/reward/0", f"{TASK}/created/reward/1"]
    default = R.sparql(
        rdf,
        'SELECT (COUNT(?n) AS ?c) WHERE { ?n gt:task "t/registry" ; a ?type . '
        "FILTER (?type NOT IN (gt:Task, gt:Edge)) FILTER NOT EXISTS { ?n gt:group ?g } }",
    ).rows
    assert int(default[0][0]) == 5
    (back,) = R.from_rdf(R.parse(R.to_turtle(rdf)))
    assert back == graph and back.content_hash() == graph.content_hash()


@pytest.mark.server_specific
def test_concurrent_creates_lose_nothing(store):
    """Creates racing on one task: each either lands or fails with ConflictError; none is lost
    and the stored hash always matches the stored content."""
    import threading

    chain(store, n=9)
    outcomes: list[str] = []
    lock = threading.Lock()

    def worker(state: int) -> None:
        try:
            tasks.create(store, TASK, {"Reward": {"params": {"state": state, "value": state}, "group": f"w{state}"}})
            result = "ok"
        except ConflictError:
            result = "conflict"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 6 and "ok" in outcomes
    created = select(store, TASK, group=None)
    assert sum(1 for e in created if e.group.startswith("w")) == outcomes.count("ok")
    back = store.get(TASK)
    assert back.content_hash() == store.content_hash(TASK)


@pytest.mark.server_specific
def test_concurrent_creates_from_separate_clients_lose_nothing(bolt_server):
    """As above with one driver per thread: the server, not the client's lock, serialises them."""
    from .conftest import open_bolt, race_creates_lose_nothing, wipe

    stores = [open_bolt(bolt_server) for _ in range(4)]
    wipe(stores[0])
    try:
        chain(stores[0], n=9)
        requests = [{"Reward": {"params": {"state": i, "value": i}, "group": f"w{i}"}} for i in range(len(stores))]
        race_creates_lose_nothing(stores, TASK, requests)
    finally:
        wipe(stores[0])
        for s in stores:
            s.close()


def test_create_on_a_store_without_the_builtin_stores_it_first(store):
    """As `graphtasks entities create` does: the built-in is put, then the entity added to it."""
    task = "neuronav/graph/neighborhood"
    assert task not in store
    uids = tasks.create(store, task, {"Reward": {"params": {"state": 3, "value": 5}, "group": "bonus"}})
    assert uids == [f"{task}/created/reward/0"]
    assert groups(store, task) == {"all": 17, "bonus": 1, "default": 16}
    assert [e.uid for e in select(store, task, group="bonus")] == uids


def test_create_on_an_unknown_task_writes_nothing(store):
    with pytest.raises(TaskNotFound):
        tasks.create(store, "user/nothing-here", {"Reward": {"params": {"state": 0, "value": 1}}})
    assert "user/nothing-here" not in store
