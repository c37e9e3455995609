"""Every reference agent says how likely each of its choices is, and `act` draws by exactly that."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge.agents import AGENT_INFO, AGENTS
from gym_bridge.agents.base import policy


def test_epsilon_greedy_shares_epsilon_over_the_offered_actions_and_the_rest_over_the_best() -> None:
    p = policy(np.array([1.0, 3.0, 3.0, 9.0]), [0, 1, 2], None, 0.3)
    assert p == pytest.approx([0.1, 0.1 + 0.35, 0.1 + 0.35, 0.0])


def test_softmax_probabilities_follow_the_inverse_temperature() -> None:
    p = policy(np.array([0.0, 1.0]), [0, 1], 2.0, 0.0)
    assert p[1] / p[0] == pytest.approx(np.exp(2.0))


@pytest.mark.parametrize("name", sorted(n for n, i in AGENT_INFO.items() if i.observation == "index"))
def test_an_agent_acts_with_the_probabilities_it_reports(name: str) -> None:
    agent = AGENTS[name](3, 3, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(200):  # some learning, so that the values differ
        s, a = int(rng.integers(3)), int(rng.integers(3))
        agent.begin_episode()
        agent.learn(s, a, float(a == 2), int(rng.integers(3)), bool(rng.random() < 0.3), [0, 1, 2])
    agent.begin_episode()
    expected = agent.action_probabilities(0, [0, 2])
    draws = np.bincount([agent.act(0, [0, 2]) for _ in range(4000)], minlength=3) / 4000
    assert expected.sum() == pytest.approx(1.0) and expected[1] == 0.0
    assert draws == pytest.approx(expected, abs=0.03)
