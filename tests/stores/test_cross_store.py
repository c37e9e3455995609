"""Every built-in task reads back the same from the embedded store and a Bolt server.

Equal task graphs, identical compiled arrays, and the same seeded trajectories.
"""

from __future__ import annotations

import numpy as np
import pytest

import tasks
from gym_bridge import GraphTaskEnv, compile_task, make_env
from ingest.conceptnet_snapshot import ingest_snapshot
from tests.conftest import builtin_params


def plain(obs):
    """Observations of any space (arrays, tuples, dicts) as comparable Python data."""
    if isinstance(obs, dict):
        return {k: plain(v) for k, v in obs.items()}
    if isinstance(obs, (tuple, list)):
        return [plain(v) for v in obs]
    return np.asarray(obs).tolist()


def trajectory(env: GraphTaskEnv, seed: int, steps: int = 60) -> list[tuple]:
    """Observations, rewards and flags of a seeded run with seeded random actions."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out: list[tuple] = [("reset", plain(obs))]
    for _ in range(steps):
        space = env.action_space
        # one index (Discrete), or one per part (the Room maps' answers and move: MultiDiscrete)
        action = int(rng.integers(space.n)) if hasattr(space, "n") else rng.integers(space.nvec)
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((plain(action), plain(obs), float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            obs, info = env.reset()
            out.append(("reset", plain(obs)))
    return out


@pytest.mark.parametrize("task_id", builtin_params())
def test_embedded_and_bolt_give_identical_tasks(embedded_store, bolt_store, task_id):
    graph = tasks.build(task_id)
    embedded_store.put(graph)
    bolt_store.put(graph)
    from_embedded = embedded_store.get(task_id)
    from_bolt = bolt_store.get(task_id)
    assert from_embedded == from_bolt == graph
    assert embedded_store.content_hash(task_id) == bolt_store.content_hash(task_id)

    if tasks.family_of(task_id).name == "graph":
        a, b = compile_task(from_embedded).arrays(), compile_task(from_bolt).arrays()
        assert a.keys() == b.keys()
        for name in a:
            assert a[name].dtype == b[name].dtype, name
            assert np.array_equal(a[name], b[name]), name

    if task_id.startswith("room/"):  # the Room task reads its commonsense from stored ConceptNet
        for store in (embedded_store, bolt_store):
            ingest_snapshot(store)
        rows = "MATCH (a:Concept)-[e:ASSERTS]->(b:Concept) RETURN a.uid, b.uid, e.weight ORDER BY a.uid, b.uid"
        assert embedded_store.cypher(rows).rows == bolt_store.cypher(rows).rows

    # the environments (of whatever family) load through the stores themselves
    env_a = make_env(task_id, store=embedded_store)
    env_b = make_env(task_id, store=bolt_store)
    for seed in (0, 7):
        assert trajectory(env_a, seed) == trajectory(env_b, seed)
