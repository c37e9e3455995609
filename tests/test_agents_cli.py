import json

import numpy as np
import pytest

import tasks
from graphtasks.cli import main
from gym_bridge import GraphTaskEnv
from gym_bridge.agents import HybridAgent, QAgent
from gym_bridge.runner import run_episodes, stay_probabilities


def test_hybrid_agent_shows_the_model_based_signature():
    env = GraphTaskEnv("rewardgym/two-step")
    agent = HybridAgent(env.compiled.n_states, env.action_space.n, w=0.9, seed=0)
    log = run_episodes(env, agent, 3000, seed=0)
    stay = stay_probabilities(log, env)
    assert stay["rewarded_common"] > stay["rewarded_rare"] + 0.05
    assert stay["unrewarded_rare"] > stay["unrewarded_common"] + 0.05


def test_q_agent_learns_the_better_bandit_arm():
    env = GraphTaskEnv("rewardgym/two-armed-bandit")
    agent = QAgent(env.compiled.n_states, env.action_space.n, seed=0)
    log = run_episodes(env, agent, 1000, seed=0)
    assert np.mean(np.asarray(log.first_actions[-200:]) == 0) > 0.8
    assert np.mean(log.rewards[-200:]) > 0.7


def test_runner_plays_the_schedule():
    env = GraphTaskEnv("rewardgym/two-step")
    log = run_episodes(env, QAgent(7, 2, seed=0), 180, seed=0, schedule=True)
    common = sum((a == 0 and s == 1) or (a == 1 and s == 2) for a, s in zip(log.first_actions, log.first_states))
    assert common == 9 * 14


@pytest.mark.slow
def test_cli_load_all_writes_every_task_into_an_empty_store(capsys, isolated_store_location):
    n = len(tasks.builtin_ids())
    assert main(["tasks", "load", "--all"]) == 0
    assert f"{n} written, 0 unchanged" in capsys.readouterr().out
    assert main(["tasks", "list", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == n


@pytest.mark.slow
def test_cli_main_job(capsys, loaded_store_copy, monkeypatch, tmp_path):
    """The README's job on a store that already holds every built-in task (a copy of the shared one)."""
    monkeypatch.setenv("GRAPHTASKS_STORE", str(loaded_store_copy))
    n = len(tasks.builtin_ids())
    assert main(["tasks", "load", "--all"]) == 0
    assert f"0 written, {n} unchanged" in capsys.readouterr().out
    assert main(["tasks", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"id": "rewardgym/two-step", "family": "rewardgym", "states": 7, "actions": 2,
            "source": "data/rewardgym/two-step.json"} in listed
    query = "MATCH (s)-[e]->(t) WHERE s.task = 'rewardgym/two-step' RETURN s.index, e.action, e.p, t.index"
    assert main(["cypher", query, "--format", "csv"]) == 0
    assert "0,0,0.7,1" in capsys.readouterr().out
    plot = tmp_path / "run.png"
    assert main(["run", "rewardgym/two-step", "--agent", "q", "--episodes", "300", "--seed", "0",
                 "--no-progress", "--json", "--plot", str(plot)]) == 0
    summary = json.loads(capsys.readouterr().out.split("\nplot written")[0])
    assert summary["episodes"] == 300 and summary["steps"] == 600 and "stay_probability" in summary
    assert plot.stat().st_size > 1000


def test_cli_errors_are_one_line(capsys):
    assert main(["tasks", "load", "rewardgym/nope"]) == 2
    assert "unknown task 'rewardgym/nope'" in capsys.readouterr().err
    assert main(["cypher", "MATCH (n) DELETE n"]) == 2
    assert "'DELETE' at offset 10 is not a read clause" in capsys.readouterr().err
    assert main(["tasks", "load", "rewardgym/two-step", "--param", "p_common=2"]) == 2
    assert "probability 2.0 outside [0, 1]" in capsys.readouterr().err
