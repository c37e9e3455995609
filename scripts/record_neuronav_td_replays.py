"""Record what neuro-nav 2.5.0's TD-Q, mood and distributional agents learn from one fixed
stream of experience, for tests/test_agent_replay_td.py.

Why: a test that replays the same stream through graphtasks' agents and compares the tables
catches any drift of their rules from the reference's. The stream and the tables are facts
read off the running reference (neuro-nav, Apache-2.0 licence, copyright 2022 Arthur Juliani,
https://github.com/awjuliani/neuro-nav); no code of it is copied here or into the project.

Run it with a Python that has neuro-nav 2.5.0 installed (not the project's venv, which has
gymnasium, not gym):

    /path/to/neuronav-venv/bin/python scripts/record_neuronav_td_replays.py tests/data/neuronav/td_replays.json

What it writes (JSON):

- `four_rooms`: a stream of 3,000 steps in neuro-nav's GridEnv four_rooms small (index
  observation, a time penalty of -0.01 a step, the episode ends at the reward), made by a
  uniform random walk from random starts, episodes of at most 100 steps; each step is
  [episode, state, action, reward, next_state, done].
- `variable_magnitude`: 2,000 one-step episodes of neuro-nav's GraphEnv variable_magnitude
  (one action; the outcome state is drawn by the env), in the same form.
- `tables`: for each named agent and settings, the table neuro-nav's agent has after the
  stream (states x actions; neuro-nav stores actions x states), its mood where it has one, and
  for DistQ the rates it drew and its cells' values of state 0. neuro-nav's own loop calls
  `agent.reset()` before every episode (`neuronav.utils.run_episode`); the replay does too,
  except for the record named `*_no_reset`.
- `distq_four_rooms`: the step at which neuro-nav's DistQ stops with an error on the
  four-rooms stream (it indexes its table by a position in the flattened action x cell array).
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import numpy as np
import numpy.random as npr
from neuronav.agents.dist_agents import DistQ
from neuronav.agents.td_agents import TDQ, MoodQ
from neuronav.envs.graph_env import GraphEnv, GraphTemplate
from neuronav.envs.grid_env import GridEnv, GridObservation, GridSize
from neuronav.envs.grid_templates import GridTemplate

STEPS = 3000
MAX_STEPS = 100
DRAWS = 2000


def grid_stream(seed: int) -> tuple[list[list[float]], int, int]:
    random.seed(seed)  # the env draws its random starts with Python's random module
    rng = np.random.default_rng(seed)
    env = GridEnv(template=GridTemplate.four_rooms, size=GridSize.small, obs_type=GridObservation.index,
                  seed=seed)
    stream: list[list[float]] = []
    episode = 0
    while len(stream) < STEPS:
        obs = env.reset(random_start=True, time_penalty=-0.01)
        for _ in range(MAX_STEPS):
            action = int(rng.integers(env.action_space.n))
            new, reward, done, _ = env.step(action)
            stream.append([episode, int(obs), action, float(reward), int(new), bool(done)])
            obs = new
            if done or len(stream) == STEPS:
                break
        episode += 1
    return stream, env.state_size, int(env.action_space.n)


def graph_stream(seed: int) -> tuple[list[list[float]], int, int]:
    env = GraphEnv(template=GraphTemplate.variable_magnitude, seed=seed)  # its outcomes come from its own stream
    stream = []
    for episode in range(DRAWS):
        obs = env.reset()
        new, reward, done, _ = env.step(0)
        stream.append([episode, int(obs), 0, float(reward), int(new), bool(done)])
    return stream, env.state_size, int(env.action_space.n)


def replay(agent: Any, stream: list[list[float]], reset: bool = True) -> Any:
    episode = None
    for ep, s, a, r, s1, d in stream:
        if reset and ep != episode:
            agent.reset()
        episode = ep
        agent.update([int(s), int(a), int(s1), r, bool(d)])
    return agent


def main(path: str) -> None:
    grid, n_grid, a_grid = grid_stream(0)
    graph, n_graph, a_graph = graph_stream(0)
    tables: dict[str, dict[str, Any]] = {}

    def q_record(name: str, agent: Any, settings: dict[str, Any], **extra: Any) -> None:
        tables[name] = {"agent": type(agent).__name__, "settings": settings,
                        "q": np.asarray(agent.Q).T.tolist(), **extra}

    base = {"lr": 0.1, "gamma": 0.99}
    for name, settings in (
        ("tdq_max", {**base, "bootstrap": "max-min", "w_value": 1.0}),
        ("tdq_max_min_0.5", {**base, "bootstrap": "max-min", "w_value": 0.5}),
        ("tdq_softmax_beta1000", {**base, "bootstrap": "softmax", "beta": 1000.0}),
        ("tdq_softmax_beta5", {**base, "bootstrap": "softmax", "beta": 5.0}),
    ):
        q_record(name, replay(TDQ(n_grid, a_grid, **settings), grid), settings)

    mood = {**base, "lr_neg": 0.05, "mood_lr": 0.1, "mood_factor": 0.5}
    for name, settings, reset in (
        ("moodq_softmax_beta5", {**mood, "bootstrap": "softmax", "beta": 5.0}, True),
        ("moodq_max", {**mood, "bootstrap": "max-min", "w_value": 1.0}, True),
        ("moodq_max_no_reset", {**mood, "bootstrap": "max-min", "w_value": 1.0}, False),
    ):
        agent = replay(MoodQ(n_grid, a_grid, **settings), grid, reset=reset)
        q_record(name, agent, settings, mood=float(agent.mood))

    for mirror in (False, True):
        npr.seed(1)  # DistQ draws its rates, and a cell to bootstrap from, from numpy's global stream
        settings = {"gamma": 0.99, "dist_cells": 16, "mirror": mirror}
        agent = replay(DistQ(n_graph, a_graph, **settings), graph)
        tables[f"distq{'_mirror' if mirror else ''}"] = {
            "agent": "DistQ", "settings": settings, "lrs_pos": agent.lrs_pos.tolist(),
            "lrs_neg": agent.lrs_neg.tolist(), "cells_state0": agent.Q[0, 0].tolist(),
        }

    npr.seed(1)
    failed: dict[str, Any] = {"error": None, "step": None}
    agent = DistQ(n_grid, a_grid, gamma=0.99, dist_cells=16)
    for i, (_, s, a, r, s1, d) in enumerate(grid):
        try:
            agent.update([int(s), int(a), int(s1), r, bool(d)])
        except IndexError as exc:
            failed = {"error": f"IndexError: {exc}", "step": i}
            break

    out = {
        "_about": __doc__.split("\n\n")[0].replace("\n", " "),
        "_source": "neuro-nav 2.5.0 (https://github.com/awjuliani/neuro-nav), Apache-2.0; "
                   "recorded by scripts/record_neuronav_td_replays.py",
        "four_rooms": {"n_states": n_grid, "n_actions": a_grid, "stream": grid},
        "variable_magnitude": {"n_states": n_graph, "n_actions": a_graph, "stream": graph},
        "tables": tables,
        "distq_four_rooms": failed,
    }
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    rewarded = sum(1 for step in grid if step[5])
    print(f"{path}: {len(grid)} grid steps ({rewarded} rewarded), {len(graph)} draws; DistQ on the grid: {failed}")


if __name__ == "__main__":
    main(sys.argv[1])
