"""Batched agents: the per-agent update rules for B lanes at once, per-lane streams, and
batched experiment cells that do not depend on their batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphtasks.experiments.batched_runs import group_cells, play_batch
from graphtasks.experiments.runs import cells, play_run
from graphtasks.experiments.spec import load_spec
from graphtasks.experiments.sweep import run_experiment
from graphtasks.experiments.versions import prepare_versions
from gym_bridge import family
from gym_bridge.agents import BATCHED, make_agent, make_batched
from gym_bridge.agents.base import policy
from gym_bridge.agents.batched import BatchedAgent, lane_policy
from gym_bridge.vector.lanes import LaneStreams

N_STATES, N_ACTIONS = 6, 3

# Per lane: the settings of one per-agent agent (a parameter grid is lanes too).
LANE_SETTINGS: dict[str, list[dict[str, Any]]] = {
    "q": [{"lr": 0.5}, {"lr": 0.1, "gamma": 0.9, "optimism": 0.7}, {"lr": 0.3, "q_init": 1.0}],
    "q-policy": [{"lr": 0.5, "beta": 2.0, "bootstrap": "policy"}, {"lr": 0.2, "beta": 0.5, "bootstrap": "policy"}],
    "q-policy-greedy": [{"bootstrap": "policy", "epsilon": 0.3}, {"bootstrap": "policy", "epsilon": 0.0}],
    "sarsa": [{"lr": 0.5}, {"lr": 0.2, "gamma": 0.5}],
    "sr": [{"lr": 0.5, "w_lr": 0.3}, {"lr": 0.1, "gamma": 0.8}],
    "sr-walk": [{"goal_biased": False, "lr": 0.4}, {"goal_biased": False, "gamma": 0.7}],
    "sr-after": [{"include_current": False, "lr": 0.4}, {"include_current": False}],
    "qlambda": [{"lr": 0.5, "lam": 0.9}, {"lr": 0.2, "gamma": 0.8, "lam": 0.0}],
    "ac": [{"lr": 0.5, "beta": 2.0}, {"lr": 0.2, "gamma": 0.8, "beta": 0.5}],
    "dyna": [{"lr": 0.5, "replays": 0}, {"lr": 0.2, "gamma": 0.8, "replays": 0}],  # the real steps' rule
    "dynaac": [{"lr": 0.5, "replays": 0, "beta": 2.0}],
    "dynasr": [{"lr": 0.5, "replays": 0}],
    "hybrid": [{"lr": 0.5, "lam": 0.6, "w": 0.7}, {"lr": 0.2, "lam": 0.0, "w": 0.0, "perseveration": 0.5},
               {"w": 1.0, "beta": 1.0}],
    "mbv": [{"lr": 0.5}, {"lr": 0.2, "gamma": 0.8, "optimism": 0.6}],
    "mbv-pair": [{"reward_model": "pair", "ignore_ends": True, "lr": 0.5, "beta": 2.0},
                 {"reward_model": "pair", "ignore_ends": True, "optimism": 0.3, "beta": 1.0}],
    "mbv-average": [{"model_lr": None, "lr": 0.5, "sweeps": 3}, {"model_lr": None, "gamma": 0.7, "sweeps": 3}],
    "mbv-recency": [{"model_lr": 0.3}, {"model_lr": 0.3, "lr": 0.4, "optimism": 0.5}],
    "mc": [{"lr": 0.5, "gamma": 0.5}, {"lr": 0.1}, {"lr": 1.0, "gamma": 0.9, "epsilon": 0.3}],
    "ec": [{"gamma": 0.5}, {}],
    "valence": [{"lr_pos": 0.3, "lr_neg": 0.05}, {"lr_pos": 0.05, "lr_neg": 0.3, "gamma": 0.8}],
    "valence-traces": [{"lam": 0.8, "lr_pos": 0.3}, {"lam": 0.0, "lr_neg": 0.3}],
    "valence-kept": [{"lam": 0.6, "reset_traces": False, "beta": None}, {"lam": 0.3, "reset_traces": False,
                                                                         "beta": None, "epsilon": 0.0}],
    "mood": [{"mood_factor": 0.5, "lr_pos": 0.3}, {"mood_factor": 1.0, "mood_lr": 0.2, "lr_neg": 0.3}],
    "mood-policy": [{"bootstrap": "policy", "beta": 2.0, "mood_reset": True, "mood_factor": 0.5},
                    {"bootstrap": "policy", "beta": 0.5, "mood_reset": True, "mood_lr": 0.3, "mood_factor": 1.0}],
    "distq": [{"lr": 0.5, "cells": 4}, {"lr": 0.1, "cells": 4, "gamma": 0.8}],
    "distq-mirror": [{"mirror": True, "cells": 3, "lr": 0.3, "beta": 2.0}],
    "srmb": [{"lr": 0.5, "mix": 0.3}, {"lr": 0.1, "gamma": 0.8, "mix": 0.9}],
    "opal": [{"lr": 0.3, "lr_g": 0.2, "lr_n": 0.05, "beta_g": 1.0, "beta_n": 0.5}, {"gamma": 0.8, "lr_n": 0.3}],
    "vhybrid": [{"lr_mb": 0.3, "w": 0.7, "lr_pos": 0.3}, {"lam": 0.6, "w": 0.2, "beta": 2.0, "gamma": 1.0},
                {"lam": 0.3, "reset_traces": True, "lr_neg": 0.4}],
    "vhybrid-kept": [{"lam": 0.5, "reset_traces": False, "lr_mb": 0.2}],
    "infobonus": [{"info_bonus": 2.0, "noise": 5.0}, {"beta": 0.5, "prior_sd": 10.0, "prior_mean": 0.0}],
    "infobonus-greedy": [{"beta": None, "epsilon": 0.2, "info_bonus": 0.5}],
}


def agent_name(case: str) -> str:
    return case.split("-")[0]


def experience(seed: int, steps: int = 400) -> list[tuple[int, int, float, int, bool, list[int]]]:
    """A fixed stream of transitions with episode ends and states that offer fewer actions."""
    rng = np.random.default_rng(seed)
    stream = []
    state = 0
    for _ in range(steps):
        action = int(rng.integers(N_ACTIONS))
        nxt = int(rng.integers(N_STATES))
        reward = float(rng.choice([0.0, 1.0, -0.5]))
        terminated = bool(rng.random() < 0.1)
        offered = [0, 1] if nxt == 2 else list(range(N_ACTIONS))
        stream.append((state, action, reward, nxt, terminated, offered))
        state = 0 if terminated else nxt
    return stream


def tables(agent: Any) -> np.ndarray:
    if hasattr(agent, "nogo"):  # OpAL: the critic and both actors
        return np.concatenate([agent.v.ravel(), agent.go.ravel(), agent.nogo.ravel()])
    if hasattr(agent, "q_mb"):  # valence hybrid: model-based values, the model, the model-free learner
        return np.concatenate([agent.q_mb.ravel(), agent.transitions.ravel(), agent.model_free.q.ravel()])
    if hasattr(agent, "variances"):  # information bonus: the game's beliefs and the choices-left tallies
        names = ("left_sum", "left_count") if hasattr(agent, "left_sum") else ("_left_sum", "_left_count")
        tallies = [getattr(agent, n).ravel() for n in names]
        return np.concatenate([agent.means.ravel(), agent.variances.ravel(), *tallies])
    if hasattr(agent, "mb"):  # SRMB: its two learners
        return np.concatenate([tables(agent.sr), tables(agent.mb)])
    if hasattr(agent, "ends"):  # MBV: values, rewards learnt, where episodes ended
        return np.concatenate([agent.q.ravel(), agent.w.ravel(), agent.rewards.ravel(), agent.ends.ravel()])
    if hasattr(agent, "mood"):
        return np.concatenate([agent.q.ravel(), np.ravel(agent.mood)])
    if hasattr(agent, "lr_pos") and hasattr(agent, "tau"):  # distributional: every cell
        return agent.cells.ravel()
    if hasattr(agent, "q_mf"):
        return np.concatenate([agent.q_mf.ravel(), agent.counts.ravel()])
    if hasattr(agent, "preferences"):
        return np.concatenate([agent.preferences.ravel(), agent.v.ravel()])
    return np.concatenate([agent.M.ravel(), agent.w.ravel()]) if hasattr(agent, "M") else agent.q.ravel()


def lane_of(batch: BatchedAgent, k: int, name: str, setting: dict[str, Any]) -> BatchedAgent:
    """Lane k of `batch` as a batch of one (its arrays, and its learners' for SRMB)."""
    lane = make_batched(name, batch.n_states, batch.n_actions, seeds=[0], settings=[setting])
    copy_lane(lane, batch, k)
    return lane


def copy_lane(lane: BatchedAgent, batch: BatchedAgent, k: int) -> None:
    for key, value in vars(batch).items():
        if isinstance(value, np.ndarray) and value.shape[:1] == (batch.size,):
            setattr(lane, key, value[k : k + 1])
        elif isinstance(value, BatchedAgent):
            copy_lane(getattr(lane, key), value, k)


@pytest.mark.parametrize("case", sorted(LANE_SETTINGS))
def test_each_lane_learns_the_per_agent_rule_on_the_same_experience(case: str) -> None:
    name, settings = agent_name(case), LANE_SETTINGS[case]
    singles = [make_agent(name, N_STATES, N_ACTIONS, seed=k, **s) for k, s in enumerate(settings)]
    batch = make_batched(name, N_STATES, N_ACTIONS, seeds=list(range(len(settings))), settings=settings)
    lanes = np.arange(len(settings))
    for single in singles:
        single.begin_episode()
    batch.begin_episode(lanes)
    for state, action, reward, nxt, terminated, offered in experience(1):
        mask = np.zeros(N_ACTIONS, dtype=bool)
        mask[offered] = True
        for single in singles:
            single.learn(state, action, reward, nxt, terminated, offered)
        n = len(lanes)
        batch.learn(lanes, np.full(n, state), np.full(n, action), np.full(n, reward), np.full(n, nxt),
                    np.full(n, terminated), np.tile(mask, (n, 1)))
        if terminated:
            for single in singles:
                single.begin_episode()
            batch.begin_episode(lanes)
    for k, single in enumerate(singles):
        lane = lane_of(batch, k, name, settings[k])
        assert np.allclose(tables(lane), tables(single), atol=1e-12), k
        offered = [0, 1]
        mask = np.array([True, True, False])
        single.begin_episode()
        batch.begin_episode(np.array([k]))
        expected = single.action_probabilities(2, offered)
        got = batch.action_probabilities(np.array([k]), np.array([2]), mask[None])[0]
        assert np.allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize("name", ["mbv", "srmb", "mc", "ec", "valence", "mood", "distq", "sr"])
def test_a_state_that_offers_nothing_is_learnt_as_the_per_agent_agent_learns_it(name: str) -> None:
    """State 5 offers no action but does not end the episode: MBV keeps whether arriving
    *terminated* it and Monte Carlo backs up only at a termination, the others take it as an end."""
    stream = [(s, a, r, n, t and n != 5, [] if n == 5 else o) for s, a, r, n, t, o in experience(3, 300)]
    single = make_agent(name, N_STATES, N_ACTIONS, seed=0)
    batch = make_batched(name, N_STATES, N_ACTIONS, seeds=[0], settings=[{}])
    lanes = np.array([0])
    for state, action, reward, nxt, terminated, offered in stream:
        mask = np.zeros((1, N_ACTIONS), dtype=bool)
        mask[0, offered] = True
        single.learn(state, action, reward, nxt, terminated, offered)
        batch.learn(lanes, np.array([state]), np.array([action]), np.array([reward]), np.array([nxt]),
                    np.array([terminated]), mask)
        if terminated:
            single.begin_episode()
            batch.begin_episode(lanes)
    assert np.allclose(tables(batch), tables(single), atol=1e-12) and np.abs(tables(single)).max() > 0


def test_distributional_lanes_draw_their_random_rates_from_their_own_streams() -> None:
    """`rates = "random"`: each lane's rates come from its stream (the same alone as in a batch),
    in [lr / 20, lr]; given those rates, the per-agent rule learns the same cells."""
    settings = [{"rates": "random", "lr": 0.2, "cells": 5}, {"rates": "random", "lr": 0.05, "cells": 5}]
    batch = make_batched("distq", N_STATES, N_ACTIONS, seeds=[3, 4], settings=settings)
    alone = make_batched("distq", N_STATES, N_ACTIONS, seeds=[4], settings=settings[1:])
    assert np.array_equal(alone.lr_pos[0], batch.lr_pos[1]) and np.array_equal(alone.lr_neg[0], batch.lr_neg[1])
    assert np.all((0.01 <= batch.lr_pos[0]) & (batch.lr_pos[0] <= 0.2)) and len(set(batch.lr_pos[0])) == 5
    assert np.all((0.0025 <= batch.lr_neg[1]) & (batch.lr_neg[1] <= 0.05))
    assert not np.array_equal(batch.lr_pos[0], batch.lr_neg[0])
    mirrored = make_batched("distq", N_STATES, N_ACTIONS, seeds=[4], settings=[{**settings[1], "mirror": True}])
    assert np.array_equal(mirrored.lr_pos, alone.lr_pos) and np.array_equal(mirrored.lr_neg, mirrored.lr_pos)
    assert np.all(mirrored.tau == 0.5)
    single = make_agent("distq", N_STATES, N_ACTIONS, seed=3, **settings[0])
    single.lr_pos, single.lr_neg = batch.lr_pos[0], batch.lr_neg[0]
    lanes = np.array([0])
    for state, action, reward, nxt, terminated, offered in experience(2, 200):
        mask = np.zeros((1, N_ACTIONS), dtype=bool)
        mask[0, offered] = True
        single.learn(state, action, reward, nxt, terminated, offered)
        batch.learn(lanes, np.array([state]), np.array([action]), np.array([reward]), np.array([nxt]),
                    np.array([terminated]), mask)
    assert np.allclose(batch.cells[0], single.cells, atol=1e-12) and np.abs(single.cells).max() > 0


@pytest.mark.parametrize("name", ["dyna", "dynaac", "dynasr"])
def test_dyna_lanes_replay_the_one_pair_they_tried_as_the_per_agent_dyna_does(name: str) -> None:
    """One pair tried: every replay is that pair, so the tables are the per-agent agent's exactly
    (DynaQAgent's example: learnt once, replayed twice, 0.875)."""
    settings = [{"lr": 0.5, "replays": 2}, {"lr": 0.1, "replays": 2}]
    batch = make_batched(name, 3, 2, seeds=[0, 1], settings=settings)
    lanes = np.arange(2)
    batch.learn(lanes, np.zeros(2, int), np.ones(2, int), np.ones(2), np.full(2, 2), np.ones(2, bool), None)
    for k, setting in enumerate(settings):
        single = make_agent(name, 3, 2, seed=k, **setting)
        single.learn(0, 1, 1.0, 2, True, [0, 1])
        lane = make_batched(name, 3, 2, seeds=[0], settings=[setting])
        lane.__dict__.update({key: value[k : k + 1] for key, value in vars(batch).items()
                              if isinstance(value, np.ndarray) and value.shape[:1] == (2,)})
        assert np.allclose(tables(lane), tables(single), atol=1e-12)
    if name == "dyna":
        assert batch.q[0, 0, 1] == 0.875


def test_the_q_examples_worked_by_hand_hold_for_every_lane() -> None:
    # Q(0, 1) <- 0 + lr * (1 + gamma * 0 - 0) at an episode end: lr per lane
    batch = make_batched("q", 2, 2, seeds=[0, 1, 2], settings=[{"lr": 0.5}, {"lr": 0.1}, {"lr": 1.0}])
    lanes = np.arange(3)
    batch.learn(lanes, np.zeros(3, int), np.ones(3, int), np.ones(3), np.ones(3, int), np.ones(3, bool),
                np.ones((3, 2), bool))
    assert batch.q[:, 0, 1].tolist() == [0.5, 0.1, 1.0]
    # then a step 1 -> 0 (not ended) bootstraps from max Q(0, .) = Q(0, 1): 0 + lr * (0 + 0.95 * Q(0,1))
    batch.learn(lanes, np.ones(3, int), np.zeros(3, int), np.zeros(3), np.zeros(3, int), np.zeros(3, bool),
                np.ones((3, 2), bool))
    assert np.allclose(batch.q[:, 1, 0], [0.5 * 0.95 * 0.5, 0.1 * 0.95 * 0.1, 1.0 * 0.95 * 1.0])
    # a lane that does not learn keeps its table
    batch.set_setting("learning", np.array([True, False, True]))
    before = batch.q.copy()
    batch.learn(lanes, np.zeros(3, int), np.ones(3, int), np.full(3, 10.0), np.ones(3, int), np.ones(3, bool),
                np.ones((3, 2), bool))
    assert np.array_equal(batch.q[1], before[1]) and not np.array_equal(batch.q[0], before[0])


@pytest.mark.parametrize("beta", [None, 0.0, 3.0])
def test_lane_policy_is_the_per_agent_policy(beta: float | None) -> None:
    rng = np.random.default_rng(0)
    values = rng.integers(0, 3, (50, 4)).astype(float)
    mask = rng.random((50, 4)) < 0.7
    mask[:, 0] = True
    betas = None if beta is None else np.full(50, beta)
    got = lane_policy(values, mask, betas, np.full(50, 0.2))
    for row in range(50):
        offered = np.flatnonzero(mask[row]).tolist()
        assert np.allclose(got[row], policy(values[row], offered, beta, 0.2))


@pytest.mark.parametrize("beta", [None, 2.0])
def test_batched_choices_follow_the_policy(beta: float | None) -> None:
    """Frequencies of 20,000 choices of one state by 20,000 lanes match the policy (5 SE)."""
    n = 20_000
    settings = [{"epsilon": 0.3, "beta": beta}] * n
    batch = make_batched("q", 1, 3, seeds=list(range(n)), settings=settings)
    batch.q[:, 0] = [1.0, 1.0, 0.0]
    mask = np.ones((n, 3), bool)
    chosen = batch.act(np.arange(n), np.zeros(n, int), mask)
    p = batch.action_probabilities(np.arange(1), np.zeros(1, int), mask[:1])[0]
    freq = np.bincount(chosen, minlength=3) / n
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / n) + 1e-12), (freq, p)


def test_a_lane_stream_does_not_depend_on_the_other_lanes() -> None:
    alone = LaneStreams.from_seeds([42])
    batch = LaneStreams.from_seeds(list(range(100)) + [42])
    a = [alone.uniform(None, 3) for _ in range(4)]
    for k in range(4):  # the other lanes draw more or less often in between
        batch.uniform(np.arange(k * 10, k * 10 + 7), 5)
        assert np.array_equal(batch.uniform(np.array([100]), 3), a[k])
    u = LaneStreams.from_seeds(range(2000)).uniform(None, 50).ravel()
    assert 0.0 <= u.min() and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    normals = LaneStreams.from_seeds(range(1000)).view(None).standard_normal((1000, 20)).ravel()
    assert abs(normals.mean()) < 0.03 and abs(normals.std() - 1.0) < 0.03


SWEEP = """
[experiment]
name = "lanes"
tasks = ["{task}"]
seeds = {seeds}

[[agents]]
name = "{agent}"
params = {{ {params} }}

[[phases]]
name = "learning"
episodes = {episodes}
max_steps = 30

[[phases]]
name = "test"
episodes = 2
max_steps = 30
learn = false
"""


def sweep_spec(tmp_path: Path, task: str, agent: str, seeds: list[int], episodes: int) -> Any:
    path = tmp_path / f"{agent}-{len(seeds)}.toml"
    params = {"hybrid": "w = 0.5", "ac": "beta = 2.0", "opal": "beta_g = 1.0", "vhybrid": "w = 0.5",
              "infobonus": "info_bonus = 2.0"}.get(agent, "epsilon = 0.2")
    text = SWEEP.format(task=task, agent=agent, seeds=seeds, episodes=episodes, params=params)
    path.write_text(text, encoding="utf-8")
    return load_spec(path)


def episodes_of(played: list[Any]) -> list[tuple[Any, ...]]:
    return [(p.phase_index, p.episode.index, p.episode.reward, p.episode.length, p.episode.start_state,
             p.episode.first_action, p.episode.first_state, p.episode.steps) for p in played]


@pytest.mark.parametrize("task,agent", [("rewardgym/two-step", "q"), ("neuronav/grid/t_maze/micro", "sarsa"),
                                        ("neuronav/graph/two_step", "sr"), ("rewardgym/two-step", "hybrid"),
                                        ("neuronav/grid/t_maze/micro", "qlambda"), ("rewardgym/two-step", "ac"),
                                        ("rewardgym/two-step", "dyna"), ("rewardgym/two-step", "mbv"),
                                        ("neuronav/grid/t_maze/micro", "mc"), ("rewardgym/two-step", "valence"),
                                        ("rewardgym/two-step", "mood"), ("rewardgym/two-step", "distq"),
                                        ("neuronav/graph/two_step", "srmb"), ("neuronav/grid/t_maze/micro", "ec"),
                                        ("decision/probabilistic-selection", "opal"),
                                        ("rewardgym/two-step", "vhybrid"), ("decision/horizon", "infobonus")])
def test_a_cell_alone_equals_the_same_cell_in_a_batch_of_1000(tmp_path: Path, task: str, agent: str) -> None:
    big = sweep_spec(tmp_path, task, agent, list(range(1000)), 5)
    versions = prepare_versions(big)
    every = cells(big)
    played = play_batch(big, every, versions)
    for index in (0, 417, 999):
        alone = play_batch(big, [every[index]], versions)
        assert episodes_of(alone[index]) == episodes_of(played[index])
    assert len({tuple(e[2:7] for e in episodes_of(played[i])) for i in range(1000)}) > 1  # lanes differ


@pytest.mark.parametrize("agent", ["q", "dyna"])
@pytest.mark.slow
def test_batched_and_per_agent_runs_agree_in_distribution(tmp_path: Path, agent: str) -> None:
    """Learning curves of 200 seeds (t_maze micro, epsilon 0.2): per block of 5 episodes, the
    mean length of batched and per-agent runs within 3 standard errors of their difference."""
    spec = sweep_spec(tmp_path, "neuronav/grid/t_maze/micro", agent, list(range(200)), 30)
    versions = prepare_versions(spec)
    every = cells(spec)
    batched = play_batch(spec, every, versions)
    per_agent = {cell.index: list(play_run(spec, cell, versions)) for cell in every}

    def curve(runs: dict[int, list[Any]]) -> np.ndarray:
        return np.array([[p.episode.length for p in runs[c.index] if p.phase_index == 0] for c in every], float)

    a, b = curve(batched), curve(per_agent)
    assert a.shape == b.shape == (200, 30)
    assert a[:, :5].mean() > a[:, -5:].mean() + 2  # they learn
    for block in range(6):
        x, y = a[:, block * 5 : block * 5 + 5].mean(axis=1), b[:, block * 5 : block * 5 + 5].mean(axis=1)
        se = np.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
        assert abs(x.mean() - y.mean()) < 3 * se + 1e-9, (block, x.mean(), y.mean(), se)


def test_batched_hybrid_agents_show_the_two_step_signatures(tmp_path: Path) -> None:
    """Daw et al. 2011 with 200 batched hybrid agents of 201 trials: w = 1 stays more after a
    rewarded common than a rewarded rare transition, w = 0 does not (stay gap of the per-agent
    agents in the reproduction: 0.2-0.3 and about 0)."""
    from gym_bridge.runner import RunLog, stay_probabilities

    gaps = {}
    for w in (0.0, 1.0):
        text = SWEEP.format(task="rewardgym/two-step", agent="hybrid", seeds=list(range(100)), episodes=201,
                            params=f"w = {w}")
        path = tmp_path / f"daw-{w}.toml"
        path.write_text(text, encoding="utf-8")
        spec = load_spec(path)
        versions = prepare_versions(spec)
        played = play_batch(spec, cells(spec), versions)
        graph = next(iter(versions.values())).graph
        stays = []
        for episodes in played.values():
            log = RunLog("two-step")
            for p in episodes:
                if p.phase_index == 0:
                    log.add(p.episode)
            stays.append(stay_probabilities(log, graph))
        gaps[w] = float(np.nanmean([s["rewarded_common"] - s["rewarded_rare"] for s in stays]))
    assert gaps[1.0] > 0.1 and abs(gaps[0.0]) < 0.1 and gaps[1.0] > gaps[0.0] + 0.1, gaps


def test_a_sweep_batches_its_cells_and_its_numbers_do_not_depend_on_workers(tmp_path: Path) -> None:
    spec = sweep_spec(tmp_path, "rewardgym/two-step", "q", list(range(12)), 4)
    one = run_experiment(spec, workers=1)
    two = run_experiment(spec, workers=2)
    assert one.batched == two.batched == 12 and not one.failures
    assert one.rows == two.rows and one.trials == two.trials
    units = group_cells(spec, cells(spec), prepare_versions(spec), workers=2)
    assert [len(u) for u in units if isinstance(u, tuple)] == [6, 6]
    per_agent = run_experiment(spec, workers=1, batched=False)
    assert per_agent.batched == 0 and len(per_agent.rows) == len(one.rows)
    assert len(per_agent.trials) == len(one.trials)


def test_agents_without_a_batched_form_run_per_agent(tmp_path: Path) -> None:
    text = SWEEP.format(task="neuronav/grid/t_maze/micro", agent="mbv", seeds=[0, 1], episodes=3,
                        params='planning = "on_change"')  # neuro-nav's in-place schedule: per agent
    (tmp_path / "mbv.toml").write_text(text, encoding="utf-8")
    spec = load_spec(tmp_path / "mbv.toml")
    assert all(not isinstance(u, tuple) for u in group_cells(spec, cells(spec), prepare_versions(spec)))
    text = SWEEP.format(task="neuronav/grid/t_maze/micro", agent="dyna", seeds=[0, 1], episodes=3,
                        params="successors = 25")  # neuro-nav's model of 25 outcomes: per agent
    (tmp_path / "dyna25.toml").write_text(text, encoding="utf-8")
    kept = load_spec(tmp_path / "dyna25.toml")
    assert all(not isinstance(u, tuple) for u in group_cells(kept, cells(kept), prepare_versions(kept)))


@pytest.mark.parametrize("task,phase_line,drawn_by_env", [
    ("neuronav/grid/t_maze/micro", 'start = "random"', True),
    ("neuronav/grid/t_maze/micro", "start = { random = [[1, 1], [1, 3]] }", False),
    ("decision/probabilistic-selection?test=0", "schedule = true", False),
])
def test_a_cell_with_starts_or_a_schedule_batches_and_equals_itself_alone(tmp_path: Path, task: str,
                                                                           phase_line: str, drawn_by_env: bool) -> None:
    """Per-episode starts and trial schedules give each lane its own reset options (drawn from
    its cell's seed tree): the cell still equals itself alone, and starts and conditions drawn
    from the tree are the per-agent run's (a grid's "random" is the env's own draw, from the
    lane's env stream)."""
    text = SWEEP.format(task=task, agent="q", seeds=list(range(60)), episodes=6, params="epsilon = 0.2")
    path = tmp_path / "options.toml"
    path.write_text(text.replace("max_steps = 30\n\n", f"max_steps = 30\n{phase_line}\n\n", 1), encoding="utf-8")
    spec = load_spec(path)
    versions = prepare_versions(spec)
    every = cells(spec)
    assert all(isinstance(u, tuple) for u in group_cells(spec, every, versions))
    played = play_batch(spec, every, versions)
    for index in (0, 37):
        assert episodes_of(play_batch(spec, [every[index]], versions)[index]) == episodes_of(played[index])
        per_agent = list(play_run(spec, every[index], versions))
        batched_starts = [(p.episode.start_state, p.episode.condition) for p in played[index] if p.phase_index == 0]
        per_agent_starts = [(p.episode.start_state, p.episode.condition) for p in per_agent if p.phase_index == 0]
        assert drawn_by_env or batched_starts == per_agent_starts
    starts = {(p.episode.start_state, p.episode.condition) for i in range(60) for p in played[i] if p.phase_index == 0}
    assert len(starts) > 1  # the options differ between episodes and lanes


def test_every_batched_agent_is_named_in_the_registry() -> None:
    from gym_bridge.agents import AGENT_INFO

    assert set(BATCHED) <= set(AGENT_INFO)
    env = family("graph").make_vector_env("neuronav/graph/two_step", 2, autoreset_mode="disabled")
    assert env.num_envs == 2
