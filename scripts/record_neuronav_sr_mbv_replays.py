"""Record what neuro-nav 2.5.0's successor-representation and model-based agents (TDSR, DynaSR,
MBV, SRMB) learn from one fixed stream of experience, for tests/test_agent_replay_sr_mbv.py.

Why: a test that replays the same stream through graphtasks' `sr`, `dynasr`, `mbv` and `srmb`
and compares the tables catches any drift of their rules from the reference's. The stream and
the tables are facts read off the running reference (neuro-nav, Apache-2.0 licence, copyright
2022 Arthur Juliani, https://github.com/awjuliani/neuro-nav); no code of it is copied here or
into the project.

Run it with a Python that has neuro-nav 2.5.0 installed (not the project's venv, which has
gymnasium, not gym):

    /path/to/neuronav-venv/bin/python scripts/record_neuronav_sr_mbv_replays.py tests/data/neuronav/sr_mbv_replays.json

What it writes (JSON):

- `four_rooms`: a stream of 4,000 steps in neuro-nav's GridEnv four_rooms small (index
  observation, a time penalty of -0.01 a step), made by a uniform random walk from random
  starts, episodes of at most 100 steps. For the first 2,000 steps the reward is the
  template's (1 at (1, 1), state 12, ending the episode); after that it moves to (1, 9)
  (state 20) and a reward of 0.5 that does not end the episode lies at (7, 2) (state 79), so
  the old goal is passed through and left, and a reward is paid on arriving at a state the
  walk goes on from. Each step is [episode, state, action, reward, next_state, done].
- `probe`: a fixed states x 4 matrix; a successor map M (actions x states x states) is
  recorded as M @ probe (actions x states x 4) and as its rows for the start state 108, which
  pin down M without storing its 58,564 numbers.
- `tables`: for each named agent and its settings, what neuro-nav's agent holds after the
  stream: `w` (the reward of arriving at each state), `q` (states x actions; neuro-nav stores
  actions x states), and for the SR agents `m_probe` and `m_start`. neuro-nav's own loop calls
  `agent.reset()` before every episode (`neuronav.utils.run_episode`); the replay does too.
- `dynasr`: DynaSR replays 3 steps drawn at random (numpy's global stream, seeded 1) after
  each real one, over the first 1,000 steps of the stream. `updates` lists every step its rule
  learnt, real and replayed, in order ([state, action, next_state, reward, done]), so the
  rule can be replayed without the draw.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import numpy as np
import numpy.random as npr
from neuronav.agents.dyna_agents import DynaSR
from neuronav.agents.mb_agents import MBV, SRMB
from neuronav.agents.td_agents import TDSR
from neuronav.envs.grid_env import GridEnv, GridObservation, GridSize
from neuronav.envs.grid_templates import GridTemplate

STEPS = 4000
MOVE_AT = 2000
MAX_STEPS = 100
DYNA_STEPS = 1000
START = 108
MOVED = {"rewards": {(1, 9): 1.0, (7, 2): [0.5, True, False]}}


def probe(n_states: int) -> np.ndarray:
    """The fixed directions M is recorded along (the test builds the same matrix)."""
    s = np.arange(1, n_states + 1)[:, None]
    k = np.arange(1, 5)[None, :]
    return np.cos(0.7 * s * k)


def grid_stream(seed: int) -> tuple[list[list[Any]], int, int]:
    random.seed(seed)  # the env's random starts draw from Python's random module
    npr.seed(seed)
    rng = np.random.default_rng(seed)
    env = GridEnv(template=GridTemplate.four_rooms, size=GridSize.small, obs_type=GridObservation.index)
    stream: list[list[Any]] = []
    episode = 0
    while len(stream) < STEPS:
        objects = None if len(stream) < MOVE_AT else MOVED
        obs = env.reset(random_start=True, time_penalty=-0.01, objects=objects)
        for _ in range(MAX_STEPS):
            action = int(rng.integers(env.action_space.n))
            new, reward, done, _ = env.step(action)
            stream.append([episode, int(obs), action, float(reward), int(new), bool(done)])
            obs = new
            if done or len(stream) == STEPS or len(stream) == MOVE_AT:
                break
        episode += 1
    return stream, env.state_size, int(env.action_space.n)


def replay(agent: Any, stream: list[list[Any]]) -> Any:
    episode = None
    for ep, s, a, r, s1, d in stream:
        if ep != episode:
            agent.reset()
        episode = ep
        agent.update([int(s), int(a), int(s1), r, bool(d)])
    return agent


def sr_record(agent: Any, settings: dict[str, Any], p: np.ndarray) -> dict[str, Any]:
    return {"agent": type(agent).__name__, "settings": settings, "w": agent.w.tolist(),
            "q": np.asarray(agent.Q).T.tolist(), "m_probe": (agent.M @ p).tolist(),
            "m_start": agent.M[:, START, :].tolist()}


def main(path: str) -> None:
    stream, n, n_actions = grid_stream(0)
    p = probe(n)
    base = {"lr": 0.1, "gamma": 0.99}
    tables: dict[str, dict[str, Any]] = {}

    for name, settings in (("tdsr", base), ("tdsr_mean", {**base, "goal_biased_sr": False})):
        tables[name] = sr_record(replay(TDSR(n, n_actions, **settings), stream), settings, p)

    for name, settings in (("mbv", base), ("mbv_w0.5", {**base, "w_value": 0.5})):
        agent = replay(MBV(n, n_actions, **settings), stream)
        tables[name] = {"agent": "MBV", "settings": settings, "w": agent.w.tolist(), "q": agent.Q.T.tolist()}

    settings = {**base, "mix": 0.5}
    agent = replay(SRMB(n, n_actions, **settings), stream)
    tables["srmb"] = {"agent": "SRMB", "settings": settings, "q": agent.Q.T.tolist(),
                      "mb_q": agent.MB_agent.Q.T.tolist(), "sr_q": agent.SR_agent.Q.T.tolist()}

    npr.seed(1)  # DynaModule draws the replayed steps from numpy's global stream
    dyna = DynaSR(n, n_actions, **base)
    updates: list[list[Any]] = []
    learn = dyna._update

    def logged(exp: Any, **kwargs: Any) -> Any:
        s, a, s1, r, d = exp
        updates.append([int(s), int(a), int(s1), float(r), bool(d)])
        return learn(exp, **kwargs)

    dyna._update = logged
    replay(dyna, stream[:DYNA_STEPS])
    record = sr_record(dyna, {**base, "num_recall": dyna.dyna.num_recall}, p)

    out = {
        "_about": __doc__.split("\n\n")[0].replace("\n", " "),
        "_source": "neuro-nav 2.5.0 (https://github.com/awjuliani/neuro-nav), Apache-2.0; "
                   "recorded by scripts/record_neuronav_sr_mbv_replays.py",
        "four_rooms": {"n_states": n, "n_actions": n_actions, "start": START, "moved_at": MOVE_AT,
                       "stream": stream},
        "probe": p.tolist(),
        "tables": tables,
        "dynasr": {**record, "steps": DYNA_STEPS, "updates": updates},
    }
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
        fh.write("\n")
    rewarded = sum(1 for step in stream if step[3] > 0)
    ended = sum(1 for step in stream if step[5])
    print(f"{path}: {len(stream)} steps ({rewarded} rewarded, {ended} ended), "
          f"{len(updates)} DynaSR updates over {DYNA_STEPS} steps")


if __name__ == "__main__":
    main(sys.argv[1])
