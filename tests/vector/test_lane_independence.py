"""On per-lane streams (`use_lanes`), a copy's rewards and states depend on its own seed and
actions alone, never on the other copies: for every graph task of the catalogue that draws
(each reward kind: probabilistic, drifting, walk, sequence, reversal, game, depletion)."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge import family
from gym_bridge.batched_episodes import env_lanes

TASKS = [
    "rewardgym/two-step", "rewardgym/two-armed-bandit", "rewardgym/risk-sensitive", "decision/horizon",
    "decision/iowa-gambling", "decision/restless-bandit", "decision/reversal-learning",
    "decision/reversal-learning-criterion", "decision/patch-foraging", "decision/probabilistic-selection",
]
STEPS = 120


def walk(task: str, seeds: list[int], actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rewards and states of every copy, stepping `actions[t, copy]` (masked to what is offered;
    an ended copy is reset on its own, as the batched loop does)."""
    env = family("graph").make_vector_env(task, len(seeds), autoreset_mode="disabled")
    env.use_lanes(env_lanes(seeds))
    _, info = env.reset()
    rewards, states = [], []
    for t in range(STEPS):
        offered = env.action_masks()
        choice = np.array([np.flatnonzero(row)[a % max(1, row.sum())] if row.any() else 0
                           for row, a in zip(offered, actions[t])])
        _, reward, terminated, truncated, info = env.step(choice)
        rewards.append(reward.copy())
        states.append(np.asarray(info["state"]).copy())
        ended = terminated | truncated
        if ended.any():
            env.reset(options={"reset_mask": ended})
    return np.array(rewards), np.array(states)


@pytest.mark.parametrize("task", TASKS)
def test_a_copy_on_its_own_lane_does_not_depend_on_the_others(task: str) -> None:
    actions = np.random.default_rng(3).integers(0, 1000, (STEPS, 5))
    seeds = [11, 12, 13, 14, 15]
    together_rewards, together_states = walk(task, seeds, actions)
    alone_rewards, alone_states = walk(task, [13], actions[:, 2:3])
    assert np.array_equal(alone_rewards[:, 0], together_rewards[:, 2])
    assert np.array_equal(alone_states[:, 0], together_states[:, 2])
