"""Changed versions of grid worlds: the stored grid read back as a layout, changed, and built
again like any map (cells are [row, col]):

- `rewards = [{cell = [1, 9], value = 1.0}, ...]`: the rewards of the variant (replacing all);
- `walls_add = [[r, c], ...]`, `walls_remove = [[r, c], ...]`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from graphstore import TaskGraph

from ..family import TaskChangeError
from ..places import place, places
from .maps import GridLayout, GridObjects, build_grid_task

CHANGES = {
    "rewards": "the rewards of the version, replacing all: [{cell = [r, c], value = v}, ...]",
    "walls_add": "cells that become walls: [[r, c], ...]",
    "walls_remove": "walls that become free cells: [[r, c], ...]",
}
DEFAULT_REFERENCE = "neuro-nav 2.5.0 GridEnv templates"


def layout_from_graph(graph: TaskGraph) -> GridLayout:
    """The layout a grid task graph was built from (walls, start, objects), so any stored
    grid, a user's included, can be changed and built again."""
    params = graph.task.get("params") or {}
    n = int(params.get("n") or round(graph.count("Cell") ** 0.5))
    cells = {local: (int(p["row"]), int(p["col"])) for local, p in graph.nodes("Cell")}
    walls = frozenset(cells[local] for local, p in graph.nodes("Cell") if p.get("wall"))
    start = next(cells[t] for s, t, _ in graph.edges("START"))
    on: dict[str, tuple[int, int]] = {t: cells[s] for s, t, _ in graph.edges() if s in cells and t not in cells}
    warps_to = {s: cells[t] for s, t, _ in graph.edges("WARPS_TO")}
    rewards: dict[tuple[int, int], tuple[float, bool, bool | None]] = {}
    keys, doors, warps, markers = [], {}, {}, {}
    for local, props in graph.nodes():
        label = graph.label(local)
        if local not in on:
            continue
        cell = on[local]
        if label == "Reward":
            rewards[cell] = (float(props["values"][0]), bool(props.get("visible", True)), props.get("terminate"))
        elif label == "Key":
            keys.append(cell)
        elif label == "Door":
            doors[cell] = props.get("orientation", "h")
        elif label == "Warp":
            warps[cell] = warps_to[local]
        elif label == "Marker":
            markers[cell] = tuple(props["color"])
    provenance = graph.task.get("provenance") or {}
    reference = provenance.get("reference", "")
    return GridLayout(
        template=str(params.get("template", graph.task.get("name", graph.task_id))),
        size=str(params.get("size", "")),
        n=n,
        walls=walls,
        start=start,
        objects=GridObjects(rewards, tuple(keys), doors, warps, markers),
        source=str(graph.task.get("source", "")),
        reference="" if reference == DEFAULT_REFERENCE else reference,
    )


def _cell(value: Any, n: int, where: str) -> tuple[int, int]:
    return place(value, n, n, where)


def _cells(value: Any, n: int, where: str) -> list[tuple[int, int]]:
    return places(value, n, n, where)


def change_grid(graph: TaskGraph, changes: Mapping[str, Any], task_id: str, where: str) -> TaskGraph:
    """The grid `graph` with `changes` (see the module docstring), built under `task_id`."""
    grid = layout_from_graph(graph)
    n = grid.n
    walls = set(grid.walls)
    walls |= set(_cells(changes.get("walls_add", []), n, f"{where}.walls_add"))
    walls -= set(_cells(changes.get("walls_remove", []), n, f"{where}.walls_remove"))
    if grid.start in walls:
        raise TaskChangeError(f"{where}.walls_add: the start cell {list(grid.start)} cannot become a wall")
    rewards = dict(grid.objects.rewards)
    if "rewards" in changes:
        given = changes["rewards"]
        if not isinstance(given, list):
            raise TaskChangeError(f"{where}.rewards: expected a list of {{cell = [r, c], value = v}}, got {given!r}")
        rewards = {}
        for i, item in enumerate(given):
            at = f"{where}.rewards[{i}]"
            if not isinstance(item, Mapping) or set(item) - {"cell", "value"} or "cell" not in item:
                raise TaskChangeError(f"{at}: expected {{cell = [r, c], value = v}}, got {item!r}")
            cell = _cell(item["cell"], n, f"{at}.cell")
            value = item.get("value", 1.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TaskChangeError(f"{at}.value: expected a number, got {value!r}")
            rewards[cell] = (float(value), True, None)
    for cell in rewards:
        if cell in walls:
            raise TaskChangeError(f"{where}.rewards: cell {list(cell)} is a wall")
    objects = dataclasses.replace(grid.objects, rewards=rewards)
    if any(cell in walls for cell in objects.cells()):
        raise TaskChangeError(f"{where}.walls_add: a wall covers an object of the grid")
    changed = dataclasses.replace(grid, walls=frozenset(walls), objects=objects)
    return build_grid_task(changed, task_id)
