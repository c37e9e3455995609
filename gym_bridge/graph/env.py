"""GraphTaskEnv: any stored graph task (neuro-nav graphs, rewardGym tasks, user files) as a
gymnasium environment.

Semantics (documented in docs/graph-tasks.md):
- action i at a state follows that state's MOVE edges for i; an action the state does not
  define (or that the trial's condition does not offer) leaves the agent in place with
  reward 0; the optional no-op (last action) stays in place.
- skip states advance with their first action whenever they are reached (also at reset).
- reward_on 'arrival' (neuro-nav): the reward of the state arrived at is paid on every
  arrival, staying included; 'terminal' (rewardGym): paid only on arriving at a terminal
  state, drawn from its reward source (or the condition's fixed outcome).
- `time_penalty` >= 0 is subtracted from every step's reward (one convention for all families).
- an episode ends when a terminal state (no outgoing edges) is reached, and is truncated
  after `max_episode_steps` steps.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from tasks import Condition, RandomStream, make_sources, parse_condition, reward_kind

from ..loading import load_task_graph
from ..params import (
    NOT_GIVEN,
    RenderModes,
    check_bool,
    check_episode_length,
    check_probability,
    check_render_mode,
    check_store,
    check_time_penalty,
    check_type,
    episode_steps,
    made_by_gymnasium,
    named,
)
from .compiled import CompiledGraphTask, compile_task
from .observations import GRAPH_OBSERVATIONS, build_observation

UNDEFINED = -2
STOCHASTIC = -1


class GraphTaskEnv(gym.Env):
    """A graph task walked by its probabilistic edges; see the module docstring for the rules.

    One environment for every graph task (neuro-nav graphs, rewardGym tasks, users' files):
    the task is read from the store and compiled once, so what the agent plays is what the
    store holds.

    Parameters
    ----------
    task : str or TaskGraph or CompiledGraphTask, optional
        A task id (a built-in is put into the store, or updated there, first), a graph, or an
        already compiled task.
    store : GraphStore or str, optional
        An open store or its location; None: the default store (``$GRAPHTASKS_STORE``).
    obs_type : {"index", "onehot", "images"}, optional
        The observation: the state's index, a one-hot vector, or the state's image.
    render_mode : {"ansi", "rgb_array"}, optional
        As gymnasium's ``render_mode``; None renders nothing.
    time_penalty : float, optional
        Subtracted from every step's reward (>= 0).
    stochasticity : float, optional
        The probability, in [0, 1], that a step takes a uniformly random action instead.
    use_noop : bool, optional
        Add a last action that stays in place.
    max_episode_steps : int or None, optional
        Truncate an episode after this many steps (default 100); None: only a terminal state
        ends it. The one name of an episode's length in every family (docs/limits.md).
    condition : str or dict, optional
        A trial condition of the task (by name, or as a mapping) that every reset applies;
        ``reset(options={"condition": ...})`` overrides it for one episode.
    params : dict, optional
        Parameters of a built-in task (as `tasks.build` takes them), for a task given by id.
    episode_length : int or None, optional
        Deprecated name of `max_episode_steps` (a FutureWarning).

    Raises
    ------
    ValueError
        A setting out of range or of the wrong type, naming it (e.g. an unknown `obs_type`
        or `condition`).
    TaskNotFound
        The task is neither stored nor built in.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from gym_bridge import GraphTaskEnv
    >>> with open_store(":memory:") as store:  # the built-in is put into the store, then compiled
    ...     env = GraphTaskEnv("neuronav/graph/linear", store=store)
    >>> env.reset(seed=0)
    (0, {'state': 0, 'available_actions': (0,)})
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> obs, reward, terminated
    (1, 0.0, False)
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}
    action_space: spaces.Discrete

    def __init__(
        self,
        task: str | TaskGraph | CompiledGraphTask = "neuronav/graph/neighborhood",
        store: GraphStore | str | None = None,
        obs_type: str = "index",
        render_mode: str | None = None,
        time_penalty: float = 0.0,
        stochasticity: float = 0.0,
        use_noop: bool = False,
        max_episode_steps: int | None = 100,
        condition: str | dict | None = None,
        params: dict[str, Any] | None = None,
        episode_length: Any = NOT_GIVEN,
    ) -> None:
        check_type("task", task, (str, TaskGraph, CompiledGraphTask), "a task id, a TaskGraph or a compiled task")
        check_store(store)
        GRAPH_OBSERVATIONS.get(obs_type)  # a clear error before the task is read
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.time_penalty = check_time_penalty(time_penalty)
        self.stochasticity = check_probability("stochasticity", stochasticity)
        self.use_noop = check_bool("use_noop", use_noop)
        self.episode_length = check_episode_length(  # 0: no limit
            episode_steps(max_episode_steps, episode_length, "episode_length", 100),
            "max_episode_steps" if episode_length is NOT_GIVEN else "episode_length")
        check_type("condition", condition, (str, dict, type(None)), "a condition name, a condition mapping or None")
        check_type("params", params, (dict, type(None)), "a mapping of task parameters or None")
        if isinstance(task, CompiledGraphTask):
            self.compiled = task
        else:
            with named("task"):
                self.compiled = compile_task(load_task_graph(task, store, **(params or {})))
        self.obs_type = obs_type
        self.default_condition = condition
        c = self.compiled
        a_count = c.n_actions
        self.noop_action = a_count if self.use_noop else None
        self.action_space = spaces.Discrete(a_count + int(self.use_noop))
        self.observation = build_observation(obs_type, c, store)
        self.observation_space = self.observation.space
        self._table = self.observation.table  # rows per state, or None: the state index itself
        self._sources = make_sources(c.reward_specs)
        self._build_tables()
        self._stream: RandomStream | None = None
        self._state = c.start
        self._steps = 0
        self._renderer = None
        if condition is not None:  # refused now, not at the first reset
            self._apply_condition(condition)

    # -- compiled arrays as Python lists: indexing lists is the fastest thing in a step ----
    def _lists(
        self, outcomes: dict[tuple[int, int], list[tuple[int, float]]]
    ) -> tuple[list[list[int]], dict[tuple[int, int], tuple[list[int], list[float]]], list[tuple[int, ...]]]:
        """Per state: the target of each action (UNDEFINED, or STOCHASTIC with its distribution
        in `dist`), and the actions offered; the no-op stays."""
        n, a_count = self.compiled.n_states, self.compiled.n_actions
        det = [[UNDEFINED] * a_count + ([s] if self.use_noop else []) for s in range(n)]
        dist: dict[tuple[int, int], tuple[list[int], list[float]]] = {}
        for (s, a), items in outcomes.items():
            if len(items) == 1:
                det[s][a] = int(items[0][0])
            else:
                det[s][a] = STOCHASTIC
                dist[(s, a)] = _distribution(items)
        noop = (a_count,) if self.use_noop else ()
        avail = [tuple(a for a in range(a_count) if det[s][a] != UNDEFINED) + noop for s in range(n)]
        return det, dist, avail

    def _build_tables(self) -> None:
        c = self.compiled
        n = c.n_states
        det, dist, avail = self._lists(c.outcomes())
        self._base_det, self._base_dist = det, dist
        self._det, self._dist = det, dist
        self._terminal = c.terminal.tolist()
        self._skip = c.skip.tolist()
        self._skip_first = [int(np.flatnonzero(c.defined[s])[0]) if c.skip[s] else 0 for s in range(n)]
        pays = c.terminal if c.reward_on == "terminal" else np.ones(n, dtype=bool)
        self._paid = [bool(p and (spec is not None)) for p, spec in zip(pays, c.reward_specs)]
        self._fixed = [float(v) for v in c.reward_value]
        self._is_fixed = [spec is None or reward_kind(spec.kind).constant for spec in c.reward_specs]
        self._base_avail = avail
        self._avail = avail
        self._outcome: float | None = None
        self._limit = self.episode_length or sys.maxsize  # truncation as one comparison per step
        self._neg_penalty = 0.0 - self.time_penalty  # what an action that is not offered pays
        self._rows = None if self._table is None else list(self._table)  # row views: no view made per step
        self._conditions_cache: dict[str, tuple] = {}
        self._reward_tables()
        self._base_rew, self._base_src = self._rew, self._src

    def _reward_tables(self) -> None:
        """Per state, what arriving pays: `_rew[t]` (time_penalty already subtracted) unless
        `_src[t]` is a source to draw from. Rebuilt when a condition changes the outcome."""
        tp, outcome = self.time_penalty, self._outcome
        rew, src = [], []
        for t, paid in enumerate(self._paid):
            if paid and not self._is_fixed[t]:
                rew.append(0.0)
                src.append(self._sources[t])
                continue
            value = 0.0
            if paid:
                value = outcome if (outcome is not None and self._terminal[t]) else self._fixed[t]
            rew.append(value - tp)
            src.append(None)
        self._rew, self._src = rew, src

    # -- gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None or self._stream is None:
            super().reset(seed=seed)
            self._stream = RandomStream(self.np_random)  # a new session: reward sources start afresh
            for source in self._sources:
                if source is not None:
                    source.reset(self._stream)
        if options:
            state = self._reset_options(options)
        else:
            if self.default_condition is not None or self._outcome is not None or self._det is not self._base_det:
                self._apply_condition(self.default_condition)
            state = self.compiled.start
            if self._skip[state]:  # (a skip start may draw: advance it each time)
                state = self._advance(state)
        self._state = state
        self._steps = 0
        rows = self._rows
        obs = state if rows is None else rows[state].copy()
        return obs, {"state": state, "available_actions": self._avail[state]}

    def _reset_options(self, options: dict[str, Any]) -> int:
        unknown = sorted(set(options) - {"condition", "start"})
        if unknown:
            raise ValueError(f"reset options: unknown key(s) {', '.join(unknown)}; use 'condition' and 'start'")
        self._apply_condition(options.get("condition", self.default_condition))
        start = options.get("start", self.compiled.start)
        n = self.compiled.n_states
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start < n:
            raise ValueError(f"reset options: 'start' must be a state index in 0..{n - 1}, got {start!r}")
        return self._advance(int(start))

    def step(self, action):
        # one function, local look-ups only: this is the per-step cost of every graph task
        s = self._state
        if self.stochasticity and self._stream.uniform() < self.stochasticity:
            action = self._stream.below(self.action_space.n)
        t = self._det[s][action]
        if t < 0:
            if t == UNDEFINED:  # not offered here: stay, no reward
                t = s
                reward = self._neg_penalty
                src = None
            else:
                targets, cumulative = self._dist[(s, action)]
                u = self._stream.uniform()
                i = 0
                while u >= cumulative[i]:
                    i += 1
                t = targets[i]
                if self._skip[t]:
                    t = self._advance(t)
                src = self._src[t]
                reward = self._rew[t]
        else:
            if self._skip[t]:
                t = self._advance(t)
            src = self._src[t]
            reward = self._rew[t]
        if src is not None:
            reward = src.draw(self._stream)
            if self._outcome is not None and self._terminal[t]:
                reward = self._outcome
            reward -= self.time_penalty
        self._state = t
        terminated = self._terminal[t]
        steps = self._steps = self._steps + 1
        truncated = steps >= self._limit and not terminated
        rows = self._rows
        return (
            t if rows is None else rows[t].copy(),
            reward,
            terminated,
            truncated,
            {"state": t, "available_actions": self._avail[t]},
        )

    # -- helpers ---------------------------------------------------------------------------
    def _advance(self, t: int) -> int:
        """Follow skip states with their first action until a non-skip state."""
        for _ in range(self.compiled.n_states + 1):
            if not self._skip[t] or self._terminal[t]:
                return t
            t = self._move(t, self._skip_first[t])
        raise RuntimeError(f"task {self.compiled.task_id!r}: skip states form a cycle at state {t}")

    def _move(self, s: int, action: int) -> int:
        t = self._det[s][action]
        if t == STOCHASTIC:
            targets, cumulative = self._dist[(s, action)]
            if self._stream is None:
                raise gym.error.ResetNeeded("call reset() before step()")
            u = self._stream.uniform()
            i = 0
            while u >= cumulative[i]:
                i += 1
            return targets[i]
        return s if t == UNDEFINED else t

    def _apply_condition(self, condition: str | dict | Condition | None) -> None:
        self._det, self._dist, self._avail, self._outcome = self._base_det, self._base_dist, self._base_avail, None
        self._rew, self._src = self._base_rew, self._base_src
        if condition is None:
            return
        name = condition if isinstance(condition, str) else None
        if name in self._conditions_cache:  # a schedule resets with the same few conditions every trial
            self._det, self._dist, self._avail, self._outcome, self._rew, self._src = self._conditions_cache[name]
            return
        c = self.compiled
        if isinstance(condition, str):
            try:
                condition = c.conditions[condition]
            except KeyError:
                known = ", ".join(c.conditions) or "none"
                raise ValueError(
                    f"condition: task {c.task_id!r} has no condition {condition!r} (known: {known})"
                ) from None
        elif isinstance(condition, dict):
            condition = parse_condition("(given)", condition, c.n_states)
        det, dist, avail = self._lists(c.outcomes(condition))
        self._det, self._dist, self._avail, self._outcome = det, dist, avail, condition.reward
        self._reward_tables()
        if name is not None:
            self._conditions_cache[name] = (det, dist, avail, condition.reward, self._rew, self._src)

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length (None: no limit)."""
        return self.episode_length or None

    @property
    def state(self) -> int:
        """The current state index."""
        return self._state

    @property
    def available_actions(self) -> tuple[tuple[int, ...], ...]:
        """The actions each state offers now (under the current condition): what a replay of
        recorded choices needs to know of the task."""
        return tuple(tuple(a) for a in self._avail)

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        from .render import GraphRenderer

        if self._renderer is None:
            self._renderer = GraphRenderer(self.compiled)
        if self.render_mode == "ansi":
            return self._renderer.ansi(self._state)
        return self._renderer.rgb(self._state)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_renderer"] = None
        return state


def _distribution(outcomes) -> tuple[list[int], list[float]]:
    """Targets and cumulative probabilities (last one exactly 1)."""
    targets, cumulative, total = [], [], 0.0
    for t, p in sorted(outcomes):
        total += p
        targets.append(int(t))
        cumulative.append(total)
    cumulative[-1] = 1.0 + 1e-12
    return targets, cumulative


def make_for_gymnasium(**kwargs: Any) -> GraphTaskEnv:
    """The gym ids' entry point: `GraphTaskEnv` for gymnasium's `make`, its episodes ended by
    gymnasium's TimeLimit (`gym.make(id, max_episode_steps=N)`; `gym_bridge.params.made_by_gymnasium`)."""
    return made_by_gymnasium(GraphTaskEnv, "episode_length", kwargs)


make_for_gymnasium.metadata = GraphTaskEnv.metadata  # type: ignore[attr-defined]  # what make reads of an entry point
make_for_gymnasium.__wrapped__ = GraphTaskEnv  # type: ignore[attr-defined]  # inspect.signature shows the env's parameters
