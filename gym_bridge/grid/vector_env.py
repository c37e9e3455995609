"""GridVectorEnv: N copies of one neuro-nav grid world stepped together with numpy.

The rules are the single env's: the same keyword arguments make the same `GridSettings`, and
`grid_rules(settings)` gives the move tables and object slots both envs step; the objects' part of
a step (doors, keys, rewards, warps) is `ObjectRule`, the one function both envs call
(gym_bridge.grid.rules). Each copy keeps its own position,
orientation, keys held, and which rewards, keys and closed doors remain, so every rule of
`GridEnv` holds per copy (action noise, walls, doors opened with a key, rewards paid once
and removed, `terminate_on_reward` / per-reward terminate flags, `manual_collect`, keys,
warps, truncation after `max_episode_steps` steps).

A step is a few table look-ups for every copy; only copies that reach a cell holding an
object take the (vectorised) object path. Observations: every grid type. Those that are a
fixed row per state (index, onehot, twohot, geometric, images, registered ones) are one
gather from the observation type's table; those that depend on each copy's objects
(boundary, symbolic*, visual, window*, ascii, distance) come from its `observe_batch`.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from ..params import check_bool
from ..vector.base import BatchedVectorEnv, count_nonzero
from ..vector.step_table import StepTable
from .observations import GRID_OBSERVATIONS, GridObservation
from .rules import GridBatch, GridSettings, ObjectRule, grid_rules


class GridVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a grid world; the other parameters are `GridEnv`'s.

    Parameters
    ----------
    num_envs : int
        Copies stepped together.
    *positional : str
        `template`, then `size` (fields of `GridSettings`), by position.
    obs_type : str
        The observation type, as `GridEnv`'s.
    autoreset_mode : str or AutoresetMode
        How copies that ended start again (gymnasium's modes; NEXT_STEP by default).
    max_episode_steps : int, optional
        A tighter step limit (gymnasium's `make_vec` passes a spec's).
    render_mode : None
        The vector env does not render.
    **settings
        Any other field of `GridSettings`, as `GridEnv` takes them; `settings` holds them all.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    _uses_active = False  # NEXT_STEP's copies are reset whole: nothing per copy to protect

    def __init__(
        self,
        num_envs: int = 1,
        *positional: Any,
        obs_type: str = "index",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        **settings: Any,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single GridEnv instead")
        observation_type = GRID_OBSERVATIONS.get(obs_type)
        self.settings = GridSettings.from_arguments(positional, settings)
        self.rules = rules = grid_rules(self.settings)
        self.observation = cast(GridObservation, observation_type(rules, self.settings.store))
        length = self.settings.episode_length  # max_episode_steps (make_vec passes the registered one); 0: none
        super().__init__(
            num_envs, self.observation.space, gym.spaces.Discrete(rules.n_actions), length, autoreset_mode
        )
        self.compiled = rules.compiled
        self.obs_type = obs_type
        self.stochasticity = self.settings.stochasticity
        self.random_start = self.settings.random_start
        self._build()

    def _build(self) -> None:
        rules = self.rules
        nn = self._nn = rules.n_cells
        self._variable = rules.variable
        # pictures show which way the agent looks, in fixed mode too (its last move)
        self._track_look = not self._variable and self.observation.shows_look
        self._tab = np.array(rules.move, dtype=np.int64).reshape(-1)  # (action, cell) -> cell
        self._dir = np.array(rules.ahead, dtype=np.int64).reshape(-1)  # (orientation, cell) -> cell ahead
        self._collect = rules.collect
        self._neg_penalty = rules.neg_penalty
        self._free = np.array(rules.free, dtype=np.int64)
        self._start_cell = rules.start
        slots = rules.objects
        self._rule = ObjectRule.build(slots, nn, rules.collect)
        self._hot = np.zeros(nn, dtype=bool)
        self._hot[list(slots.hot)] = True
        n_envs = self.num_envs
        self._reward0 = np.full(n_envs, self._neg_penalty)  # copied each step: cheaper than np.full
        self._has_keys = bool(slots.keys)  # without keys, keys_held stays 0
        # the observation is the state index or a fixed row per state: gathered here (no call chain)
        self._plain_observe = type(self.observation).observe_batch is GridObservation.observe_batch
        # per-copy state: position, orientation, keys held, and one column per object slot
        self.batch = GridBatch(
            rules,
            pos=np.full(n_envs, self._start_cell, dtype=np.int64),
            orientation=np.zeros(n_envs, dtype=np.int64),
            keys_held=np.zeros(n_envs, dtype=np.int64),
            rewards_left=np.ones((n_envs, len(slots.rewards)), dtype=bool),
            keys_left=np.ones((n_envs, len(slots.keys)), dtype=bool),
            doors_closed=np.ones((n_envs, len(slots.doors)), dtype=bool),
        )
        self._agent_pos: int | None = None  # reset options, for that reset only
        self._random_start_override: bool | None = None

    # -- dynamics ------------------------------------------------------------------------------------
    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        n_envs, nn = self.num_envs, self._nn
        if self.stochasticity:
            rng = self._rng()
            replace = rng.random(n_envs) < self.stochasticity
            actions = np.where(replace, rng.integers(0, self.n_actions, n_envs), actions)
        batch = self.batch
        pos = batch.pos
        if self._variable:
            o = batch.orientation
            ahead = self._dir.take(o * nn + pos)
            t = np.where(actions == 2, ahead, pos)
            batch.orientation = np.where(actions == 0, (o + 3) & 3, np.where(actions == 1, (o + 1) & 3, o))
        else:
            t = self._tab.take(actions * nn + pos)  # (fixed mode: the orientation is not part of the state)
            if self._track_look:
                batch.orientation = np.where(actions < 4, actions, batch.orientation)
        reward = self._reward0.copy()
        terminated = np.zeros(n_envs, dtype=bool)
        hot = self._hot.take(t)
        if count_nonzero(hot):
            self._rule.step(batch, hot.nonzero()[0], pos, t, actions, reward, terminated)
        batch.pos = t
        return reward, terminated

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        count = self.num_envs if copies is None else copies.size
        if self._agent_pos is not None:
            start = np.full(count, self._agent_pos, dtype=np.int64)
        elif self._random_start_now:
            start = self._free[self._rng(copies).integers(0, self._free.size, count)]
        else:
            start = np.full(count, self._start_cell, dtype=np.int64)
        batch = self.batch
        rows: np.ndarray | slice = slice(None) if copies is None else copies
        if copies is None:
            batch.pos = start
            batch.orientation = np.zeros(self.num_envs, dtype=np.int64)
        else:
            batch.pos[copies] = start
            batch.orientation[copies] = 0
        if self._has_keys:
            batch.keys_held[rows] = 0
        for left in (batch.rewards_left, batch.keys_left, batch.doors_closed):
            if left.shape[1]:  # object kinds the grid has
                left[rows] = True

    @property
    def _random_start_now(self) -> bool:
        return self._random_start_override if self._random_start_override is not None else self.random_start

    def _reset_options(self, options: dict[str, Any], copies: np.ndarray | None) -> None:
        unknown = sorted(set(options) - {"agent_pos", "random_start"})
        if unknown:
            extra = " ('objects' is fixed per vector env: pass objects= when making it)" if "objects" in unknown else ""
            raise ValueError(f"reset options: unknown key(s) {', '.join(unknown)}; use agent_pos, random_start{extra}")
        if options.get("agent_pos") is not None:
            self._agent_pos = self.rules.cell(options["agent_pos"], "reset options: agent_pos")
        if "random_start" in options:
            self._random_start_override = check_bool("random_start", options["random_start"])

    def _forget_reset_options(self) -> None:
        self._agent_pos = None  # autoresets start as the env was made
        self._random_start_override = None

    def step_table(self) -> StepTable | None:
        """This env's step as a fixed table (`gym_bridge.vector.step_table`), or None when the
        step depends on more than the cell and the action: an orientation, keys and doors, or a
        reward that does not end the episode (it is gone once taken, so the grid changes)."""
        slots, rule, settings = self.rules.objects, self._rule, self.settings
        if self._variable or slots.keys or slots.doors or not all(slots.reward_terminates):
            return None
        nn = self._nn
        gains = rule.reward_slot >= 0  # the tables of the objects' rule, as the kernel's step reads them
        gain = np.zeros(nn)
        gain[gains] = rule.reward_value[rule.reward_slot[gains]]
        return StepTable(
            move=self._tab.reshape(-1, nn), gains=gains, gain=gain, warp=rule.warp.copy(),
            step_reward=float(self._neg_penalty), collect=int(rule.collect), slip=float(settings.stochasticity),
            random_start=bool(settings.random_start), starts=self._free.copy(), start=int(self._start_cell),
            episode_length=int(self.episode_length or 0),
        )

    @property
    def state(self) -> np.ndarray:
        """Each copy's state index (orientation * n * n + cell; orientation 0 in fixed mode)."""
        return self.batch.index.copy()

    @property
    def pos(self) -> np.ndarray:
        """Each copy's cell (row * n + col)."""
        return self.batch.pos

    @property
    def orientation_of(self) -> np.ndarray:
        """Where each copy looks: 0 N, 1 E, 2 S, 3 W."""
        return self.batch.orientation

    @property
    def keys_held(self) -> np.ndarray:
        return self.batch.keys_held

    @property
    def rewards_left(self) -> np.ndarray:
        """Per copy (rows) and reward slot (columns, sorted cells): still on the grid."""
        return self.batch.rewards_left

    @property
    def keys_left(self) -> np.ndarray:
        return self.batch.keys_left

    @property
    def doors_closed(self) -> np.ndarray:
        return self.batch.doors_closed

    def present_objects(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per copy (rows) and object (columns): rewards left, keys left, doors still closed."""
        return self.batch.present()

    def _observe(self) -> Any:
        observation = self.observation
        if not self._plain_observe:
            return observation.observe_batch(self.batch)
        pos = self.batch.pos
        index = pos + self.batch.orientation * self._nn if self._variable else pos
        if observation.is_index:
            return index.copy() if index is pos else index
        assert observation.table is not None, f"{type(observation).__name__}: override observe_batch"
        return observation.table.take(index, axis=0)  # a new array, as `table[index]`

    def _info(self) -> dict[str, Any]:
        pos = self.batch.pos
        return {"state": pos + self.batch.orientation * self._nn if self._variable else pos.copy()}


GridVectorEnv.__signature__ = GridSettings.env_signature(GridVectorEnv.__init__)  # type: ignore[attr-defined]


def make_grid_vector_env(num_envs: int = 1, **kwargs: Any) -> GridVectorEnv:
    """`vector_entry_point` of the grid ids."""
    return GridVectorEnv(num_envs=num_envs, **kwargs)
