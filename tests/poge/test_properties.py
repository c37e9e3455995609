"""Property tests: random valid worlds round-trip and have proper distributions; mutated ones fail clearly."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from worldgen import worlds

from graphstore import open_store
from tasks.poge import PogeFormatError, PogeWorld, graph_to_world, parse_world, tile_id, world_to_graph, write_world
from tasks.poge.world import ENDS_EPISODE
from tests.budget import examples


def fixed(full: int) -> settings:
    """Reproducible runs: hypothesis draws from a fixed seed, no example database; fewer
    examples in a quick run (tests/budget.py)."""
    return settings(
        max_examples=examples(full),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


SETTINGS = fixed(80)


@SETTINGS
@given(worlds())
@pytest.mark.slow
def test_text_round_trip(world: PogeWorld) -> None:
    text = write_world(world)
    parsed = parse_world(text, "generated.txt")
    assert parsed == world
    assert write_world(parsed) == text


@SETTINGS
@given(worlds())
def test_graph_round_trip_and_reachable_distributions_sum_to_one(world: PogeWorld) -> None:
    graph = world_to_graph(world, "test/poge")
    assert graph_to_world(graph) == world
    assert graph.count("Tile") == world.rows * world.cols
    out: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    succ: dict[str, set[str]] = defaultdict(set)
    for source, target, props in graph.edges("MOVE"):
        out[source][props["action"]] += props["p"]
        succ[source].add(target)
    start = tile_id(*world.start)
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        props = graph.props(node)
        if props["kind"] in ENDS_EPISODE:
            assert node not in out  # the episode ends here: no moves
            continue
        assert sorted(out[node]) == [0, 1, 2, 3], node
        for action, total in out[node].items():
            assert total == pytest.approx(1.0, abs=1e-9), (node, action)
        for nxt in succ[node] - seen:
            seen.add(nxt)
            todo.append(nxt)
    assert all(graph.props(n)["kind"] not in ("wall", "door") for n in seen)


@fixed(10)
@given(worlds())
@pytest.mark.slow
def test_store_round_trip(world: PogeWorld) -> None:
    graph = world_to_graph(world, "test/poge")
    with open_store(":memory:") as store:
        assert store.put(graph)
        assert not store.put(world_to_graph(world, "test/poge"))  # same content: unchanged
        got = store.get("test/poge")
    assert got == graph
    assert graph_to_world(got) == world


# -- invalid worlds -------------------------------------------------------------------------
MUTATIONS = (
    "wide_row",
    "short_section",
    "unknown_rule",
    "bad_sum",
    "unknown_action",
    "reward_without_value",
    "no_start",
    "two_starts",
    "no_goal",
    "door_off_map",
)


def _mutate(world: PogeWorld, kind: str, data: st.DataObject) -> tuple[str, int | None, str]:
    """Text of a broken world, the line the error must name (None: any) and words it must contain."""
    layout = [list(row) for row in world.layout]

    def with_layout() -> PogeWorld:
        return PogeWorld(
            tuple("".join(r) for r in layout),
            world.abstraction,
            world.names,
            world.behaviour,
            world.rules,
            world.rewards,
            world.reward_values,
        )

    def line_of(section: str, row: int) -> int:
        lines = write_world(world).splitlines()
        return lines.index(f"==={section}===") + 3 + row

    cells = [(r, c) for r in range(world.rows) for c in range(world.cols)]
    if kind == "wide_row":
        sections = [
            s
            for s in ("Layout", "Abstraction", "Behaviour", "Rewards")
            if s == "Layout" or getattr(world, s.lower()) is not None
        ]
        section = data.draw(st.sampled_from(sections))
        row = data.draw(st.integers(1, world.rows - 1))  # not the first Layout row: that sets the width
        lines = write_world(world).splitlines()
        n = line_of(section, row)
        lines[n - 1] += "#"
        return "\n".join(lines) + "\n", n, "column(s), expected"
    if kind == "short_section":
        section = data.draw(st.sampled_from(["Abstraction", "Behaviour", "Rewards"]))
        lines = write_world(world).splitlines()
        if f"==={section}===" not in lines:
            lines += ["", f"==={section}===", ""] + list(world.layout)
        n = lines.index(f"==={section}===") + 3 + world.rows - 1
        del lines[n - 1]
        return "\n".join(lines) + "\n", None, "row"
    if kind in ("unknown_rule", "bad_sum", "unknown_action"):
        text = write_world(world)
        if world.behaviour is None:
            text += "\n===Behaviour===\n\n" + "\n".join(world.layout) + "\n"
        declared = {
            "unknown_rule": "9-up-[up:1.0]",
            "bad_sum": "9-up-[up:0.5, left:0.25]",
            "unknown_action": "9-jump-[up:1.0]",
        }
        lines = text.splitlines()
        after = lines.index("===Behaviour===") + 1
        end = next((i for i in range(after, len(lines)) if lines[i].startswith("===")), len(lines))
        lines.insert(end, declared[kind])
        words = {
            "unknown_rule": "unknown rule id '9'",
            "bad_sum": "sum to 0.75",
            "unknown_action": "unknown action 'jump'",
        }
        return "\n".join(lines) + "\n", end + 1, words[kind]
    if kind == "reward_without_value":
        floor = [(r, c) for r, c in cells if world.kind(r, c) == "floor"]
        if not floor:
            return _mutate(world, "no_goal", data)
        r, c = data.draw(st.sampled_from(floor))
        grid = [list(row) for row in (world.rewards or world.layout)]
        grid[r][c] = "q"
        broken = PogeWorld(
            world.layout,
            world.abstraction,
            world.names,
            world.behaviour,
            world.rules,
            tuple("".join(row) for row in grid),
            world.reward_values,
        )
        text = write_world(broken)
        n = text.splitlines().index("===Rewards===") + 3 + r
        return text, n, "reward symbol 'q' has no value"
    if kind == "no_start":
        r, c = world.start
        layout[r][c] = " "
        return write_world(with_layout()), 1, "no start tile"
    if kind == "two_starts":
        others = [(r, c) for r, c in cells if world.kind(r, c) in ("floor", "wall") and (r, c) > world.start]
        if not others:
            return _mutate(world, "no_start", data)
        r, c = data.draw(st.sampled_from(others))
        layout[r][c] = "E"
        return write_world(with_layout()), 3 + r, "second start tile"
    if kind == "no_goal":
        for r, c in world.goals:
            layout[r][c] = " "
        return write_world(with_layout()), 1, "no goal tile"
    # door_off_map: a door in the border next to a walkable tile
    border = [
        (r, c)
        for r, c in cells
        if (r in (0, world.rows - 1)) != (c in (0, world.cols - 1))
        and any(
            world.inside(r + dr, c + dc) and world.kind(r + dr, c + dc) not in ("wall", "door")
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
        )
    ]
    if not border:
        return _mutate(world, "no_goal", data)
    r, c = data.draw(st.sampled_from(border))
    layout[r][c] = "D"
    return write_world(with_layout()), 3 + r, "leads off the map"


@fixed(120)
@given(worlds(), st.sampled_from(MUTATIONS), st.data())
@pytest.mark.slow
def test_mutated_worlds_fail_clearly_and_store_nothing(world: PogeWorld, kind: str, data: st.DataObject) -> None:
    import pathlib
    import tempfile

    from tasks.poge import build_from_world_file

    text, line, words = _mutate(world, kind, data)
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "broken.txt"
        path.write_text(text)
        with open_store(":memory:") as store:
            with pytest.raises(PogeFormatError) as info:
                store.put(build_from_world_file(path))
            assert store.list() == []
    err = info.value
    message = str(err)
    assert message.startswith(f"{path}, line {err.line}, column {err.column}: "), message
    assert "expected" in message and words in message, (kind, message)
    if line is not None:
        assert err.line == line, (kind, message, text)
    assert 1 <= err.column <= max(len(t) for t in text.splitlines()) + 1


@fixed(40)
@given(worlds(), st.booleans(), st.booleans(), st.integers(0, 2**16))
def test_env_runs_any_valid_world(world: PogeWorld, partial: bool, flags: bool, seed: int) -> None:
    """Every observation an episode produces is in the vocabulary, and every one names a real tile state."""
    from gym_bridge.poge.env import PogeEnv

    env = PogeEnv(
        world_to_graph(world, "test/poge"),
        is_partially_obs=partial,
        indicate_slip=flags,
        indicate_wall=flags,
        max_ep_len=30,
    )
    obs, info = env.reset(seed=seed)
    assert env.observation_space.contains(obs) and env.tile == world.start
    rng = np.random.default_rng(seed)
    for a in rng.integers(0, 4, 300).tolist():
        before = env.tile
        obs, reward, terminated, truncated, info = env.step(a)
        assert env.observation_space.contains(obs)
        assert env.observation_names[obs] == info["observation"]
        assert world.kind(*env.tile) not in ("wall", "door")
        assert abs(env.tile[0] - before[0]) + abs(env.tile[1] - before[1]) in (0, 1, 2)
        assert terminated == (world.kind(*env.tile) in ENDS_EPISODE)
        if terminated or truncated:
            env.reset()
