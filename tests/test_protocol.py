"""One run protocol (issue 36): a run's phase plan lives in `graphtasks.experiments.protocol`,
and the per-agent loop, the batched lanes and the browser session all play what it says."""

from __future__ import annotations

from graphtasks.experiments import parse_spec
from graphtasks.experiments.batched_runs import play_batch_phases
from graphtasks.experiments.protocol import run_plan
from graphtasks.experiments.runs import cells, play_run
from graphtasks.experiments.versions import prepare_versions
from graphtasks.serve.engine import SessionPlayer
from gym_bridge.episodes import SeedTree

SPEC = """
[experiment]
name = "plan"
tasks = ["neuronav/graph/two_step"]
seeds = [5, 6]

[env]
time_penalty = 0.01

[[agents]]
name = "q"
params = { epsilon = 0.2 }

[[phases]]
name = "learning"
episodes = 6
max_episode_steps = 3
start = "random"

[[phases]]
name = "test"
episodes = 4
learn = false
agent = { epsilon = 0.0, lr = 0.0 }
env = { time_penalty = 0.0 }
start = [0, 2]

[[phases]]
name = "again"
episodes = 3
agent = { lr = 0.3 }
"""


def test_the_plan_holds_every_phase_feature_once():
    spec = parse_spec(SPEC)
    cell = cells(spec)[1]
    plan = run_plan(spec, cell, prepare_versions(spec))
    assert [p.env for p in plan] == [
        {"time_penalty": 0.01, "max_episode_steps": 3}, {"time_penalty": 0.0}, {"time_penalty": 0.01},
    ]
    # the phase's own settings; the run's own again where an earlier phase changed one
    assert [p.agent for p in plan] == [{}, {"epsilon": 0.0, "lr": 0.0}, {"epsilon": 0.2, "lr": 0.3}]
    assert [(p.learn, p.greedy) for p in plan] == [(True, False), (False, False), (True, False)]
    assert [p.env_seed for p in plan] == [SeedTree(6).env(i) for i in range(3)]
    env = plan[1].make_env()
    assert plan[1].options(env) == [{"start": 0}, {"start": 2}, {"start": 0}, {"start": 2}]


def test_every_driver_plays_the_plan():
    spec = parse_spec(SPEC)
    versions = prepare_versions(spec)
    cell = cells(spec)[0]
    plan = run_plan(spec, cell, versions)
    starts = [[o.get("start") for o in p.options(p.make_env())] for p in plan]
    # the per-agent loop: each episode starts where the plan says, with its step limit
    played = list(play_run(spec, cell, versions))
    by_phase = [[e.episode for e in played if e.phase_index == i] for i in range(3)]
    assert [[e.start_state for e in phase] for phase in by_phase[:2]] == starts[:2]
    assert max(e.length for e in by_phase[0]) <= 3
    # the batched lanes: the same plan, lane by lane
    lanes = play_batch_phases(spec, cells(spec), versions)
    assert [list(p.lanes.start_state[0]) for p in lanes[:2]] == starts[:2]
    # the browser session: the same plan, env settings and reset options
    player = SessionPlayer(spec, versions, cell)
    assert player.plan == plan
    assert player.options == plan[0].options(plan[0].make_env())
    assert player.env.unwrapped.episode_length == 3 and player.env.unwrapped.time_penalty == 0.01
