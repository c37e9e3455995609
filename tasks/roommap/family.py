"""The Room map family: room-env's RoomEnv-v2 and RoomEnv-v3 configurations as built-in tasks
`room/v2/<name>` and `room/v3/<name>` (the JSON files of room-env 3.0.6 in data/room_env/,
MIT licence in data/room_env/LICENSE.txt)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir, read_json
from ..family import Builder, Catalogue, TaskFamily, UserFiles
from .config import config_to_graph
from .schema import add_schema

FOLDER = "room_env"
USER_PREFIX = "user/roommap/"
PROVENANCE = {
    "reference": "room-env 3.0.6 (PyPI), github.com/humemai/room-env",
    "licence": "MIT, Copyright (c) 2022 Taewoon Kim; see data/room_env/LICENSE.txt",
}
DEFAULTS = {2: "xl-different-prob", 3: "small-01"}  # v2: RoomEnv2's default; v3: see docs/room-v2-v3.md


def config_path(version: int, name: str) -> Path:
    return data_dir() / FOLDER / f"room-config-{name}-v{version}.json"


def config_names(version: int) -> list[str]:
    suffix = f"-v{version}.json"
    files = (data_dir() / FOLDER).glob(f"room-config-*{suffix}")
    return sorted(p.name[len("room-config-"):-len(suffix)] for p in files)


def read_config(version: int, name: str) -> dict[str, Any]:
    path = config_path(version, name)
    config = read_json(path)
    if not isinstance(config, dict):
        raise TaskFileError(f"{path}: expected a room-env configuration object")
    return config


def _names(version: int) -> Callable[[], list[str]]:
    return lambda: config_names(version)


def _source(version: int) -> Callable[[str], Path]:
    return lambda name: config_path(version, name)


def _builder(version: int) -> Builder:
    def build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
        if params:
            raise TaskFileError(f"task {task_id!r}: Room map tasks take no parameters, got {', '.join(sorted(params))}")
        path = config_path(version, name)
        return config_to_graph(read_config(version, name), task_id, name, source=f"data/{FOLDER}/{path.name}",
                               provenance=PROVENANCE, where=str(path))

    return build


def read_user_config(path: Path, task_id: str | None, params: dict[str, Any]) -> list[TaskGraph]:
    """A room-env v2 or v3 configuration file as the task `user/roommap/<file stem>` (or `task_id`)."""
    if params:
        raise TaskFileError(f"{path}: Room map tasks take no parameters, got {', '.join(sorted(params))}")
    config = read_json(path)
    if not isinstance(config, dict):
        raise TaskFileError(f"{path}: expected a room-env configuration object")
    try:
        return [config_to_graph(config, task_id or USER_PREFIX + path.stem, path.stem, source=str(path),
                                where=str(path))]
    except TaskFileError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise TaskFileError(f"{path}: not a valid room-env configuration: {type(exc).__name__}: {exc}") from None


def _recognises(path: Path, head: str) -> bool:
    return path.suffix.lower() == ".json" and ('"room_config"' in head or '"room_connections"' in head)


ROOM_MAP = TaskFamily(
    name="roommap",
    description="the Room task's maps (room-env v2, v3): rooms, walls, moving objects; answer where things are",
    kinds=("room-v2", "room-v3"),
    catalogues=tuple(
        Catalogue(f"room/v{v}/", f"room-v{v}", _names(v), _builder(v), source=_source(v),
                  description=f"room-env RoomEnv-v{v} maps")
        for v in (2, 3)
    ),
    add_schema=add_schema,
    user_files=UserFiles(USER_PREFIX, read_user_config, _recognises,
                         "a room-env v2 or v3 configuration (*.json; --family roommap)"),
    docs="docs/room-v2-v3.md",
)
