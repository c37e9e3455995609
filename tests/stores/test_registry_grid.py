"""The registry on grid tasks: rewards, keys, doors, warps created on cells take effect in GridEnv.

Uses the grid family's Cell and object node types.
"""

from __future__ import annotations

import pytest

import tasks
from graphstore import SchemaError
from graphstore.entities import select

TASK = "neuronav/grid/four_rooms/small"


def setup(store):
    from gym_bridge import compile_grid_from_store

    store.put(tasks.build(TASK))
    grid = compile_grid_from_store(store, TASK)
    start = grid.start
    open_dirs = [d for d in range(4) if grid.move[start, d] != start]
    assert len(open_dirs) >= 2, "the test needs a start cell with two open neighbours"
    return grid, start, open_dirs


def cell(grid, index: int) -> list[int]:
    return list(divmod(int(index), grid.n))


def env_for(store):
    from gym_bridge import GridEnv

    env = GridEnv(task=TASK, store=store, obs_type="index")
    env.reset(seed=0)
    return env


def test_created_reward_on_a_cell_pays(store):
    grid, start, (d, *_) = setup(store)
    target = grid.move[start, d]
    assert env_for(store).step(d)[1] == 0.0
    tasks.create(store, TASK, {"Reward": {"params": {"cell": cell(grid, target), "value": 3}, "group": "bonus"}})
    obs, reward, terminated, _, _ = env_for(store).step(d)
    assert (obs, reward, terminated) == (target, 3.0, True)
    (entity,) = select(store, TASK, group="bonus")
    assert entity.type == "Reward" and entity.props["values"] == [3.0] and entity.props["visible"] is True


def test_created_door_blocks_until_a_created_key_is_picked_up(store):
    grid, start, (d, k, *_) = setup(store)
    door_cell, key_cell = grid.move[start, d], grid.move[start, k]
    tasks.create(store, TASK, {"Door": {"params": {"cell": cell(grid, door_cell)}, "group": "locks"}})
    env = env_for(store)
    assert env.step(d)[0] == start  # closed, no key
    tasks.create(store, TASK, {"Key": {"params": {"cell": cell(grid, key_cell)}, "group": "locks"}})
    env = env_for(store)
    assert env.step(k)[0] == key_cell  # picks the key up
    assert env.step((k + 2) % 4)[0] == start
    assert env.step(d)[0] == door_cell  # the key opens the door
    assert {e.type for e in select(store, TASK, group="locks")} == {"Door", "Key"}


def test_created_warp_moves_the_agent(store):
    grid, start, (d, *_) = setup(store)
    free = [i for i in range(grid.n_cells) if not grid.wall.reshape(-1)[i] and i not in (start, grid.move[start, d])]
    far = free[0]
    tasks.create(store, TASK, {"Warp": {"params": {"cell": cell(grid, grid.move[start, d]), "to": cell(grid, far)}}})
    assert env_for(store).step(d)[0] == far


def test_grid_errors_name_the_cell(store):
    grid, start, _ = setup(store)
    wall = [list(map(int, rc)) for rc in zip(*grid.wall.nonzero())][0]
    with pytest.raises(SchemaError, match=r"is a wall"):
        tasks.create(store, TASK, {"Key": {"params": {"cell": wall}}})
    with pytest.raises(SchemaError, match=r"has no cell \(99, 99\)"):
        tasks.create(store, TASK, {"Key": {"params": {"cell": [99, 99]}}})
    tasks.create(store, TASK, {"Key": {"params": {"cell": cell(grid, start)}}})
    with pytest.raises(SchemaError, match=r"already holds a Key"):
        tasks.create(store, TASK, {"Key": {"params": {"cell": cell(grid, start)}}})


def test_rebuilding_a_grid_keeps_created_entities_or_names_the_lost_one():
    from graphstore.entities import rebase

    built = tasks.build(TASK)
    stored = tasks.build(TASK)
    grid_cells = {(p["row"], p["col"]): p for _, p in stored.nodes("Cell")}
    free = sorted(rc for rc, p in grid_cells.items() if not p["wall"])
    tasks.add_entities(stored, {"Key": {"params": {"cell": list(free[0])}, "group": "g"}})
    stored.seal()
    assert rebase(stored, built) == stored
    # the map changed: that cell is a wall now and lost its MOVE edges; the key's cell still exists
    changed = tasks.build(TASK)
    local = next(cell for cell, p in changed.nodes("Cell") if (p["row"], p["col"]) == free[0])
    changed.graph.remove_node(local)
    with pytest.raises(SchemaError, match=r"created entity .*created/key/0.* no longer has"):
        rebase(stored, changed)


@pytest.mark.server_specific
def test_racing_creates_of_different_classes_keep_the_hash_true(bolt_server):
    """No uid collision to stop them: the Task node's lock / version check must."""
    from .conftest import open_bolt, race_creates_lose_nothing, wipe

    classes = ["Key", "Door", "Marker", "Reward"]
    stores = [open_bolt(bolt_server) for _ in classes]
    wipe(stores[0])
    try:
        grid, start, (d, k, *_) = setup(stores[0])
        target = cell(grid, grid.move[start, d])
        requests = [{name: {"params": {"cell": target}, "group": f"w{i}"}} for i, name in enumerate(classes)]
        race_creates_lose_nothing(stores, TASK, requests)
    finally:
        wipe(stores[0])
        for s in stores:
            s.close()
