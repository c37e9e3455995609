"""PogeVectorEnv: N copies of one POGE world stepped together with numpy.

The outcomes are the single env's: the same `CompiledWorld` (per-(state, action) next state,
observation, reward, terminated, one-time reward slot, with slip probabilities), taken as
flat arrays (`CompiledWorld.flat_outcomes`), and the same observation objects. Each copy keeps its state (tile x slips
on/off) and which one-time rewards it has collected this episode, so every rule of
`PogeEnv` holds per copy: slips drawn from the tile's rule, walls, doors, `@` toggling,
one-time rewards (paid again as the step penalty), goal / trap tiles ending the episode,
truncation after `max_episode_steps` steps.

Slips use one uniform per copy per step from the batch's generator, so copy i matches the
single env in distribution (exactly with `force_determinism=True`). `info["state"]` holds each
copy's state index (`tile * 2 + slips_on`); with `names_in_info=True` it also holds
`info["observation"]`, the observation names (an object array: slower, off by default).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from graphstore import GraphStore, TaskGraph
from tasks.poge import ACTIONS

from ..observation_types import TableObservation
from ..params import NOT_GIVEN, check_positive_int, episode_steps
from ..vector.base import BatchedVectorEnv, count_nonzero
from .compiled import PogeOptions
from .env import prepare_world, start_state


class PogeVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a POGE world; the other parameters are `PogeEnv`'s."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    _uses_active = False  # NEXT_STEP's copies are reset whole: nothing per copy to protect

    def __init__(
        self,
        num_envs: int = 1,
        world: str | TaskGraph = "poge/world0",
        store: GraphStore | str | None = None,
        force_determinism: bool = False,
        indicate_slip: bool = False,
        is_partially_obs: bool = True,
        indicate_wall: bool = False,
        max_episode_steps: int | None = 100,
        goal_reward: float = 100,
        one_time_rewards: bool = True,
        step_penalty: float = 0,
        obs_type: str = "index",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        names_in_info: bool = False,
        render_mode: str | None = None,
        max_ep_len: Any = NOT_GIVEN,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single PogeEnv instead")
        length = episode_steps(max_episode_steps, max_ep_len, "max_ep_len", 100)
        length = 0 if length is None else check_positive_int(  # 0: no limit
            "max_episode_steps" if max_ep_len is NOT_GIVEN else "max_ep_len", length)
        options = PogeOptions.checked(
            force_determinism, indicate_slip, is_partially_obs, indicate_wall, goal_reward, one_time_rewards,
            step_penalty,
        )
        self.compiled, self.observation = prepare_world(world, store, options, obs_type)
        c = self.compiled
        super().__init__(num_envs, self.observation.space, spaces.Discrete(len(ACTIONS)), length, autoreset_mode)
        self.task_id = c.task_id
        self.obs_type = obs_type
        self.names_in_info = bool(names_in_info)
        self.observation_names = np.array(c.observation_names, dtype=object)
        self.step_penalty = options.step_penalty
        flat = c.flat_outcomes()
        self._width, self._n_actions = flat.width, flat.n_actions
        self._next, self._obs_of, self._reward, self._terminal, self._slot = (
            flat.next_state, flat.observation, flat.reward, flat.terminal, flat.slot
        )
        self._boundaries = flat.boundaries
        self._pays_once = flat.slot >= 0  # outcomes that hold a one-time reward
        self._start, self._start_obs = c.start_state, c.start_obs
        self._start_override: tuple[int, int] | None = None
        self.state = np.full(self.num_envs, self._start, dtype=np.int64)
        self._obs = np.full(self.num_envs, self._start_obs, dtype=np.int64)
        self.collected = np.zeros((self.num_envs, max(c.n_slots, 1)), dtype=bool)
        self._has_slots = c.n_slots > 0

    # -- dynamics ------------------------------------------------------------------------------------
    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        rows = self.state * self._n_actions + actions
        width = self._width
        if width == 1:
            flat = rows
        else:
            u = self._rng().random(self.num_envs)
            flat = rows * width
            for boundary in self._boundaries:  # outcome k: the number of boundaries u is past
                flat += u >= boundary.take(rows)
        self.state = self._next.take(flat)
        self._obs = self._obs_of.take(flat)
        reward = self._reward.take(flat)
        if self._has_slots:
            hit = self._pays_once.take(flat)
            if count_nonzero(hit):
                copies = hit.nonzero()[0]
                cells = copies * self.collected.shape[1] + self._slot.take(flat.take(copies))
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
            state = start_state(self.compiled, options)  # the single env's rule, checks and messages
            self._start_override = (state, self.compiled.observation_at(state))

    def _forget_reset_options(self) -> None:
        self._start_override = None  # autoresets start at the world's start again

    def _observe(self) -> np.ndarray:
        observation = self.observation
        if type(observation).observe_batch is TableObservation.observe_batch:  # the built-in types: no call chain
            table = cast(TableObservation, observation).table
            return self._obs.copy() if table is None else table.take(self._obs, axis=0)
        return observation.observe_batch(self._obs)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"state": self.state.copy()}
        if self.names_in_info:
            info["observation"] = self.observation_names[self._obs]
        return info


def make_poge_vector_env(num_envs: int = 1, **kwargs: Any) -> PogeVectorEnv:
    """`vector_entry_point` of `graphtasks/Poge-v0`."""
    return PogeVectorEnv(num_envs=num_envs, **kwargs)
