"""Record what neuro-nav 2.5.0's Dyna agents, Q(lambda) (QET) and episodic control (QEC) learn
from one fixed stream of experience, for tests/test_agent_replay_dyna.py.

Why: a test that replays the same stream through graphtasks' agents and compares the tables
catches any drift of their rules from the reference's. A Dyna agent's replays are random, so
the replays neuro-nav drew are recorded too (the pair and the recency draw of each), and the
test has graphtasks' agent learn those same replays. The stream, the draws and the tables are
facts read off the running reference (neuro-nav, Apache-2.0 licence, copyright 2022 Arthur
Juliani, https://github.com/awjuliani/neuro-nav); no code of it is copied here or into the
project.

Run it with a Python that has neuro-nav 2.5.0 installed (not the project's venv, which has
gymnasium, not gym):

    /path/to/neuronav-venv/bin/python scripts/record_neuronav_dyna_replays.py tests/data/neuronav/dyna_replays.json

What it writes (JSON):

- `stream`: 2,000 steps in neuro-nav's GridEnv four_rooms small (index observation, a time
  penalty of -0.01 a step, the action replaced by a random one with probability 0.3, so a
  (state, action) has several outcomes; the episode ends at the reward), made by a uniform
  random walk from random starts, episodes of at most 100 steps; each step is
  [episode, state, action, reward, next_state, done].
- `replays`: the replays neuro-nav's Dyna module drew after each step of the stream, with
  numpy's global stream seeded with 1 before the agent is made: per step a list of
  [state, action, k], k the floor of the exponential recency draw (before neuro-nav limits it
  to the outcomes kept). The draws depend on the model alone, which all Dyna agents build
  alike from the stream, so every agent below drew these (checked as they are recorded).
- `model`: neuro-nav's Dyna model after the stream: per (state, action) tried, in the order
  first tried, the outcomes kept, oldest first, as [next_state, reward, done].
- `dyna`: for each Dyna agent and settings, its table after the stream (states x actions;
  neuro-nav stores actions x states).
- `qet`, `qec`: the tables of Q(lambda) and episodic control after the stream.

neuro-nav's own loop calls `agent.reset()` before every episode (`neuronav.utils.run_episode`);
the replay here does too.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import numpy as np
import numpy.random as npr
from neuronav.agents import dyna_agents
from neuronav.agents.dyna_agents import DynaAC, DynaQ, DynaSR
from neuronav.agents.mc_agents import QEC
from neuronav.agents.td_agents import QET
from neuronav.envs.grid_env import GridEnv, GridObservation, GridSize
from neuronav.envs.grid_templates import GridTemplate

STEPS = 2000
MAX_STEPS = 100
STOCHASTICITY = 0.3


def grid_stream(seed: int) -> tuple[list[list[Any]], int, int]:
    random.seed(seed)  # the env's random starts draw from Python's random module
    npr.seed(seed)
    rng = np.random.default_rng(seed)
    env = GridEnv(template=GridTemplate.four_rooms, size=GridSize.small, obs_type=GridObservation.index, seed=seed)
    stream: list[list[Any]] = []
    episode = 0
    while len(stream) < STEPS:
        obs = env.reset(random_start=True, time_penalty=-0.01, stochasticity=STOCHASTICITY)
        for _ in range(MAX_STEPS):
            action = int(rng.integers(env.action_space.n))
            new, reward, done, _ = env.step(action)
            stream.append([episode, int(obs), action, float(reward), int(new), bool(done)])
            obs = new
            if done or len(stream) == STEPS:
                break
        episode += 1
    return stream, env.state_size, int(env.action_space.n)


class LoggedDraws:
    """neuro-nav's Dyna module draws from `numpy.random` by name; this stands in for it there,
    passing every call on to numpy and noting the pair and the recency draw of each replay."""

    def __init__(self) -> None:
        self.choices: list[int] = []
        self.recency: list[float] = []

    def choice(self, *args: Any, **kwargs: Any) -> Any:
        value = npr.choice(*args, **kwargs)
        self.choices.append(int(value))
        return value

    def exponential(self, *args: Any, **kwargs: Any) -> Any:
        value = npr.exponential(*args, **kwargs)
        self.recency.append(float(value))
        return value


def replay(agent: Any, stream: list[list[Any]], draws: LoggedDraws | None = None) -> list[list[list[int]]]:
    """Feed the stream to `agent` (reset at each episode); with `draws`, the replays after each step."""
    episode = None
    replays: list[list[list[int]]] = []
    for ep, s, a, r, s1, d in stream:
        if ep != episode:
            agent.reset()
        episode = ep
        if draws is None:
            agent.update([int(s), int(a), int(s1), r, bool(d)])
            continue
        before = len(draws.recency)
        drawn: list[list[int]] = []
        sample = agent.dyna._sample_model

        def noted(sample: Any = sample, drawn: list[list[int]] = drawn) -> Any:
            exp = sample()
            drawn.append([int(exp[0]), int(exp[1]), int(draws.recency[-1])])
            return exp

        agent.dyna._sample_model = noted
        agent.update([int(s), int(a), int(s1), r, bool(d)])
        agent.dyna._sample_model = sample
        assert len(draws.recency) - before == len(drawn) == agent.dyna.num_recall
        replays.append(drawn)
    return replays


def main(path: str) -> None:
    stream, n_states, n_actions = grid_stream(0)
    draws = LoggedDraws()
    dyna_agents.npr = draws  # type: ignore[attr-defined]
    base = {"lr": 0.1, "gamma": 0.99, "beta": 1000.0}
    dyna: dict[str, Any] = {}
    drawn: list[list[list[int]]] | None = None
    model: list[Any] = []
    for name, cls, bootstrap in (
        ("dynaq_policy", DynaQ, "softmax"),
        ("dynaq_max", DynaQ, "max-min"),
        ("dynaac", DynaAC, None),
        ("dynasr", DynaSR, None),
    ):
        npr.seed(1)
        agent = cls(n_states, n_actions, **base)
        settings: dict[str, Any] = {**base, "num_recall": agent.dyna.num_recall, "recency": agent.dyna.recency}
        if bootstrap is not None:
            agent.bootstrap = bootstrap  # DynaQ's constructor does not take it; TDQ's default is "softmax"
            settings["bootstrap"] = bootstrap
        replays = replay(agent, stream, draws)
        assert drawn is None or replays == drawn, "the agents drew different replays"
        drawn = replays
        dyna[name] = {"agent": cls.__name__, "settings": settings, "q": np.asarray(agent.Q).T.tolist()}
        model = [[int(s), int(a), [[int(s1), float(r), bool(d)] for s1, r, d in outcomes]]
                 for (s, a), (_, outcomes) in agent.dyna.model.items()]

    lam = {"lr": 0.1, "gamma": 0.99, "lamb": 0.95}
    agent = QET(n_states, n_actions, **lam)
    replay(agent, stream)
    qet = {"settings": lam, "q": agent.Q.T.tolist()}
    agent = QEC(n_states, n_actions, gamma=0.99)
    replay(agent, stream)
    qec = {"settings": {"gamma": 0.99}, "q": agent.Q.T.tolist()}

    out = {
        "_about": __doc__.split("\n\n")[0].replace("\n", " "),
        "_source": "neuro-nav 2.5.0 (https://github.com/awjuliani/neuro-nav), Apache-2.0; "
                   "recorded by scripts/record_neuronav_dyna_replays.py",
        "n_states": n_states, "n_actions": n_actions, "stochasticity": STOCHASTICITY,
        "stream": stream, "replays": drawn, "model": model, "dyna": dyna, "qet": qet, "qec": qec,
    }
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    rewarded = sum(1 for step in stream if step[5])
    print(f"{path}: {len(stream)} steps ({rewarded} rewarded), {len(dyna)} Dyna agents")


if __name__ == "__main__":
    main(sys.argv[1])
