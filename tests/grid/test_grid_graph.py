"""Grids as typed graphs in the embedded store: nodes, edges, objects, queries, compiling."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tasks
from graphstore import SchemaError, open_store
from gym_bridge.grid.compiled import compile_grid, compile_grid_from_store
from gym_bridge.grid.env import GridEnv


@pytest.fixture
def store():
    s = open_store(":memory:")
    yield s
    s.close()


def test_graph_has_cells_moves_and_objects():
    graph = tasks.build("neuronav/grid/four_rooms_split/small")
    cells = dict(graph.nodes("Cell"))
    assert len(cells) == 121 and sum(p["wall"] for p in cells.values()) == 121 - 42
    moves = list(graph.edges("MOVE"))
    assert len(moves) == 42 * 4 and all(p["p"] == 1.0 for _, _, p in moves)
    assert {graph.label(t) for s, t, _ in graph.edges("HAS_OBJECT")} == {"Key", "Door", "Warp"}
    assert [p for _, p in graph.nodes("Door")] == [{"orientation": "v"}]
    ((warp, target, _),) = list(graph.edges("WARPS_TO"))
    assert graph.props(target)["row"] == 3 and graph.props(target)["col"] == 8


def test_store_round_trip_and_queries(store):
    graph = tasks.build("neuronav/grid/two_rooms/small")
    assert store.put(graph) is True and store.put(tasks.build("neuronav/grid/two_rooms/small")) is False
    assert store.get(graph.task_id) == graph
    rows = store.cypher(
        "MATCH (c:Cell)-[:HAS_OBJECT]->(d:Door) WHERE c.task = $t RETURN c.row, c.col, d.orientation",
        {"t": graph.task_id},
    ).rows
    assert rows == [[5, 5, "h"]]
    rows = store.cypher(
        "MATCH (a:Cell)-[m:MOVE]->(b:Cell) WHERE a.task = $t AND a.row = 9 AND a.col = 9 RETURN m.action, b.row, b.col "
        "ORDER BY m.action",
        {"t": graph.task_id},
    ).rows
    assert rows == [[0, 8, 9], [1, 9, 9], [2, 9, 9], [3, 9, 8]]


def test_compile_from_store_equals_compile_from_graph(store):
    for task_id in ["neuronav/grid/four_rooms_split/large", "neuronav/grid/two_step/micro"]:
        graph = tasks.build(task_id)
        store.put(graph)
        a, b = compile_grid_from_store(store, task_id), compile_grid(graph)
        assert all(np.array_equal(a.arrays()[k], b.arrays()[k]) for k in a.arrays())
        assert a.objects == b.objects and a.n == b.n and a.content_hash == b.content_hash


def test_a_large_template_compiles_from_an_on_disk_store_as_from_memory(tmp_path):
    # its speed is measured by benchmarks/grid_throughput.py, not asserted here
    path = str(tmp_path / "disk.lbug")
    graph = tasks.build("neuronav/grid/four_rooms/large")
    with open_store(path) as s:
        s.put(graph)
    with open_store(path) as s:
        stored = compile_grid_from_store(s, "neuronav/grid/four_rooms/large")
    direct = compile_grid(graph)
    assert stored.content_hash == direct.content_hash
    assert all(np.array_equal(stored.arrays()[k], direct.arrays()[k]) for k in direct.arrays())
    assert stored.objects == direct.objects


def test_env_runs_from_the_store_it_is_given(store):
    env = GridEnv("ring", "large", store=store)
    assert "neuronav/grid/ring/large" in store
    assert env.compiled.content_hash == store.content_hash("neuronav/grid/ring/large")


def test_a_stored_user_grid_with_stochastic_moves_is_refused(store):
    graph = tasks.build("neuronav/grid/empty/micro")
    for s, t, p in graph.edges("MOVE"):
        p["p"] = 0.5
        break
    with pytest.raises(SchemaError):
        compile_grid(graph)


def test_an_edited_map_file_replaces_the_stored_task(tmp_path, monkeypatch, store):
    folder = tmp_path / "maps"
    folder.mkdir()
    path = folder / "box.txt"
    path.write_text("name box\n[micro]\n#####\n#A.R#\n#...#\n#...#\n#####\nreward 1 3 1\n")
    monkeypatch.setenv("GRAPHTASKS_GRID_TEMPLATES", str(folder))
    first = GridEnv("box", "micro", store=store)
    assert first.compiled.objects.rewards == {(1, 3): (1.0, True, None)}
    path.write_text("name box\n[micro]\n#####\n#A..#\n#..R#\n#...#\n#####\nreward 2 3 5\n")
    import os

    os.utime(path, (time.time() + 5, time.time() + 5))
    second = GridEnv("box", "micro", store=store)
    assert second.compiled.objects.rewards == {(2, 3): (5.0, True, None)}
    assert store.get("neuronav/grid/box/micro").task["content_hash"] == second.compiled.content_hash
