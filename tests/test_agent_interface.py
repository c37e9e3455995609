"""One interface for every reference agent: its values, a learning switch, settings checked by
name and type with the valid ones and their defaults in the message, and a listing."""

from __future__ import annotations

import numpy as np
import pytest

from graphtasks.cli import main
from gym_bridge.agents import AGENT_INFO, AGENTS, AgentSettingError, agent_settings, make_agent


def trained(name: str, n_states: int = 4, n_actions: int = 3):
    agent = make_agent(name, n_states, n_actions, seed=2)
    rng = np.random.default_rng(0)
    for _ in range(100):
        agent.begin_episode()
        s, a = int(rng.integers(n_states)), int(rng.integers(n_actions))
        agent.learn(s, a, float(a == 1), int(rng.integers(n_states)), bool(rng.random() < 0.4), [0, 1, 2])
    agent.begin_episode()
    return agent


TABULAR = sorted(name for name, info in AGENT_INFO.items() if info.observation == "index")


def test_every_agent_is_listed_with_its_source_and_the_families_it_takes() -> None:
    assert set(AGENT_INFO) == set(AGENTS)
    assert all(info.summary and info.reference for info in AGENT_INFO.values())
    assert AGENT_INFO["q"].families() == ["graph", "grid", "poge", "room", "roomv1"]  # the Room task's question
    assert AGENT_INFO["episodic"].families() == ["room"]


@pytest.mark.parametrize("name", TABULAR)
def test_values_are_a_table_of_states_by_actions_and_a_row_per_state(name: str) -> None:
    agent = trained(name)
    table = agent.values()
    assert table.shape == (4, 3)
    if name != "hybrid":  # the hybrid's choice adds a perseveration bonus to its row
        assert all(np.allclose(agent.values(s), table[s]) for s in range(4))


@pytest.mark.parametrize("name", TABULAR)
def test_an_agent_that_is_not_learning_keeps_its_values(name: str) -> None:
    agent = trained(name)
    before = agent.values().copy()
    agent.learning = False
    agent.learn(0, 1, 5.0, 2, True, [0, 1, 2])
    assert np.array_equal(agent.values(), before)
    agent.learning = True
    agent.learn(0, 1, 5.0, 2, True, [0, 1, 2])
    assert name == "random" or not np.array_equal(agent.values(), before)


def test_a_misspelt_or_badly_typed_setting_is_one_line_listing_the_settings() -> None:
    listing = r"no setting 'lamda'; did you mean 'lam'\? \(settings: lr=0.5, lam=0.6"
    with pytest.raises(AgentSettingError, match=listing):
        make_agent("hybrid", 4, 2, lamda=0.3)
    with pytest.raises(AgentSettingError, match=r"the sr agent's beta: expected a number, got 'hot' \(default None\)"):
        make_agent("sr", 4, 2, beta="hot")
    with pytest.raises(AgentSettingError, match=r"unknown agent 'qq'; did you mean 'q'\?"):
        make_agent("qq", 4, 2)
    assert make_agent("sr", 4, 2, beta=None).beta is None
    assert list(agent_settings("dyna")) == [
        "lr", "gamma", "beta", "epsilon", "q_init", "optimism", "bootstrap", "replays", "successors"
    ]


def test_graphtasks_agents_lists_every_agent_with_its_defaults(capsys) -> None:
    assert main(["agents", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "agent,rule,settings (defaults),families,reference"
    assert {line.split(",")[0] for line in lines[1:]} == set(AGENTS)
    assert any(line.startswith("q,") and "beta=None, epsilon=0.1" in line for line in lines)
