"""PogeVectorEnv: N copies of one POGE world stepped together with numpy.

The outcome tables are the single env's: a `PogeEnv` is made once and its compiled
per-(state, action) outcomes (next state, observation, reward, terminated, one-time reward
slot, with slip probabilities) become flat arrays. Each copy keeps its state (tile x slips
on/off) and which one-time rewards it has collected this episode, so every rule of
`PogeEnv` holds per copy: slips drawn from the tile's rule, walls, doors, `@` toggling,
one-time rewards (paid again as the step penalty), goal / trap tiles ending the episode,
truncation after `max_ep_len` steps.

Slips use one uniform per copy per step from the batch's generator, so copy i matches the
single env in distribution (exactly with `force_determinism=True`). `info["state"]` holds each
copy's state index (`tile * 2 + slips_on`); with `names_in_info=True` it also holds
`info["observation"]`, the observation names (an object array: slower, off by default).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from graphstore import GraphStore, TaskGraph

from ..poge_env import PogeEnv
from .base import BatchedVectorEnv, tighter_limit

OBS_TYPES = ("index", "onehot")


class PogeVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a POGE world; the other parameters are `PogeEnv`'s."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        world: str | TaskGraph = "poge/world0",
        store: GraphStore | str | None = None,
        force_determinism: bool = False,
        indicate_slip: bool = False,
        is_partially_obs: bool = True,
        indicate_wall: bool = False,
        max_ep_len: int = 100,
        goal_reward: float = 100,
        one_time_rewards: bool = True,
        step_penalty: float = 0,
        obs_type: str = "index",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        names_in_info: bool = False,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single PogeEnv instead")
        self.single = env = PogeEnv(
            world, store, force_determinism=force_determinism, indicate_slip=indicate_slip,
            is_partially_obs=is_partially_obs, indicate_wall=indicate_wall, max_ep_len=max_ep_len,
            goal_reward=goal_reward, one_time_rewards=one_time_rewards, step_penalty=step_penalty, obs_type=obs_type,
        )
        length = tighter_limit(env.max_ep_len, max_episode_steps)  # make_vec passes a spec's limit
        super().__init__(num_envs, env.observation_space, env.action_space, length, autoreset_mode)
        self.task_id = env.task_id
        self.obs_type = obs_type
        self.names_in_info = bool(names_in_info)
        self.observation_names = np.array(env.observation_names, dtype=object)
        self._table = env._table
        self.step_penalty = env.step_penalty
        self._build(env)
        self.state = np.full(self.num_envs, self._start, dtype=np.int64)
        self._obs = np.full(self.num_envs, self._start_obs, dtype=np.int64)
        self.collected = np.zeros((self.num_envs, max(env._n_slots, 1)), dtype=bool)
        self._has_slots = env._n_slots > 0

    def _build(self, env: PogeEnv) -> None:
        """Flat outcome arrays; row = state * 4 + action, outcome k at row * K + k."""
        n_states, n_actions = len(env._det), int(env.action_space.n)
        width = 1
        for dist_row in env._dist:
            for item in dist_row or ():
                if item is not None:
                    width = max(width, len(item[1]))
        size = n_states * n_actions
        nxt = np.repeat(np.arange(n_states, dtype=np.int64), n_actions * width)  # unreachable: stay
        obs = np.zeros(size * width, dtype=np.int64)
        reward = np.zeros(size * width)
        terminal = np.zeros(size * width, dtype=bool)
        slot = np.full(size * width, -1, dtype=np.int64)
        cumulative = np.full((size, width), 2.0)
        for s in range(n_states):
            singles, draws = env._det[s], env._dist[s]
            if singles is None:
                continue
            for a in range(n_actions):
                row = s * n_actions + a
                single = singles[a]
                draw = draws[a] if draws is not None else None
                if single is not None:
                    outcomes, cum = [single], [2.0]
                elif draw is not None:
                    cum, outcomes = draw
                else:
                    raise RuntimeError(f"task {env.task_id!r}: state {s}, action {a} has no outcome")
                for k, (t, o, r, term, sl, _name) in enumerate(outcomes):
                    i = row * width + k
                    nxt[i], obs[i], reward[i], terminal[i], slot[i] = t, o, r, term, sl
                    cumulative[row, k] = cum[k]
        self._width = width
        self._next, self._obs_of, self._reward, self._terminal, self._slot = nxt, obs, reward, terminal, slot
        # one 1-D array per outcome boundary: gathering rows of a 2-D array is far slower
        self._boundaries = [cumulative[:, k].copy() for k in range(width - 1)]
        self._n_actions = n_actions
        self._start, self._start_obs = env._start_state, env._start_obs
        self._at_tile = env._at_tile
        self._start_override: tuple[int, int] | None = None

    # -- dynamics ------------------------------------------------------------------------------------
    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        rows = self.state * self._n_actions + actions
        width = self._width
        if width == 1:
            flat = rows
        else:
            u = self.np_random.random(self.num_envs)
            flat = rows * width
            for boundary in self._boundaries:  # outcome k: the number of boundaries u is past
                flat += u >= boundary.take(rows)
        self.state = self._next.take(flat)
        self._obs = self._obs_of.take(flat)
        reward = self._reward.take(flat)
        if self._has_slots:
            slot = self._slot.take(flat)
            hit = slot >= 0
            if hit.any():
                copies = np.flatnonzero(hit)
                cells = copies * self.collected.shape[1] + slot[copies]
                flat_collected = self.collected.reshape(-1)  # a view: writes land in `collected`
                again = flat_collected.take(cells)
                reward[copies[again]] = self.step_penalty  # a one-time reward already collected this episode
                flat_collected[cells] = True
        return reward, self._terminal.take(flat)

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        start, obs = self._start, self._start_obs
        if self._start_override is not None:
            start, obs = self._start_override
        if copies is None:
            self.state = np.full(self.num_envs, start, dtype=np.int64)
            self._obs = np.full(self.num_envs, obs, dtype=np.int64)
            self.collected[:] = False
        else:
            self.state[copies] = start
            self._obs[copies] = obs
            if self._has_slots:
                self.collected[copies] = False

    def _reset_options(self, options: dict[str, Any], copies: np.ndarray | None) -> None:
        if options:
            state = self.single._reset_options(options)  # the single env's checks and messages
            obs = self._start_obs if state == self._start else self._at_tile[state // 2]
            self._start_override = (state, obs)

    def _forget_reset_options(self) -> None:
        self._start_override = None  # autoresets start at the world's start again

    def _observe(self) -> np.ndarray:
        table = self._table
        return self._obs.copy() if table is None else table[self._obs]

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"state": self.state.copy()}
        if self.names_in_info:
            info["observation"] = self.observation_names[self._obs]
        return info


def make_poge_vector_env(num_envs: int = 1, **kwargs: Any) -> PogeVectorEnv:
    """`vector_entry_point` of `graphtasks/Poge-v0`."""
    return PogeVectorEnv(num_envs=num_envs, **kwargs)
