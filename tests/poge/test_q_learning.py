"""Tabular Q-learning with the reference settings: learns world0 when fully observable, fails on
scaled_world0 under partial observability (the point of POGE). Fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge.poge.env import PogeEnv

# the reference's Q-learning run: alpha .1, gamma .6, epsilon .1, 10,000 episodes, step_penalty -0.1,
# indicate_wall and indicate_slip.
SETTINGS = dict(indicate_wall=True, indicate_slip=True, step_penalty=-0.1)


def q_learning(
    env: PogeEnv,
    seed: int,
    episodes: int = 10_000,
    alpha: float = 0.1,
    gamma: float = 0.6,
    epsilon: float = 0.1,
    tests: int = 100,
) -> tuple[int, float]:
    """Train epsilon-greedy, then run greedy test episodes: (goals reached, mean steps of those)."""
    rng = np.random.default_rng(seed)
    q = [[0.0] * 4 for _ in range(env.observation_space.n)]
    env.reset(seed=seed)
    for _ in range(episodes):
        s, _ = env.reset()
        done = False
        while not done:
            row = q[s]
            a = int(rng.integers(4)) if rng.random() < epsilon else row.index(max(row))
            s2, r, terminated, truncated, _ = env.step(a)
            target = r if terminated else r + gamma * max(q[s2])
            row[a] += alpha * (target - row[a])
            s, done = s2, terminated or truncated
    reached, steps = 0, []
    for _ in range(tests):
        s, _ = env.reset()
        n = 0
        while True:
            row = q[s]
            s, r, terminated, truncated, _ = env.step(row.index(max(row)))
            n += 1
            if terminated or truncated:
                break
        if terminated and r > 0:
            reached += 1
            steps.append(n)
    return reached, (sum(steps) / len(steps) if steps else float("nan"))


@pytest.mark.parametrize("seed", [0, 1])
def test_fully_observable_world0_is_learned(seed: int) -> None:
    env = PogeEnv("poge/world0", is_partially_obs=False, **SETTINGS)
    reached, mean_steps = q_learning(env, seed)
    assert reached == 100
    assert mean_steps == 8.0  # the deterministic 8-step path round the left of the middle wall


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.slow
def test_partially_observable_scaled_world0_defeats_q_learning(seed: int) -> None:
    env = PogeEnv("poge/scaled_world0", is_partially_obs=True, **SETTINGS)
    reached, _ = q_learning(env, seed)
    assert reached == 0
    full = PogeEnv("poge/scaled_world0", is_partially_obs=False, **SETTINGS)
    assert q_learning(full, seed)[0] > 0  # the same world is learnable when the tiles are observed
