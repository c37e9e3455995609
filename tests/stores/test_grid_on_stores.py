"""Grid worlds on every store: the fixed compile queries give the same arrays as the
in-memory graph, and a GridEnv runs from the store it is given."""

from __future__ import annotations

import numpy as np

import tasks
from gym_bridge.grid.compiled import compile_grid, compile_grid_from_store
from gym_bridge.grid.env import GridEnv


def test_grid_compiles_alike_on_every_store(store):
    for task_id in ["neuronav/grid/four_rooms_split/small", "neuronav/grid/two_rooms/micro"]:
        graph = tasks.build(task_id)
        store.put(graph)
        a, b = compile_grid_from_store(store, task_id), compile_grid(graph)
        assert all(np.array_equal(a.arrays()[k], b.arrays()[k]) for k in a.arrays()), task_id
        assert a.objects == b.objects and a.content_hash == b.content_hash


def test_grid_env_runs_from_every_store(store):
    env = GridEnv("four_rooms_split", "small", store=store, obs_type="symbolic")
    obs, info = env.reset(seed=0)
    assert obs.shape == (11, 11, 6) and info["state"] == 8 * 11 + 8
    assert "neuronav/grid/four_rooms_split/small" in store
