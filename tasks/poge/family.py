"""The POGE family: the example worlds in data/poge/ as built-in tasks `poge/<file stem>`, and
users' world files as `user/poge/<file stem>`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir
from ..family import Catalogue, TaskFamily, UserFiles
from .graph import FAMILY, world_to_graph
from .parser import load_world
from .schema import add_schema
from .variants import CHANGES, change_world

PREFIX = "poge/"
USER_PREFIX = "user/poge/"
PROVENANCE = {
    "reference": "POGE, emuskardin/gridworld-gym",
    "licence": "MIT, Copyright 2022 Edi Muskardin; see data/poge/LICENSE.txt",
}


def _folder() -> Path:
    return data_dir() / "poge"


def _names() -> list[str]:
    return sorted(p.stem for p in _folder().glob("*.txt") if p.name != "LICENSE.txt")


def _build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
    if params:
        raise TaskFileError(f"task {task_id!r}: POGE worlds take no parameters, got {', '.join(sorted(params))}")
    path = _folder() / f"{name}.txt"
    return world_to_graph(load_world(path), task_id, name, source=f"data/poge/{path.name}", provenance=PROVENANCE)


def build_from_world_file(path: str | Path, task_id: str | None = None) -> TaskGraph:
    """A user's world file as a tile graph, id `user/poge/<file stem>` unless given."""
    p = Path(path)
    return world_to_graph(load_world(p), task_id or USER_PREFIX + p.stem, p.stem, source=str(p))


def _read(path: Path, task_id: str | None, params: dict[str, Any]) -> list[TaskGraph]:
    if params:
        raise TaskFileError(f"{path}: POGE worlds take no parameters, got {', '.join(sorted(params))}")
    return [build_from_world_file(path, task_id)]


POGE = TaskFamily(
    name="poge",
    description="POGE world files: tiles with abstraction symbols, slip rules, partial observability",
    kinds=(FAMILY,),
    catalogues=(
        Catalogue(PREFIX, FAMILY, _names, _build, source=lambda name: _folder() / f"{name}.txt",
                  description="POGE partially observable gridworlds"),
    ),
    add_schema=add_schema,
    user_files=UserFiles(USER_PREFIX, _read, lambda path, head: "===Layout===" in head,
                         "a POGE world file with a ===Layout=== section"),
    changes=CHANGES,
    apply_changes=change_world,
    docs="docs/poge.md",
)
