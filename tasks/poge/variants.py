"""Changed versions of POGE worlds: the stored tile graph read back as a world, changed, and
parsed again (so a change that breaks the world is refused like a bad file). Tiles are [row, col]:

- `rewards = [{tile = [3, 1], value = 5}, ...]`: the world's rewards, replacing all (integers);
- `walls_add = [[r, c], ...]`, `walls_remove = [[r, c], ...]`: floor becomes wall and back.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from graphstore import TaskGraph

from ..data import TaskFileError
from ..family import TaskChangeError
from ..places import place, places
from .graph import graph_to_world, world_to_graph
from .parser import parse_world
from .world import PAYS_REWARD, PogeWorld, kind_of, unpaid_reward_reason
from .writer import write_world

CHANGES = {
    "rewards": "the world's rewards, replacing all: [{tile = [r, c], value = integer}, ...]",
    "walls_add": "floor tiles that become walls: [[r, c], ...]",
    "walls_remove": "walls that become floor: [[r, c], ...]",
}
SYMBOLS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _tile(value: Any, world: PogeWorld, where: str) -> tuple[int, int]:
    return place(value, world.rows, world.cols, where, "tile")


def _tiles(value: Any, world: PogeWorld, where: str) -> list[tuple[int, int]]:
    return places(value, world.rows, world.cols, where, "tile")


def _with_walls(world: PogeWorld, changes: Mapping[str, Any], where: str) -> tuple[str, ...]:
    rows = [list(row) for row in world.layout]
    for r, c in _tiles(changes.get("walls_add", []), world, f"{where}.walls_add"):
        if kind_of(rows[r][c]) != "floor":
            raise TaskChangeError(f"{where}.walls_add: tile [{r}, {c}] is a {kind_of(rows[r][c])}, not floor")
        rows[r][c] = "#"
    for r, c in _tiles(changes.get("walls_remove", []), world, f"{where}.walls_remove"):
        if rows[r][c] != "#":
            raise TaskChangeError(f"{where}.walls_remove: tile [{r}, {c}] is not a wall")
        rows[r][c] = " "
    return tuple("".join(row) for row in rows)


def _with_rewards(world: PogeWorld, layout: tuple[str, ...], given: Any, where: str) -> dict[str, Any]:
    if not isinstance(given, list):
        raise TaskChangeError(f"{where}.rewards: expected a list of {{tile = [r, c], value = v}}, got {given!r}")
    grid = [list(row) for row in layout]  # a Rewards map echoes the Layout where nothing is paid
    used = set("".join(layout))
    free = iter(s for s in SYMBOLS if s not in used)
    symbols: dict[int, str] = {}
    for i, item in enumerate(given):
        at = f"{where}.rewards[{i}]"
        if not isinstance(item, Mapping) or set(item) - {"tile", "value"} or "tile" not in item:
            raise TaskChangeError(f"{at}: expected {{tile = [r, c], value = v}}, got {item!r}")
        r, c = _tile(item["tile"], world, f"{at}.tile")
        if kind_of(layout[r][c]) not in PAYS_REWARD:
            raise TaskChangeError(f"{at}.tile: [{r}, {c}] is a {kind_of(layout[r][c])} tile, where a reward would "
                                  f"never be paid: {unpaid_reward_reason(kind_of(layout[r][c]))}")
        value = item.get("value", 1)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TaskChangeError(f"{at}.value: POGE rewards are integers, got {value!r}")
        if value not in symbols:
            symbols[value] = next(free)
        grid[r][c] = symbols[value]
    if not symbols:
        return {"rewards": None, "reward_values": ()}
    return {
        "rewards": tuple("".join(row) for row in grid),
        "reward_values": tuple((symbol, value) for value, symbol in symbols.items()),
    }


def change_world(graph: TaskGraph, changes: Mapping[str, Any], task_id: str, where: str) -> TaskGraph:
    """The world `graph` with `changes` (see the module docstring), stored under `task_id`."""
    world = graph_to_world(graph)
    layout = _with_walls(world, changes, where)
    fields: dict[str, Any] = {"layout": layout}
    if "rewards" in changes:
        fields.update(_with_rewards(world, layout, changes["rewards"], where))
    changed = dataclasses.replace(world, **fields)
    try:
        checked = parse_world(write_world(changed), f"{where} (the changed world)")
    except TaskFileError as exc:
        raise TaskChangeError(str(exc)) from None
    task = graph.task
    return world_to_graph(checked, task_id, task.get("name"), str(task.get("source", "")),
                          str(task.get("description", "")), dict(task.get("provenance") or {}))
