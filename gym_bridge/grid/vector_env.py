"""GridVectorEnv: N copies of one neuro-nav grid world stepped together with numpy.

The rules are the single env's: `grid_rules(...)` with the same arguments gives the move
tables and object slots both envs step (gym_bridge.grid.rules). Each copy keeps its own position,
orientation, keys held, and which rewards, keys and closed doors remain, so every rule of
`GridEnv` holds per copy (action noise, walls, doors opened with a key, rewards paid once
and removed, `terminate_on_reward` / per-reward terminate flags, `manual_collect`, keys,
warps, truncation after `episode_length` steps).

A step is a few table look-ups for every copy; only copies that reach a cell holding an
object take the (vectorised) object path. Observations: every grid type. Those that are a
fixed row per state (index, onehot, twohot, geometric, images, registered ones) are one
gather from the observation type's table; those that depend on each copy's objects
(boundary, symbolic*, visual, window*, ascii, distance) come from its `observe_batch`.
"""

from __future__ import annotations

from typing import Any, Mapping, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from graphstore import GraphStore, TaskGraph

from ..params import check_bool
from ..vector.base import BatchedVectorEnv, count_nonzero, tighter_limit
from ..vector.step_table import StepTable
from .compiled import CompiledGrid
from .observations import GRID_OBSERVATIONS, GridObservation
from .rules import GridBatch, grid_rules


class GridVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a grid world; the other parameters are `GridEnv`'s."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    _uses_active = False  # NEXT_STEP's copies are reset whole: nothing per copy to protect

    def __init__(
        self,
        num_envs: int = 1,
        template: str = "four_rooms",
        size: str = "small",
        obs_type: str = "index",
        orientation: str = "fixed",
        use_noop: bool = False,
        manual_collect: bool = False,
        stochasticity: float = 0.0,
        random_start: bool = False,
        agent_start: tuple[int, int] | None = None,
        objects: Mapping[str, Any] | None = None,
        terminate_on_reward: bool = True,
        time_penalty: float = 0.0,
        episode_length: int | None = 100,
        visible_walls: bool = True,
        resolution: int = 256,
        store: GraphStore | str | None = None,
        task: str | TaskGraph | CompiledGrid | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single GridEnv instead")
        observation_type = GRID_OBSERVATIONS.get(obs_type)
        self.rules = rules = grid_rules(
            template, size, orientation=orientation, use_noop=use_noop, manual_collect=manual_collect,
            stochasticity=stochasticity, random_start=random_start, agent_start=agent_start, objects=objects,
            terminate_on_reward=terminate_on_reward, time_penalty=time_penalty, visible_walls=visible_walls,
            episode_length=episode_length, resolution=resolution, store=store, task=task,
        )
        self.observation = cast(GridObservation, observation_type(rules, store))
        length = tighter_limit(rules.episode_length, max_episode_steps)  # make_vec passes a spec's limit
        super().__init__(
            num_envs, self.observation.space, gym.spaces.Discrete(rules.n_actions), length, autoreset_mode
        )
        self.compiled = rules.compiled
        self.obs_type = obs_type
        self.stochasticity = rules.stochasticity
        self.random_start = rules.random_start
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
        reward_cells, key_cells, door_cells = list(slots.rewards), list(slots.keys), list(slots.doors)
        self._reward_slot = np.full(nn, -1, dtype=np.int64)
        self._reward_slot[reward_cells] = np.arange(len(reward_cells))
        self._reward_value = np.array(slots.reward_value, dtype=float)
        self._reward_terminates = np.array(slots.reward_terminates, dtype=bool)
        self._key_slot = np.full(nn, -1, dtype=np.int64)
        self._key_slot[key_cells] = np.arange(len(key_cells))
        self._door_slot = np.full(nn, -1, dtype=np.int64)
        self._door_slot[door_cells] = np.arange(len(door_cells))
        self._warp = np.arange(nn, dtype=np.int64)
        for cell, target in slots.warps.items():
            self._warp[cell] = target
        self._hot = np.zeros(nn, dtype=bool)
        self._hot[list(slots.hot)] = True
        n_envs = self.num_envs
        self._reward0 = np.full(n_envs, self._neg_penalty)  # copied each step: cheaper than np.full
        self._has_keys = bool(key_cells)  # without keys, keys_held stays 0
        # the observation is the state index or a fixed row per state: gathered here (no call chain)
        self._plain_observe = type(self.observation).observe_batch is GridObservation.observe_batch
        # per-copy state: position, orientation, keys held, and one column per object slot
        self.batch = GridBatch(
            rules,
            pos=np.full(n_envs, self._start_cell, dtype=np.int64),
            orientation=np.zeros(n_envs, dtype=np.int64),
            keys_held=np.zeros(n_envs, dtype=np.int64),
            rewards_left=np.ones((n_envs, len(reward_cells)), dtype=bool),
            keys_left=np.ones((n_envs, len(key_cells)), dtype=bool),
            doors_closed=np.ones((n_envs, len(door_cells)), dtype=bool),
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
            self._interact(hot.nonzero()[0], pos, t, actions, reward, terminated)
        batch.pos = t
        return reward, terminated

    def _interact(self, copies: np.ndarray, pos: np.ndarray, t: np.ndarray, actions: np.ndarray,
                  reward: np.ndarray, terminated: np.ndarray) -> None:
        """Doors, rewards, keys and warps for the copies that reached a cell holding an object (GridEnv's order)."""
        batch = self.batch
        cell = t[copies]
        door = self._door_slot.take(cell)
        at_door = door >= 0
        if at_door.any():
            c, d = copies[at_door], door[at_door]
            closed = batch.doors_closed[c, d]
            opens = closed & (batch.keys_held[c] > 0) & (pos[c] != cell[at_door])  # only moving into it uses a key
            batch.keys_held[c[opens]] -= 1
            batch.doors_closed[c[opens], d[opens]] = False
            blocked = closed & ~opens
            cell[np.flatnonzero(at_door)[blocked]] = pos[c[blocked]]
        slot = self._reward_slot.take(cell)
        here = slot >= 0
        if self._collect >= 0:
            here &= actions[copies] == self._collect
        if here.any():
            c, r = copies[here], slot[here]
            left = batch.rewards_left[c, r]
            c, r = c[left], r[left]
            reward[c] += self._reward_value[r]
            terminated[c] = self._reward_terminates[r]
            batch.rewards_left[c, r] = False
        key = self._key_slot.take(cell)
        at_key = key >= 0
        if at_key.any():
            c, k = copies[at_key], key[at_key]
            left = batch.keys_left[c, k]
            batch.keys_held[c[left]] += 1
            batch.keys_left[c[left], k[left]] = False
        t[copies] = self._warp.take(cell)

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
        slots = self.rules.objects
        if self._variable or slots.keys or slots.doors or not all(slots.reward_terminates):
            return None
        nn = self._nn
        gains = self._reward_slot >= 0
        gain = np.zeros(nn)
        gain[gains] = self._reward_value[self._reward_slot[gains]]
        return StepTable(
            move=self._tab.reshape(-1, nn), gains=gains, gain=gain, warp=self._warp.copy(),
            step_reward=float(self._neg_penalty), collect=int(self._collect), slip=float(self.stochasticity),
            random_start=bool(self.random_start), starts=self._free.copy(), start=int(self._start_cell),
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


def make_grid_vector_env(num_envs: int = 1, **kwargs: Any) -> GridVectorEnv:
    """`vector_entry_point` of the grid ids."""
    return GridVectorEnv(num_envs=num_envs, **kwargs)
