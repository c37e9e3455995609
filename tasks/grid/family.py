"""The grid family: neuro-nav's grid templates (text maps at several sizes) and users' own
maps, stored as Cell nodes with MOVE edges and objects (rewards, keys, doors, warps) on cells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir
from ..family import Catalogue, TaskFamily, UserFiles
from .entities import grid_entity_classes
from .maps import (
    FAMILY,
    PREFIX,
    SIZE_ORDER,
    _build,
    _names,
    build_grid_task,
    parse_template,
    read_template,
    template_files,
)
from .schema import add_schema
from .variants import CHANGES, change_grid

USER_PREFIX = "user/grid/"
DECISION_PREFIX = "decision/grid/"  # data/decision/grids/: mazes of decision and learning studies (Tolman's)


def _decision_maps() -> dict[str, Path]:
    return {p.stem: p for p in sorted((data_dir() / "decision" / "grids").glob("*.txt"))}


def _decision_names() -> list[str]:
    out: list[str] = []
    for name, path in _decision_maps().items():
        sizes = read_template(path)
        out.extend(f"{name}/{size}" for size in sorted(sizes, key=lambda s: (SIZE_ORDER + (s,)).index(s)))
    return out


def _decision_build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
    if params:
        raise TaskFileError(f"{task_id}: grid tasks take no task parameters (objects etc. are environment parameters)")
    template, _, size = name.partition("/")
    return build_grid_task(read_template(_decision_maps()[template])[size], task_id)


def read_map(path: Path, task_id: str | None, params: dict[str, Any]) -> list[TaskGraph]:
    """Every size of a user's map file as a task `user/grid/<name>/<size>` (or `<task_id>/<size>`)."""
    if params:
        raise TaskFileError(f"{path}: grid maps take no parameters, got {', '.join(sorted(params))}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    layouts = parse_template(text, str(path), default_name=path.stem)
    base = task_id or USER_PREFIX + next(iter(layouts.values())).template
    return [build_grid_task(grid, f"{base}/{size}") for size, grid in layouts.items()]


def _is_map(path: Path, head: str) -> bool:
    """A grid map: a text file with a '[size]' section and no POGE section headers."""
    lines = [line.strip() for line in head.splitlines()]
    return path.suffix.lower() == ".txt" and any(
        line.startswith("[") and line.endswith("]") for line in lines
    ) and not any(line.startswith("===") for line in lines)


GRID = TaskFamily(
    name="grid",
    description="grid worlds: cells, walls, rewards, keys, doors, warps (neuro-nav's templates and your maps)",
    kinds=(FAMILY,),
    catalogues=(
        Catalogue(PREFIX, FAMILY, _names, _build, source=lambda name: template_files()[name.partition("/")[0]],
                  description="neuro-nav GridEnv templates (text maps)"),
        Catalogue(DECISION_PREFIX, FAMILY, _decision_names, _decision_build,
                  source=lambda name: _decision_maps()[name.partition("/")[0]],
                  description="mazes of learning studies (text maps): Tolman's latent learning"),
    ),
    add_schema=add_schema,
    user_files=UserFiles(USER_PREFIX, read_map, _is_map, "a grid map with [size] sections (*.txt)"),
    changes=CHANGES,
    apply_changes=change_grid,
    entity_classes=grid_entity_classes,
    docs="docs/grid.md",
)
