"""The example worlds in data/poge/ as built-in tasks `poge/<file stem>`, and user files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir
from ..registry import Family, register_family
from .graph import world_to_graph
from .parser import load_world

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


register_family(Family("poge", PREFIX, _names, lambda name: {}, _build, "POGE partially observable gridworlds",
                       source=lambda name: _folder() / f"{name}.txt"))
