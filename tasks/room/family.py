"""The Room family: the memory task of Kim et al. (2022) on ConceptNet AtLocation assertions,
rooms 'room/small' and 'room/big' from data/room/rooms.json. A Room task takes no changes;
what varies between phases are the environment's settings (a phase's `env` table)."""

from __future__ import annotations

from ..data import data_dir
from ..family import Catalogue, TaskFamily
from .knowledge import ROOMS_FILE, _rooms, build_room_task
from .schema import add_schema

ROOM = TaskFamily(
    name="room",
    description="the Room memory task: people put objects at ConceptNet AtLocation places",
    kinds=("room",),
    catalogues=(
        Catalogue("room/", "room", lambda: sorted(_rooms()), build_room_task,
                  source=lambda name: data_dir() / ROOMS_FILE,
                  description="the Room memory task (RoomEnv-v0) on stored ConceptNet AtLocation triples"),
    ),
    add_schema=add_schema,
    docs="docs/room.md",
)
