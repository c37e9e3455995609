"""The Room task's version 1 (room-env's RoomEnv-v1): each person replays a fixed cycle of
objects and locations; the configurations of room-env 3.0.6 (`des-config-<size>-v1.json` in
data/room_env/, MIT licence in data/room_env/LICENSE.txt) are the built-in tasks `room/v1/<size>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir, read_json
from ..family import Catalogue, TaskFamily, UserFiles
from .v1_config import KIND, config_to_graph
from .v1_schema import add_schema

FOLDER = "room_env"
PREFIX = "room/v1/"
DEFAULT = "l"  # room-env's RoomEnv1 default des_size
PROVENANCE = {
    "reference": "room-env 3.0.6 (PyPI), github.com/humemai/room-env; Kim et al. 2023, AAAI 37(8): 9400-9408",
    "licence": "MIT, Copyright (c) 2022 Taewoon Kim; see data/room_env/LICENSE.txt",
}
SIZES = ("xxs", "xs", "s", "m", "l")


def config_path(name: str) -> Path:
    return data_dir() / FOLDER / f"des-config-{name}-v1.json"


def config_names() -> list[str]:
    found = {p.name[len("des-config-"):-len("-v1.json")] for p in (data_dir() / FOLDER).glob("des-config-*-v1.json")}
    return sorted(found, key=lambda n: (SIZES.index(n) if n in SIZES else len(SIZES), n))


def read_config(name: str) -> dict[str, Any]:
    path = config_path(name)
    config = read_json(path)
    if not isinstance(config, dict):
        raise TaskFileError(f"{path}: expected a room-env configuration object")
    return config


def build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
    if params:
        raise TaskFileError(f"task {task_id!r}: Room v1 tasks take no parameters, got {', '.join(sorted(params))}")
    path = config_path(name)
    return config_to_graph(read_config(name), task_id, name, source=f"data/{FOLDER}/{path.name}",
                           provenance=PROVENANCE, where=str(path))


USER_PREFIX = "user/room/v1/"


def read_user_config(path: Path, task_id: str | None, params: dict[str, Any]) -> list[TaskGraph]:
    """A room-env v1 configuration file of a user's as the task `user/room/v1/<file stem>`
    (`graphtasks tasks load --file des-config-mine-v1.json --family roomv1`)."""
    if params:
        raise TaskFileError(f"{path}: Room v1 configurations take no parameters, got {', '.join(sorted(params))}")
    config = read_json(path)
    name = path.stem
    return [config_to_graph(config, task_id or USER_PREFIX + name, name, source=str(path), where=str(path))]


ROOM_V1 = TaskFamily(
    name="roomv1",
    description="the Room task's version 1 (room-env v1): people replay cycles of objects and locations",
    kinds=(KIND,),
    catalogues=(
        Catalogue(PREFIX, KIND, config_names, build, source=config_path,
                  description="room-env RoomEnv-v1 simulations (people's cycles)"),
    ),
    add_schema=add_schema,
    user_files=UserFiles(USER_PREFIX, read_user_config,
                         lambda path, head: path.suffix.lower() == ".json" and '"components"' in head
                         and '"last_timestep"' in head, "a room-env v1 configuration (*.json; --family roomv1)"),
    docs="docs/room-v1.md",
)
