"""Numbers a faster batched step must keep (issue 36): the lane streams' draws equal to
SplitMix64 computed with Python integers (they are drawn in place now), and the batched SR's
tables equal to the per-agent SR's, bit for bit, on the same steps."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge.agents import make_batched
from gym_bridge.agents.sr import BatchedSR, SRAgent
from gym_bridge.vector.lanes import LaneStreams, lane_key

MASK64 = (1 << 64) - 1


def splitmix_reference(key: int, k: int) -> int:
    """Output k of a lane keyed `key`, by the generator's definition in Python integers."""
    x = (key + (k + 1) * 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def test_lane_draws_are_splitmix64_of_each_lanes_own_counter() -> None:
    streams = LaneStreams.from_seeds([3, 8, 21], stream=5)
    streams.bits(np.array([1]), 2)  # lane 1 moves on alone
    words = streams.bits(np.array([0, 1, 2]), 3)
    keys = [lane_key(seed, 5) for seed in (3, 8, 21)]
    starts = [0, 2, 0]
    expected = [[splitmix_reference(key, start + j) for j in range(3)] for key, start in zip(keys, starts)]
    assert words.tolist() == expected
    assert streams.counters.tolist() == [3, 5, 3]
    unit = LaneStreams.from_seeds([3], stream=5).uniform(None, 2)
    assert unit.tolist() == [[(splitmix_reference(keys[0], j) >> 11) * 2.0**-53 for j in range(2)]]


@pytest.mark.parametrize("settings", [{}, {"goal_biased": False}, {"include_current": False}])
def test_batched_sr_learns_the_per_agent_rule_bit_for_bit(settings: dict) -> None:
    """Lanes fed the same steps as per-agent SR agents (learning draws nothing) end with equal
    M and w, to the last bit, whichever lanes take part in a step."""
    n_states, n_actions, size = 6, 3, 4
    lanes_settings = [{"lr": 0.1 + 0.1 * i, "gamma": 0.9 - 0.1 * i, "w_lr": 0.3, **settings} for i in range(size)]
    batch = make_batched("sr", n_states, n_actions, seeds=list(range(size)), settings=lanes_settings)
    assert isinstance(batch, BatchedSR)
    single = [SRAgent(n_states, n_actions, seed=i, **s) for i, s in enumerate(lanes_settings)]
    rng = np.random.default_rng(4)
    for step in range(300):
        lanes = np.sort(rng.choice(size, int(rng.integers(1, size + 1)), replace=False))
        states, actions = rng.integers(0, n_states, lanes.size), rng.integers(0, n_actions, lanes.size)
        rewards, nexts = rng.normal(size=lanes.size), rng.integers(0, n_states, lanes.size)
        terminated = rng.random(lanes.size) < 0.1
        batch.learn(lanes, states, actions, rewards, nexts, terminated, None)
        for i, lane in enumerate(lanes.tolist()):
            single[lane].learn(int(states[i]), int(actions[i]), float(rewards[i]), int(nexts[i]),
                               bool(terminated[i]), list(range(n_actions)))
    for lane, agent in enumerate(single):
        assert np.array_equal(batch.M[lane], agent.M) and np.array_equal(batch.w[lane], agent.w)
