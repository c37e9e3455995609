"""RoomMapVectorEnv: N copies of one Room map (v2 or v3) stepped in lockstep with numpy.

Each copy plays its own episodes: when a copy starts an episode its world (every object's
room at every step, the questions and their answers) is made by the same code as the single
env's (`world.episodes_v2` with this batch's generator, or per-copy streams with
`use_lanes`; v3's one deterministic episode), so copy i follows `RoomMapEnv`'s rules exactly
and its distribution. A step scores every copy's answers against its table row and moves
every agent through the door table of its step. Observations are the single env's Dict,
batched: room (N,), exits (N, 4), objects (N, O), questions (N, Q); actions (N, Q + 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from graphstore import GraphStore, TaskGraph

from ..params import NOT_GIVEN, episode_steps
from ..vector.base import BatchedVectorEnv
from .compiled import CompiledRoomMap
from .env import (
    DEFAULT_TASK,
    Decoder,
    RoomMapSettings,
    check_episode_bytes,
    load_checked,
    make_episodes,
    room_map_spaces,
)


class RoomMapVectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a Room map; the other parameters are `RoomMapEnv`'s."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    _uses_active = False  # a copy about to be reset takes its step on its own tables: nothing shared changes

    def __init__(
        self,
        num_envs: int = 1,
        task: str | TaskGraph | CompiledRoomMap = DEFAULT_TASK,
        store: GraphStore | str | None = None,
        max_episode_steps: int = 100,
        questions_per_step: int | None = None,
        question_prob: float = 1.0,
        rewards: Any = (1, 0, 0),
        make_everything_static: bool = False,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        max_steps: Any = NOT_GIVEN,
        **ignored: Any,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: the vector env does not render; render a single RoomMapEnv instead")
        unknown = sorted(set(ignored) - {"episodes_ahead"})  # the single env's buffer size means nothing here
        if unknown:
            raise TypeError(f"RoomMapVectorEnv: unknown setting(s) {', '.join(unknown)}")
        self.compiled = c = load_checked(task, store)
        self.settings = s = RoomMapSettings(c, episode_steps(max_episode_steps, max_steps, "max_steps", 100),
                                            questions_per_step, question_prob, rewards, make_everything_static,
                                            "max_episode_steps" if max_steps is NOT_GIVEN else "max_steps")
        check_episode_bytes(c, s, num_envs if isinstance(num_envs, int) else 1, "num_envs")
        observation, action = room_map_spaces(c, s.n_questions)
        # the last step terminates an episode (it is the task's): no truncation of the base's
        super().__init__(num_envs, observation, spaces.Discrete(1), 0, autoreset_mode)
        self.single_action_space = action
        self.action_space = batch_space(action, self.num_envs)
        self._action_shape = (self.num_envs, s.n_questions + 1)  # type: ignore[assignment]
        self._nvec = action.nvec
        self.task_id = c.task_id
        self.decoder = Decoder(c)
        self._n_q = s.n_questions
        n, steps = self.num_envs, s.max_steps
        self._rooms = np.zeros((n, steps + 1, c.n_objects), dtype=np.int64)
        self._questions = np.zeros((n, steps + 1, s.n_questions), dtype=np.int64)
        self._truth = np.full((n, steps + 1, s.n_questions), -1, dtype=np.int64)
        self._previous = np.full((n, steps + 1, s.n_questions), -1, dtype=np.int64)
        self._attached = np.full((n, steps + 1, len(c.dependent)), -1, dtype=np.int64)
        self.agent_room = np.zeros(n, dtype=np.int64)
        self.t = np.zeros(n, dtype=np.int64)
        self._copies = np.arange(n)
        self._room_ids = np.arange(c.n_rooms)

    # -- dynamics -------------------------------------------------------------------------------
    def _check_actions(self, actions: Any) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != self._action_shape or actions.dtype.kind not in "iu":
            raise ValueError(f"actions: expected an integer array of shape {self._action_shape}, "
                             f"got {actions.dtype} {actions.shape}")
        if (actions < 0).any() or (actions >= self._nvec).any():
            raise ValueError("actions: answers must be rooms 0..R-1 and moves 0..4")
        return actions

    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        s, c, copies, t = self.settings, self.compiled, self._copies, self.t
        answers = actions[:, : self._n_q]
        truth = self._truth[copies, t]
        hits = (answers == truth).sum(axis=1)
        reward = hits * s.correct + (self._n_q - hits) * s.wrong
        if s.partial:
            prev = self._previous[copies, t]
            partial = ((answers != truth) & (answers == prev) & (prev >= 0)).sum(axis=1)
            reward = reward + partial * (s.partial - s.wrong)
        self.agent_room = c.doors[t % c.period, self.agent_room, actions[:, self._n_q]]
        self.t = np.minimum(t + 1, s.max_steps)  # a copy stepped past its end (DISABLED mode) stays at the end
        return reward.astype(np.float64), self.t >= s.max_steps

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        c, s = self.compiled, self.settings
        index = self._copies if copies is None else copies
        if len(index) == 0:
            return
        world = make_episodes(c, s, self._rng(copies), len(index))
        self._rooms[index] = world.rooms
        self._questions[index] = world.questions
        self._truth[index] = world.truth
        self._previous[index] = world.previous
        self._attached[index] = world.attached
        self.agent_room[index] = world.agent
        self.t[index] = 0

    def _observe(self) -> dict[str, np.ndarray]:
        c, copies, t, room = self.compiled, self._copies, self.t, self.agent_room
        now = self._rooms[copies, t]
        return {
            "room": room.copy(),
            "exits": c.exits[t % c.period, room],
            "objects": (now == room[:, None]).astype(np.int8),
            "questions": self._questions[copies, t],
        }

    # -- the hidden state (tests) ---------------------------------------------------------------
    @property
    def locations(self) -> np.ndarray:
        """(N, O): every copy's objects' rooms now."""
        return self._rooms[self._copies, self.t]

    @property
    def attached(self) -> np.ndarray:
        """(N, D): v2, the independent object each dependent one is attached to, or -1."""
        return self._attached[self._copies, self.t]


def make_room_map_vector_env(num_envs: int = 1, **kwargs: Any) -> RoomMapVectorEnv:
    """`vector_entry_point` of `graphtasks/RoomV2-v0` and `graphtasks/RoomV3-v0`."""
    return RoomMapVectorEnv(num_envs=num_envs, **kwargs)
