"""Shared machinery of the natively vectorised environments (graph now, grid and POGE later).

A family's vector env keeps its per-copy state in numpy arrays and implements four hooks:
`_transition` (move every copy one step), `_reset_copies` (put some copies at their start),
`_new_session` (restart per-copy reward sources after `reset(seed=...)`) and `_observe`.
This base owns what is the same for every family: the seeded generator, the step counter
and truncation, gymnasium's three autoreset modes, `reset_mask`, and action checking, so a
family never re-implements (or gets subtly wrong) the episode bookkeeping.

Autoreset modes (gymnasium 1.x, `metadata["autoreset_mode"]`):
- NEXT_STEP (default): the step after a copy terminates or truncates resets that copy; its
  action is ignored, it returns the start observation with reward 0 and both flags False.
- SAME_STEP: a copy that ends is reset in the same step; the returned observation is the new
  start, the last observation is in `info["final_obs"]` (a batched array; valid where
  `info["_final_obs"]`) and its info in `info["final_info"]`.
- DISABLED: no automatic reset; call `reset(options={"reset_mask": mask})` yourself.
"""

from __future__ import annotations

from copy import copy, deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..params import check_positive_int
from .lanes import LaneStreams

SMALL_BATCH = 32  # up to this many copies, actions are checked in Python (a numpy reduction costs more)
_UNSIGNED: dict[np.dtype, np.dtype] = {}  # signed integer dtype -> its unsigned twin (same size and byte order)
_NEXT_STEP = AutoresetMode.NEXT_STEP
try:  # a truth test of a bool array in one C call (ndarray.any goes through Python; np.count_nonzero wraps this)
    from numpy._core.multiarray import count_nonzero
except ImportError:  # pragma: no cover - numpy < 2
    count_nonzero = np.count_nonzero
_count = count_nonzero


def _unsigned(dtype: np.dtype) -> np.dtype:
    """The unsigned dtype of a signed integer dtype's size and byte order (cached)."""
    twin = _UNSIGNED.get(dtype)
    if twin is None:
        twin = _UNSIGNED[dtype] = np.dtype(dtype.str.replace("i", "u"))
    return twin


def parse_autoreset_mode(value: str | AutoresetMode) -> AutoresetMode:
    """Accept the enum or its value / name ('NextStep', 'next_step', ...), with a clear error."""
    if isinstance(value, AutoresetMode):
        return value
    if isinstance(value, str):
        for mode in AutoresetMode:
            if value in (mode.value, mode.name) or value.upper() == mode.name:
                return mode
    known = ", ".join(m.value for m in AutoresetMode)
    raise ValueError(f"autoreset_mode: expected one of {known} (or gymnasium.vector.AutoresetMode), got {value!r}")


def tighter_limit(length: int, max_episode_steps: int | None) -> int:
    """The episode length once make_vec's `max_episode_steps` (from a spec) applies: the tighter wins; 0 = none."""
    if max_episode_steps is None:
        return length
    valid = isinstance(max_episode_steps, (int, np.integer)) and not isinstance(max_episode_steps, bool)
    if not valid or max_episode_steps < 1:
        raise ValueError(f"max_episode_steps: expected a positive integer or None, got {max_episode_steps!r}")
    return min(length, int(max_episode_steps)) if length else int(max_episode_steps)


def batch_observation_space(space: spaces.Space, n: int) -> spaces.Space:
    """gymnasium's `batch_space`, except that a Box keeps its bounds as read-only broadcast views.

    Why: `batch_space` tiles low, high and both bounded masks N times. For 4096 pictures of
    256 x 256 x 3 that is 3 GiB and half a minute before the first step; the views describe
    the same space (`contains`, `sample`, `==`, repr) for no memory at all.
    """
    if not isinstance(space, spaces.Box):
        return batch_space(space, n)
    box = copy(space)  # Box.__init__ would materialise every bound
    shape = (n, *space.shape)
    box._shape = shape
    box.low, box.high = np.broadcast_to(space.low, shape), np.broadcast_to(space.high, shape)
    box.bounded_below = np.broadcast_to(space.bounded_below, shape)
    box.bounded_above = np.broadcast_to(space.bounded_above, shape)
    box.low_repr = box.high_repr = None
    box._np_random = deepcopy(space.np_random)  # batch_space's seeding: its own copy of the generator
    return box


class BatchedVectorEnv(VectorEnv):
    """N copies of one compiled task stepped together; subclasses supply the dynamics."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int,
        single_observation_space: spaces.Space,
        single_action_space: spaces.Discrete,
        episode_length: int = 0,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    ) -> None:
        self.num_envs = check_positive_int("num_envs", num_envs)
        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        # per instance: the mode differs between instances of one class
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = batch_observation_space(single_observation_space, self.num_envs)
        self.action_space = batch_space(single_action_space, self.num_envs)
        self.n_actions = int(single_action_space.n)
        self.episode_length = int(episode_length)  # 0: never truncate
        # step counting without a per-step array operation: `_t` counts the batch's steps, copy i's
        # episode began at step `_start_t[i]` (its elapsed steps: _t - _start_t[i]); `_oldest` is at most
        # min(_start_t), so while _t - _oldest < episode_length no copy can be truncated
        self._t = 0
        self._start_t = np.zeros(self.num_envs, dtype=np.int64)
        self._oldest = 0
        self._action_shape = (self.num_envs,)
        # copies that ended last step, as (mask, indices): NEXT_STEP resets them on the next step
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self._started = False
        self._lanes: LaneStreams | None = None  # per-copy streams (`use_lanes`), else the one generator

    # A family that never reads `active` in `_transition` sets this False: the step then skips the mask.
    _uses_active: bool = True

    # -- randomness ----------------------------------------------------------------------------
    def use_lanes(self, streams: LaneStreams) -> None:
        """Draw every copy's numbers from its own counter-based stream (`gym_bridge.vector.lanes`)
        instead of the batch's one generator, so a copy's episodes do not depend on the others.

        The batched runs of an experiment use this: a run gives the same numbers alone or
        inside a batch of any size. `reset(seed=...)` then leaves the lanes as they are.
        """
        if len(streams) != self.num_envs:
            raise ValueError(f"use_lanes: {len(streams)} streams for {self.num_envs} copies")
        self._lanes = streams

    def _rng(self, copies: np.ndarray | None = None) -> Any:
        """The generator that draws for these copies (None: all, in order): the batch's one
        generator, or a view of the copies' own streams (`use_lanes`)."""
        if self._lanes is not None:
            return self._lanes.view(copies)
        return self._np_random if self._np_random is not None else self.np_random  # (the property, once)

    # -- hooks for a family ----------------------------------------------------------------
    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Move every copy; return new arrays (reward float64 (N,), terminated bool (N,)).

        `active` is None when every copy takes a real step, else the bool mask of copies that do
        (the others are about to be reset by NEXT_STEP and must not change per-copy sources).
        """
        raise NotImplementedError

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        """Put the copies with these indices (all when None) at their start state.

        Indices, not a mask: few copies end per step, and indexing with a short index array
        costs far less than scanning an N-long mask once per per-copy array.
        """
        raise NotImplementedError

    def _new_session(self, copies: np.ndarray | None) -> None:
        """Restart per-copy session state (reward sources) after a seeded reset."""

    def _reset_options(self, options: dict[str, Any], copies: np.ndarray | None) -> None:
        """Apply family reset options (before `_reset_copies`)."""
        if options:
            raise ValueError(f"reset options: unknown key(s) {', '.join(sorted(options))}; only 'reset_mask' is known")

    def _forget_reset_options(self) -> None:
        """Drop what `_reset_options` set: it holds for that reset only, autoresets start as the env was made."""

    def _observe(self) -> Any:
        raise NotImplementedError

    def _info(self) -> dict[str, Any]:
        return {}

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset every copy (or those in `options["reset_mask"]`); a seed reseeds the one generator of the batch."""
        try:
            return self._reset(seed, dict(options or {}))
        finally:
            self._forget_reset_options()

    def _reset(self, seed: int | None, options: dict[str, Any]):
        mask = options.pop("reset_mask", None)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"reset options: 'reset_mask' must be a bool array of shape ({self.num_envs},), "
                    f"got {mask.dtype} {mask.shape}"
                )
            if not mask.any():
                raise ValueError("reset options: 'reset_mask' must select at least one copy")
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        if not self._started:
            mask = None  # the first reset starts every copy
        copies = None if mask is None else np.flatnonzero(mask)
        if seed is not None or not self._started:
            self._new_session(copies)
            self._started = True
        self._reset_options(options, copies)
        self._reset_copies(copies)
        if mask is None:
            self._start_t[:] = self._t
            self._oldest = self._t
            self._pending = None
        else:
            self._start_t[copies] = self._t  # `_oldest` stays a lower bound
            if self._pending is not None:
                done = self._pending[0] & ~mask
                self._pending = (done, done.nonzero()[0]) if _count(done) else None
        return self._observe(), self._info()

    def _check_actions(self, actions: Any) -> np.ndarray:
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != self._action_shape or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions: expected an integer array of shape ({self.num_envs},), got {actions.dtype} {actions.shape}"
            )
        if self.num_envs <= SMALL_BATCH:  # Python's min and max beat a numpy reduction on a few numbers
            values = actions.tolist()
            bad = min(values) < 0 or max(values) >= self.n_actions
        else:  # one reduction: as unsigned, a negative action is a huge number
            unsigned = actions.view(_unsigned(actions.dtype)) if actions.dtype.kind == "i" else actions
            bad = unsigned.max() >= self.n_actions
        if bad:
            raise ValueError(
                f"actions: every action must be in 0..{self.n_actions - 1}, got {actions.min()}..{actions.max()}"
            )
        return actions

    def step(self, actions: Any):
        """Step every copy; returns fresh arrays (observations, rewards, terminated, truncated) and info.

        The fixed cost of a step (what it pays whatever N) is kept to a few numpy calls: the step
        counter is a Python int (see `_t`), truncation is only computed when some copy can have
        reached `episode_length`, and nothing is done for ended copies when none ended.
        """
        if not self._started:
            raise RuntimeError("step() before reset(): call reset(seed=...) first")
        actions = self._check_actions(actions)
        mode = self.autoreset_mode
        pending = self._pending if mode is _NEXT_STEP else None
        active = None if pending is None or not self._uses_active else ~pending[0]
        reward, terminated = self._transition(actions, active)
        t = self._t = self._t + 1
        if pending is not None:
            copies = pending[1]
            self._reset_copies(copies)
            self._start_t[copies] = t
            reward[copies] = 0.0
            terminated[copies] = False
        length = self.episode_length
        if length and t - self._oldest >= length and t - self._refresh_oldest() >= length:
            truncated = self._start_t <= t - length
            np.greater(truncated, terminated, out=truncated)
            done = terminated | truncated
            self._pending = (done, done.nonzero()[0]) if _count(done) else None
        else:  # no copy can be truncated this step
            truncated = np.zeros(self.num_envs, dtype=bool)
            # our own mask and indices (the returned arrays are the caller's to modify)
            self._pending = (terminated.copy(), terminated.nonzero()[0]) if _count(terminated) else None
        if mode is AutoresetMode.SAME_STEP and self._pending is not None:
            done, copies = self._pending
            info = {
                "final_obs": self._observe(), "_final_obs": done.copy(),
                "final_info": self._info(), "_final_info": done.copy(),
            }
            self._reset_copies(copies)
            self._start_t[copies] = t
            info.update(self._info())
            self._pending = None
            return self._observe(), reward, terminated, truncated, info
        return self._observe(), reward, terminated, truncated, self._info()

    def _refresh_oldest(self) -> int:
        """Make `_oldest` exact (the start of the longest-running episode) and return it."""
        self._oldest = int(self._start_t.min())
        return self._oldest

    @property
    def elapsed_steps(self) -> np.ndarray:
        """Steps taken by each copy in its current episode."""
        return self._t - self._start_t

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs}, autoreset_mode={self.autoreset_mode.value})"
