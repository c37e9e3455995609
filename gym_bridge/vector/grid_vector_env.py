"""GridVectorEnv: N copies of one neuro-nav grid world stepped together with numpy.

The move tables and objects are the single env's: a `GridEnv` is made once with the same
parameters and its compiled tables become flat arrays. Each copy keeps its own position,
orientation, keys held, and which rewards, keys and closed doors remain, so every rule of
`GridEnv` holds per copy (action noise, walls, doors opened with a key, rewards paid once
and removed, `terminate_on_reward` / per-reward terminate flags, `manual_collect`, keys,
warps, truncation after `episode_length` steps).

A step is a few table look-ups for every copy; only copies that reach a cell holding an
object take the (vectorised) object path. Observations: every grid type. Those that are a
fixed row per state (index, onehot, twohot, geometric, images, registered ones) are one
gather from the single env's table; those that depend on each copy's objects (boundary,
symbolic*, visual, window*, ascii) come from `grid_observations`.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from gymnasium.vector import AutoresetMode

from graphstore import GraphStore, TaskGraph

from ..grid_compile import CompiledGrid
from ..grid_env import OBS_TYPES, GridEnv  # noqa: F401  (OBS_TYPES: every type runs vectorised)
from ..params import check_bool
from .base import BatchedVectorEnv, tighter_limit
from .grid_observations import PICTURE_TYPES, ObjectCells, batch_observer


class GridVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a grid world; the other parameters are `GridEnv`'s."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

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
        self.single = env = GridEnv(
            template, size, obs_type=obs_type, orientation=orientation, use_noop=use_noop,
            manual_collect=manual_collect, stochasticity=stochasticity, random_start=random_start,
            agent_start=agent_start, objects=objects, terminate_on_reward=terminate_on_reward,
            time_penalty=time_penalty, episode_length=episode_length, visible_walls=visible_walls,
            resolution=resolution, store=store, task=task,
        )
        length = tighter_limit(env.episode_length, max_episode_steps)  # make_vec passes a spec's limit
        super().__init__(num_envs, env.observation_space, env.action_space, length, autoreset_mode)
        self.compiled = env.compiled
        self.obs_type = obs_type
        self.stochasticity = env.stochasticity
        self.random_start = env.random_start
        self._build(env)

    def _build(self, env: GridEnv) -> None:
        n = env.n
        nn = self._nn = n * n
        self._variable = env._variable
        object_cells = ObjectCells(sorted(env._reward_info), sorted(env._keyset), sorted(env._door_info))
        self._observer = batch_observer(env, object_cells)
        self._table = env._table if env._obs_kind == 1 and self._observer is None else None
        # pictures show which way the agent looks, in fixed mode too (its last move)
        self._track_look = not self._variable and env.obs_type in PICTURE_TYPES
        self._tab = np.array(env._tab, dtype=np.int64).reshape(-1)  # (action, cell) -> cell
        self._dir = np.array(env._dir, dtype=np.int64).reshape(-1)  # (orientation, cell) -> cell ahead
        self._collect = env._collect
        self._neg_penalty = env._neg_penalty
        self._free = np.array(env._free, dtype=np.int64)
        self._start_cell = env.agent_start if env.agent_start is not None else env.compiled.start
        info = env._reward_info  # cell -> (value, visible, terminate) with the env's default applied
        reward_cells = sorted(info)
        key_cells = sorted(env._keyset)
        door_cells = sorted(env._door_info)
        self._reward_slot = np.full(nn, -1, dtype=np.int64)
        self._reward_slot[reward_cells] = np.arange(len(reward_cells))
        self._reward_value = np.array([info[c][0] for c in reward_cells], dtype=float)
        self._reward_terminates = np.array([bool(info[c][2]) for c in reward_cells], dtype=bool)
        self._key_slot = np.full(nn, -1, dtype=np.int64)
        self._key_slot[key_cells] = np.arange(len(key_cells))
        self._door_slot = np.full(nn, -1, dtype=np.int64)
        self._door_slot[door_cells] = np.arange(len(door_cells))
        self._warp = np.arange(nn, dtype=np.int64)
        for cell, target in env._warps.items():
            self._warp[cell] = target
        self._key_count, self._door_count = len(key_cells), len(door_cells)
        self._hot = np.zeros(nn, dtype=bool)
        self._hot[reward_cells + key_cells + door_cells + list(env._warps)] = True
        n_envs = self.num_envs
        # per-copy state; the object arrays have at least one column so every index stays valid
        self.pos = np.full(n_envs, self._start_cell, dtype=np.int64)
        self.orientation_of = np.zeros(n_envs, dtype=np.int64)
        self.keys_held = np.zeros(n_envs, dtype=np.int64)
        self.rewards_left = np.ones((n_envs, max(len(reward_cells), 1)), dtype=bool)
        self.keys_left = np.ones((n_envs, max(len(key_cells), 1)), dtype=bool)
        self.doors_closed = np.ones((n_envs, max(len(door_cells), 1)), dtype=bool)
        self._agent_pos: int | None = None  # reset options, for that reset only
        self._random_start_override: bool | None = None

    # -- dynamics ------------------------------------------------------------------------------------
    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        n_envs, nn = self.num_envs, self._nn
        if self.stochasticity:
            rng = self.np_random
            replace = rng.random(n_envs) < self.stochasticity
            actions = np.where(replace, rng.integers(0, self.n_actions, n_envs), actions)
        pos = self.pos
        if self._variable:
            o = self.orientation_of
            ahead = self._dir.take(o * nn + pos)
            t = np.where(actions == 2, ahead, pos)
            self.orientation_of = np.where(actions == 0, (o + 3) & 3, np.where(actions == 1, (o + 1) & 3, o))
        else:
            t = self._tab.take(actions * nn + pos)  # (fixed mode: the orientation is not part of the state)
            if self._track_look:
                self.orientation_of = np.where(actions < 4, actions, self.orientation_of)
        reward = np.full(n_envs, self._neg_penalty)
        terminated = np.zeros(n_envs, dtype=bool)
        hot = self._hot.take(t)
        if hot.any():
            self._interact(np.flatnonzero(hot), pos, t, actions, reward, terminated)
        self.pos = t
        return reward, terminated

    def _interact(self, copies: np.ndarray, pos: np.ndarray, t: np.ndarray, actions: np.ndarray,
                  reward: np.ndarray, terminated: np.ndarray) -> None:
        """Doors, rewards, keys and warps for the copies that reached a cell holding an object (GridEnv's order)."""
        cell = t[copies]
        door = self._door_slot.take(cell)
        at_door = door >= 0
        if at_door.any():
            c, d = copies[at_door], door[at_door]
            closed = self.doors_closed[c, d]
            opens = closed & (self.keys_held[c] > 0) & (pos[c] != cell[at_door])  # only moving into it uses a key
            self.keys_held[c[opens]] -= 1
            self.doors_closed[c[opens], d[opens]] = False
            blocked = closed & ~opens
            cell[np.flatnonzero(at_door)[blocked]] = pos[c[blocked]]
        slot = self._reward_slot.take(cell)
        here = slot >= 0
        if self._collect >= 0:
            here &= actions[copies] == self._collect
        if here.any():
            c, r = copies[here], slot[here]
            left = self.rewards_left[c, r]
            c, r = c[left], r[left]
            reward[c] += self._reward_value[r]
            terminated[c] = self._reward_terminates[r]
            self.rewards_left[c, r] = False
        key = self._key_slot.take(cell)
        at_key = key >= 0
        if at_key.any():
            c, k = copies[at_key], key[at_key]
            left = self.keys_left[c, k]
            self.keys_held[c[left]] += 1
            self.keys_left[c[left], k[left]] = False
        t[copies] = self._warp.take(cell)

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        count = self.num_envs if copies is None else copies.size
        if self._agent_pos is not None:
            start = np.full(count, self._agent_pos, dtype=np.int64)
        elif self._random_start_now:
            start = self._free[self.np_random.integers(0, self._free.size, count)]
        else:
            start = np.full(count, self._start_cell, dtype=np.int64)
        if copies is None:
            self.pos = start
            self.orientation_of = np.zeros(self.num_envs, dtype=np.int64)
            self.keys_held[:] = 0
            self.rewards_left[:] = True
            self.keys_left[:] = True
            self.doors_closed[:] = True
        else:
            self.pos[copies] = start
            self.orientation_of[copies] = 0
            self.keys_held[copies] = 0
            self.rewards_left[copies] = True
            self.keys_left[copies] = True
            self.doors_closed[copies] = True

    @property
    def _random_start_now(self) -> bool:
        return self._random_start_override if self._random_start_override is not None else self.random_start

    def _reset_options(self, options: dict[str, Any], copies: np.ndarray | None) -> None:
        unknown = sorted(set(options) - {"agent_pos", "random_start"})
        if unknown:
            extra = " ('objects' is fixed per vector env: pass objects= when making it)" if "objects" in unknown else ""
            raise ValueError(f"reset options: unknown key(s) {', '.join(unknown)}; use agent_pos, random_start{extra}")
        if options.get("agent_pos") is not None:
            self._agent_pos = self.single._check_cell(options["agent_pos"], "reset options: agent_pos")
        if "random_start" in options:
            self._random_start_override = check_bool("random_start", options["random_start"])

    def _forget_reset_options(self) -> None:
        self._agent_pos = None  # autoresets start as the env was made
        self._random_start_override = None

    @property
    def state(self) -> np.ndarray:
        """Each copy's state index (orientation * n * n + cell; orientation 0 in fixed mode)."""
        return self.pos + self.orientation_of * self._nn if self._variable else self.pos.copy()

    def present_objects(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per copy (rows) and object (columns): rewards left, keys left, doors still closed."""
        return (
            self.rewards_left[:, : self._reward_value.size],
            self.keys_left[:, : self._key_count],
            self.doors_closed[:, : self._door_count],
        )

    def _observe(self) -> Any:
        if self._observer is not None:
            return self._observer(self)
        s = self.pos + self.orientation_of * self._nn if self._variable else self.pos
        return s.copy() if self._table is None else self._table[s]

    def _info(self) -> dict[str, Any]:
        return {"state": self.state}


def make_grid_vector_env(num_envs: int = 1, **kwargs: Any) -> GridVectorEnv:
    """`vector_entry_point` of the grid ids."""
    return GridVectorEnv(num_envs=num_envs, **kwargs)
