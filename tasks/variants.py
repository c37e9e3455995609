"""Task variants: a built-in task with changes given as data (an experiment phase's changes).

A change is made to the task's definition (the grid map's layout, the graph task's JSON),
and the variant is built from it like any task: it has its own id, `<task id>/variant-<8 hex>`
(the hash of the changes), and its own content hash, so a record of what ran says exactly
which version of the task it was.

Grid changes (cells are [row, col]):
- `rewards = [{cell = [1, 9], value = 1.0}, ...]`: the rewards of the variant (replacing all);
- `walls_add = [[r, c], ...]`, `walls_remove = [[r, c], ...]`.

Graph-task changes (states by index):
- `rewards = {"3" = 1.0, "4" = {kind = "probabilistic", values = [1, 0], probs = [0.2, 0.8]}}`:
  the reward at these states (0 removes it);
- `edges = {"1" = {"0" = 4}}`: from state 1, action 0 now leads to state 4.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from typing import Any, Mapping

from graphstore import TaskGraph
from graphstore.errors import GraphtasksError

from .graph_tasks import build_graph_task, effective_params, load_definition, substitute
from .grid_tasks import PREFIX as GRID_PREFIX
from .grid_tasks import build_grid_task, layout, stored_source
from .registry import build, resolve, source_file

GRID_CHANGES = ("rewards", "walls_add", "walls_remove")
GRAPH_CHANGES = ("rewards", "edges")


class TaskChangeError(GraphtasksError, ValueError):
    """A change does not fit the task (unknown field, a cell or state that does not exist)."""


def variant_id(task_id: str, changes: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(changes, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{task_id}/variant-{digest}"


def task_variant(task_id: str, changes: Mapping[str, Any] | None, where: str = "changes") -> TaskGraph:
    """The built-in task `task_id` with `changes` (none: the task itself); errors name `where`."""
    if not changes:
        return build(task_id)
    if task_id.startswith(GRID_PREFIX):
        return _grid_variant(task_id, changes, where)
    family, _ = resolve(task_id)
    if family.name in ("rewardgym", "neuronav/graph"):
        return _graph_variant(task_id, family.name, changes, where)
    raise TaskChangeError(f"{where}: tasks of {family.name!r} take no changes (grid and graph tasks do)")


def _unknown(changes: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    extra = sorted(set(changes) - set(known))
    if extra:
        raise TaskChangeError(f"{where}: unknown change(s) {', '.join(extra)}; use {', '.join(known)}")


def _cell(value: Any, n: int, where: str) -> tuple[int, int]:
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    if not ok:
        raise TaskChangeError(f"{where}: expected a cell [row, col], got {value!r}")
    r, c = value
    if not (0 <= r < n and 0 <= c < n):
        raise TaskChangeError(f"{where}: cell [{r}, {c}] is outside the {n}x{n} grid")
    return r, c


def _cells(value: Any, n: int, where: str) -> list[tuple[int, int]]:
    if not isinstance(value, list):
        raise TaskChangeError(f"{where}: expected a list of cells [[row, col], ...], got {value!r}")
    return [_cell(v, n, f"{where}[{i}]") for i, v in enumerate(value)]


def _grid_variant(task_id: str, changes: Mapping[str, Any], where: str) -> TaskGraph:
    _unknown(changes, GRID_CHANGES, where)
    template, _, size = task_id[len(GRID_PREFIX) :].partition("/")
    grid = layout(template, size)
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
    return build_grid_task(changed, variant_id(task_id, changes))


def _state(key: Any, n: int, where: str) -> int:
    try:
        state = int(key)
    except (TypeError, ValueError):
        raise TaskChangeError(f"{where}: {key!r} is not a state index") from None
    if not 0 <= state < n:
        raise TaskChangeError(f"{where}: state {state} does not exist (the task has states 0..{n - 1})")
    return state


def _per_action(entry: Any) -> dict[str, Any]:
    """A node's entry in the graph notation as a table of action = outcome, to change one action."""
    if isinstance(entry, list):  # [t0, t1, ...]: action i -> t_i
        return {str(i): t for i, t in enumerate(entry)}
    if isinstance(entry, Mapping) and "targets" in entry and "p" in entry:
        # ([t0, t1, ...], p): action i -> t_i with p, else uniformly one of the others
        targets, p = list(entry["targets"]), float(entry["p"])
        rest = (1 - p) / (len(targets) - 1) if len(targets) > 1 else 0.0
        return {
            str(i): {
                "targets": [t] + [u for j, u in enumerate(targets) if j != i],
                "probs": [p] + [rest] * (len(targets) - 1),
            }
            for i, t in enumerate(targets)
        }
    if isinstance(entry, Mapping):
        return dict(entry)
    return {"0": entry}


def _graph_variant(task_id: str, family: str, changes: Mapping[str, Any], where: str) -> TaskGraph:
    _unknown(changes, GRAPH_CHANGES, where)
    path = source_file(task_id)
    if path is None:
        raise TaskChangeError(f"{where}: {task_id!r} has no definition file to change")
    definition = copy.deepcopy(load_definition(path))
    chosen = effective_params(definition, {}, str(path))  # placeholders take their defaults: numbers to change
    definition = {k: v if k == "defaults" else substitute(v, chosen, str(path)) for k, v in definition.items()}
    graph = definition["graph"]
    n = len(graph)
    rewards = changes.get("rewards", {})
    if not isinstance(rewards, Mapping):
        raise TaskChangeError(f"{where}.rewards: expected a table of state = reward, got {rewards!r}")
    table = definition.setdefault("rewards", {})
    for key, value in rewards.items():
        state = str(_state(key, n, f"{where}.rewards.{key}"))
        if value == 0:
            table.pop(state, None)
        else:
            table[state] = value
    edges = changes.get("edges", {})
    if not isinstance(edges, Mapping):
        raise TaskChangeError(f"{where}.edges: expected a table of state = {{action = target}}, got {edges!r}")
    for key, moves in edges.items():
        at = f"{where}.edges.{key}"
        state = str(_state(key, n, at))
        if not isinstance(moves, Mapping):
            raise TaskChangeError(f"{at}: expected a table of action = target, got {moves!r}")
        entry = _per_action(graph[state])
        entry = dict(entry)
        for action, target in moves.items():
            if not str(action).isdigit():
                raise TaskChangeError(f"{at}.{action}: an action is a non-negative integer")
            entry[str(action)] = _state(target, n, f"{at}.{action}")
        graph[state] = entry
    return build_graph_task(variant_id(task_id, changes), family, definition, source=stored_source(str(path)))
