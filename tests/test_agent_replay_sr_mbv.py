"""Successor-representation and model-based agents against neuro-nav 2.5.0 on one fixed stream.

The stream and neuro-nav's tables are in tests/data/neuronav/sr_mbv_replays.json, recorded from
the reference by scripts/record_neuronav_sr_mbv_replays.py (how: tests/data/README.md): a random
walk in four_rooms small whose goal moves half way, with a reward that does not end the
episode. Each test replays the stream through graphtasks' agent with the settings that give the
reference's rule and compares the tables, so a drift of either rule is caught; and checks that
the project's default, where it differs, does differ (docs/differences.md measures how much).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pytest

from gym_bridge.agents import AgentSettingError, make_agent

DATA = json.loads((Path(__file__).parent / "data" / "neuronav" / "sr_mbv_replays.json").read_text())
GRID, TABLES, PROBE = DATA["four_rooms"], DATA["tables"], np.array(DATA["probe"])
VISITED = sorted({step[1] for step in GRID["stream"]})


def replay(agent: Any, steps: Iterable[list[Any]] = GRID["stream"]) -> Any:
    """Feed every step to `agent`, beginning an episode where the stream's does."""
    episode = None
    offered = range(GRID["n_actions"])
    for ep, s, a, r, s1, done in steps:
        if ep != episode:
            agent.begin_episode()
            episode = ep
        agent.learn(int(s), int(a), r, int(s1), bool(done), offered)
    return agent


def grid_agent(name: str, **settings: Any) -> Any:
    return make_agent(name, GRID["n_states"], GRID["n_actions"], seed=0, lr=0.1, gamma=0.99, **settings)


def assert_same_sr(agent: Any, record: dict[str, Any]) -> None:
    """w, Q = M w, and M along the recorded directions and at the start state, to 1e-12."""
    assert np.abs(agent.w - np.array(record["w"])).max() < 1e-12
    assert np.abs(agent.values() - np.array(record["q"])).max() < 1e-12
    assert np.abs(agent.M @ PROBE - np.array(record["m_probe"])).max() < 1e-12
    assert np.abs(agent.M[:, GRID["start"]] - np.array(record["m_start"])).max() < 1e-12


@pytest.mark.parametrize(("record", "goal_biased"), [("tdsr", True), ("tdsr_mean", False)])
def test_sr_learns_neuronavs_tdsr_map(record: str, goal_biased: bool) -> None:
    """The default rule is neuro-nav's TDSR: M counts the current state, starts at the identity,
    bootstraps from the greedy action by the values before w learns the step."""
    assert_same_sr(replay(grid_agent("sr", w_lr=0.1, goal_biased=goal_biased)), TABLES[record])


def test_sr_without_the_current_state_is_the_identity_and_a_discount_away() -> None:
    """M_neuronav = I + gamma M' and Q_neuronav = w(s) + gamma Q' for the map M' that leaves the
    current state out. Shown with the mean bootstrap: with the greedy one, near-ties between a
    tried and an untried action fall either way by rounding on the two scales (0.006 apart here)."""
    table, start = TABLES["tdsr_mean"], GRID["start"]
    agent = replay(grid_agent("sr", w_lr=0.1, goal_biased=False, include_current=False))
    assert np.abs(agent.M[:, start] - np.array(table["m_start"])).max() > 0.5
    assert np.abs(np.eye(GRID["n_states"])[start] + 0.99 * agent.M[:, start] - np.array(table["m_start"])).max() < 1e-12
    assert np.abs(PROBE + 0.99 * agent.M @ PROBE - np.array(table["m_probe"])).max() < 1e-12
    assert np.abs(np.array(table["w"])[:, None] + 0.99 * agent.values() - np.array(table["q"])).max() < 1e-12


def test_dynasr_learns_neuronavs_dynasr_map_from_the_same_replayed_steps() -> None:
    """neuro-nav's DynaSR replays 3 steps drawn by numpy's global stream after each real one;
    those draws are recorded, and graphtasks' Dyna-SR (its own replays off) learning the same
    real and replayed steps in the same order holds the same map. Which steps are replayed is
    random in both and not compared."""
    record = DATA["dynasr"]
    agent = grid_agent("dynasr", w_lr=0.1, replays=0)
    assert len(record["updates"]) == record["steps"] * (1 + record["settings"]["num_recall"])
    for s, a, s1, r, done in record["updates"]:
        agent.learn(s, a, r, s1, done, range(GRID["n_actions"]))
    assert_same_sr(agent, record)


def test_dynasr_replays_by_the_sr_rule() -> None:
    """With replays, graphtasks' Dyna-SR holds the map its own rule gives: the replayed steps
    move M towards onehot(s) + gamma M(a', s'), so M stays I + (something) on the diagonal."""
    agent = replay(grid_agent("dynasr", w_lr=0.1, replays=3), GRID["stream"][: DATA["dynasr"]["steps"]])
    plain = replay(grid_agent("sr", w_lr=0.1), GRID["stream"][: DATA["dynasr"]["steps"]])
    diagonal = agent.M[:, VISITED, VISITED]
    assert (diagonal >= 1.0 - 1e-12).all()
    assert np.abs(agent.M - plain.M).max() > 0.01  # the replays did learn


def test_mbv_and_srmb_learn_neuronavs_tables_with_its_planning() -> None:
    """planning = "on_change" and ignore_ends give neuro-nav's MBV; SR-MB with them mixes neuro-
    nav's MBV and TDSR as its SRMB does (the rewards per state arrived at are the default)."""
    srmb = replay(grid_agent("srmb", mix=0.5, planning="on_change", ignore_ends=True))
    assert np.abs(srmb.values() - np.array(TABLES["srmb"]["q"])).max() < 1e-12
    assert np.abs(srmb.mb.values() - np.array(TABLES["mbv"]["q"])).max() < 1e-12
    assert np.abs(srmb.mb.w - np.array(TABLES["mbv"]["w"])).max() < 1e-12
    assert np.abs(srmb.sr.values() - np.array(TABLES["tdsr"]["q"])).max() < 1e-12


@pytest.mark.slow
def test_mbv_learns_neuronavs_pessimistic_table() -> None:
    agent = replay(grid_agent("mbv", optimism=0.5, planning="on_change", ignore_ends=True))
    assert np.abs(agent.values() - np.array(TABLES["mbv_w0.5"]["q"])).max() < 1e-12


@pytest.mark.slow
def test_mbv_default_values_an_episode_end_at_zero() -> None:
    """neuro-nav's MBV plans on past the moved goal with the values its actions had while it
    was a waypoint, and round the reward that does not end the episode as if it paid on every
    arrival: values near 48. The default ends the plan where the episode ended: the same
    greedy actions in most visited states, values below 6."""
    reference = np.array(TABLES["mbv"]["q"])
    agent = replay(grid_agent("mbv"))
    assert reference.max() > 40 and agent.values().max() < 6
    ignoring = replay(grid_agent("mbv", ignore_ends=True))  # only the planning schedule differs
    greedy = ignoring.values()[VISITED].argmax(axis=1) == reference[VISITED].argmax(axis=1)
    assert greedy.mean() > 0.95


def test_mbv_rewards_per_pair_are_not_neuronavs() -> None:
    agent = replay(grid_agent("mbv", reward_model="pair", planning="on_change", ignore_ends=True))
    assert np.abs(agent.values() - np.array(TABLES["mbv"]["q"])).max() > 0.1


@pytest.mark.parametrize(("name", "setting", "value"), [("mbv", "planning", "always"), ("mbv", "reward_model", "edge"),
                                                        ("srmb", "planning", "sometimes")])
def test_an_unknown_choice_is_refused(name: str, setting: str, value: str) -> None:
    settings: dict[str, Any] = {setting: value}
    with pytest.raises(AgentSettingError, match=f"the {name} agent's {setting}: expected one of"):
        make_agent(name, 3, 2, **settings)
