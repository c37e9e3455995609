"""The agents added for issue 17's full set, against their update rules on examples worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gym_bridge.agents import make_agent
from gym_bridge.agents.mc import discounted_returns


def chain(agent, rewards: list[float], ended: bool = True) -> None:
    """Walk 0 -> 1 -> 2 ... with action 0, paying `rewards` in turn; the last step ends the episode."""
    agent.begin_episode()
    for t, r in enumerate(rewards):
        agent.learn(t, 0, r, t + 1, ended and t == len(rewards) - 1, [0, 1])


def test_discounted_returns_by_hand() -> None:
    # G_2 = 1; G_1 = 0 + 0.5 * 1; G_0 = 2 + 0.5 * 0.5
    assert discounted_returns([2.0, 0.0, 1.0], 0.5).tolist() == [2.25, 0.5, 1.0]


def test_monte_carlo_q_moves_each_step_towards_its_return_at_the_end() -> None:
    agent = make_agent("mc", 4, 2, lr=0.5, gamma=0.5)
    agent.begin_episode()
    agent.learn(0, 0, 2.0, 1, False, [0, 1])
    agent.learn(1, 0, 0.0, 2, False, [0, 1])
    assert not agent.q.any()  # nothing is learnt before the episode ends
    agent.learn(2, 0, 1.0, 3, True, [0, 1])
    assert agent.q[:3, 0].tolist() == [1.125, 0.25, 0.5]  # lr * G_t


def test_monte_carlo_q_learns_nothing_from_a_truncated_episode() -> None:
    agent = make_agent("mc", 4, 2)
    chain(agent, [1.0, 1.0], ended=False)
    agent.begin_episode()  # the next episode begins: the cut one had no return
    agent.learn(0, 1, 1.0, 1, True, [0, 1])
    assert agent.q[0].tolist() == [0.0, 0.1]


def test_episodic_control_keeps_the_best_return_seen() -> None:
    agent = make_agent("ec", 4, 2, gamma=0.5)
    chain(agent, [2.0, 0.0, 1.0])
    chain(agent, [1.0, 0.0, 0.0])  # worse returns do not lower the memory
    assert agent.q[:3, 0].tolist() == [2.25, 0.5, 1.0]
    chain(agent, [0.0, 4.0, 0.0])  # better ones replace it: G_0 = 2, G_1 = 4
    assert agent.q[:3, 0].tolist() == [2.25, 4.0, 1.0]


def test_dyna_actor_critic_replays_its_model_through_the_actor_critic_rule() -> None:
    """One real step 0 -> 1 paying 1 (ends), lr 0.5: the real update gives V = H = 0.5; each
    replay of the same step halves the remaining error: after r replays V = 1 - 0.5^(r + 1)."""
    agent = make_agent("dynaac", 2, 2, lr=0.5, replays=3)
    agent.learn(0, 0, 1.0, 1, True, [0, 1])
    assert agent.v[0] == pytest.approx(1 - 0.5**4)
    assert agent.preferences[0, 0] == pytest.approx(agent.v[0])  # same errors, same start
    assert agent.action_probabilities(0, [0, 1])[0] > 0.5


def test_distributional_cells_learn_expectiles_in_the_order_of_their_optimism() -> None:
    """A one-step task paying 0 or 10 with equal chance: each cell settles where its positive
    and negative errors balance, tau * (10 - v) = (1 - tau) * v, v = 10 tau. The mean is 5."""
    agent = make_agent("distq", 1, 1, lr=0.02, cells=4)
    rng = np.random.default_rng(0)
    for r in rng.choice([0.0, 10.0], size=20_000):
        agent.learn(0, 0, r, 0, True, [0])
    assert agent.tau.tolist() == [0.125, 0.375, 0.625, 0.875]
    assert agent.cells[0, 0] == pytest.approx(10 * agent.tau, abs=0.6)
    assert agent.values(0)[0] == pytest.approx(5.0, abs=0.3)
    classical = make_agent("distq", 1, 1, lr=0.02, cells=4, mirror=True)
    for r in rng.choice([0.0, 10.0], size=20_000):
        classical.learn(0, 0, r, 0, True, [0])
    assert np.ptp(classical.cells[0, 0]) == 0.0  # equal rates: every cell learns the same mean


def test_distributional_update_by_hand() -> None:
    """Two cells, tau 1/4 and 3/4, lr 0.1: rates (0.05, 0.15) up and (0.15, 0.05) down.
    Reward 1 from zero: + (0.05, 0.15); then reward 0: - rate_down * value."""
    agent = make_agent("distq", 1, 1, lr=0.1, cells=2)
    agent.learn(0, 0, 1.0, 0, True, [0])
    assert agent.cells[0, 0] == pytest.approx([0.05, 0.15])
    agent.learn(0, 0, 0.0, 0, True, [0])
    assert agent.cells[0, 0] == pytest.approx([0.05 - 0.15 * 0.05, 0.15 - 0.05 * 0.15])


def test_valence_q_uses_the_rate_of_the_errors_sign() -> None:
    agent = make_agent("valence", 2, 2, lr_pos=0.5, lr_neg=0.1)
    agent.learn(0, 0, 1.0, 1, True, [0, 1])  # delta = +1
    assert agent.q[0, 0] == pytest.approx(0.5)
    agent.learn(0, 0, -1.0, 1, True, [0, 1])  # delta = -1.5
    assert agent.q[0, 0] == pytest.approx(0.5 - 0.15)


def test_valence_q_traces_credit_earlier_steps() -> None:
    """lam 0.5, gamma 0.9: 0 -> 1 pays 0 (delta 0), 1 -> 2 pays 1 and ends (delta 1). The trace of
    (0, 0) is 0.9 * 0.5 = 0.45 by then: Q(0, 0) = lr * 0.45, Q(1, 0) = lr * 1."""
    agent = make_agent("valence", 3, 2, lr_pos=0.2, lam=0.5, gamma=0.9)
    chain(agent, [0.0, 1.0])
    assert agent.q[:2, 0] == pytest.approx([0.2 * 0.45, 0.2])
    agent.begin_episode()
    assert not agent.traces.any()  # reset_traces: a new episode starts without traces


def test_mood_follows_the_prediction_errors_and_biases_learning() -> None:
    """mood_lr 0.5: after errors +1 then +0.5 (from Q = 0.5) mood is 0.5 then 0.5; with
    mood_factor 1 the second update adds lr * (delta + mood) = 0.5 * (0.5 + 0.5)."""
    agent = make_agent("mood", 1, 1, lr_pos=0.5, mood_lr=0.5, mood_factor=1.0)
    agent.learn(0, 0, 1.0, 0, True, [0])  # delta 1, mood 0: Q = 0.5; mood -> 0.5
    assert (agent.q[0, 0], agent.mood) == (0.5, 0.5)
    agent.learn(0, 0, 1.0, 0, True, [0])  # delta 0.5, mood 0.5: Q = 0.5 + 0.5 * 1.0; mood -> 0.5
    assert (agent.q[0, 0], agent.mood) == (1.0, 0.5)
    agent.learn(0, 0, 0.0, 0, True, [0])  # delta -1: mood falls
    assert agent.mood == pytest.approx(-0.25)


def test_pessimism_bootstraps_from_the_worst_next_action() -> None:
    q = make_agent("q", 2, 2, lr=1.0, gamma=1.0, optimism=0.25)
    q.q[1] = [4.0, -4.0]
    q.learn(0, 0, 0.0, 1, False, [0, 1])
    assert q.q[0, 0] == pytest.approx(0.25 * 4 + 0.75 * -4)
    mbv = make_agent("mbv", 3, 2, lr=1.0, gamma=1.0, optimism=0.0, sweeps=1)
    mbv.learn(1, 0, 1.0, 2, True, [0, 1])  # Q(1, 0) = 1, Q(1, 1) untried = 0
    mbv.learn(0, 0, 0.0, 1, False, [0, 1])  # a pessimist values state 1 by its worst action
    assert mbv.values(0)[0] == 0.0
    optimist = make_agent("mbv", 3, 2, lr=1.0, gamma=1.0, sweeps=1)
    optimist.learn(1, 0, 1.0, 2, True, [0, 1])
    optimist.learn(0, 0, 0.0, 1, False, [0, 1])
    assert optimist.values(0)[0] == 1.0


def test_valence_hybrid_model_and_values_by_hand() -> None:
    """lr_mb 0.5: the first outcome 1 of (0, 0) gives T = (0, 0.5, 0); the second, 2, gives
    (0, 0.25, 0.5). Q_MB(0, 0) = sum T(x) (r + gamma max Q_MF(x)); the choice mixes with w."""
    agent = make_agent("vhybrid", 3, 2, lr_mb=0.5, lr_pos=1.0, gamma=1.0, w=0.5)
    agent.model_free.q[1] = [2.0, 0.0]
    agent.model_free.q[2] = [0.0, 4.0]
    agent.learn(0, 0, 0.0, 1, False, [0, 1])
    assert agent.transitions[0, 0].tolist() == [0.0, 0.5, 0.0]
    agent.learn(0, 0, 0.0, 2, False, [0, 1])
    assert agent.transitions[0, 0].tolist() == [0.0, 0.25, 0.5]
    # Q_MF(0, 0) after two Q-learning steps with lr 1: 2, then 4
    assert agent.q_mb[0, 0] == pytest.approx(0.25 * 2 + 0.5 * 4)
    assert agent.values(0)[0] == pytest.approx(0.5 * 2.5 + 0.5 * 4.0)
    agent.learn(0, 1, 1.0, 1, True, [0, 1])  # ended: Q_MB = Q_MF of the pair
    assert agent.q_mb[0, 1] == agent.model_free.q[0, 1] == 1.0


@pytest.mark.parametrize("name", ["mc", "dynaac", "distq", "mood", "valence", "vhybrid"])
def test_new_agents_learn_the_better_arm_of_a_bandit(name: str) -> None:
    """Arm 0 pays 1 with p 0.8, arm 1 with p 0.3: after 400 pulls the agent prefers arm 0.
    (Episodic control cannot: both arms have paid 1 at least once, the best return it keeps.)"""
    rng = np.random.default_rng(1)
    agent = make_agent(name, 2, 2, seed=0)
    for _ in range(400):
        agent.begin_episode()
        a = agent.act(0, [0, 1])
        agent.learn(0, a, float(rng.random() < (0.8 if a == 0 else 0.3)), 1, True, [0, 1])
    assert agent.action_probabilities(0, [0, 1])[0] > 0.5, agent.values(0)


@pytest.mark.parametrize("include_current", [True, False])
def test_sr_bootstraps_from_the_greedy_or_the_mean_next_action(include_current: bool) -> None:
    """M(0, s) <- M(0, s) + lr * (onehot(s) + gamma * M(a', s') - M(0, s)) (or onehot(s') +
    gamma * M(a', s') without the current state): a' greedy (default) or the mean over the
    offered actions (goal_biased=False, the random-walk map)."""
    for goal_biased, expected_m1 in ((True, [0.0, 0.0, 1.0]), (False, [0.0, 0.0, 0.5])):
        agent = make_agent("sr", 3, 2, lr=1.0, gamma=1.0, goal_biased=goal_biased, include_current=include_current)
        agent.M[0, 1] = [0.0, 0.0, 1.0]  # from state 1, action 0 leads to state 2 ...
        agent.M[1, 1] = [0.0, 0.0, 0.0]
        agent.w[2] = 1.0  # ... which pays, so action 0 is greedy there
        agent.learn(0, 0, 0.0, 1, False, [0, 1])
        counted = [1.0, 0.0, 0.0] if include_current else [0.0, 1.0, 0.0]
        assert agent.M[0, 0] == pytest.approx(np.array(counted) + expected_m1)


def test_sr_starts_at_the_identity_and_counts_the_end_state() -> None:
    """The published SR counts the state the agent is in: M starts at I, and a step into an
    end state s' moves M(a, s) towards onehot(s) + gamma * onehot(s'). Without the current
    state M starts at 0 and moves towards onehot(s'); the two maps are I + gamma * M' apart."""
    counted, left_out = make_agent("sr", 3, 1, gamma=0.5), make_agent("sr", 3, 1, gamma=0.5, include_current=False)
    assert counted.M[0] == pytest.approx(np.eye(3)) and not left_out.M.any()
    for agent in (counted, left_out):
        for _ in range(50):
            agent.learn(0, 0, 0.0, 1, False, [0])
            agent.learn(1, 0, 1.0, 2, True, [0])
    assert counted.M[0, 1] == pytest.approx([0.0, 1.0, 0.5], abs=1e-2)
    assert counted.M[0] == pytest.approx(np.eye(3) + 0.5 * left_out.M[0])
    assert counted.values(0) == pytest.approx(counted.w[0] + 0.5 * left_out.values(0))


def test_opal_moves_go_and_nogo_by_the_critic_error_scaled_by_their_own_weights() -> None:
    """V(0) = 0, G = N = 1. Reward 1 ends: delta = 1, V(0) = 0.1 * 1 = 0.1, G(0, 1) = 1 + 0.5 * 1 * 1 = 1.5,
    N(0, 1) = 1 - 0.2 * 1 * 1 = 0.8. Reward 0 next: delta = -0.1, V(0) = 0.1 - 0.01 = 0.09,
    G(0, 1) = 1.5 * (1 - 0.05) = 1.425, N(0, 1) = 0.8 * (1 + 0.02) = 0.816."""
    agent = make_agent("opal", 2, 2, lr=0.1, lr_g=0.5, lr_n=0.2, beta_g=2.0, beta_n=3.0)
    agent.learn(0, 1, 1.0, 1, True, [])
    assert agent.v[0] == pytest.approx(0.1)
    assert (agent.go[0, 1], agent.nogo[0, 1]) == pytest.approx((1.5, 0.8))
    agent.learn(0, 1, 0.0, 1, True, [])
    assert agent.v[0] == pytest.approx(0.09)
    assert (agent.go[0, 1], agent.nogo[0, 1]) == pytest.approx((1.425, 0.816))
    assert agent.go[0, 0] == agent.nogo[0, 0] == 1.0  # the action not taken keeps its weights
    # softmax over beta_g * G - beta_n * N: action 0 2 - 3 = -1, action 1 2.85 - 2.448 = 0.402
    p = agent.action_probabilities(0, [0, 1])
    assert p[1] / p[0] == pytest.approx(np.exp(0.402 + 1.0))


def test_opal_keeps_its_weights_at_zero_or_above() -> None:
    agent = make_agent("opal", 1, 1, lr=0.0, lr_g=1.0, lr_n=1.0)
    agent.learn(0, 0, 3.0, 0, True, [])  # delta 3: N would be 1 - 3 = -2
    agent.learn(0, 0, -2.0, 0, True, [])  # delta -2: G would be 4 - 8 = -4
    assert agent.nogo[0, 0] == 0.0 and agent.go[0, 0] == 0.0
