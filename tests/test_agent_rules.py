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


@pytest.mark.parametrize("reward_model", ["state", "pair"])
def test_mbv_rewards_and_values_on_a_two_step_chain(reward_model: str) -> None:
    """0 -> 1 pays 0, 1 -> 2 pays 1 and ends. With lr = 0.5 the reward of arriving at 2 (or of
    the pair (1, 0)) is 0.5 after one visit, 0.75 after two; Q(1, 0) = that reward (arriving at
    2 ends), Q(0, 0) = gamma * Q(1, 0)."""
    agent = make_agent("mbv", 3, 1, lr=0.5, gamma=0.9, reward_model=reward_model)
    for _ in range(2):
        agent.learn(0, 0, 0.0, 1, False, [0])
        agent.learn(1, 0, 1.0, 2, True, [0])
    learnt = agent.w[2] if reward_model == "state" else agent.rewards[1, 0]
    assert learnt == pytest.approx(0.75)
    assert agent.values(1)[0] == pytest.approx(0.75)
    assert agent.values(0)[0] == pytest.approx(0.9 * 0.75)


def test_mbv_knows_a_reward_from_every_side_only_with_rewards_per_state() -> None:
    """1 -> 2 pays 1 (ended) once; then 0 -> 2 by action 1 is seen, paying 0 this time. The
    reward of arriving at 2 is shared by both pairs (0.5 each, lr 0.5, from 0 then 1 then 0);
    per pair, the new pair knows only its own 0."""
    by_state, by_pair = make_agent("mbv", 3, 2, lr=0.5), make_agent("mbv", 3, 2, lr=0.5, reward_model="pair")
    for agent in (by_state, by_pair):
        agent.learn(1, 0, 1.0, 2, True, [0, 1])
        agent.learn(0, 1, 0.0, 2, True, [0, 1])
    assert by_state.values(1)[0] == by_state.values(0)[1] == pytest.approx(0.25)
    assert by_pair.values(1)[0] == pytest.approx(0.5) and by_pair.values(0)[1] == 0.0


def test_mbv_forgets_an_episode_end_when_the_state_is_passed_through() -> None:
    """Arriving at 1 ended the episode (the old goal), so it was worth nothing after; then the
    goal moves and 1 is passed through on the way to 2: its value counts again. neuro-nav's
    MBV has no episode ends (`ignore_ends`): it plans past 1 even while 1 ends the episode."""
    agent, ignoring = make_agent("mbv", 3, 1, lr=1.0, gamma=0.5), make_agent("mbv", 3, 1, lr=1.0, gamma=0.5,
                                                                              ignore_ends=True)
    for a in (agent, ignoring):
        a.learn(1, 0, 1.0, 2, False, [0])  # 1 -> 2 pays 1 (learnt while 1 was a waypoint)
        a.learn(0, 0, 0.0, 1, True, [0])  # arriving at 1 ended the episode
    assert agent.values(0)[0] == 0.0 and ignoring.values(0)[0] == 0.5
    agent.learn(0, 0, 0.0, 1, False, [0])  # now 1 is passed through
    assert agent.values(0)[0] == 0.5


def test_mbv_replans_from_nothing_when_its_model_changes_on_change() -> None:
    """neuro-nav's schedule: a new outcome of a pair sets every value to 0 before re-planning,
    so a value the new model cannot reach is forgotten at once; `every_step` keeps it (a
    self-loop shrinks by gamma per sweep)."""
    on_change, every = (make_agent("mbv", 3, 2, lr=1.0, gamma=0.5, planning=p) for p in ("on_change", "every_step"))
    for agent in (on_change, every):
        agent.learn(0, 0, 0.0, 1, False, [0, 1])
        agent.learn(1, 0, 1.0, 2, True, [0, 1])
        assert agent.values(0)[0] == pytest.approx(0.5)
        agent.learn(0, 0, 0.0, 0, False, [0, 1])  # a wall: 0 -> 0
    assert on_change.values(0)[0] == 0.0
    assert every.values(0)[0] == pytest.approx(0.5 ** 11)


def test_mbv_plans_in_place_on_change() -> None:
    """On the chain 2 -> 1 -> 0 -> 3 (arriving at 3 pays 1 and ends) one in-place sweep, in state
    order 0, 1, 2, carries the reward back to state 2: each pair is planned from the values
    updated before it. A synchronous sweep carries it one state a sweep."""
    in_place = make_agent("mbv", 4, 1, lr=1.0, gamma=0.5, planning="on_change", sweeps=1)
    synchronous = make_agent("mbv", 4, 1, lr=1.0, gamma=0.5, sweeps=1)
    for agent in (in_place, synchronous):
        agent.learn(2, 0, 0.0, 1, False, [0])
        agent.learn(1, 0, 0.0, 0, False, [0])
        agent.learn(0, 0, 1.0, 3, True, [0])
    assert in_place.values()[:3, 0] == pytest.approx([1.0, 0.5, 0.25])
    assert synchronous.values()[:3, 0] == pytest.approx([1.0, 0.0, 0.0])


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


def test_sarsa_updates_a_step_with_the_next_action_taken() -> None:
    """(0, a1, r=1, s'=1) waits; the next step takes a0 in state 1 (Q(1, 0) = 2), so Q(0, 1)
    becomes 0.5 * (1 + 0.9 * 2) = 1.4; that step ends the episode (r = 3): Q(1, 0) = 2 + 0.5 * (3 - 2)."""
    agent = make_agent("sarsa", 2, 2, lr=0.5, gamma=0.9)
    agent.q[1] = [2.0, 9.0]  # SARSA follows the action taken (0), not the best one (1)
    agent.begin_episode()
    agent.learn(0, 1, 1.0, 1, False, [0, 1])
    assert agent.values(0)[1] == 0.0  # not yet: the next action is not known
    agent.learn(1, 0, 3.0, 0, True, [0, 1])
    assert agent.values(0)[1] == pytest.approx(1.4)
    assert agent.values(1)[0] == pytest.approx(2.5)


def test_q_lambda_spreads_an_error_back_along_its_traces() -> None:
    """Two steps 0 -> 1 -> end with reward 1 at the end, lr 0.5, gamma 0.9, lambda 0.8: the
    first step's error is 0 (all values 0); at the second, e(0, 0) = 0.72 and e(1, 0) = 1,
    delta = 1, so Q(1, 0) = 0.5 and Q(0, 0) = 0.5 * 0.72 = 0.36."""
    agent = make_agent("qlambda", 3, 1, lr=0.5, gamma=0.9, lam=0.8)
    agent.begin_episode()
    agent.learn(0, 0, 0.0, 1, False, [0])
    agent.learn(1, 0, 1.0, 2, True, [0])
    assert agent.values(1)[0] == pytest.approx(0.5)
    assert agent.values(0)[0] == pytest.approx(0.36)
    agent.begin_episode()
    assert not agent.traces.any()


def test_actor_critic_moves_the_critic_and_the_preference_by_the_same_error() -> None:
    agent = make_agent("ac", 2, 2, lr=0.5, gamma=0.9, beta=1.0)
    agent.v[1] = 2.0
    agent.learn(0, 1, 1.0, 1, False, [0, 1])  # delta = 1 + 0.9 * 2 - 0 = 2.8
    assert agent.v[0] == pytest.approx(1.4) and agent.values(0).tolist() == pytest.approx([0.0, 1.4])
    p = agent.action_probabilities(0, [0, 1])
    assert p[1] / p[0] == pytest.approx(np.exp(1.4))


@pytest.mark.parametrize("name", ["sarsa", "qlambda", "ac"])
def test_the_new_td_agents_learn_the_better_bandit_arm(name: str) -> None:
    from gym_bridge import GraphTaskEnv
    from gym_bridge.runner import run_episodes

    env = GraphTaskEnv("rewardgym/two-armed-bandit")  # arm 0 pays with p = 0.8, arm 1 with 0.5
    agent = make_agent(name, env.compiled.n_states, int(env.action_space.n), seed=0)
    log = run_episodes(env, agent, 1000, seed=0)
    assert np.mean(np.asarray(log.first_actions[-200:]) == 0) > 0.7


def test_srmb_chooses_by_the_mix_of_its_two_learners() -> None:
    agent = make_agent("srmb", 3, 1, mix=0.25, lr=0.5, gamma=0.9)
    for _ in range(3):
        agent.learn(0, 0, 0.0, 1, False, [0])
        agent.learn(1, 0, 1.0, 2, True, [0])
    assert agent.values() == pytest.approx(0.25 * agent.mb.values() + 0.75 * agent.sr.values())
    assert agent.mb.values(1)[0] > 0 and agent.sr.values(1)[0] > 0


def test_dyna_sr_replays_what_it_has_seen() -> None:
    """With replays, the SR of state 0 reaches further along a chain walked once than without."""
    plain, replaying = make_agent("sr", 4, 1, seed=0), make_agent("dynasr", 4, 1, replays=20, seed=0)
    for agent in (plain, replaying):
        agent.learn(0, 0, 0.0, 1, False, [0])
        agent.learn(1, 0, 0.0, 2, False, [0])
        agent.learn(2, 0, 1.0, 3, True, [0])
    assert replaying.M[0, 0, 2] > plain.M[0, 0, 2] == 0.0
    assert replaying.values(0)[0] > plain.values(0)[0]
