"""The cued T-maze (decision/grid/cued_t_maze/left, /right): a grid task whose start cell's
marker says which arm pays; stored, run by gymnasium and in an experiment spec."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import gym_bridge  # noqa: F401  (registers the ids)
import tasks
from graphstore import open_store
from graphtasks.experiments import parse_spec, run_experiment
from gym_bridge import GridEnv

UP, LEFT, RIGHT = 0, 3, 1


def walk(cue: str, turn: int, obs_type: str = "index") -> tuple[list, float]:
    env = GridEnv(task=tasks.build(f"decision/grid/cued_t_maze/{cue}"), obs_type=obs_type, resolution=64)
    obs, _ = env.reset(seed=0)
    seen, reward, terminated = [obs], 0.0, False
    for action in (UP, UP, UP, UP, turn, turn):
        obs, reward, terminated, _, _ = env.step(action)
        seen.append(obs)
    assert terminated
    return seen, float(reward)


def test_the_cued_arm_pays_and_both_arms_end_the_trial() -> None:
    env = gym.make("graphtasks/Grid-v0", task="decision/grid/cued_t_maze/left")  # a gym id, from the store
    assert env.reset(seed=0)[1]["state"] == 5 * 7 + 3
    assert {"decision/grid/cued_t_maze/left", "decision/grid/cued_t_maze/right"} <= set(tasks.builtin_ids("grid"))
    assert [walk("left", turn)[1] for turn in (LEFT, RIGHT)] == [1.0, 0.0]
    assert [walk("right", turn)[1] for turn in (LEFT, RIGHT)] == [0.0, 1.0]


def test_the_cue_is_seen_at_the_start_and_out_of_sight_at_the_junction() -> None:
    """Through a 5 x 5 window the two trial types look different at the start (the marker's
    colour) and alike from the junction on (the rewards are hidden)."""
    left, _ = walk("left", LEFT, "window")
    right, _ = walk("right", LEFT, "window")
    assert not np.array_equal(left[0], right[0])
    assert all(np.array_equal(a, b) for a, b in zip(left[3:5], right[3:5]))  # near and at the junction
    graph = tasks.build("decision/grid/cued_t_maze/left")
    with open_store(":memory:") as store:
        store.put(graph)
        assert store.content_hash(graph.task_id) == graph.content_hash()


def test_it_runs_in_an_experiment() -> None:
    spec = parse_spec("""
[experiment]
name = "cued"
tasks = ["decision/grid/cued_t_maze/left", "decision/grid/cued_t_maze/right"]
seeds = 1

[[agents]]
name = "q"

[[phases]]
name = "trials"
episodes = 5
max_steps = 30
""")
    rows = run_experiment(spec, workers=1).rows
    assert {r["task"] for r in rows if "episode" in r} == set(spec.tasks)
