"""Log-likelihoods computed over all trials at once, where the learning rule allows it.

A delta-rule value, V <- V + lr * (x - V), is a first-order linear filter of its targets x:
given the targets of every visit, `scipy.signal.lfilter` yields the values after every visit
in one call. The targets of a pair (s, a) depend only on the values of the states that come
after s within a trial, so on tasks whose states each belong to one stage of the trial
(two-step: the first choice, then the second) the pairs can be filtered stage by stage from
the last, then every choice's softmax is evaluated at once. This holds for:

- `q` with a softmax choice (`beta` set) and `optimism = 1`, any number of stages;
- `hybrid` (Daw et al. 2011), whose eligibility trace reaches one step back, on trials of at
  most two steps.

Otherwise `vectorised_log_likelihood` returns None and the caller replays the agent. Both
forms agree to rounding (tests/test_fitting.py); `benchmarks/fit_bench.py` measures the gain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gym_bridge.agents import agent_settings

from .behaviour import Choices
from .likelihood import FLOOR, TaskShape

PRIOR_COUNT = 1e-3  # the hybrid agent's transition-count prior (gym_bridge/agents/hybrid.py)


class _Series:
    """The values of every (state, action) pair over time: after its k-th update, and before any time t."""

    def __init__(self, n_states: int, n_actions: int, initial: float) -> None:
        self.initial = initial
        self.times: dict[tuple[int, int], np.ndarray] = {}
        self.values: dict[tuple[int, int], np.ndarray] = {}
        self.n_actions = n_actions

    def set(self, pair: tuple[int, int], times: np.ndarray, values: np.ndarray) -> None:
        self.times[pair] = times
        self.values[pair] = np.concatenate(([self.initial], values))

    def before(self, s: int, a: int, t: np.ndarray) -> np.ndarray:
        """Q(s, a) as it was just before each time in `t`."""
        times = self.times.get((s, a))
        if times is None:
            return np.full(len(t), self.initial)
        return self.values[(s, a)][np.searchsorted(times, t, side="left")]

    def best_before(self, states: np.ndarray, t: np.ndarray, available: tuple[tuple[int, ...], ...]) -> np.ndarray:
        """max over the offered actions of Q(states[i], .) before t[i]; 0 where none is offered."""
        out = np.zeros(len(t))
        for s in np.unique(states).tolist():
            rows = np.flatnonzero(states == s)
            if available[s]:
                out[rows] = np.max([self.before(s, b, t[rows]) for b in available[s]], axis=0)
        return out


def _filter(lr: float, targets: np.ndarray, initial: float) -> np.ndarray:
    """Values after each update V <- V + lr * (target - V), starting from `initial`."""
    from scipy.signal import lfilter

    filtered, _ = lfilter([lr], [1.0, lr - 1.0], targets, zi=[(1.0 - lr) * initial])
    return np.asarray(filtered)


def _positions(ends: np.ndarray) -> np.ndarray:
    """Each step's position within its trial, from 0."""
    starts = np.concatenate(([True], ends[:-1]))
    index = np.arange(len(ends))
    return index - np.maximum.accumulate(np.where(starts, index, 0))


def _stages(choices: Choices, shape: TaskShape, positions: np.ndarray) -> dict[int, int] | None:
    """Each chosen-in state's stage (its step within the trial), or None when a state is chosen
    in at two stages or a step bootstraps from a state of its own stage or an earlier one."""
    stage: dict[int, int] = {}
    for s, p in set(zip(choices.states.tolist(), positions.tolist())):
        if stage.setdefault(s, p) != p:
            return None
    for s, n, end in zip(choices.states.tolist(), choices.next_states.tolist(), choices.ends.tolist()):
        if not end and shape.available[n] and stage.get(n, 1 << 30) <= stage[s]:
            return None
    return stage


def _log_softmax_sum(values: np.ndarray, actions: np.ndarray, beta: float) -> float:
    """sum_t log softmax(beta * values[t])[actions[t]]; values are -inf where not offered."""
    z = beta * values
    top = z.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
    chosen = z[np.arange(len(actions)), actions] - log_norm
    return float(np.maximum(chosen, np.log(FLOOR)).sum())


def _choice_values(series: _Series, choices: Choices, shape: TaskShape, t: np.ndarray) -> np.ndarray:
    """Q(s_t, b) before each step t for the offered b; -inf for the rest."""
    out = np.full((len(t), shape.n_actions), -np.inf)
    states = choices.states[t]
    for s in np.unique(states).tolist():
        rows = np.flatnonzero(states == s)
        for b in shape.available[s]:
            out[rows, b] = series.before(s, b, t[rows])
    return out


def _q(settings: dict[str, Any], choices: Choices, shape: TaskShape, positions: np.ndarray) -> float | None:
    lr, gamma, beta, q0 = settings["lr"], settings["gamma"], settings["beta"], settings["q_init"]
    if beta is None or settings["optimism"] != 1.0:
        return None
    stage = _stages(choices, shape, positions)
    if stage is None:
        return None
    series = _Series(shape.n_states, shape.n_actions, q0)
    learnt = np.flatnonzero(choices.learn)
    ended = choices.ends | np.array([not shape.available[n] for n in choices.next_states.tolist()])
    for level in sorted(set(stage.values()), reverse=True):
        steps = learnt[np.isin(choices.states[learnt], [s for s, p in stage.items() if p == level])]
        future = np.where(ended[steps], 0.0, series.best_before(choices.next_states[steps], steps, shape.available))
        targets = choices.rewards[steps] + gamma * future
        pairs = choices.states[steps] * shape.n_actions + choices.actions[steps]
        for pair in np.unique(pairs).tolist():
            rows = pairs == pair
            series.set(divmod(pair, shape.n_actions), steps[rows], _filter(lr, targets[rows], q0))
    t = np.arange(len(choices))
    return _log_softmax_sum(_choice_values(series, choices, shape, t), choices.actions, beta)


def _hybrid(settings: dict[str, Any], choices: Choices, shape: TaskShape, positions: np.ndarray) -> float | None:
    lr, lam, beta, w, bonus = (settings[k] for k in ("lr", "lam", "beta", "w", "perseveration"))
    if positions.max() > 1:
        return None
    stage = _stages(choices, shape, positions)
    if stage is None:
        return None
    n_steps, learn = len(choices), choices.learn
    t_all = np.arange(n_steps)
    ended = choices.ends | np.array([not shape.available[n] for n in choices.next_states.tolist()])
    same_trial_next = np.concatenate((~choices.ends[:-1], [False]))  # step t + 1 is in t's trial
    series = _Series(shape.n_states, shape.n_actions, 0.0)
    delta = np.zeros(n_steps)  # each learnt step's prediction error
    for level in sorted(set(stage.values()), reverse=True):
        steps = t_all[learn & np.isin(choices.states, [s for s, p in stage.items() if p == level])]
        future = np.where(ended[steps], 0.0, series.best_before(choices.next_states[steps], steps, shape.available))
        own = choices.rewards[steps] + future
        trace = np.zeros(len(steps))  # lam * the next step's error, which reaches back to this pair
        follows = same_trial_next[steps] & learn[np.minimum(steps + 1, n_steps - 1)]
        trace[follows] = lam * delta[steps[follows] + 1]
        pairs = choices.states[steps] * shape.n_actions + choices.actions[steps]
        for pair in np.unique(pairs).tolist():
            rows = pairs == pair
            s, a = divmod(pair, shape.n_actions)
            values = _filter(lr, own[rows] + trace[rows], 0.0)
            series.set((s, a), steps[rows], values)
            delta[steps[rows]] = own[rows] - np.concatenate(([0.0], values[:-1]))
    values = _choice_values(series, choices, shape, t_all)
    # the first learnt step of a trial (empty trace) chooses by the model-based mix
    first = (positions == 0) | ~np.concatenate(([False], learn[:-1]))
    first_steps = np.flatnonzero(first)
    if len(first_steps):
        mb = _model_based(series, choices, shape, first_steps)
        values[first_steps] = np.where(
            np.isneginf(values[first_steps]), -np.inf, w * mb + (1 - w) * values[first_steps]
        )
        marks = np.where(learn & first, t_all, -1)  # steps that set the previous first choice
        last = np.concatenate(([-1], np.maximum.accumulate(marks)[:-1]))[first_steps]
        has = last >= 0
        rows, previous = first_steps[has], choices.actions[last[has]]
        offered = ~np.isneginf(values[rows, previous])
        values[rows[offered], previous[offered]] += bonus
    return _log_softmax_sum(values, choices.actions, beta)


def _model_based(series: _Series, choices: Choices, shape: TaskShape, steps: np.ndarray) -> np.ndarray:
    """sum_n T(s_t, b, n) * max_b' Q(n, b') before each step t: the hybrid's model-based values."""
    n_states, n_actions = shape.n_states, shape.n_actions
    best = np.zeros((len(steps), n_states))
    for n in range(n_states):
        best[:, n] = np.max([series.before(n, b, steps) for b in range(n_actions)], axis=0)
    learnt = np.flatnonzero(choices.learn)
    out = np.zeros((len(steps), n_actions))
    for s in np.unique(choices.states[steps]).tolist():
        rows = np.flatnonzero(choices.states[steps] == s)
        events = learnt[choices.states[learnt] == s]
        counts = np.zeros((len(events) + 1, n_actions, n_states))
        counts[np.arange(1, len(events) + 1), choices.actions[events], choices.next_states[events]] = 1.0
        counts = np.cumsum(counts, axis=0)[np.searchsorted(events, steps[rows], side="left")] + PRIOR_COUNT
        transition = counts / counts.sum(axis=2, keepdims=True)
        out[rows] = np.einsum("tan,tn->ta", transition, best[rows])
    return out


KERNELS = {"q": _q, "hybrid": _hybrid}


def vectorised_log_likelihood(
    agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape
) -> float | None:
    """The log-likelihood by the vectorised form, or None where it does not apply."""
    kernel = KERNELS.get(agent)
    if kernel is None:
        return None
    full = {**agent_settings(agent), **settings}
    return kernel(full, choices, shape, _positions(choices.ends))
