"""`graphtasks render`: every built-in task of every family is drawn, with a legend, and the
picture holds what the task holds (states, transitions with their labels, rewards, the start),
read back from the figure's artists; PNG and SVG files are written."""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.text import Annotation, Text
from PIL import Image

import tasks
from graphstore import open_store
from graphtasks.commands import grid_cmd
from gym_bridge import family_of
from gym_bridge.graph.family import load_compiled
from gym_bridge.render import draw_task


def artists(picture, gid, kind=object):
    return [a for a in picture.figure.findobj() if a.get_gid() == gid and isinstance(a, kind)]


def legend_texts(picture):
    (legend,) = artists(picture, "legend")
    return [t.get_text() for t in legend.get_texts()]


@pytest.fixture(scope="module")
def store():
    from ingest.conceptnet_snapshot import ingest_snapshot

    with open_store(":memory:") as s:
        ingest_snapshot(s)  # the Room pictures show ConceptNet locations
        yield s


def expected_edges(task_id, store):
    """(source, target) pairs with a positive probability, counted from the compiled arrays."""
    c = load_compiled(task_id, store)
    return {(s, int(c.targets[s, a, k])) for s, a, k in zip(*np.nonzero(c.probs > 0))}, c


@pytest.mark.parametrize("task_id", tasks.builtin_ids("graph"))
def test_graph_pictures_show_every_state_transition_reward_and_the_start(task_id, store):
    picture = draw_task(task_id, store)
    pairs, c = expected_edges(task_id, store)
    (states,) = artists(picture, "state", PathCollection)
    offsets = states.get_offsets()
    assert len(offsets) == c.n_states
    labels = [t.get_text() for t in artists(picture, "edge-label", Text)]
    assert len(labels) == len(pairs) == len(artists(picture, "edge"))
    for s, t in pairs:  # each pair's label names every action that takes it, with p when below 1
        p = {a: float(c.probs[s, a][c.targets[s, a] == t].sum()) for a in range(c.n_actions)}
        want = ", ".join(f"a{a}" if q >= 1 - 1e-9 else f"a{a} (" for a, q in p.items() if q > 0)
        assert any(label.startswith(want.split(" (")[0]) for label in labels)
    for s, a, k in zip(*np.nonzero((c.probs > 0) & (c.probs < 1))):  # probabilities below 1 are printed
        assert any(f"a{a} ({c.probs[s, a, k]:.2f}".rstrip("0").replace("(0.", "(.") in label for label in labels)
    rewarded = [i for i, spec in enumerate(c.reward_specs) if spec is not None]
    texts = [t.get_text() for t in artists(picture, "state-label", Annotation)]
    assert sum("r = " in t or ":" in t.split("\n")[-1] for t in texts) >= len(rewarded) == picture.counts["rewards"]
    (start,) = artists(picture, "start", Annotation)
    assert np.allclose(start.xy, offsets[c.start])  # the start arrow points at the start state
    legend = legend_texts(picture)
    assert "start state" in legend and any("probability" in entry for entry in legend)
    assert ("terminal (inner ring)" in legend) == bool(c.terminal.any())


def test_stages_for_two_step_and_communities_for_neighborhood(store):
    two_step = draw_task("rewardgym/two-step", store)
    assert [t.get_text() for t in artists(two_step, "stage-label", Text)] == ["stage 1", "stage 2", "stage 3"]
    xs = artists(two_step, "state", PathCollection)[0].get_offsets()[:, 0]
    assert xs[0] < xs[1] == xs[2] < xs[3] == xs[4] == xs[5] == xs[6]  # one column per stage
    assert any("drifting" in t.get_text() for t in artists(two_step, "state-label", Annotation))
    hood = draw_task("neuronav/graph/neighborhood", store)
    rings = artists(hood, "community")
    assert len(rings) == 3 == hood.counts["communities"]
    xy = artists(hood, "state", PathCollection)[0].get_offsets()
    inside = [[i for i in range(15) if np.hypot(*(xy[i] - ring.center)) < ring.radius] for ring in rings]
    assert sorted(len(group) for group in inside) == [5, 5, 5] and not set(inside[0]) & set(inside[1])


@pytest.mark.parametrize("family_name", ["grid", "poge", "room"])
@pytest.mark.slow
def test_every_other_builtin_is_drawn_with_a_legend(family_name, store):
    for task_id in tasks.builtin_ids(family_name):
        options = {"resolution": 64} if family_name == "grid" else {}
        picture = draw_task(task_id, store, **options)
        assert family_of(task_id).name == family_name and picture.task_id == task_id
        legend = legend_texts(picture)
        assert len(legend) >= 3, task_id
        if family_name == "grid":
            (grid,) = artists(picture, "grid")
            assert grid.get_array().shape == (64, 64, 3)
            rewards = picture.counts["rewards"]
            assert ("reward > 0" in legend or "reward <= 0" in legend) == bool(rewards)
            n = int(round(np.sqrt(picture.counts["cells"])))
            assert len(artists(picture, "reward-label", Text)) == (rewards if n <= 20 else 0)
        elif family_name == "poge":
            world = family_of(task_id).load(task_id, store).world
            values = [world.reward(r, c) for r in range(world.rows) for c in range(world.cols)]
            shown = sorted(float(t.get_text()) for t in artists(picture, "reward-label", Text))
            assert shown == sorted(float(v) for v in values if v is not None)
            (start,) = artists(picture, "start")
            assert tuple(start.get_xydata()[0]) == world.start[::-1]
        else:
            objects = artists(picture, "object", PathCollection)[0].get_offsets()
            assert len(objects) == picture.counts["objects"] == tasks.build(task_id).count("RoomObject")
            assert len(artists(picture, "edge")) == picture.counts["edges"] > 0


def run(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default=None)
    grid_cmd.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


@pytest.mark.slow
def test_render_command_writes_png_and_svg_of_graph_tasks(tmp_path, capsys):
    png, svg = tmp_path / "human_b.png", tmp_path / "two-step.svg"
    assert run(["render", "neuronav/graph/human_b", "-o", str(png)]) == 0
    assert "6 states, 9 edges, 9 edge labels" in capsys.readouterr().out
    width, height = Image.open(png).size
    assert width > 300 and height > 300
    assert run(["render", "rewardgym/two-step", "-o", str(svg)]) == 0
    root = ET.parse(svg).getroot()
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert sum(i.startswith("edge-label") for i in ids) == 6 and "legend" in ids and "start" in ids
    first = svg.read_bytes()
    assert run(["render", "rewardgym/two-step", "-o", str(svg)]) == 0
    assert svg.read_bytes() == first  # the same task gives the same file
