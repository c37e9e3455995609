"""Log-likelihoods computed over all trials at once, where the learning rule allows it.

A delta-rule value, V <- V + lr * (x - V), is a first-order linear filter of its targets x:
given the targets of every visit, `scipy.signal.lfilter` yields the values after every visit
in one call. The targets of a pair (s, a) depend only on the values of the states that come
after s within a trial, so on tasks whose states each belong to one stage of the trial
(two-step: the first choice, then the second) the pairs can be filtered stage by stage from
the last, then every choice's softmax is evaluated at once. This holds for:

- `q` with a softmax choice (`beta` set), `optimism = 1` and `bootstrap = "max"`, any number of stages;
- `hybrid` (Daw et al. 2011), whose eligibility trace reaches one step back, on trials of at
  most two steps.

Otherwise `vectorised_log_likelihood` returns None and the caller replays the agent. Both
forms agree to rounding (tests/test_fitting.py); `benchmarks/fit_bench.py` measures the gain.

Each agent's form is written in its own module (`gym_bridge.agents.q_learning.vectorised`,
`gym_bridge.agents.hybrid.vectorised`) and named by its registry row (`AgentInfo.vectorised`);
this module makes the plan every form reads (`_Plan`: the stages, the value series, the
delta-rule filter, the softmax's sum).
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from gym_bridge.agents import AGENT_INFO, agent_settings
from gym_bridge.agents.forms import VectorisedForm

from .behaviour import BehaviourError, Choices
from .shape import FLOOR, TaskShape

PRIOR_COUNT = 1e-3  # the hybrid agent's transition-count prior (gym_bridge/agents/hybrid.py)


class _Series:
    """The values of every (state, action) pair over time: after its k-th update, and before any time t."""

    def __init__(self, initial: float) -> None:
        self.initial = initial
        self.times: dict[int, np.ndarray] = {}  # pair -> the steps that updated it
        self.values: dict[int, np.ndarray] = {}  # pair -> initial, then the value after each update

    def set(self, pair: int, times: np.ndarray, values: np.ndarray) -> None:
        self.times[pair] = times
        self.values[pair] = np.concatenate(([self.initial], values))

    def before(self, pair: int, t: np.ndarray) -> np.ndarray:
        """Q of `pair` (s * n_actions + a) as it was just before each time in `t`."""
        times = self.times.get(pair)
        if times is None:
            return np.full(len(t), self.initial)
        return self.values[pair][np.searchsorted(times, t, side="left")]


class _Group:
    """Steps that share a state: where they sit among the steps, and the pairs of that state to read."""

    def __init__(self, rows: np.ndarray, times: np.ndarray, pairs: list[int], actions: list[int]) -> None:
        self.rows, self.times, self.pairs, self.actions = rows, times, pairs, actions


def _groups(states: np.ndarray, times: np.ndarray, shape: TaskShape) -> list[_Group]:
    out = []
    for s in np.unique(states).tolist():
        rows = np.flatnonzero(states == s)
        actions = list(shape.available[s])
        out.append(_Group(rows, times[rows], [s * shape.n_actions + b for b in actions], actions))
    return out


def _best_before(series: _Series, groups: list[_Group], size: int) -> np.ndarray:
    """max over each group's pairs of Q before each group's time; 0 where a state offers nothing."""
    out = np.zeros(size)
    for g in groups:
        if g.pairs:
            out[g.rows] = np.max([series.before(p, g.times) for p in g.pairs], axis=0)
    return out


class _Level:
    """One stage of the trial: its learnt steps, grouped by pair and by the state they lead to."""

    def __init__(self, steps: np.ndarray, choices: Choices, shape: TaskShape, ended: np.ndarray) -> None:
        self.steps = steps
        self.bootstraps = ~ended[steps]
        self.next_groups = _groups(choices.next_states[steps][self.bootstraps], steps[self.bootstraps], shape)
        pairs = choices.states[steps] * shape.n_actions + choices.actions[steps]
        self.pairs = [(pair, np.flatnonzero(pairs == pair)) for pair in np.unique(pairs).tolist()]
        self.rewards = choices.rewards[steps]
        # every pair's rows side by side, padded at the end, so that one filter call serves them all
        # (a causal filter: what follows a pair's last row never reaches its values)
        width = max((len(rows) for _, rows in self.pairs), default=0)
        self.padded = np.zeros((len(self.pairs), width), dtype=np.intp)
        for i, (_, rows) in enumerate(self.pairs):
            self.padded[i, : len(rows)] = rows

    def future(self, series: _Series) -> np.ndarray:
        out = np.zeros(len(self.steps))
        out[self.bootstraps] = _best_before(series, self.next_groups, int(self.bootstraps.sum()))
        return out


class _Plan:
    """Everything about a sequence of choices that does not depend on the agent's settings,
    worked out once per fit: the stages, which steps update which pair, what each choice reads."""

    def __init__(self, choices: Choices, shape: TaskShape) -> None:
        self.n = len(choices)
        self.n_actions = shape.n_actions
        self.actions = choices.actions
        self.positions = _positions(choices.ends)
        self.stage = _stages(choices, shape, self.positions)
        if self.stage is None:
            return
        no_next = np.array([not a for a in shape.available], dtype=bool)
        self.ended = choices.ends | no_next[choices.next_states]
        learn, t_all = choices.learn, np.arange(self.n)
        by_stage = np.array([self.stage.get(s, -1) for s in range(shape.n_states)])[choices.states]
        self.levels = [
            _Level(t_all[learn & (by_stage == level)], choices, shape, self.ended)
            for level in sorted(set(self.stage.values()), reverse=True)
        ]
        self.choice_groups = _groups(choices.states, t_all, shape)
        # the hybrid: the trace reaches back one step; the first learnt step of a trial chooses by the mix
        self.follows = np.concatenate((~choices.ends[:-1], [False])) & np.concatenate((learn[1:], [False]))
        first = (self.positions == 0) | ~np.concatenate(([False], learn[:-1]))
        self.first_steps = np.flatnonzero(first)
        marks = np.where(learn & first, t_all, -1)
        last = np.concatenate(([-1], np.maximum.accumulate(marks)[:-1]))[self.first_steps]
        self.repeat_rows = self.first_steps[last >= 0]
        self.repeat_actions = choices.actions[last[last >= 0]]
        # arrays, not the choices: the plan is cached under the choices and must not keep them alive
        self._model_inputs = (choices.states, choices.actions, choices.next_states, learn, shape)
        self.mb_pairs = [[n * shape.n_actions + b for b in range(shape.n_actions)] for n in range(shape.n_states)]

    @functools.cached_property
    def transitions(self) -> np.ndarray:
        """The hybrid's transition model before each first step (made when the hybrid asks)."""
        return _transitions(*self._model_inputs, self.first_steps)

    @staticmethod
    def series(initial: float) -> _Series:
        """Every pair's values over time, each starting at `initial` (an agent's form fills it)."""
        return _Series(initial)

    @staticmethod
    def filter(lr: float, targets: np.ndarray, initial: float) -> np.ndarray:
        """Values after each update V <- V + lr * (target - V), starting from `initial`."""
        return _filter(lr, targets, initial)

    @staticmethod
    def filter_level(lr: float, level: _Level, targets: np.ndarray, initial: float) -> list[np.ndarray]:
        """`filter` of each of the level's pairs (`level.pairs` order) on its rows of `targets`, in one
        call for all pairs: the same numbers as one call per pair, bit for bit (each row is filtered
        alone), without a call's overhead per pair."""
        if not level.pairs:
            return []
        filtered = _filter(lr, targets[level.padded], initial)
        return [filtered[i, : len(rows)] for i, (_, rows) in enumerate(level.pairs)]

    def log_softmax_sum(self, values: np.ndarray, beta: float) -> float:
        """The choices' log-likelihood under a softmax at `beta` of `values` (-inf: not offered)."""
        return _log_softmax_sum(values, self.actions, beta)

    def choice_values(self, series: _Series, n_actions: int) -> np.ndarray:
        """Q(s_t, b) before each step t for the offered b; -inf for the rest."""
        out = np.full((self.n, n_actions), -np.inf)
        for g in self.choice_groups:
            for pair, b in zip(g.pairs, g.actions):
                out[g.rows, b] = series.before(pair, g.times)
        return out


def _transitions(
    states: np.ndarray, actions: np.ndarray, next_states: np.ndarray, learn: np.ndarray, shape: TaskShape,
    steps: np.ndarray,
) -> np.ndarray:
    """The hybrid's transition model T(s_t, b, n) before each of `steps` (counts of learnt steps + prior)."""
    n_states, n_actions = shape.n_states, shape.n_actions
    learnt = np.flatnonzero(learn)
    out = np.zeros((len(steps), n_actions, n_states))
    for s in np.unique(states[steps]).tolist():
        rows = np.flatnonzero(states[steps] == s)
        events = learnt[states[learnt] == s]
        counts = np.zeros((len(events) + 1, n_actions, n_states))
        counts[np.arange(1, len(events) + 1), actions[events], next_states[events]] = 1.0
        counts = np.cumsum(counts, axis=0)[np.searchsorted(events, steps[rows], side="left")] + PRIOR_COUNT
        out[rows] = counts / counts.sum(axis=2, keepdims=True)
    return out


def _filter(lr: float, targets: np.ndarray, initial: float) -> np.ndarray:
    """Values after each update V <- V + lr * (target - V), starting from `initial`, along the last
    axis (each row of a 2-d `targets` on its own)."""
    try:
        from scipy.signal import lfilter
    except ImportError:
        raise BehaviourError("the vectorised likelihood needs scipy: pip install 'graphtasks[fit]'") from None
    start = np.full((*targets.shape[:-1], 1), (1.0 - lr) * initial)  # one state per row filtered
    filtered, _ = lfilter([lr], [1.0, lr - 1.0], targets, axis=-1, zi=start)
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


def vectorised_form(agent: str) -> VectorisedForm | None:
    """The agent's vectorised form (its registry row's `vectorised`), or None where it has none."""
    info = AGENT_INFO.get(agent)
    return None if info is None else info.vectorised


def vectorised_log_likelihood(
    agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape
) -> float | None:
    """The log-likelihood by the vectorised form, or None where it does not apply."""
    form = vectorised_form(agent)
    if form is None:
        return None
    plan = plan_for(choices, shape)
    if plan.stage is None:
        return None
    return form({**agent_settings(agent), **settings}, plan)


_PLANS: weakref.WeakKeyDictionary[Choices, dict[TaskShape, _Plan]] = weakref.WeakKeyDictionary()


def plan_for(choices: Choices, shape: TaskShape) -> _Plan:
    """The plan of `choices` on `shape`, made once and kept while the choices live."""
    plans = _PLANS.setdefault(choices, {})
    if shape not in plans:
        plans[shape] = _Plan(choices, shape)
    return plans[shape]
