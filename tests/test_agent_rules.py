"""Agents against their update rules on examples worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge.agents import make_agent


@pytest.mark.parametrize(
    "model_lr, expected",
    [(1.0, [0, 0, 1]), (0.5, [0, 0.5, 0.5]), (None, [0, 2 / 3, 1 / 3])],
    ids=["last outcome", "recency 0.5", "average"],
)
def test_mbv_transition_model(model_lr: float | None, expected: list[float]) -> None:
    """Outcomes of (0, a0): 1, 1, 2. The first visit sets onehot(1); the second moves towards
    onehot(1) (no change); the third moves `model_lr` of the way to onehot(2). The average
    model counts: two 1s, one 2."""
    agent = make_agent("mbv", 3, 1, model_lr=model_lr)
    for outcome in (1, 1, 2):
        agent.learn(0, 0, 0.0, outcome, False, [0])
    assert agent.transitions[0, 0] == pytest.approx(expected)


def test_mbv_rewards_and_values_on_a_two_step_chain() -> None:
    """0 -> 1 pays 0, 1 -> 2 pays 1 and ends. With lr = 0.5: R(1, 0) = 0.5 after one visit,
    0.75 after two; Q(1, 0) = R(1, 0) (arriving at 2 ends), Q(0, 0) = gamma * Q(1, 0)."""
    agent = make_agent("mbv", 3, 1, lr=0.5, gamma=0.9)
    for _ in range(2):
        agent.learn(0, 0, 0.0, 1, False, [0])
        agent.learn(1, 0, 1.0, 2, True, [0])
    assert agent.rewards[1, 0] == pytest.approx(0.75)
    assert agent.values(1)[0] == pytest.approx(0.75)
    assert agent.values(0)[0] == pytest.approx(0.9 * 0.75)


def test_mbv_sees_a_new_wall_at_once_with_the_last_outcome_model() -> None:
    """Action 0 from state 0 led to 1 (worth 1) a hundred times; now it bumps into a wall and
    stays in 0. The last-outcome model knows the loop at once: every planning sweep shrinks
    Q(0, 0) by gamma, towards its true value 0; the average model still expects about 1."""
    last, average = make_agent("mbv", 3, 2, lr=1.0), make_agent("mbv", 3, 2, lr=1.0, model_lr=None)
    for agent in (last, average):
        for _ in range(100):
            agent.learn(0, 0, 0.0, 1, False, [0, 1])
            agent.learn(1, 0, 1.0, 2, True, [0, 1])
        for _ in range(5):  # five bumps, ten sweeps each
            agent.learn(0, 0, 0.0, 0, False, [0, 1])
    assert last.values(0)[0] == pytest.approx(0.95**50 * 0.95, rel=0.05)
    assert average.values(0)[0] > 0.9


def test_model_lr_outside_its_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"model_lr: expected a number in \(0, 1\] or None"):
        make_agent("mbv", 3, 1, model_lr=0.0)


def test_q_learning_update_by_hand() -> None:
    agent = make_agent("q", 2, 2, lr=0.5, gamma=0.9)
    agent.q[1] = [2.0, 4.0]
    agent.learn(0, 1, 1.0, 1, False, [0, 1])
    assert agent.values(0)[1] == pytest.approx(0.5 * (1.0 + 0.9 * 4.0))
    agent.learn(0, 1, 1.0, 1, True, [0, 1])  # terminal: no bootstrap
    assert agent.values(0)[1] == pytest.approx(2.3 + 0.5 * (1.0 - 2.3))
    assert np.all(agent.values(1) == [2.0, 4.0])
