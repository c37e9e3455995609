"""The entity registry's update and remove on every store: new versions, the environment's view,
the version check against racing writers, bad input, and built-in tasks (whose file is the truth)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest

import gym_bridge
import tasks
from graphstore import ConflictError, GraphStore, SchemaError, TaskNotFound
from graphstore.entities import groups, rebase, select
from graphstore.ladybug_store import LadybugStore

from .test_store_semantics import small_task

TASK = "t/edits"
REWARD = f"{TASK}/created/reward/0"


def chain(store: GraphStore, n: int = 4) -> str:
    """A chain of `n` states (action 0 moves on, the last state pays 1) with a created reward of 5 at state 1."""
    store.put(small_task(TASK, n=n))
    (uid,) = tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 5}, "group": "bonus"}})
    return uid


def rewards_along(store: GraphStore, steps: int = 3) -> list[float]:
    """The rewards of walking the chain from its start, in an environment made from the stored task."""
    env = gym_bridge.make_env(TASK, store=store)
    env.reset(seed=0)
    return [float(env.step(0)[1]) for _ in range(steps)]


def snapshot(store: GraphStore) -> tuple[str | None, list[Any]]:
    return store.content_hash(TASK), [e.row() for e in select(store, TASK)]


# -- update ---------------------------------------------------------------------------------------
def test_update_changes_the_value_in_a_new_version(store):
    uid = chain(store)
    before = store.content_hash(TASK)
    assert rewards_along(store) == [5.0, 0.0, 1.0]
    (changed,) = tasks.update(store, TASK, uid, {"value": 7})
    assert (changed.uid, changed.type, changed.group, changed.props) == (uid, "Reward", "bonus",
                                                                         {"kind": "fixed", "values": [7.0]})
    after = store.content_hash(TASK)
    assert after != before
    assert select(store, TASK, uid=uid) == [changed]
    assert rewards_along(store) == [7.0, 0.0, 1.0]
    assert store.get(TASK).content_hash() == after  # the stored hash is the stored content's


def test_the_same_update_twice_changes_nothing(store):
    uid = chain(store)
    tasks.update(store, TASK, uid, {"value": 7})
    stored = snapshot(store)
    tasks.update(store, TASK, uid, {"value": 7})
    assert snapshot(store) == stored
    # and the in-memory edit of the stored version is the same content: putting it writes nothing
    graph = store.get(TASK)
    tasks.update_entities(graph, uid, {"value": 7})
    assert store.put(graph) is False


def test_update_moves_an_entity_to_another_state(store):
    uid = chain(store)
    tasks.update(store, TASK, uid, {"state": 2})
    assert rewards_along(store) == [0.0, 5.0, 1.0]
    rows = store.cypher(
        "MATCH (s:State)-[:HAS_REWARD]->(r:Reward) WHERE r.uid = $uid RETURN s.index", {"uid": uid}
    ).rows
    assert rows == [[2]]  # one edge, from the new state only


def test_update_the_tasks_own_entity_and_select_by_group_and_type(store):
    uid = chain(store)
    own = f"{TASK}/r"  # the reward the task came with (group 'default'); not a built-in task: it may change
    tasks.update(store, TASK, own, {"value": 9})
    assert rewards_along(store) == [5.0, 0.0, 9.0]
    changed = tasks.update(store, TASK, params={"value": 2}, type="Reward")  # every reward
    assert sorted(e.uid for e in changed) == sorted([own, uid])
    assert rewards_along(store) == [2.0, 0.0, 2.0]
    (bonus,) = tasks.update(store, TASK, params={"value": 3}, group="bonus")
    assert bonus.uid == uid and rewards_along(store) == [3.0, 0.0, 2.0]
    assert groups(store, TASK) == {"all": 6, "bonus": 1, "default": 5}  # entities keep their groups


def test_a_new_kind_replaces_the_old_kinds_fields(store):
    uid = chain(store, n=3)
    spec = {"kind": "probabilistic", "values": [1, 0], "probs": [0.5, 0.5]}
    (changed,) = tasks.update(store, TASK, uid, spec)
    assert changed.props == {"kind": "probabilistic", "values": [1.0, 0.0], "probs": [0.5, 0.5]}
    draws = set()
    env = gym_bridge.make_env(TASK, store=store)
    for seed in range(30):
        env.reset(seed=seed)
        draws.add(float(env.step(0)[1]))
    assert draws == {0.0, 1.0}
    (fixed,) = tasks.update(store, TASK, uid, {"value": 4})  # `value`: a fixed reward again, probs dropped
    assert fixed.props == {"kind": "fixed", "values": [4.0]}
    assert rewards_along(store, 1) == [4.0]


@pytest.mark.parametrize(
    "uid, params, message",
    [
        ("created/reward/9", {"value": 1}, "update: no entity 'created/reward/9'"),
        (REWARD, {"colour": 1}, f"update {REWARD}: params: unknown field(s) colour"),
        (REWARD, {"state": 3}, f"update {REWARD}: params: state: state 3 of task 't/edits' already has a reward"),
        (REWARD, {"state": 99}, f"update {REWARD}: params: state: task 't/edits' has no state 99"),
        (REWARD, {"kind": "nope"}, "'kind' must be one of"),
        (REWARD, {"probs": [0.5, 0.5]}, f"update {REWARD}: params: unknown field(s) probs"),
        (REWARD, {}, "give the parameters to change"),
        (REWARD, {"group": "x"}, "'group' is not a parameter"),
        (f"{TASK}/s1", {"value": 1}, "'t/edits/s1' is a State, which the registry does not edit"),
        (TASK, {"value": 1}, f"no entity {TASK!r}"),
    ],
)
def test_bad_updates_name_the_uid_and_field_and_write_nothing(store, uid, params, message):
    chain(store)
    before = snapshot(store)
    with pytest.raises(SchemaError) as caught:
        tasks.update(store, TASK, uid, params)
    assert message in str(caught.value)
    assert snapshot(store) == before


def test_bad_selections_write_nothing(store):
    chain(store)
    before = snapshot(store)
    for kwargs, message in [
        ({"group": "nope"}, "no entity of group 'nope'"),
        ({"type": "State"}, "type 'State' is not an entity class the registry edits"),
        ({"type": "Nope"}, "unknown entity type 'Nope'"),
        ({}, "name the entities"),
        ({"uid": REWARD, "group": "bonus"}, "not both"),
        ({"uid": [REWARD, f"{TASK}/r"], "params": {"state": 2}}, "moves one entity and 2 are selected"),
    ]:
        with pytest.raises(SchemaError, match=message):
            tasks.update(store, TASK, **{"params": {"value": 1}, **kwargs})
    with pytest.raises(TaskNotFound):
        tasks.update(store, "t/missing", REWARD, {"value": 1})
    assert snapshot(store) == before


# -- remove ---------------------------------------------------------------------------------------
def test_remove_deletes_the_entity_and_its_edges(store):
    uid = chain(store)
    before = store.content_hash(TASK)
    (removed,) = tasks.remove(store, TASK, uid)
    assert (removed.uid, removed.group, removed.props["values"]) == (uid, "bonus", [5.0])
    assert store.content_hash(TASK) != before
    assert select(store, TASK, uid=uid) == [] and groups(store, TASK) == {"all": 5, "default": 5}
    assert rewards_along(store) == [0.0, 0.0, 1.0]
    rows = store.cypher("MATCH (s:State)-[:HAS_REWARD]->(r:Reward) WHERE s.task = $t RETURN count(r)", {"t": TASK})
    assert rows.rows == [[1]]
    assert store.get(TASK).content_hash() == store.content_hash(TASK)
    # removing it again: it is gone, one clear error, nothing written
    stored = snapshot(store)
    with pytest.raises(SchemaError, match=r"remove: no entity 't/edits/created/reward/0'"):
        tasks.remove(store, TASK, uid)
    assert snapshot(store) == stored
    # and the removed state can take a reward again
    tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 6}}})
    assert rewards_along(store) == [6.0, 0.0, 1.0]


def test_remove_by_group_and_by_type(store):
    chain(store)
    tasks.create(store, TASK, {"Reward": {"params": {"state": 2, "value": 1}, "group": "bonus"}})
    assert len(tasks.remove(store, TASK, group="bonus")) == 2
    assert rewards_along(store) == [0.0, 0.0, 1.0]
    assert [e.uid for e in tasks.remove(store, TASK, type="Reward")] == [f"{TASK}/r"]
    assert rewards_along(store) == [0.0, 0.0, 0.0]
    assert select(store, TASK, type="Reward") == [] and len(select(store, TASK, type="State")) == 4


def test_bad_removes_write_nothing(store):
    chain(store)
    before = snapshot(store)
    for args, kwargs, message in [
        (["created/reward/9"], {}, "no entity 'created/reward/9'"),
        ([[REWARD, "created/reward/9"]], {}, "no entity 'created/reward/9'"),  # one bad uid: none removed
        ([f"{TASK}/s0"], {}, "is a State, which the registry does not edit"),
        ([], {"group": "default", "type": "State"}, "type 'State' is not an entity class"),
        ([], {"group": "nope"}, "no entity of group 'nope'"),
        ([[]], {}, "expected one or more entity uids"),
    ]:
        with pytest.raises(SchemaError, match=message):
            tasks.remove(store, TASK, *args, **kwargs)
    assert snapshot(store) == before


# -- the version check ------------------------------------------------------------------------------
def test_an_edit_built_on_a_stale_version_is_refused(store):
    """What update and remove do, step by step, with a writer in between: ConflictError, nothing written."""
    uid = chain(store)
    graph = store.get(TASK)
    base = graph.task["content_hash"]
    tasks.update_entities(graph, uid, {"value": 8})
    tasks.update(store, TASK, uid, {"state": 2})  # another writer, between the read and the write
    theirs = snapshot(store)
    with pytest.raises(ConflictError, match="changed since it was read"):
        store.put(graph, expected_hash=base)
    assert snapshot(store) == theirs
    stale = store.get(TASK)
    base = stale.task["content_hash"]
    tasks.remove_entities(stale, uid)
    tasks.create(store, TASK, {"Reward": {"params": {"state": 1, "value": 1}}})
    theirs = snapshot(store)
    with pytest.raises(ConflictError):
        store.put(stale, expected_hash=base)
    assert snapshot(store) == theirs


def race(stores: list[GraphStore], edits: list[Callable[[GraphStore], Any]]) -> list[str]:
    """Edit i runs on store i, all at one moment, one thread each; 'ok' or 'conflict' per edit."""
    outcomes = [""] * len(edits)
    barrier = threading.Barrier(len(edits))

    def worker(i: int) -> None:
        barrier.wait()
        try:
            edits[i](stores[i])
            outcomes[i] = "ok"
        except ConflictError:
            outcomes[i] = "conflict"
        except Exception as exc:  # noqa: BLE001 - reported in the assertion below
            outcomes[i] = f"error: {type(exc).__name__}: {exc}"

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(edits))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o in ("ok", "conflict") for o in outcomes), outcomes
    return outcomes


def racing_edits(stores: list[GraphStore]) -> None:
    """Updates and removes of different entities of one task, racing: each lands whole or
    raises ConflictError and leaves no trace; no landed edit is undone by another."""
    store = stores[0]
    store.put(small_task(TASK, n=9))
    n = len(stores)
    uids = tasks.create(store, TASK, {"Reward": {"params": {"state": list(range(1, n + 1)), "value": 1},
                                                 "count": n, "group": "w"}})

    def edit(i: int) -> Callable[[GraphStore], Any]:
        if i % 2:
            return lambda s: tasks.remove(s, TASK, uids[i])
        return lambda s: tasks.update(s, TASK, uids[i], {"value": 10 + i})

    outcomes = race(stores, [edit(i) for i in range(n)])
    assert "ok" in outcomes
    values = {e.uid: e.props["values"][0] for e in select(store, TASK, group="w")}
    for i, (uid, outcome) in enumerate(zip(uids, outcomes)):
        if i % 2:
            assert (uid not in values) == (outcome == "ok"), (i, outcome, values)
        else:
            assert values[uid] == (10 + i if outcome == "ok" else 1.0), (i, outcome, values)
    assert store.get(TASK).content_hash() == store.content_hash(TASK)


def test_racing_edits_on_one_store_object(store):
    racing_edits([store] * 6)


def test_racing_edits_from_separate_bolt_clients(bolt_server):
    """One driver per thread: the server's transaction (and the revision claim), not the
    client's lock, must refuse the second of two writes built on one version."""
    from .conftest import open_bolt, wipe

    stores = [open_bolt(bolt_server) for _ in range(4)]
    wipe(stores[0])
    try:
        racing_edits(stores)
    finally:
        wipe(stores[0])
        for s in stores:
            s.close()


# -- built-in tasks: their file is the source of truth ---------------------------------------------
GRAPH = "neuronav/graph/neighborhood"


def test_own_entities_of_a_builtin_are_refused_and_nothing_is_written(store):
    with pytest.raises(SchemaError, match=r"update neuronav/graph/neighborhood/r14: this entity came with the "
                                          r"built-in task.*copy the task under an id of your own"):
        tasks.update(store, GRAPH, "r14", {"value": 3})
    assert GRAPH not in store  # not even put there
    store.put(tasks.build(GRAPH))
    tasks.create(store, GRAPH, {"Reward": {"params": {"state": 3, "value": 5}, "group": "bonus"}})
    before = store.content_hash(GRAPH)
    for edit in (
        lambda: tasks.remove(store, GRAPH, f"{GRAPH}/r14"),
        lambda: tasks.remove(store, GRAPH, type="Reward"),  # the selection holds the task's own reward
        lambda: tasks.update(store, GRAPH, params={"value": 1}, group="default"),
    ):
        with pytest.raises(SchemaError, match="came with the built-in task"):
            edit()
    assert store.content_hash(GRAPH) == before


def test_a_copy_under_your_own_id_can_move_a_builtin_reward(store):
    store.put(tasks.build(GRAPH).copy("me/neighborhood"))
    (moved,) = tasks.update(store, "me/neighborhood", "r14", {"state": 3, "value": 2})
    assert moved.group == "default"
    compiled = gym_bridge.make_env("me/neighborhood", store=store).unwrapped.compiled
    assert compiled.reward_value[3] == 2.0 and compiled.reward_value[14] == 0.0
    tasks.remove(store, "me/neighborhood", "r14")
    assert not gym_bridge.make_env("me/neighborhood", store=store).unwrapped.compiled.reward_value.any()


def test_edits_of_created_entities_of_a_builtin_survive_its_rebuild(tmp_path):
    """`load_stored` rebuilds a built-in from its file when the stored hash differs and keeps
    the created entities (`rebase`): updated ones as updated, removed ones stay removed."""
    location = str(tmp_path / "store.lbug")
    with LadybugStore(location) as store:
        keep, gone = tasks.create(store, GRAPH, {"Reward": {"params": {"state": [3, 5], "value": 5},
                                                            "count": 2, "group": "bonus"}})
        tasks.update(store, GRAPH, keep, {"state": 4, "value": 7})
        tasks.remove(store, GRAPH, gone)
        stored = store.get(GRAPH)
        edited = stored.task["content_hash"]
    # the file's version plus the created entities is what is stored: nothing to rebuild
    assert rebase(stored, tasks.build(GRAPH)).task["content_hash"] == edited
    env = gym_bridge.make_env(GRAPH, store=location)
    assert env.unwrapped.compiled.reward_value[[3, 4, 5]].tolist() == [0.0, 7.0, 0.0]
    with LadybugStore(location) as store:
        assert store.content_hash(GRAPH) == edited  # making the env read it, and wrote nothing
    # the file changed (its own reward pays 2 now): the rebuild keeps the edits of created entities
    changed = tasks.build(GRAPH)
    changed.props("r14")["values"] = [2.0]
    rebuilt = rebase(stored, changed)
    assert rebuilt.props("created/reward/0") == {"kind": "fixed", "values": [7.0], "group": "bonus"}
    assert [s for s, _, d in rebuilt.graph.in_edges("created/reward/0", data=True) if d["rel"] == "HAS_REWARD"] == [
        "s4"
    ]
    assert "created/reward/1" not in rebuilt.graph and rebuilt.props("r14")["values"] == [2.0]


# -- grids -----------------------------------------------------------------------------------------
GRID = "neuronav/grid/four_rooms/small"


def grid_setup(store: GraphStore) -> tuple[Any, int, list[int]]:
    from gym_bridge import compile_grid_from_store

    store.put(tasks.build(GRID))
    grid = compile_grid_from_store(store, GRID)
    start = int(grid.start)
    open_dirs = [d for d in range(4) if grid.move[start, d] != start]
    assert len(open_dirs) >= 2, "the test needs a start cell with two open neighbours"
    return grid, start, open_dirs


def cell(grid: Any, index: int) -> list[int]:
    return list(divmod(int(index), grid.n))


def grid_step(store: GraphStore, task_id: str, action: int) -> tuple[int, float]:
    env = gym_bridge.make_env(task_id, store=store, obs_type="index")
    env.reset(seed=0)
    obs, reward, *_ = env.step(action)
    return int(obs), float(reward)


def test_grid_objects_move_and_change(store):
    grid, start, (d, k, *_) = grid_setup(store)
    first, second = grid.move[start, d], grid.move[start, k]
    (reward,) = tasks.create(store, GRID, {"Reward": {"params": {"cell": cell(grid, first), "value": 3},
                                                      "group": "bonus"}})
    assert grid_step(store, GRID, d) == (first, 3.0)
    (moved,) = tasks.update(store, GRID, reward, {"cell": cell(grid, second), "value": 4})
    assert moved.props == {"kind": "fixed", "values": [4.0], "visible": True}
    assert grid_step(store, GRID, d) == (first, 0.0)
    assert grid_step(store, GRID, k) == (second, 4.0)
    # a warp's target, a door's orientation
    free = [i for i in range(grid.n_cells) if not grid.wall.reshape(-1)[i] and i not in (start, first, second)]
    (warp,) = tasks.create(store, GRID, {"Warp": {"params": {"cell": cell(grid, first), "to": cell(grid, free[0])}}})
    assert grid_step(store, GRID, d)[0] == free[0]
    tasks.update(store, GRID, warp, {"to": cell(grid, free[1])})
    assert grid_step(store, GRID, d)[0] == free[1]
    (door,) = tasks.create(store, GRID, {"Door": {"params": {"cell": cell(grid, free[2])}}})
    (changed,) = tasks.update(store, GRID, door, {"orientation": "v"})
    assert changed.props == {"orientation": "v"}
    # not free, a wall, a property the class does not have: one error naming uid and field
    wall = [list(map(int, rc)) for rc in zip(*grid.wall.nonzero())][0]
    tasks.create(store, GRID, {"Warp": {"params": {"cell": cell(grid, second), "to": cell(grid, free[3])}}})
    before = store.content_hash(GRID)
    for params, message in [
        ({"cell": cell(grid, second)}, r"params: cell: cell .* already holds a Warp \(.*created/warp/1\)"),
        ({"cell": wall}, r"params: cell: cell .* is a wall"),
        ({"colour": "red"}, r"update .*created/warp/0: params: unknown property colour"),
        ({"to": [99, 99]}, r"params: cell: to: task .* has no cell \(99, 99\)"),
    ]:
        with pytest.raises(SchemaError, match=message):
            tasks.update(store, GRID, warp, params)
    assert store.content_hash(GRID) == before
    tasks.remove(store, GRID, warp)
    assert grid_step(store, GRID, d) == (first, 0.0)


def test_a_builtin_grid_reward_moves_in_a_copy(store):
    grid, start, (d, *_) = grid_setup(store)
    target = grid.move[start, d]
    store.put(store.get(GRID).copy("me/four_rooms"))
    (own,) = [e for e in select(store, "me/four_rooms", type="Reward")]
    with pytest.raises(SchemaError, match="came with the built-in task"):
        tasks.update(store, GRID, own.uid.replace("me/four_rooms", GRID), {"cell": cell(grid, target)})
    tasks.update(store, "me/four_rooms", own.uid, {"cell": cell(grid, target)})
    assert grid_step(store, "me/four_rooms", d) == (target, 1.0)
