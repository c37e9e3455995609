"""`CompiledRoomMap`: a stored Room map task (room-env v2 or v3) as arrays, read once.

Rooms are numbered in the configuration's order, objects static first, then independent
and dependent (v2) or moving (v3); the agent is not an object here (it is never asked
about). Every table the single env and the vector env step is here:

- `doors[t % period, room, direction]`: the room a move leads to (the room itself where a
  wall is; `period` 1 in v2, the least common multiple of the wall patterns in v3);
- `exits[t % period, room, direction]`: the same with `n_rooms` for a wall (observations);
- v2: initial-room distributions, per-(object, room) move distributions over north, east,
  south, west, stay (cumulative), attach probabilities of dependent on independent objects,
  question weights (cumulative);
- v3: each moving object's direction preferences and the 100-step question cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphstore import GraphStore, TaskGraph
from tasks.roommap.schema import DIRECTIONS, MOVES

from ..loading import load_task_graph

WALL = "wall"


@dataclass(frozen=True)
class CompiledRoomMap:
    task_id: str
    version: int
    rooms: list[str]
    room_labels: list[str]
    positions: np.ndarray  # (R, 2) row, col
    objects: list[str]
    object_labels: list[str]
    kinds: list[str]  # per object: static, independent, dependent, moving
    doors: np.ndarray  # (period, R, 5): next room per move (stay included)
    exits: np.ndarray  # (period, R, 4): neighbour or R for a wall
    base_doors: np.ndarray  # (R, 4): neighbour or -1, without periodic walls
    walls: list[tuple[int, int, str, tuple[int, ...]]]  # v3: (room, room, orientation, pattern)
    agent_start: np.ndarray  # (R,) probabilities
    start: np.ndarray  # (O, R) probabilities of the objects' first rooms
    # v2
    independent: np.ndarray  # object indices of the independent objects
    dependent: np.ndarray  # object indices of the dependent objects
    move_cum: np.ndarray  # (I, R, 4): cumulative probabilities of north, east, south (west); stay is the rest
    attach_p: np.ndarray  # (D, I) probability of attaching (0: never)
    question_cum: np.ndarray  # (O,) cumulative question weights (normalised)
    # v3
    preferences: np.ndarray  # (M, 4) direction indices tried in order, -1 padding
    moving: np.ndarray  # object indices of the moving objects
    question_cycle: np.ndarray  # (100,) object asked at step t % 100
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rooms(self) -> int:
        return len(self.rooms)

    @property
    def n_objects(self) -> int:
        return len(self.objects)

    @property
    def period(self) -> int:
        return int(self.doors.shape[0])

    def room_index(self, name: str) -> int:
        return self.rooms.index(name)


def _ordered(graph: TaskGraph, label: str) -> list[tuple[str, dict[str, Any]]]:
    return sorted(graph.nodes(label), key=lambda item: item[1]["order"])


def compile_room_map(graph: TaskGraph) -> CompiledRoomMap:
    """The arrays of a Room map task graph (see the module docstring)."""
    params = dict(graph.task.get("params") or {})
    version = 3 if graph.family == "room-v3" else 2
    room_nodes = _ordered(graph, "MapRoom")
    rooms = [p["name"] for _, p in room_nodes]
    index = {local: i for i, (local, _) in enumerate(room_nodes)}
    n = len(rooms)
    base = np.full((n, 4), -1, dtype=np.int64)
    kind_rank = {"static": 0, "independent": 1, "dependent": 2, "moving": 1}
    object_nodes = sorted(
        ((local, p) for local, p in graph.nodes("MapObject") if p["kind"] != "agent"),
        key=lambda item: (kind_rank[item[1]["kind"]], item[1]["order"]),
    )
    agent_local = next(local for local, p in graph.nodes("MapObject") if p["kind"] == "agent")
    objects = [p["name"] for _, p in object_nodes]
    kinds = [p["kind"] for _, p in object_nodes]
    obj_index = {local: i for i, (local, _) in enumerate(object_nodes)}
    n_obj = len(objects)
    start = np.zeros((n_obj, n))
    agent_start = np.zeros(n)
    independent = np.array([i for i, k in enumerate(kinds) if k == "independent"], dtype=np.int64)
    dependent = np.array([i for i, k in enumerate(kinds) if k == "dependent"], dtype=np.int64)
    moving = np.array([i for i, k in enumerate(kinds) if k == "moving"], dtype=np.int64)
    ind_pos = {int(o): k for k, o in enumerate(independent)}
    dep_pos = {int(o): k for k, o in enumerate(dependent)}
    move_p = np.zeros((len(independent), n, 5))
    move_p[:, :, 4] = 1.0
    attach_p = np.zeros((len(dependent), len(independent)))
    ends: dict[str, dict[int, int]] = {}
    questions: list[tuple[int, int]] = []
    for source, target, data in graph.graph.edges(data=True):
        rel, props = data["rel"], data["props"]
        if rel == "LEADS_TO":
            base[index[source], DIRECTIONS.index(props["direction"])] = index[target]
        elif rel == "STARTS_IN":
            if source == agent_local:
                agent_start[index[target]] = props["p"]
            else:
                start[obj_index[source], index[target]] = props["p"]
        elif rel == "MOVES_IN":
            move_p[ind_pos[obj_index[source]], index[target]] = [props[d] for d in MOVES]
        elif rel == "ATTACHES_TO":
            attach_p[dep_pos[obj_index[source]], ind_pos[obj_index[target]]] = props["p"]
        elif rel == "SEPARATES":
            ends.setdefault(source, {})[props["end"]] = index[target]
        elif rel == "ASKS":
            questions.append((props["step"], obj_index[target]))
    walls = [
        (ends[local][0], ends[local][1], p["orientation"], tuple(int(v) for v in p["pattern"]))
        for local, p in _ordered(graph, "MapWall")
    ]
    period = 1
    for *_, pattern in walls:
        period = period * len(pattern) // math.gcd(period, len(pattern))
    doors = np.empty((period, n, 5), dtype=np.int64)
    rooms_col = np.arange(n)
    for t in range(period):
        sides = base.copy()
        for first, second, orientation, pattern in walls:
            if pattern[t % len(pattern)] == 1:
                if orientation == "horizontal":
                    sides[first, 2] = sides[second, 0] = -1
                else:
                    sides[first, 1] = sides[second, 3] = -1
        doors[t, :, :4] = np.where(sides >= 0, sides, rooms_col[:, None])
        doors[t, :, 4] = rooms_col
    exits = np.where(doors[:, :, :4] == rooms_col[None, :, None], n, doors[:, :, :4])  # a wall shows as n_rooms
    weights = np.array([p.get("question_prob", 0.0) for _, p in object_nodes], dtype=float)
    total = weights.sum()
    question_cum = np.cumsum(weights / total) if total > 0 else np.linspace(1 / max(n_obj, 1), 1, n_obj)
    if n_obj:
        question_cum[-1] = 1.0
    prefs = np.full((len(moving), 4), -1, dtype=np.int64)
    for k, o in enumerate(moving):
        order = [DIRECTIONS.index(d) for d in object_nodes[int(o)][1].get("preferences") or []]
        prefs[k, : len(order)] = order
    cycle = np.array([o for _, o in sorted(questions)], dtype=np.int64)
    move_cum = np.cumsum(move_p[:, :, :4], axis=2) if len(independent) else np.zeros((0, n, 4))
    labels = [p.get("label") or p["name"] for _, p in room_nodes]
    object_labels = [p.get("label") or p["name"] for _, p in object_nodes]
    positions = np.array([[p["row"], p["col"]] for _, p in room_nodes], dtype=np.int64).reshape(n, 2)
    for array in (doors, exits, base, start, agent_start, move_cum, attach_p, question_cum, prefs, cycle, positions):
        array.setflags(write=False)
    return CompiledRoomMap(
        graph.task_id, version, rooms, labels, positions, objects, object_labels, kinds, doors, exits, base, walls,
        agent_start, start, independent, dependent, move_cum, attach_p, question_cum, prefs, moving, cycle, params,
    )


def load_room_map(task: str | TaskGraph | CompiledRoomMap, store: GraphStore | str | None = None) -> CompiledRoomMap:
    """Compile a Room map task: a TaskGraph, or an id read from the store (a built-in is put first)."""
    if isinstance(task, CompiledRoomMap):
        return task
    return compile_room_map(load_task_graph(task, store))
