"""Compile a stored grid task into arrays with a fixed set of read-only queries, once.

The queries use the Cypher subset every store shares, so the same text serves the
embedded store and Bolt servers. `compile_grid` does the same from an in-memory
TaskGraph (tasks built without a store); both give equal results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphstore import GraphStore, SchemaError, TaskGraph
from tasks import GridObjects, builtin_ids

GRID_QUERIES = {
    "task": "MATCH (t:Task) WHERE t.uid = $task RETURN t.params, t.content_hash, t.source, t.family",
    "cells": "MATCH (c:Cell) WHERE c.task = $task RETURN c.index, c.row, c.col, c.wall",
    "moves": "MATCH (a:Cell)-[m:MOVE]->(b:Cell) WHERE a.task = $task RETURN a.index, m.action, b.index, m.p",
    "start": "MATCH (t:Task)-[:START]->(c:Cell) WHERE t.uid = $task RETURN c.index",
    "rewards": (
        "MATCH (c:Cell)-[:HAS_REWARD]->(r:Reward) WHERE c.task = $task "
        "RETURN c.index, r.values, r.visible, r.terminate"
    ),
    "keys": "MATCH (c:Cell)-[:HAS_OBJECT]->(k:Key) WHERE c.task = $task RETURN c.index",
    "doors": "MATCH (c:Cell)-[:HAS_OBJECT]->(d:Door) WHERE c.task = $task RETURN c.index, d.orientation",
    "warps": (
        "MATCH (c:Cell)-[:HAS_OBJECT]->(w:Warp)-[:WARPS_TO]->(t:Cell) WHERE c.task = $task RETURN c.index, t.index"
    ),
    "markers": "MATCH (c:Cell)-[:HAS_OBJECT]->(m:Marker) WHERE c.task = $task RETURN c.index, m.color",
}


@dataclass(frozen=True, eq=False)
class CompiledGrid:
    """One grid task as arrays. `move[cell, direction]` is the cell reached (walls/edge: the same cell)."""

    task_id: str
    content_hash: str
    template: str
    size: str
    n: int
    wall: np.ndarray  # bool (n, n)
    move: np.ndarray  # int64 (n*n, 4); -1 for wall cells
    start: int  # cell index
    objects: GridObjects
    source: str = ""

    @property
    def n_cells(self) -> int:
        return self.n * self.n

    def arrays(self) -> dict[str, np.ndarray]:
        return {"wall": self.wall, "move": self.move, "start": np.array(self.start)}


def _assemble(
    task_id: str,
    params: dict[str, Any] | None,
    content_hash: str,
    source: str,
    cells,
    moves,
    start,
    rewards,
    keys,
    doors,
    warps,
    markers,
) -> CompiledGrid:
    params = params or {}
    n = params.get("n")
    if not isinstance(n, int) or n < 1 or len(cells) != n * n:
        raise SchemaError(
            f"task {task_id!r}: a grid task needs params.n and n*n Cell nodes (got n={n!r}, {len(cells)} cells)"
        )
    wall = np.zeros((n, n), dtype=bool)
    seen = set()
    for index, row, col, is_wall in cells:
        if index != row * n + col or not (0 <= row < n and 0 <= col < n) or index in seen:
            raise SchemaError(f"task {task_id!r}: Cell index {index} does not match row {row}, col {col} (n={n})")
        seen.add(index)
        wall[row, col] = bool(is_wall)
    move = np.full((n * n, 4), -1, dtype=np.int64)
    for source_index, action, target, p in moves:
        if not 0 <= action < 4 or p != 1.0:
            raise SchemaError(
                f"task {task_id!r}: MOVE from cell {source_index} action {action} p={p}: grid moves are the 4 compass "
                "actions with p = 1 (stochasticity is an environment parameter)"
            )
        move[source_index, action] = target
    free = ~wall.reshape(-1)
    if (move[free] < 0).any():
        cell = int(np.flatnonzero(free & (move < 0).any(axis=1))[0])
        raise SchemaError(f"task {task_id!r}: free cell {divmod(cell, n)} lacks a MOVE edge for some action")
    if start is None or wall.reshape(-1)[start]:
        raise SchemaError(f"task {task_id!r}: the START edge must lead to a free cell")

    def rc(index: int) -> tuple[int, int]:
        return divmod(int(index), n)

    objects = GridObjects(
        rewards={
            rc(i): (
                float(values[0]),
                True if visible is None else bool(visible),
                None if terminate is None else bool(terminate),
            )
            for i, values, visible, terminate in sorted(rewards)
        },
        keys=tuple(rc(i) for i in sorted(keys)),
        doors={rc(i): o for i, o in sorted(doors)},
        warps={rc(i): rc(t) for i, t in sorted(warps)},
        markers={rc(i): (int(colour[0]), int(colour[1]), int(colour[2])) for i, colour in sorted(markers)},
    )
    return CompiledGrid(
        task_id,
        content_hash,
        params.get("template", task_id),
        params.get("size", ""),
        n,
        wall,
        move,
        int(start),
        objects,
        source,
    )


def compile_grid_from_store(store: GraphStore, task_id: str) -> CompiledGrid:
    """Arrays of a stored grid task from the fixed queries (no whole-task read)."""
    rows = {name: store.cypher(query, {"task": task_id}).rows for name, query in GRID_QUERIES.items()}
    if not rows["task"]:
        from graphstore import TaskNotFound

        raise TaskNotFound(task_id, store.location, [t.task_id for t in store.list()] + builtin_ids())
    params, content_hash, source, family = rows["task"][0]
    if isinstance(params, str):  # stores keep JSON properties as text
        import json

        params = json.loads(params)
    return _assemble(
        task_id, params, content_hash or "", source or "", rows["cells"], rows["moves"],
        rows["start"][0][0] if rows["start"] else None, rows["rewards"], [r[0] for r in rows["keys"]], rows["doors"],
        rows["warps"], rows["markers"],
    )


def compile_grid(graph: TaskGraph) -> CompiledGrid:
    """Arrays from an in-memory TaskGraph."""
    index = {local: props["index"] for local, props in graph.nodes("Cell")}
    cells = [(p["index"], p["row"], p["col"], p["wall"]) for _, p in graph.nodes("Cell")]
    moves, rewards, keys, doors, warps, markers = [], [], [], [], [], []
    start = None
    warp_target = {s: index[t] for s, t, _ in graph.edges("WARPS_TO")}
    for s, t, data in graph.graph.edges(data=True):
        label, rel, props = graph.label(t), data["rel"], data["props"]
        if rel == "MOVE":
            moves.append((index[s], props["action"], index[t], props["p"]))
        elif rel == "START":
            start = index[t]
        elif rel == "HAS_REWARD":
            r = graph.props(t)
            rewards.append((index[s], r["values"], r.get("visible"), r.get("terminate")))
        elif rel == "HAS_OBJECT":
            o = graph.props(t)
            if label == "Key":
                keys.append(index[s])
            elif label == "Door":
                doors.append((index[s], o["orientation"]))
            elif label == "Warp":
                warps.append((index[s], warp_target[t]))
            elif label == "Marker":
                markers.append((index[s], o["color"]))
    return _assemble(
        graph.task_id, graph.task.get("params"), graph.task.get("content_hash") or graph.content_hash(),
        graph.task.get("source") or "", cells, moves, start, rewards, keys, doors, warps, markers,
    )
