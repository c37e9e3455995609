"""The tile graph of the example worlds, built-in tasks, and the store."""

from __future__ import annotations

import pytest
from conftest import DATA, WORLDS

import tasks
from graphstore import open_store
from tasks import TaskFileError
from tasks.poge import graph_to_world, load_world


def moves(graph, tile: str, action: int) -> dict[tuple[str, int], tuple[float, str | None]]:
    return {
        (target, props["executed"]): (props["p"], props.get("via"))
        for source, target, props in graph.edges("MOVE")
        if source == tile and props["action"] == action
    }


def test_world1_tiles_moves_doors_and_start() -> None:
    graph = tasks.build("poge/world1")
    assert graph.family == "poge" and graph.task["n_states"] == 36 and graph.task["n_actions"] == 4
    assert "MIT" in graph.task["provenance"]["licence"]
    assert graph.count("Tile") == 81
    corridor = graph.props("r1c5")
    assert (corridor["kind"], corridor["symbol"], corridor["abstraction"]) == ("floor", "2", "corridor")
    reward = graph.props("r2c2")
    assert (reward["reward_symbol"], reward["reward"], reward["rule"]) == ("a", 1, "2")
    assert graph.props("r1c6")["kind"] == "terminal" and graph.props("r2c4")["kind"] == "door"
    assert [t for s, t, _ in graph.edges("START")] == ["r2c7"]
    # a door is one move from the tile before it to the tile behind it
    assert moves(graph, "r2c5", 2) == {("r2c3", 2): (1.0, "r2c4")}
    # rule 1-up-[up:0.75, right:0.25] on (3, 1): right leads through no door, up is (2, 1)
    assert moves(graph, "r3c1", 0) == {("r2c1", 0): (0.75, None), ("r3c2", 3): (0.25, None)}
    # no moves out of walls, doors, goals and terminals
    sources = {s for s, _, _ in graph.edges("MOVE")}
    assert not sources & {"r0c0", "r2c4", "r5c6", "r1c6"}


def test_world3_toggle_and_rule_without_the_intended_action() -> None:
    graph = tasks.build("poge/world3")
    assert graph.props("r5c2")["kind"] == "toggle"
    # start (4, 2) has rule 1: 1-down-[left:0.8, right:0.2]: down never happens
    assert moves(graph, "r4c2", 1) == {("r4c1", 2): (0.8, None), ("r4c2", 3): (0.2, None)}


@pytest.mark.parametrize("name", WORLDS)
def test_store_round_trip_of_example_worlds(name: str, isolated_store: str) -> None:
    graph = tasks.build(f"poge/{name}")
    with open_store(isolated_store) as store:
        store.put(graph)
        got = store.get(f"poge/{name}")
        rows = store.cypher(
            "MATCH (a:Tile)-[m:MOVE]->(b:Tile) WHERE a.task = $id RETURN a.uid, m.action, sum(m.p)",
            {"id": f"poge/{name}"},
        ).rows
    assert got == graph
    assert graph_to_world(got) == load_world(DATA / f"{name}.txt")
    assert rows and all(abs(total - 1.0) < 1e-9 for _, _, total in rows)


def test_builtin_worlds_take_no_parameters() -> None:
    assert {f"poge/{n}" for n in WORLDS} <= set(tasks.builtin_ids())
    with pytest.raises(TaskFileError, match="take no parameters"):
        tasks.build("poge/world0", size=3)


def test_a_store_made_before_tiles_existed_is_migrated(tmp_path) -> None:
    """An existing store (schema without Tile, MOVE Tile->Tile, MOVE.via) gets them added on open."""
    from dataclasses import replace

    from graphstore.ladybug_store import LadybugStore
    from graphstore.schema import build_schema

    old = build_schema()
    del old.nodes["Tile"]
    old.rels["MOVE"] = replace(
        old.rels["MOVE"],
        endpoints=(("State", "State"),),
        properties=tuple(p for p in old.rels["MOVE"].properties if p.name != "via"),
    )
    old.rels["START"] = replace(old.rels["START"], endpoints=(("Task", "State"),))
    location = str(tmp_path / "old.lbug")
    with LadybugStore(location, schema=old) as store:
        store.put(tasks.build("rewardgym/two-step"))
    with open_store(location) as store:
        graph = tasks.build("poge/world1")
        assert store.put(graph)
        assert store.get("poge/world1") == graph
        assert store.get("rewardgym/two-step") == tasks.build("rewardgym/two-step")
