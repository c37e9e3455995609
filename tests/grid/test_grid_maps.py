"""The map files: equal to the reference layouts cell for cell (documented micro fixes
aside), valid, and parsed with errors that name the file and line."""

from __future__ import annotations

from collections import deque

import pytest

import tasks
from tasks import TaskFileError
from tasks.grid.maps import layout, parse_template, template_names

from .grid_reference import REDESIGNED, START_FREED

SIZES = ("micro", "small", "large")


def reference_objects(ref_layout: dict) -> dict:
    n = ref_layout["n"]
    objects = ref_layout["objects"]
    rewards = {}
    for item in objects.get("rewards", []):
        r, c = item["pos"]
        if r < n and c < n:
            value = item["value"]
            rewards[(r, c)] = value[0] if isinstance(value, list) else value
    return {
        "rewards": rewards,
        "keys": sorted(tuple(k) for k in objects.get("keys", [])),
        "doors": {tuple(d["pos"]): d["value"] for d in objects.get("doors", [])},
        "warps": {tuple(w["pos"]): tuple(w["value"]) for w in objects.get("warps", [])},
    }


def test_all_18_templates_at_three_sizes(reference):
    assert template_names() == sorted(reference)
    assert len(template_names()) == 18
    for name in template_names():
        for size in SIZES:
            assert layout(name, size).n == {"micro": 7, "small": 11, "large": 17}[size]


@pytest.mark.parametrize("size", SIZES)
def test_layouts_match_reference_cell_for_cell(reference, size):
    for name, sizes in reference.items():
        if (name, size) in REDESIGNED:
            continue
        ref = sizes[size]
        grid = layout(name, size)
        walls = {tuple(w) for w in ref["walls"] if w[0] < ref["n"] and w[1] < ref["n"]}
        if (name, size) in START_FREED:
            walls.discard(tuple(ref["agent_start"]))
        assert grid.walls == walls, f"{name}/{size}: walls differ"
        assert grid.start == tuple(ref["agent_start"]), f"{name}/{size}: start differs"
        ours = grid.objects
        expected = reference_objects(ref)
        assert {cell: v for cell, (v, _, _) in ours.rewards.items()} == expected["rewards"], f"{name}/{size}"
        assert sorted(ours.keys) == expected["keys"]
        assert ours.doors == expected["doors"]
        assert ours.warps == expected["warps"]


def _reachable(grid) -> set:
    seen, todo = {grid.start}, deque([grid.start])
    while todo:
        cell = todo.popleft()
        nxt = [grid.step_target(cell, d) for d in range(4)]
        if cell in grid.objects.warps:
            nxt = [grid.objects.warps[cell]]
        for t in nxt:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


@pytest.mark.parametrize("name", sorted(n for n, _ in REDESIGNED | START_FREED))
def test_fixed_micro_layouts_are_valid(reference, name):
    grid = layout(name, "micro")
    assert grid.n == 7
    assert grid.start not in grid.walls
    reachable = _reachable(grid)
    for cell in grid.objects.rewards:
        assert cell in reachable, f"{name}/micro: reward {cell} cannot be reached"
    ref_values = sorted(reference_objects(reference[name]["micro"] | {"n": 99})["rewards"].values())
    assert sorted(v for v, _, _ in grid.objects.rewards.values()) == ref_values  # same reward values as intended


def test_every_template_goal_is_reachable():
    for name in template_names():
        for size in SIZES:
            grid = layout(name, size)
            reachable = _reachable(grid)
            assert any(cell in reachable for cell in grid.objects.rewards), f"{name}/{size}"


GOOD = """name tiny
[micro]
#####
#A.R#
#.K.#
#...#
#####
reward 1 3 2.5 hidden continue
key 2 2
"""


def test_parse_a_user_map_with_flags():
    grid = parse_template(GOOD, "tiny.txt")["micro"]
    assert grid.n == 5 and grid.start == (1, 1)
    assert grid.objects.rewards == {(1, 3): (2.5, False, False)}
    assert grid.objects.keys == ((2, 2),)


@pytest.mark.parametrize(
    "text, message",
    [
        (GOOD.replace("#A.R#", "#A.R"), "tiny.txt, line 4: map row has 4 cells"),
        (GOOD.replace("key 2 2\n", ""), "tiny.txt, line 5: map letter 'K' at (2, 2) has no object line"),
        (GOOD.replace("reward 1 3 2.5", "reward 1 2 2.5"), "tiny.txt, line 8: reward at (1, 2) needs 'R' on the map"),
        (GOOD.replace("reward 1 3 2.5", "reward 1 3 x"), "tiny.txt, line 8: reward value 'x' is not a number"),
        (GOOD.replace("key 2 2", "lever 2 2"), "tiny.txt, line 9: cannot read 'lever 2 2'"),
        (GOOD.replace("#A.R#", "#..R#"), "tiny.txt, line 2: section [micro] has no start cell 'A'"),
        (GOOD + "warp 3 3 0 0\n", "tiny.txt, line 10: warp at (3, 3) needs 'W' on the map"),
    ],
)
def test_map_errors_name_file_and_line(text, message):
    with pytest.raises(TaskFileError) as info:
        parse_template(text, "tiny.txt")
    assert message in str(info.value)


def test_user_template_folder(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "tiny.txt").write_text(GOOD)
    monkeypatch.setenv("GRAPHTASKS_GRID_TEMPLATES", str(folder))
    assert "neuronav/grid/tiny/micro" in tasks.builtin_ids()
    graph = tasks.build("neuronav/grid/tiny/micro")
    assert graph.task["source"].endswith("tiny.txt")
    from gym_bridge.grid.env import GridEnv

    env = GridEnv("tiny", "micro")
    env.reset(seed=0)
    env.step(1)  # east
    _, reward, terminated, _, _ = env.step(1)  # onto the hidden, non-terminating reward
    assert reward == 2.5 and not terminated


def test_user_template_name_clash_is_an_error(tmp_path, monkeypatch):
    folder = tmp_path / "clash"
    folder.mkdir()
    (folder / "four_rooms.txt").write_text(GOOD.replace("name tiny", "name four_rooms"))
    monkeypatch.setenv("GRAPHTASKS_GRID_TEMPLATES", str(folder))
    with pytest.raises(TaskFileError, match="already defined in"):
        tasks.build("neuronav/grid/four_rooms/small")
