"""GraphVectorEnv: N copies of one compiled graph task stepped together with numpy.

Each copy follows exactly the rules of `GraphTaskEnv` (see `gym_bridge/graph/env.py`):
undefined actions stay with reward 0, the optional no-op stays and is paid like an arrival,
skip states advance with their first action, rewards are paid on arrival or at terminal
states from the reward kinds' batched sources (tasks.rewards.REWARD_KINDS: fixed,
probabilistic, drifting, pseudo-random, and any kind registered; drifting probabilities
and pseudo-random decks are kept per copy), `time_penalty` is subtracted every step,
`stochasticity` replaces the action with a uniformly random one, and an episode is
truncated after `max_episode_steps` steps.

There is no Python loop over copies. A step is a handful of array operations on tables
built once per condition; tasks whose transitions and rewards are deterministic take a
fast path of three table look-ups (next state, reward, terminal) per step. Randomness comes
only from the batch's generator (`reset(seed=...)`): the same seed gives the same batch
trajectory. The draws differ from the single env's (one generator for the batch), so copy
i matches the single env in distribution, and exactly on deterministic tasks.

Conditions (rewardGym trials): `condition=` when made, or `reset(options={"condition": ...})`
with one condition for the batch or a list of names, one per copy (with `reset_mask`: for the
masked copies). Each condition in use is a block of one stacked table set (`stack_tables`),
so mixed conditions cost one extra modulo per step, not a loop over conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from graphstore import GraphStore, TaskGraph
from tasks import REWARD_KINDS, Condition, parse_condition, reward_kind
from tasks.rewards import BatchSource

from ..loading import load_task_graph
from ..observation_types import TableObservation
from ..params import NOT_GIVEN, check_episode_length, check_probability, check_time_penalty, episode_steps
from ..vector.base import BatchedVectorEnv, count_nonzero
from .compiled import CompiledGraphTask, compile_task
from .observations import build_observation

NO_SOURCE = 0  # source_kind of a state that pays no drawn reward; kind k of source_codes() is k
PAD = 2.0  # cumulative probability of padding slots: never reached by a uniform in [0, 1)


def source_codes() -> dict[str, int]:
    """A code per reward kind that draws (registry order, from 1): what `source_kind` holds."""
    drawing = [name for name, kind in REWARD_KINDS.items() if not kind.constant]
    return {name: code for code, name in enumerate(drawing, 1)}


@dataclass(frozen=True, eq=False)
class GraphTables:
    """Flat per-(state, action) tables of one condition; row = state * n_actions + action."""

    n_actions: int
    targets: np.ndarray  # int64 (S*A, K), padded with the row's state
    cumulative: np.ndarray  # float64 (S*A, K), padded with PAD
    next1: np.ndarray  # int64 (S*A,): the first target (the only one when deterministic)
    deterministic: bool
    undefined: np.ndarray  # bool (S*A,): not offered, stay with reward 0
    any_undefined: bool
    fixed_reward: np.ndarray  # float64 (S,): paid fixed reward on arriving (0 if unpaid or stochastic)
    source_kind: np.ndarray  # int8 (S,): which reward kind draws on arriving (source_codes()), NO_SOURCE if none
    any_stochastic_source: bool
    start: int  # the start state after its skip chain, or -1 when that chain is random
    overridden: np.ndarray | None  # bool (S,): pay fixed_reward (the outcome) after the source drew, or None
    fast: bool  # deterministic transitions, skip chains and rewards: use the three tables below
    fast_next: np.ndarray | None = None  # int64 (S*A,): next state after skip chains
    fast_reward: np.ndarray | None = None  # float64 (S*A,): reward minus time_penalty
    fast_terminal: np.ndarray | None = None  # bool (S*A,)

    @property
    def fast_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(fast_next, fast_reward, fast_terminal) when `fast`, else None."""
        if self.fast_next is None or self.fast_reward is None or self.fast_terminal is None:
            return None
        return self.fast_next, self.fast_reward, self.fast_terminal

    @property
    def width(self) -> int:
        return int(self.targets.shape[1])

    @property
    def flat_targets(self) -> np.ndarray:
        """targets as one array: outcome k of row r at r * width + k."""
        return self.targets.reshape(-1)

    @property
    def boundaries(self) -> list[np.ndarray]:
        """One 1-D array per outcome boundary (gathering rows of a 2-D array is much slower)."""
        return [self.cumulative[:, k].copy() for k in range(self.width - 1)]


def build_tables(
    compiled: CompiledGraphTask, condition: Condition | None, use_noop: bool, time_penalty: float
) -> GraphTables:
    """The tables of `compiled` under `condition` (same override rules as GraphTaskEnv)."""
    c = compiled
    n, a_count = c.n_states, c.n_actions
    a1 = a_count + int(use_noop)
    outcomes = c.outcomes(condition)
    outcome_reward = condition.reward if condition is not None else None
    if use_noop:
        for s in range(n):
            outcomes[(s, a_count)] = [(s, 1.0)]
    width = max(len(v) for v in outcomes.values()) if outcomes else 1
    targets = np.repeat(np.arange(n, dtype=np.int64), a1)[:, None].repeat(width, axis=1)
    cumulative = np.full((n * a1, width), PAD)
    cumulative[:, 0] = 1.0 + 1e-12
    undefined = np.ones(n * a1, dtype=bool)
    for (s, a), items in outcomes.items():
        row = s * a1 + a
        undefined[row] = False
        total = 0.0
        cumulative[row] = PAD
        for k, (t, p) in enumerate(sorted(items)):
            total += p
            targets[row, k] = t
            cumulative[row, k] = total
        cumulative[row, len(items) - 1] = 1.0 + 1e-12
    deterministic = bool((cumulative[:, 1:] == PAD).all()) if width > 1 else True
    terminal = c.terminal
    pays = terminal if c.reward_on == "terminal" else np.ones(n, dtype=bool)
    fixed_reward = np.zeros(n)
    source_kind = np.zeros(n, dtype=np.int8)
    overridden = np.zeros(n, dtype=bool)  # a stateful source draws, the condition's outcome is paid
    codes = source_codes()
    for s, spec in enumerate(c.reward_specs):
        if spec is None or not pays[s]:
            continue
        kind = reward_kind(spec.kind)
        if outcome_reward is not None and terminal[s]:
            fixed_reward[s] = outcome_reward
            if kind.stateful:  # GraphTaskEnv still draws: the source's state moves on
                source_kind[s] = codes[spec.kind]
                overridden[s] = True
        elif kind.constant:
            fixed_reward[s] = c.reward_value[s]
        else:
            source_kind[s] = codes[spec.kind]
    next1 = targets[:, 0].copy()
    skip_first = _skip_first(c)

    def resolve(t: int) -> int:
        """The end of t's skip chain, or -1 when it is random or cycles."""
        for _ in range(n + 1):
            if not c.skip[t] or terminal[t]:
                return t
            row = t * a1 + skip_first[t]
            if cumulative[row, 0] < 1.0:
                return -1
            t = int(next1[row])
        return -1

    start = resolve(c.start)
    tables: dict[str, Any] = dict(
        n_actions=a1, targets=targets, cumulative=cumulative, next1=next1, deterministic=deterministic,
        undefined=undefined, any_undefined=bool(undefined.any()), fixed_reward=fixed_reward,
        source_kind=source_kind, any_stochastic_source=bool(source_kind.any()), start=start,
        overridden=overridden if overridden.any() else None,
    )
    resolved = np.array([resolve(t) for t in range(n)], dtype=np.int64)
    fast = deterministic and not source_kind.any() and bool((resolved >= 0).all())
    if not fast:
        return GraphTables(**tables, fast=False)
    fast_next = np.where(undefined, np.repeat(np.arange(n), a1), resolved[next1])
    fast_reward = np.where(undefined, 0.0, fixed_reward[fast_next]) - time_penalty
    return GraphTables(
        **tables, fast=True, fast_next=fast_next, fast_reward=fast_reward, fast_terminal=terminal[fast_next].copy()
    )


def stack_tables(blocks: list[GraphTables], n_states: int) -> GraphTables:
    """One table set for several conditions at once: condition k's state s becomes k * n_states + s.

    Copies under different conditions then step through the same arrays (no loop over
    conditions): each block's transitions stay inside the block.
    """
    if len(blocks) == 1:
        return blocks[0]
    width = max(b.width for b in blocks)
    rows = n_states * blocks[0].n_actions

    def padded(b: GraphTables, k: int) -> tuple[np.ndarray, np.ndarray]:
        targets = np.empty((rows, width), dtype=np.int64)
        targets[:] = b.targets[:, :1] + k * n_states
        targets[:, : b.width] = b.targets + k * n_states
        cumulative = np.full((rows, width), PAD)
        cumulative[:, : b.width] = b.cumulative
        return targets, cumulative

    parts = [padded(b, k) for k, b in enumerate(blocks)]
    targets = np.concatenate([p[0] for p in parts])
    cumulative = np.concatenate([p[1] for p in parts])
    fast_parts = [f for f in (b.fast_tables for b in blocks) if f is not None]
    fast = len(fast_parts) == len(blocks)
    overridden = [b.overridden if b.overridden is not None else np.zeros(n_states, dtype=bool) for b in blocks]
    source_kind = np.concatenate([b.source_kind for b in blocks])
    undefined = np.concatenate([b.undefined for b in blocks])
    return GraphTables(
        n_actions=blocks[0].n_actions, targets=targets, cumulative=cumulative, next1=targets[:, 0].copy(),
        deterministic=all(b.deterministic for b in blocks), undefined=undefined, any_undefined=bool(undefined.any()),
        fixed_reward=np.concatenate([b.fixed_reward for b in blocks]), source_kind=source_kind,
        any_stochastic_source=bool(source_kind.any()), start=-1,
        overridden=np.concatenate(overridden) if any(b.overridden is not None for b in blocks) else None,
        fast=fast,
        fast_next=np.concatenate([f[0] + k * n_states for k, f in enumerate(fast_parts)]) if fast else None,
        fast_reward=np.concatenate([f[1] for f in fast_parts]) if fast else None,
        fast_terminal=np.concatenate([f[2] for f in fast_parts]) if fast else None,
    )


def _skip_first(c: CompiledGraphTask) -> np.ndarray:
    """The first defined action of each skip state (what a skip state advances with)."""
    first = [int(np.flatnonzero(c.defined[s])[0]) if c.skip[s] else 0 for s in range(c.n_states)]
    return np.array(first, dtype=np.int64)


class GraphVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of one graph task; parameters as `GraphTaskEnv`, plus the autoreset mode."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        task: str | TaskGraph | CompiledGraphTask = "neuronav/graph/neighborhood",
        store: GraphStore | str | None = None,
        obs_type: str = "index",
        time_penalty: float = 0.0,
        stochasticity: float = 0.0,
        use_noop: bool = False,
        max_episode_steps: int | None = 100,
        condition: str | dict | None = None,
        params: dict[str, Any] | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        episode_length: Any = NOT_GIVEN,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single GraphTaskEnv instead")
        if isinstance(task, CompiledGraphTask):
            self.compiled = task
        else:
            self.compiled = compile_task(load_task_graph(task, store, **(params or {})))
        c = self.compiled
        self.obs_type = obs_type
        self.time_penalty = check_time_penalty(time_penalty)
        self.stochasticity = check_probability("stochasticity", stochasticity)
        self.use_noop = bool(use_noop)
        length = check_episode_length(episode_steps(max_episode_steps, episode_length, "episode_length", 100),
                                      "max_episode_steps" if episode_length is NOT_GIVEN else "episode_length")
        self.observation = build_observation(obs_type, c, store)
        # a fixed row per state (or the state itself): gathered here without the generic call chain
        self._rows: np.ndarray | None = None
        self._index_obs = False
        if type(self.observation).observe_batch is TableObservation.observe_batch:
            table = cast(TableObservation, self.observation).table
            self._index_obs, self._rows = table is None, table
        single_obs = self.observation.space
        single_action = spaces.Discrete(c.n_actions + int(self.use_noop))
        super().__init__(num_envs, single_obs, single_action, length, autoreset_mode)
        self._has_skip = bool((c.skip & ~c.terminal).any())
        self._tables_cache: dict[str | None, GraphTables] = {}
        self._default_condition = condition
        # per-copy conditions: copy i runs under self._conditions[self._block_of[i]]; its internal
        # state is block * n_states + state (see stack_tables); one block when all copies share one
        self._block_of = np.zeros(self.num_envs, dtype=np.int64)
        self._set_conditions([condition])
        self._init_sources()
        self.state = np.full(self.num_envs, c.start, dtype=np.int64)
        self._start_override: np.ndarray | int | None = None

    # -- tables and conditions -----------------------------------------------------------------
    def _tables_for(self, condition: str | dict | Condition | None) -> GraphTables:
        c = self.compiled
        named = isinstance(condition, (str, type(None)))  # names are cached; given dicts are built each time
        if named and condition in self._tables_cache:
            return self._tables_cache[condition]
        key = condition if isinstance(condition, str) else None  # used only when named
        if isinstance(condition, str):
            if condition not in c.conditions:
                known = ", ".join(c.conditions) or "none"
                raise ValueError(f"condition: task {c.task_id!r} has no condition {condition!r} (known: {known})")
            condition = c.conditions[condition]
        elif isinstance(condition, dict):
            condition = parse_condition("(given)", condition, c.n_states)
        tables = build_tables(c, condition, self.use_noop, self.time_penalty)
        if named:
            self._tables_cache[key] = tables
        return tables

    def _set_conditions(self, conditions: list) -> None:
        """Tables for these conditions, stacked in this order (block k = conditions[k])."""
        c = self.compiled
        tables = stack_tables([self._tables_for(name) for name in conditions], c.n_states)
        k = len(conditions)
        self._conditions = list(conditions)
        self.tables = tables
        self._sampling = (tables.flat_targets, tables.boundaries)
        self._fast = tables.fast_tables  # cached: read every step
        self._terminal = np.tile(c.terminal, k)
        self._skip_live = np.tile(c.skip & ~c.terminal, k)  # skip states that advance
        self._skip_first = np.tile(_skip_first(c), k)
        # the common reset: one shared start state, no override, no skip chain to follow
        self._plain_start = tables.start if k == 1 and tables.start >= 0 else -1

    @property
    def _multi(self) -> bool:
        return len(self._conditions) > 1

    @property
    def _uses_active(self) -> bool:  # type: ignore[override]
        """Only drawn rewards read `active` (the copies NEXT_STEP resets must not move their sources)."""
        return self.tables.any_stochastic_source

    def _real(self, states: np.ndarray) -> np.ndarray:
        """Task state indices of internal states (which carry the copy's condition block)."""
        return states % self.compiled.n_states if len(self._conditions) > 1 else states

    @property
    def conditions(self) -> list:
        """The condition of each copy (None: the task's own edges)."""
        return [self._conditions[k] for k in self._block_of.tolist()]

    # -- per-copy reward sources ---------------------------------------------------------------
    def _init_sources(self) -> None:
        """One batched source per reward kind the task draws from (its slots: the kind's states in
        order); their per-copy state (drifting p, deck order and position) lives there."""
        specs = self.compiled.reward_specs
        self._source_slot = np.full(self.compiled.n_states, -1, dtype=np.int64)
        self.reward_sources: dict[str, BatchSource] = {}
        self._source_by_code: dict[int, BatchSource] = {}
        for name, code in source_codes().items():
            of_kind = [(s, spec) for s, spec in enumerate(specs) if spec is not None and spec.kind == name]
            if not of_kind:
                continue
            self._source_slot[[s for s, _ in of_kind]] = np.arange(len(of_kind))
            source = reward_kind(name).batch([spec for _, spec in of_kind], self.num_envs)
            self.reward_sources[name] = self._source_by_code[code] = source

    def _new_session(self, copies: np.ndarray | None) -> None:
        """A seeded reset: every source starts a new session in these copies (kinds in registry order)."""
        copies = np.arange(self.num_envs) if copies is None else copies
        for source in self.reward_sources.values():
            source.new_session(self._rng(copies), copies)

    def _draw(self, copies: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Rewards of the sources at `states` for `copies` (each copy once), kinds in registry order."""
        slots = self._source_slot.take(self._real(states))
        if len(self._source_by_code) == 1:  # one kind draws (the common case): every copy here draws from it
            (source,) = self._source_by_code.values()
            return source.draw(self._rng(copies), copies, slots)
        kind = self.tables.source_kind.take(states)
        out = np.empty(copies.size)
        for code, source in self._source_by_code.items():
            m = kind == code
            if m.any():
                out[m] = source.draw(self._rng(copies[m]), copies[m], slots[m])
        return out

    # -- dynamics -------------------------------------------------------------------------------
    def _sample(self, rows: np.ndarray, copies: np.ndarray | None = None) -> np.ndarray:
        """One outcome per row from the cumulative probabilities, one uniform per copy (row i
        is copy `copies[i]`; None: row i is copy i)."""
        targets, boundaries = self._sampling
        u = self._rng(copies).random(rows.size)
        flat = rows * (len(boundaries) + 1)
        for boundary in boundaries:  # outcome k: the number of boundaries u is past
            flat += u >= boundary.take(rows)
        return targets.take(flat)

    def _advance(self, t: np.ndarray, copies: np.ndarray | None = None) -> np.ndarray:
        """Follow skip states with their first action (vectorised over copies; loops over chain depth).
        Entry i of `t` is copy `copies[i]` (None: copy i)."""
        T = self.tables
        for _ in range(self.compiled.n_states + 1):
            live = self._skip_live.take(t)
            if not count_nonzero(live):
                return t
            sel = live.nonzero()[0]
            s = t.take(sel)
            rows = s * T.n_actions + self._skip_first.take(s)
            lanes = sel if copies is None else copies[sel]
            t[sel] = T.next1.take(rows) if T.deterministic else self._sample(rows, lanes)
        raise RuntimeError(f"task {self.compiled.task_id!r}: skip states form a cycle")

    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        T = self.tables
        if self.stochasticity:
            rng = self._rng()
            replace = rng.random(self.num_envs) < self.stochasticity
            actions = np.where(replace, rng.integers(0, T.n_actions, self.num_envs), actions)
        rows = self.state * T.n_actions + actions
        fast = self._fast
        if fast is not None:
            fast_next, fast_reward, fast_terminal = fast
            self.state = fast_next.take(rows)
            return fast_reward.take(rows), fast_terminal.take(rows)
        t = T.next1.take(rows) if T.deterministic else self._sample(rows)
        if self._has_skip:
            t = self._advance(t)
        reward = T.fixed_reward.take(t)
        undefined = None
        if T.any_undefined:
            undefined = T.undefined.take(rows)
            reward[undefined] = 0.0
        if T.any_stochastic_source:
            draw = T.source_kind.take(t) != NO_SOURCE
            if undefined is not None:
                np.greater(draw, undefined, out=draw)  # and not undefined
            if active is not None:
                draw &= active
            if count_nonzero(draw):
                sel = draw.nonzero()[0]
                arrived = t.take(sel)
                drawn = self._draw(sel, arrived)
                if T.overridden is not None:
                    drawn = np.where(T.overridden.take(arrived), T.fixed_reward.take(arrived), drawn)
                reward[sel] = drawn
        if self.time_penalty:
            reward -= self.time_penalty
        self.state = t
        return reward, self._terminal.take(t)

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        if copies is not None and self._plain_start >= 0 and self._start_override is None:
            self.state[copies] = self._plain_start  # the autoreset of a few copies: one assignment
            return
        n = self.compiled.n_states
        start = self._start_override
        if start is None:
            start = self.tables.start if self.tables.start >= 0 else self.compiled.start
        elif isinstance(start, np.ndarray) and copies is not None:
            start = start[copies]
        blocks = self._block_of if copies is None else self._block_of[copies]
        values = np.empty(self.num_envs if copies is None else copies.size, dtype=np.int64)
        values[:] = start
        if self._multi:
            values += blocks * n
        if self._has_skip and (self.tables.start < 0 or self._start_override is not None):
            values = self._advance(values, copies)
        if copies is None:
            self.state = values
        else:
            self.state[copies] = values

    def _reset_options(self, options: dict[str, Any], copies: np.ndarray | None) -> None:
        unknown = sorted(set(options) - {"condition", "start"})
        if unknown:
            raise ValueError(
                f"reset options: unknown key(s) {', '.join(unknown)}; use 'condition', 'start' and 'reset_mask'"
            )
        condition = options.get("condition", self._default_condition)
        per_copy = isinstance(condition, (list, tuple, np.ndarray))
        if copies is None and not per_copy:  # the whole batch under one condition (the default without options)
            if self._multi or self._conditions[0] != condition or isinstance(condition, dict):
                self._set_conditions([condition])
            self._block_of[:] = 0
        elif "condition" in options:
            names = list(condition) if isinstance(condition, (list, tuple, np.ndarray)) else [condition] * self.num_envs
            if len(names) != self.num_envs:
                raise ValueError(
                    f"reset options: 'condition' needs one condition per copy ({self.num_envs}), got {len(names)}"
                )
            chosen = names if copies is None else [names[i] for i in copies.tolist()]
            if any(not isinstance(name, (str, type(None))) for name in chosen):
                raise ValueError(
                    "reset options: per-copy conditions are condition names (or None for the task's edges)"
                )
            known = [] if copies is None else list(self._conditions)
            for name in chosen:
                if name not in known:
                    self._tables_for(name)  # a clear error for an unknown name, before anything changes
                    known.append(name)
            if known != self._conditions:  # new blocks are appended: states of the other copies stay valid
                self._set_conditions(known)
            index = {name: k for k, name in enumerate(known)}
            blocks = np.array([index[name] for name in chosen], dtype=np.int64)
            if copies is None:
                self._block_of[:] = blocks
            else:
                self._block_of[copies] = blocks
        if "start" in options:
            n = self.compiled.n_states
            start = np.asarray(options["start"])
            valid = start.dtype.kind in "iu" and start.shape in ((), (self.num_envs,))
            if not valid or start.min() < 0 or start.max() >= n:
                raise ValueError(
                    f"reset options: 'start' must be a state index in 0..{n - 1} or one per copy, "
                    f"got {options['start']!r}"
                )
            self._start_override = int(start) if start.shape == () else start.astype(np.int64)

    def _forget_reset_options(self) -> None:
        self._start_override = None  # autoresets start at the task's start again

    def _observe(self) -> np.ndarray:
        states = self.state % self.compiled.n_states if len(self._conditions) > 1 else self.state
        if self._index_obs:
            return states.copy() if states is self.state else states
        if self._rows is not None:
            return self._rows.take(states, axis=0)  # a new array, as `table[states]`
        return self.observation.observe_batch(states)

    def _info(self) -> dict[str, Any]:
        states = self.state
        return {"state": states % self.compiled.n_states if len(self._conditions) > 1 else states.copy()}

    def action_masks(self) -> np.ndarray:
        """bool (N, n_actions): the actions each copy's state offers (what `available_actions` lists)."""
        T = self.tables
        return ~T.undefined.reshape(-1, T.n_actions)[self.state]


def make_graph_vector_env(num_envs: int = 1, **kwargs: Any) -> GraphVectorEnv:
    """`vector_entry_point` of the graph ids (gymnasium passes num_envs and the spec's kwargs)."""
    return GraphVectorEnv(num_envs=num_envs, **kwargs)
