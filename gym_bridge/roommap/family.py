"""The Room map family: room-env's RoomEnv-v2 (stochastic objects on a map of rooms) and
RoomEnv-v3 (deterministic objects, periodic inner walls) as `graphtasks/RoomV2-v0` and
`graphtasks/RoomV3-v0` (names of their own, not versions of `graphtasks/Room`: they are other tasks)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.roommap import DEFAULTS
from tasks.roommap.family import ROOM_MAP as ROOM_MAP_TASKS

from ..family import Family, GymId
from ..starts import NoStarts
from ..views import AgentView
from .compiled import CompiledRoomMap, load_room_map
from .text import ROOM_MAP_TEXT


def make_env(task: str | TaskGraph, store: Any = None, **kwargs: Any) -> gym.Env:
    from .env import RoomMapEnv

    return RoomMapEnv(task=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """RoomV2-v0 on room-env's default v2 map, RoomV3-v0 on the small v3 map (room-env's own v3
    default names a file it does not ship); `task=` picks another map."""
    return [GymId("graphtasks/RoomV2-v0", {"task": f"room/v2/{DEFAULTS[2]}"}),
            GymId("graphtasks/RoomV3-v0", {"task": f"room/v3/{DEFAULTS[3]}"})]


def _sizes(env: gym.Env) -> tuple[int, int]:
    """Agents of this view read the env itself (`from_env`); they need no table sizes."""
    return 0, 0


# Agents of Room maps read the whole observation: the room, its sides, what is in it, the questions.
ROOM_MAP_VIEW = AgentView(
    "roommap",
    state=lambda obs, info: obs,
    sizes=_sizes,
    description="the agent's room, its sides, the objects in it and the questions",
    recorded=lambda obs: int(obs["room"]),
    action_index=lambda action: int(action[-1]),  # a Trial keeps the move (0-4: north, east, south, west, stay)
)

ROOM_MAP = Family(
    tasks=ROOM_MAP_TASKS,
    env="gym_bridge.roommap.env:RoomMapEnv",
    vector_env="gym_bridge.roommap.vector_env:make_room_map_vector_env",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    compiled=CompiledRoomMap,
    load=load_room_map,
    starts=NoStarts(),
    views=(ROOM_MAP_VIEW,),
    picture="gym_bridge.roommap.render:draw_task",
    text=ROOM_MAP_TEXT,  # the room, the questions and the moves
    docs="docs/room-v2-v3.md",
)
