"""A sweep's batches tell their episodes as they end (issue 42: a batched sweep's bar sat at
0/N until whole batches ended, then guessed its time left from bursts), and being told
changes no number."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphtasks.experiments.batched_runs import play_batch_phases
from graphtasks.experiments.observers import RunObserver
from graphtasks.experiments.runs import cells
from graphtasks.experiments.spec import parse_spec
from graphtasks.experiments.sweep import run_experiment
from graphtasks.experiments.versions import prepare_versions

SPEC = """
[experiment]
name = "told"
tasks = ["neuronav/grid/four_rooms/small"]
seeds = 6

[[agents]]
name = "{agent}"
params = {{ lr = 0.1, gamma = 0.99, epsilon = 0.1 }}

[[phases]]
name = "learning"
episodes = 40
max_steps = 60

[[phases]]
name = "test"
episodes = 4
max_steps = 60
learn = false
"""


@pytest.mark.parametrize("agent, compiled", [("q", True), ("sarsa", True), ("q", False)])
def test_told_episodes_change_no_number(agent: str, compiled: bool) -> None:
    spec = parse_spec(SPEC.format(agent=agent))
    versions = prepare_versions(spec)
    batch = tuple(cells(spec))
    quiet = play_batch_phases(spec, batch, versions, compiled)
    told: list[int] = []
    heard = play_batch_phases(spec, batch, versions, compiled, progress=told.append)
    for a, b in zip(quiet, heard):
        for column in ("reward", "length", "start_state", "first_action", "first_state"):
            assert np.array_equal(getattr(a.lanes, column), getattr(b.lanes, column)), column
    assert sum(told) == 6 * 44 and len(told) > 2  # in pieces, summing to every lane's episodes


class Heard(RunObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def episodes_played(self, unit: int, count: int) -> None:
        self.events.append(("played", count))

    def runs_finished(self, outcomes) -> None:
        self.events.append(("ended", len(outcomes)))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sweep_hears_a_batchs_episodes_before_its_runs_end(tmp_path, workers: int) -> None:
    spec = parse_spec(SPEC.format(agent="q"))
    heard = Heard()
    run_experiment(spec, workers=workers, observers=[heard], records=tmp_path / "records")
    first_end = next(i for i, (kind, _) in enumerate(heard.events) if kind == "ended")
    before = [count for kind, count in heard.events[:first_end] if kind == "played"]
    assert len(before) > 2 and sum(before) <= 6 * 44
    assert sum(count for kind, count in heard.events if kind == "played") == 6 * 44
    assert sum(count for kind, count in heard.events if kind == "ended") == 6


@pytest.mark.slow
def test_experiment_run_bar_moves_within_a_batch_on_a_terminal(tmp_path) -> None:
    """One batch of 6 lanes on one worker: the bar passes through counts between 0 and the
    sweep's 264 episodes, where it used to go from 0 to all at the batch's end."""
    from tests.terminal import graphtasks

    spec = tmp_path / "told.toml"
    spec.write_text(SPEC.format(agent="q"))
    shown = graphtasks("--store", str(tmp_path / "s.lbug"), "experiment", "run", str(spec), "--workers", "1")
    assert shown.code == 0, shown.raw
    moved = shown.moved("told")
    assert moved[-1] == 6 * 44 and any(0 < done < 6 * 44 for done in moved), moved
