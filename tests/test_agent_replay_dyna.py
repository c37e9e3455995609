"""Dyna agents, Q(lambda) and episodic control against neuro-nav 2.5.0 on one fixed stream.

The stream (a random walk in four_rooms small where an action is replaced by a random one
three times in ten, so a state and action have several outcomes), the replays neuro-nav's Dyna
module drew after each step, its model and its agents' tables are in
tests/data/neuronav/dyna_replays.json, recorded from the reference by
scripts/record_neuronav_dyna_replays.py (how: tests/data/README.md). graphtasks' agents learn
the same stream and, for Dyna, the same replays (`model.recall` of the recorded pair and
recency draw), and their model and tables are compared with the reference's; the recency rule
itself, which draws those replays, is checked on its distribution.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym_bridge.agents import AgentSettingError, make_agent
from gym_bridge.agents.dyna import RECENCY, ReplayModel, rank_probabilities

DATA = json.loads((Path(__file__).parent / "data" / "neuronav" / "dyna_replays.json").read_text())
SHARED = {"lr": 0.1, "gamma": 0.99, "beta": 1000.0}
NEURONAV_MODEL = {"replays": 0, "successors": 25}  # the replays are the recorded ones


def learn_stream(agent: Any, replays: list[list[list[int]]] | None = None) -> Any:
    """Feed the stream to `agent`, beginning an episode where the stream's does; with `replays`,
    the agent learns after each step the remembered steps neuro-nav replayed there."""
    episode = None
    offered = range(DATA["n_actions"])
    for i, (ep, s, a, r, s1, done) in enumerate(DATA["stream"]):
        if ep != episode:
            agent.begin_episode()
            episode = ep
        agent.learn(int(s), int(a), r, int(s1), bool(done), offered)
        if replays is not None:
            agent.replay(agent.model.recall(ps, pa, k) for ps, pa, k in replays[i])
    return agent


def dyna(name: str, **settings: Any) -> Any:
    agent = make_agent(name, DATA["n_states"], DATA["n_actions"], seed=0, **{**SHARED, **NEURONAV_MODEL, **settings})
    return learn_stream(agent, DATA["replays"])


def test_the_stream_gives_pairs_several_outcomes() -> None:
    """What makes the model's memory matter: pairs whose kept outcomes differ."""
    varied = [outcomes for _, _, outcomes in DATA["model"] if len({tuple(o) for o in outcomes}) > 1]
    assert len(varied) > 100
    assert sum(1 for step in DATA["stream"] if step[5]) >= 3  # and some reward to spread


def test_dyna_keeps_neuronavs_model() -> None:
    agent = dyna("dyna")
    model = agent.model
    assert list(model.outcomes) == [(s, a) for s, a, _ in DATA["model"]]  # the pairs, in the order first tried
    for s, a, outcomes in DATA["model"]:
        kept = [(s1, r, done) for r, s1, done, _ in model.outcomes[(s, a)]]
        assert kept == [(s1, r, done) for s1, r, done in outcomes]


def test_the_last_outcome_model_keeps_only_the_last() -> None:
    agent = learn_stream(make_agent("dyna", DATA["n_states"], DATA["n_actions"], seed=0, replays=0))
    for s, a, outcomes in DATA["model"]:
        (kept,) = agent.model.outcomes[(s, a)]
        assert [kept[1], kept[0], kept[2]] == outcomes[-1]


@pytest.mark.parametrize(
    ("name", "record", "settings"),
    [
        ("dyna", "dynaq_policy", {"bootstrap": "policy"}),  # neuro-nav's DynaQ (TDQ's softmax bootstrap)
        ("dyna", "dynaq_max", {}),  # with the max bootstrap, graphtasks' default
        ("dynaac", "dynaac", {}),
        ("dynasr", "dynasr", {"w_lr": 0.1}),  # neuro-nav's TDSR learns w at lr
    ],
)
def test_dyna_learns_neuronavs_table_from_the_same_replays(name: str, record: str, settings: dict[str, Any]) -> None:
    agent = dyna(name, **settings)
    table = agent.values()
    assert np.abs(table - np.array(DATA["dyna"][record]["q"])).max() < 1e-12


def test_the_last_outcome_model_learns_another_table() -> None:
    """On a task with several outcomes per pair, replaying the last one (the default) is not
    replaying neuro-nav's recency draw: the same replayed pairs give other values."""
    agent = dyna("dyna", successors=1)
    reference = np.array(DATA["dyna"]["dynaq_max"]["q"])
    assert np.abs(agent.values() - reference).max() > 1e-3


def test_neuronavs_recency_draws_follow_the_rank_law() -> None:
    """The recorded draws (k = floor of neuro-nav's exponential draw) and graphtasks' draws
    follow P(k) = e^(-k/5) (1 - e^(-1/5)), within 4 standard errors per rank."""
    recorded = np.array([k for step in DATA["replays"] for _, _, k in step])
    model = ReplayModel(keep=25)
    for s1 in range(25):
        model.remember(0, 0, 0.0, s1, False, [0])
    rng = np.random.default_rng(0)
    ours = np.array([24 - step[3] for step in model.draws(rng, 100_000)])  # rank 0 is the last, s1 = 24
    law = rank_probabilities(25)
    assert law.sum() == pytest.approx(1.0)
    for draws in (np.minimum(recorded, 24), ours):
        freq = np.bincount(draws, minlength=25) / len(draws)
        assert np.all(np.abs(freq - law) <= 4 * np.sqrt(law * (1 - law) / len(draws)) + 1e-12)
    assert recorded.mean() == pytest.approx(RECENCY - 0.5, abs=0.3)  # E[floor(X)] ~ 4.52 for mean 5


def test_pairs_are_drawn_uniformly_among_those_tried() -> None:
    """neuro-nav draws a state tried (as often as it has pairs tried), then an action tried
    there: every pair tried equally often, as graphtasks' draw."""
    pairs = [(s, a) for step in DATA["replays"] for s, a, _ in step]
    model = ReplayModel()
    for s, a in [(0, 0), (0, 1), (0, 2), (1, 0)]:
        model.remember(s, a, 0.0, 1, False, [0])
    counts: dict[tuple[int, int], int] = {}
    for s, a, *_ in model.draws(np.random.default_rng(0), 40_000):
        counts[(s, a)] = counts.get((s, a), 0) + 1
    assert all(abs(c / 40_000 - 0.25) < 0.01 for c in counts.values())
    assert len(set(pairs)) > 100  # the recorded replays spread over many pairs


def test_one_kept_outcome_draws_no_recency() -> None:
    """The default model draws the same numbers as before the setting existed: only pairs."""
    a = make_agent("dyna", 4, 2, seed=3, replays=5)
    b = make_agent("dyna", 4, 2, seed=3, replays=5, successors=1)
    for agent in (a, b):
        agent.learn(0, 1, 0.0, 2, False, [0, 1])
        agent.learn(2, 0, 1.0, 3, True, [0, 1])
    assert a.rng.random() == b.rng.random()
    assert np.array_equal(a.q, b.q)


def test_a_bad_successors_setting_is_refused() -> None:
    with pytest.raises(AgentSettingError, match="successors: expected a number between 1 and 10,000, got 0"):
        make_agent("dyna", 3, 2, successors=0)
    with pytest.raises(AgentSettingError, match="successors: expected a whole number"):
        make_agent("dynaac", 3, 2, successors=2.5)


def test_qlambda_learns_neuronavs_qet_table() -> None:
    agent = make_agent("qlambda", DATA["n_states"], DATA["n_actions"], seed=0, lr=0.1, gamma=0.99, lam=0.95)
    learn_stream(agent)
    assert np.abs(agent.q - np.array(DATA["qet"]["q"])).max() < 1e-12


def test_episodic_control_learns_neuronavs_qec_table() -> None:
    agent = make_agent("ec", DATA["n_states"], DATA["n_actions"], seed=0, gamma=0.99)
    learn_stream(agent)
    assert np.abs(agent.q - np.array(DATA["qec"]["q"])).max() < 1e-12
