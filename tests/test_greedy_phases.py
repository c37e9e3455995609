"""Phase settings per agent and a greedy test for every agent kind (issue 41, finding 2): a
phase setting some agents lack is refused, `agent.NAME = {...}` sets one agent's, and
`greedy = true` makes every agent take the argmax of its own values, per agent and in lanes."""

from __future__ import annotations

import numpy as np
import pytest

from graphtasks.experiments import ExperimentSpecError, parse_spec
from graphtasks.experiments.batched_runs import batch_key, play_batch
from graphtasks.experiments.protocol import run_plan
from graphtasks.experiments.runs import cells, play_run
from graphtasks.experiments.versions import prepare_versions
from gym_bridge import family
from gym_bridge.agents import agent_for_env, make_batched
from gym_bridge.batched_episodes import play_lanes
from gym_bridge.episodes import play

TWO_STEP = """
[experiment]
name = "greedy test"
tasks = ["rewardgym/two-step"]
seeds = [1, 2]
record = "steps"

[[agents]]
name = "q"

[[agents]]
name = "hybrid"

[[phases]]
name = "learning"
episodes = 40

[[phases]]
name = "test"
episodes = 15
learn = false
"""


def test_a_setting_some_agents_lack_is_refused_in_one_line():
    with pytest.raises(ExperimentSpecError) as refused:
        parse_spec(TWO_STEP + "agent = { epsilon = 0.0 }\n", "g.toml")
    said = str(refused.value)
    assert "\n" not in said
    assert said.startswith("g.toml, line 22: phases[1].agent.epsilon: the hybrid agent of this spec has no setting")
    assert "set it per agent (agent.q = { epsilon = 0.0 })" in said and "greedy = true" in said


@pytest.mark.parametrize("line, message", [
    ("agent.qq = { epsilon = 0.0 }", "phases[1].agent.qq: 'qq' is no agent's label or name; did you mean 'q'?"),
    ("agent.q = { w = 0.5 }", "phases[1].agent.q.w: the q agent has no setting 'w'"),
    ("agent.hybrid = { epsilon = 0.0 }", "phases[1].agent.hybrid.epsilon: the hybrid agent has no setting"),
    ("agent = { q = 0.0 }", "phases[1].agent.q: expected a table of settings for the q agent"),
    ("agent = { epsilom = 0.0 }", "phases[1].agent.epsilom: none of the agents (hybrid, q) has a setting 'epsilom', "
                                  "nor is it an agent's label or name; did you mean 'epsilon'?"),
    ("greedy = 1", "phases[1].greedy: expected true or false, got 1"),
])
def test_per_agent_settings_are_checked(line, message):
    with pytest.raises(ExperimentSpecError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")
                       .replace(".", r"\.").replace("[", r"\[").replace("]", r"\]")):
        parse_spec(TWO_STEP + line + "\n", "g.toml")


def test_an_agent_that_cannot_act_greedily_is_refused():
    text = TWO_STEP.replace('tasks = ["rewardgym/two-step"]', 'tasks = ["room/small"]').replace(
        'name = "hybrid"', 'name = "episodic"') + "greedy = true\n"
    with pytest.raises(ExperimentSpecError, match=r"phases\[1\]\.greedy: the episodic agent cannot act greedily: "
                                                  r"it has no action values"):
        parse_spec(text, "g.toml")


def test_a_per_agent_setting_reaches_that_agent_alone():
    spec = parse_spec(TWO_STEP + "agent.q = { epsilon = 0.0 }\n")
    versions = prepare_versions(spec)
    by_agent = {c.agent.name: [p.agent for p in run_plan(spec, c, versions)] for c in cells(spec)}
    assert by_agent == {"q": [{}, {"epsilon": 0.0}], "hybrid": [{}, {}]}
    q_cell = next(c for c in cells(spec) if c.agent.name == "q")
    tested = [s[4] for p in play_run(spec, q_cell, versions) if p.phase_index == 1 for s in p.episode.steps]
    assert set(tested) <= {1.0, 0.5}  # epsilon 0: the greedy action, or one of two tied
    # a grid's settings by their full label, each lane its own, in one batch
    grid = parse_spec(TWO_STEP.replace('name = "q"', 'name = "q"\ngrid = { lr = [0.1, 0.5] }')
                      + 'agent."q lr=0.5" = { epsilon = 0.0 }\n')
    lanes = [c for c in cells(grid) if c.agent.name == "q" and c.seed == 1]
    assert batch_key(grid, lanes[0], versions) == batch_key(grid, lanes[1], versions) is not None
    played = play_batch(grid, lanes, prepare_versions(grid))
    p_test = {c.agent.label: {s[4] for p in played[c.index] if p.phase_index == 1 for s in p.episode.steps}
              for c in lanes}
    assert p_test["q lr=0.5"] <= {1.0, 0.5} and p_test["q lr=0.1"] & {0.95, 0.05}


def test_a_greedy_phase_takes_every_agents_argmax_per_agent():
    spec = parse_spec(TWO_STEP + "greedy = true\n")
    soft = parse_spec(TWO_STEP)
    versions = prepare_versions(spec)
    for cell in cells(spec):
        played = list(play_run(spec, cell, versions))
        # the agent as the run made it, through the same learning phase
        learning = run_plan(spec, cell, versions)[0]
        env = learning.make_env()
        agent = agent_for_env(cell.agent.name, env, learning.view, cell.seed, **cell.agent.params)
        list(play(env, agent, learning.episodes, learning.env_seed, learning.options(env), learning.view))
        agent.begin_episode()  # as each test episode begins (nothing is learnt in it: the values stay)
        assert [p.episode for p in played if p.phase_index == 0] == [
            p.episode for p in play_run(soft, cell, versions) if p.phase_index == 0]
        steps = [s for p in played if p.phase_index == 1 for s in p.episode.steps]
        assert len(steps) == 30
        for state, action, _, _, p_action in steps:
            values = agent.values(state)
            best = np.flatnonzero(values == values.max())
            assert action in best and p_action == 1.0 / len(best)
        again = [p.episode for p in play_run(spec, cell, versions)]
        assert again == [p.episode for p in played]  # same seed, same choices (ties by the agent's stream)
    # without greedy the hybrid agent's test still chooses by its softmax
    hybrid = next(c for c in cells(soft) if c.agent.name == "hybrid")
    assert min(s[4] for p in play_run(soft, hybrid, versions) if p.phase_index == 1 for s in p.episode.steps) < 0.9


@pytest.mark.parametrize("name", ["q", "hybrid"])
def test_greedy_lanes_take_each_lanes_argmax_and_a_lane_is_itself_in_any_batch(name):
    env = family("graph").make_vector_env("rewardgym/two-step", 3, autoreset_mode="disabled")
    agent = make_batched(name, 7, 2, seeds=[0, 1, 2], settings=[{}, {}, {}])
    play_lanes(env, agent, 30, env_seeds=[10, 11, 12])
    greedy = play_lanes(env, agent, 10, env_seeds=[20, 21, 22], learn=False, record_steps=True, greedy=True)
    for lane in range(3):
        for episode in greedy[lane]:
            for state, action, _, _, p_action in episode.steps:
                values = agent.lane(lane).values(state)
                best = np.flatnonzero(values == values.max())
                assert action in best and p_action == 1.0 / len(best)
    spec = parse_spec(TWO_STEP.replace("seeds = [1, 2]", "seeds = [1, 2, 3]") + "greedy = true\n")
    versions = prepare_versions(spec)
    batch = [c for c in cells(spec) if c.agent.name == name]
    together = play_batch(spec, batch, versions)
    alone = play_batch(spec, batch[1:2], versions)
    assert [p.episode for p in together[batch[1].index]] == [p.episode for p in alone[batch[1].index]]
    assert {s[4] for p in together[batch[0].index] if p.phase_index == 1 for s in p.episode.steps} <= {1.0, 0.5}
