"""TD-Q, mood and distributional agents against neuro-nav 2.5.0 on one fixed stream of experience.

The streams and neuro-nav's tables are in tests/data/neuronav/td_replays.json, recorded from
the reference by scripts/record_neuronav_td_replays.py (how: tests/data/README.md). Each test
replays a stream through graphtasks' agent with the settings that give the reference's rule
and compares the tables, so a drift of either rule is caught; and checks that the project's
default, where it differs, does differ (the difference docs/differences.md measures).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym_bridge.agents import AgentSettingError, make_agent

DATA = json.loads((Path(__file__).parent / "data" / "neuronav" / "td_replays.json").read_text())
TABLES = DATA["tables"]


def replay(agent: Any, stream: dict[str, Any]) -> Any:
    """Feed every step of `stream` to `agent`, beginning an episode where the stream's does."""
    episode = None
    offered = range(stream["n_actions"])
    for ep, s, a, r, s1, done in stream["stream"]:
        if ep != episode:
            agent.begin_episode()
            episode = ep
        agent.learn(int(s), int(a), r, int(s1), bool(done), offered)
    return agent


def grid_agent(name: str, **settings: Any) -> Any:
    grid = DATA["four_rooms"]
    return replay(make_agent(name, grid["n_states"], grid["n_actions"], seed=0, **settings), grid)


@pytest.mark.parametrize(
    ("record", "settings"),
    [
        ("tdq_max", {}),
        ("tdq_max_min_0.5", {"optimism": 0.5}),
        ("tdq_softmax_beta1000", {"bootstrap": "policy", "beta": 1000.0}),
        ("tdq_softmax_beta5", {"bootstrap": "policy", "beta": 5.0}),
    ],
)
def test_q_learns_neuronavs_tdq_table(record: str, settings: dict[str, Any]) -> None:
    agent = grid_agent("q", lr=0.1, gamma=0.99, **settings)
    assert np.abs(agent.q - np.array(TABLES[record]["q"])).max() < 1e-12


def test_the_max_bootstrap_is_not_neuronavs_softmax_one() -> None:
    """Under a softmax policy neuro-nav's default TDQ bootstraps from the policy's mean; the
    project's default (the max) learns other values from the same steps."""
    reference = np.array(TABLES["tdq_softmax_beta5"]["q"])
    agent = grid_agent("q", lr=0.1, gamma=0.99, beta=5.0)
    assert np.abs(agent.q - reference).max() > 0.05
    # the max is above the mean of a policy, so every learnt value is at least as high
    assert (agent.q >= reference - 1e-12).all()


def test_an_unknown_bootstrap_is_refused() -> None:
    with pytest.raises(AgentSettingError, match="bootstrap: expected one of max, policy, got 'mean'"):
        make_agent("q", 3, 2, bootstrap="mean")


MOOD = {"lr_pos": 0.1, "lr_neg": 0.05, "gamma": 0.99, "mood_lr": 0.1, "mood_factor": 0.5}


@pytest.mark.parametrize(
    ("record", "settings"),
    [
        ("moodq_softmax_beta5", {"bootstrap": "policy", "beta": 5.0, "mood_reset": True}),
        ("moodq_max", {"mood_reset": True}),
        ("moodq_max_no_reset", {}),  # the project's default: the mood carries over
    ],
)
def test_mood_learns_neuronavs_moodq_table_and_mood(record: str, settings: dict[str, Any]) -> None:
    agent = grid_agent("mood", **MOOD, **settings)
    assert np.abs(agent.q - np.array(TABLES[record]["q"])).max() < 1e-12
    assert agent.mood == pytest.approx(TABLES[record]["mood"], abs=1e-12)


def test_a_mood_kept_across_episodes_learns_other_values_than_one_reset() -> None:
    kept, reset = grid_agent("mood", **MOOD), grid_agent("mood", **MOOD, mood_reset=True)
    assert np.abs(kept.q - reset.q).max() > 1e-3
    assert kept.mood != reset.mood


@pytest.mark.parametrize("record", ["distq", "distq_mirror"])
def test_distq_learns_neuronavs_cells_with_its_rates(record: str) -> None:
    """With neuro-nav's drawn rates in place of the agent's own draw, every cell of the cue
    learns what DistQ's does from the same outcomes."""
    stream, table = DATA["variable_magnitude"], TABLES[record]
    agent = make_agent("distq", stream["n_states"], stream["n_actions"], seed=0, gamma=0.99, cells=16,
                       rates="random", lr=0.02, mirror=record.endswith("mirror"))
    agent.lr_pos, agent.lr_neg = np.array(table["lrs_pos"]), np.array(table["lrs_neg"])
    replay(agent, stream)
    assert np.abs(agent.cells[0, 0] - np.array(table["cells_state0"])).max() < 1e-12


def test_distq_draws_its_rates_from_its_own_stream() -> None:
    drawn = make_agent("distq", 2, 1, seed=3, lr=0.02, cells=500, rates="random")
    assert 0.001 <= drawn.lr_pos.min() and drawn.lr_pos.max() <= 0.02
    assert 0.001 <= drawn.lr_neg.min() and drawn.lr_neg.max() <= 0.02
    assert drawn.tau == pytest.approx(drawn.lr_pos / (drawn.lr_pos + drawn.lr_neg))
    again = make_agent("distq", 2, 1, seed=3, lr=0.02, cells=500, rates="random")
    assert (again.lr_pos == drawn.lr_pos).all() and (again.lr_neg == drawn.lr_neg).all()
    mirrored = make_agent("distq", 2, 1, seed=3, lr=0.02, cells=500, rates="random", mirror=True)
    assert (mirrored.lr_neg == mirrored.lr_pos).all() and (mirrored.tau == 0.5).all()
    even = make_agent("distq", 2, 1, seed=3, lr=0.02, cells=4)
    assert even.tau.tolist() == [0.125, 0.375, 0.625, 0.875]


def test_distq_runs_where_neuronavs_stops() -> None:
    """neuro-nav's DistQ stops with an IndexError on the four-rooms stream (it indexes its table
    by a position in the flattened action x cell array); graphtasks' learns it, and with equal
    rates (mirror) every cell learns neuro-nav's TD-Q table."""
    assert DATA["distq_four_rooms"]["error"].startswith("IndexError")
    assert DATA["distq_four_rooms"]["step"] < 100
    agent = grid_agent("distq", lr=0.1, gamma=0.99, cells=3, mirror=True)
    reference = np.array(TABLES["tdq_max"]["q"])
    assert np.abs(agent.cells - reference[:, :, None]).max() < 1e-12


def test_the_policy_bootstrap_of_an_epsilon_greedy_agent_is_its_policys_mean() -> None:
    """Worked by hand: next values [1, 0, 0.5] with action 2 not offered; epsilon-greedy 0.2
    gives 0.9 and 0.1 to the two offered actions, so V(s') = 0.9; with optimism 0.5 the mean
    is mixed with the worst offered value: 0.45."""
    for optimism, future in ((1.0, 0.9), (0.5, 0.45)):
        agent = make_agent("q", 2, 3, seed=0, lr=0.5, gamma=1.0, epsilon=0.2, bootstrap="policy", optimism=optimism)
        agent.q[1] = [1.0, 0.0, 0.5]
        agent.learn(0, 0, 0.0, 1, False, [0, 1])
        assert agent.q[0, 0] == pytest.approx(0.5 * future)
