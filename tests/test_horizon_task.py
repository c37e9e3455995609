"""The horizon task (decision/horizon, Wilson et al. 2014): games of four forced and 1 or 6 free
choices, arms whose means are new in every game (the `game` reward kind, single and vector),
and the information-bonus agent whose bonus grows with the choices left."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_bridge  # noqa: F401  (registers the ids)
import tasks
from gym_bridge import GraphTaskEnv
from gym_bridge.agents import make_agent
from gym_bridge.graph import GraphVectorEnv
from tasks.rewards import RewardSpecError, reward_spec


def play_game(env, condition: str, choose: int = 0) -> tuple[list[tuple[int, ...]], list[float]]:
    """Offered actions and rewards of one game, taking the forced arm, then `choose` when free."""
    _, info = env.reset(options={"condition": condition})
    offered, rewards, terminated = [], [], False
    while not terminated:
        offered.append(info["available_actions"])
        action = offered[-1][0] if len(offered[-1]) == 1 else choose
        _, reward, terminated, _, info = env.step(action)
        rewards.append(reward)
    return offered, rewards


def test_a_game_is_four_forced_choices_then_its_horizon_of_free_ones() -> None:
    env = gym.make("graphtasks/Horizon-v0").unwrapped
    env.reset(seed=0)
    offered, rewards = play_game(env, "h1-unequal-LRRR")
    assert offered == [(0,), (1,), (1,), (1,), (0, 1)]
    offered, _ = play_game(env, "h6-equal-RLLR")
    assert offered == [(1,), (0,), (0,), (1,)] + [(0, 1)] * 6
    assert len(env.compiled.conditions) == 28  # 2 horizons x (6 equal + 8 unequal orders)
    order = tasks.trial_schedule(env.compiled.schedule, np.random.default_rng(0))
    assert len(order) == 96 and sum("unequal" in c for c in order) == 48 and sum(c[:2] == "h6" for c in order) == 48


def test_each_game_draws_new_means_kept_for_the_whole_game() -> None:
    """Without noise a game pays each arm its mean: the same all game, 40 or 60 for one arm and that
    plus or minus a gap for the other; games differ."""
    env = GraphTaskEnv(tasks.build("decision/horizon", noise=0))
    env.reset(seed=1)
    games = set()
    for _ in range(40):
        _, left = play_game(env, "h6-equal-LLRR", choose=0)
        arms = {left[0], left[2]}
        assert left[0] == left[1] and left[2] == left[3] and set(left[4:]) == {left[0]}
        low, high = sorted(arms)
        assert (low in (40, 60) and high - low in (4, 8, 12, 20, 30)) or (high in (40, 60) and high - low in
                                                                            (4, 8, 12, 20, 30))
        games.add((left[0], left[2]))
    assert len(games) > 10


def test_the_vector_env_draws_games_as_the_single_env_does() -> None:
    """Copies of a noise-free task each keep their game's means for the game; across copies the
    means spread as the single env's do."""
    task = tasks.build("decision/horizon", noise=0)
    venv = GraphVectorEnv(500, task=task, autoreset_mode="Disabled")
    venv.reset(seed=0, options={"condition": "h6-equal-LRLR"})
    paid = np.stack([venv.step(np.array([a] * 500))[1] for a in (0, 1, 0, 1, 0, 1, 0, 1, 0, 1)], axis=1)
    assert (paid[:, ::2] == paid[:, :1]).all() and (paid[:, 1::2] == paid[:, 1:2]).all()
    gaps = np.abs(paid[:, 0] - paid[:, 1])
    assert set(np.unique(gaps)) == {4, 8, 12, 20, 30}
    single = GraphTaskEnv(task)
    single.reset(seed=0)
    single_gaps = [abs(np.subtract(*play_game(single, "h1-equal-LRLR")[1][:2])) for _ in range(500)]
    assert abs(np.mean(single_gaps) - gaps.mean()) < 3.0  # mean gap 14.8, sd ~9: 5 SE of the difference


@pytest.mark.parametrize(
    "value, message",
    [
        ({"kind": "game", "values": [40, 60], "arm": 0}, "'gaps'"),
        ({"kind": "game", "values": [40, 60], "gaps": [4, -8], "arm": 0}, "'gaps'"),
        ({"kind": "game", "values": [40, 60], "gaps": [4], "arm": -1}, "'arm'"),
        ({"kind": "game", "values": [40, 60], "gaps": [4], "arm": 0, "first": 1}, "'first' must be true or false"),
    ],
)
def test_bad_game_rewards_are_named(value, message) -> None:
    with pytest.raises(RewardSpecError, match=message):
        reward_spec(value, "node 3")


def test_the_information_bonus_grows_with_the_choices_left() -> None:
    """After one game of each horizon the agent knows how many choices follow each state: at
    horizon 6's first free choice the less-known arm gets a bonus, at horizon 1's none."""
    env = GraphTaskEnv(tasks.build("decision/horizon"))
    agent = make_agent("infobonus", env.compiled.n_states, 2, seed=0, info_bonus=1.0)
    env.reset(seed=0)
    free = {}
    for condition in ("h1-unequal-LRRR", "h6-unequal-LRRR"):
        _, info = env.reset(options={"condition": condition})
        agent.begin_episode()
        terminated = False
        while not terminated:
            state, available = info["state"], info["available_actions"]
            if len(available) == 2 and condition not in free:
                free[condition] = state
            action = agent.act(state, available)
            _, reward, terminated, _, info = env.step(action)
            agent.learn(state, action, reward, info["state"], terminated, info["available_actions"])
    h1, h6 = free["h1-unequal-LRRR"], free["h6-unequal-LRRR"]
    assert agent.choices_left(h1) == 1.0 and agent.choices_left(h6) == 6.0
    agent.begin_episode()
    agent.learn(h6, 0, 50.0, h6, False, [0, 1])  # left seen once, right three times: left is less known
    for _ in range(3):
        agent.learn(h6, 1, 50.0, h6, False, [0, 1])
    bonus_h1, bonus_h6 = (agent.values(s) - agent.means for s in (h1, h6))
    assert np.allclose(bonus_h1, 0.0) and bonus_h6[0] > bonus_h6[1] > 0
    flat = make_agent("infobonus", env.compiled.n_states, 2, seed=0, info_bonus=0.0)
    assert np.allclose(flat.values(h6), flat.means)
