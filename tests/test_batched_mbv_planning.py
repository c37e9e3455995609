"""The batched MBV agent's incremental plan (only the pairs whose outcome's worth moved are
swept) gives the numbers of the rule swept pair by pair over every tried pair, to 1e-12."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gym_bridge.agents import make_batched
from gym_bridge.agents.mbv import BatchedMBV


def reference_plan(lane: dict[str, Any], gamma: float, optimism: float, sweeps: int, ignore_ends: bool,
                   pair: bool) -> None:
    """The rule as a plain loop: `sweeps` synchronous sweeps over every tried pair, each from
    the last sweep's values, stopping at a sweep that changes nothing."""
    q, n, a = lane["q"], len(lane["q"]), len(lane["q"][0])
    for _ in range(sweeps):
        values = []
        for s in range(n):
            best = max(q[s])
            if optimism != 1.0:
                best = optimism * best + (1 - optimism) * min(q[s])
            values.append(0.0 if lane["ends"][s] and not ignore_ends else best)
        new = [[0.0] * a for _ in range(n)]
        for s in range(n):
            for act in range(a):
                if lane["tried"][s][act]:
                    t = lane["next"][s][act]
                    worth = gamma * values[t]
                    new[s][act] = worth + lane["rewards"][s][act] if pair else lane["w"][t] + worth
        if new == q:
            break
        q = new
    lane["q"] = q


def reference_learn(lane: dict[str, Any], s: int, act: int, r: float, t: int, ended: bool, lr: float,
                    pair: bool) -> None:
    lane["next"][s][act], lane["tried"][s][act], lane["ends"][t] = t, True, ended
    if pair:
        lane["rewards"][s][act] += lr * (r - lane["rewards"][s][act])
    else:
        lane["w"][t] += lr * (r - lane["w"][t])


CASES: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "state rewards, sweeps run out": ({"sweeps": 2}, [{"lr": 0.5, "gamma": 0.9}, {"lr": 0.3, "optimism": 0.5}]),
    "state rewards, to convergence": ({"sweeps": 40}, [{"lr": 0.5, "gamma": 0.8}, {"lr": 0.2, "gamma": 0.95}]),
    "pair rewards, ends ignored": ({"sweeps": 4, "reward_model": "pair", "ignore_ends": True},
                                   [{"lr": 0.4, "gamma": 0.9, "optimism": 0.3}, {"lr": 0.6, "gamma": 0.7}]),
}


@pytest.mark.parametrize(
    "case, path", [(c, p) for c in sorted(CASES) for p in ("compiled", "numpy")] + [(sorted(CASES)[0], "gather")]
)
def test_incremental_plan_equals_the_plain_rule(case: str, path: str) -> None:
    """Seeded random walks on a changing 9-state model (outcomes move as walls would, some
    states end episodes, rewards are noisy), lanes that learn in turn, gamma changed halfway:
    each lane's Q equals the plain loop's, whether the sweeps run compiled (numba, the `fast`
    extra) or in numpy. `gather`: the arrival lists outgrow their limit early and the sweeps
    find their pairs by a gather from then on."""
    shared, lanes_settings = CASES[case]
    n, a, size, rng = 9, 3, 4, np.random.default_rng(7)
    settings = [{**shared, **lanes_settings[i % 2]} for i in range(size)]
    agent = make_batched("mbv", n, a, seeds=list(range(size)), settings=settings)
    assert isinstance(agent, BatchedMBV)
    agent.incremental, agent.compiled = True, path == "compiled"  # (a table this small is swept whole by default)
    if path == "gather":
        agent.arrivals_limit = 200  # bytes: the first list longer than 4 pairs ends the lists
    pair = shared.get("reward_model") == "pair"
    lanes: list[dict[str, Any]] = [{"q": [[0.0] * a for _ in range(n)], "tried": [[False] * a for _ in range(n)],
              "next": [[0] * a for _ in range(n)], "rewards": [[0.0] * a for _ in range(n)],
              "w": [0.0] * n, "ends": [False] * n} for _ in range(size)]
    world = rng.integers(0, n, size=(size, n, a))
    worth = rng.normal(size=n) * (rng.random(n) < 0.4)
    terminal = rng.random(n) < 0.2
    for step in range(120):
        if step == 60:
            agent.set_setting("gamma", np.array([0.6, 0.99, 0.5, 0.9]))
        if rng.random() < 0.1:
            world[rng.integers(size), rng.integers(n), rng.integers(a)] = rng.integers(n)  # an outcome moves
        chosen = np.flatnonzero(rng.random(size) < 0.7)
        if not chosen.size:
            continue
        states, actions = rng.integers(0, n, chosen.size), rng.integers(0, a, chosen.size)
        nxt = world[chosen, states, actions]
        rewards = worth[nxt] + 0.1 * rng.normal(size=chosen.size)
        agent.learn(chosen, states, actions, rewards, nxt, terminal[nxt], None)
        for i, lane in enumerate(chosen):
            reference_learn(lanes[lane], int(states[i]), int(actions[i]), float(rewards[i]), int(nxt[i]),
                            bool(terminal[nxt[i]]), float(agent.lr[lane]), pair)
            reference_plan(lanes[lane], float(agent.gamma[lane]), float(agent.optimism[lane]), agent.sweeps,
                           agent.ignore_ends, pair)
        for lane in chosen:
            assert np.allclose(agent.q[lane], lanes[lane]["q"], rtol=0, atol=1e-12), (step, lane)
    assert (agent.arrivals is None) == (path == "gather")
    assert np.abs(agent.q).max() > 0.1  # values were planned, not left at 0


@pytest.mark.parametrize("compiled", [True, False])
def test_incremental_plan_equals_the_full_sweeps_on_a_grid(compiled: bool) -> None:
    """A grid task's episodes with a reward that moves and a blocked pair (the Russek designs):
    the incremental plan and `plan_full` (every tried pair each sweep) give the same Q."""
    n, a, size, rng = 25, 4, 3, np.random.default_rng(3)
    moves = np.array([[-5, 5, -1, 1]])
    states = np.arange(n)[:, None]
    world = np.where(((states + moves) >= 0) & ((states + moves) < n) & ~((moves == -1) & (states % 5 == 0))
                     & ~((moves == 1) & (states % 5 == 4)), states + moves, states)
    settings = [{"lr": 0.3, "gamma": 0.95}, {"lr": 0.1, "gamma": 0.99}, {"lr": 0.5, "gamma": 0.9}]
    fast = make_batched("mbv", n, a, list(range(size)), settings)
    full = make_batched("mbv", n, a, list(range(size)), settings)
    assert isinstance(fast, BatchedMBV) and isinstance(full, BatchedMBV)
    full.plan = full.plan_full  # type: ignore[method-assign]
    fast.incremental, fast.compiled = True, compiled
    goal, position = 24, np.zeros(size, dtype=np.int64)
    for step in range(600):
        if step == 300:
            goal, world[12, 1] = 4, 12  # the goal moves; a wall below the centre
        actions = rng.integers(0, a, size)
        nxt = world[position, actions]
        ended = nxt == goal
        for agent in (fast, full):
            agent.learn(np.arange(size), position, actions, ended.astype(float), nxt, ended, None)
        position = np.where(ended, 0, nxt)
        assert np.allclose(fast.q, full.q, rtol=0, atol=1e-12), step
    assert fast.q.max() > 0.5
