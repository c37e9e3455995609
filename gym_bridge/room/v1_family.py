"""The Room task's version 1 (room-env's RoomEnv-v1) as `graphtasks/RoomV1-v0`: the single env,
the vector env, and the tabular agents' view (the state is the question asked)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.room.v1_family import ROOM_V1 as ROOM_V1_TASKS

from ..family import Family, GymId
from ..starts import NoStarts
from .text import ROOM_V1_TEXT
from .v1_env import DEFAULT_TASK, CompiledRoomV1, load_room_v1


def make_env(task: str | TaskGraph, store: Any = None, **kwargs: Any) -> gym.Env:
    from .v1_env import RoomV1Env

    return RoomV1Env(task=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """RoomV1-v0 on room-env's default size (l); `task=` picks another (room/v1/xxs ... room/v1/l)."""
    return [GymId("graphtasks/RoomV1-v0", {"task": DEFAULT_TASK})]


ROOM_V1 = Family(
    tasks=ROOM_V1_TASKS,
    env="gym_bridge.room.v1_env:RoomV1Env",
    gym_entry="gym_bridge.room.v1_env:make_for_gymnasium",
    vector_env="gym_bridge.room.v1_env:make_room_v1_vector_env",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    compiled=CompiledRoomV1,
    load=load_room_v1,
    starts=NoStarts(),
    picture="gym_bridge.room.v1_render:draw_task",
    text=ROOM_V1_TEXT,  # a moment and its question
    docs="docs/room-v1.md",
)
