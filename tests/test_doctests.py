"""The examples in the docstrings of the public entry points run and print what they show.

Each example uses a ':memory:' store (or none), so it is fast and leaves nothing behind.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

ENTRY_POINTS = {  # module: the public entry point whose docstring must carry an example
    "graphstore.store": "open_store",
    "tasks.families": "build",
    "gym_bridge.graph.compiled": "compile_task",
    "gym_bridge.graph.env": "GraphTaskEnv",
    "gym_bridge.grid.env": "GridEnv",
    "gym_bridge.grid.observations": "Distance",
    "gym_bridge.poge.env": "PogeEnv",
    "gym_bridge.room.env": "RoomEnv",
    "graphtasks.experiments.api": "Experiment",
    "graphtasks.experiments.chunks": "write_chunk",
    "graphtasks.experiments.records": "record_sources",
    "gym_bridge.batched_episodes": "LaneEpisodes",
    "gym_bridge.agents.registry": "make_agent",
    "graphtasks.fitting.mle": "fit",
    "gym_bridge.render": "draw_task",
    "gym_bridge.graph.render": "draw_task",
}


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    assert ">>>" in (getattr(module, ENTRY_POINTS[name]).__doc__ or ""), f"{name}.{ENTRY_POINTS[name]} has no example"
    # a failing example's report is printed (pytest shows it with the failure)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
