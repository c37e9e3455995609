"""The Room memory task on ConceptNet AtLocation assertions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..family import Family, GymId
from .env import load_room


def make_env(task: str, store: Any = None, **kwargs: Any) -> gym.Env:
    from .env import RoomEnv

    return RoomEnv(room_size=task.split("/")[1].split("?")[0], task=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """The Room memory task; kwargs such as room_size='big' or store=... go to gym.make."""
    return [GymId("graphtasks/Room-v0")]


ROOM = Family(
    name="room",
    prefixes=("room/",),
    env="gym_bridge.room.env:RoomEnv",
    make_env=make_env,
    episode_length="max_step",
    gym_ids=gym_ids,
    load=load_room,
    catalogs=("room",),
    cli="graphtasks.commands.room_cmd",
    bench="benchmarks.run_all:room_cases",
    docs="docs/room.md",
    description="the Room memory task: people put objects at ConceptNet AtLocation places",
)
