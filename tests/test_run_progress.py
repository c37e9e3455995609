"""Progress bars tell the truth (issue 41, finding 7): `graphtasks run`'s bar showed an ETA of
hours for a 2,000-episode run that took seconds (a batch plays every episode before the first
comes out, and the first was timed by the whole run); a sweep's bar did the same with a
batch's runs. Read back from what tqdm drew on a terminal (tests/terminal.py: bars are drawn
only there)."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest

from graphtasks.experiments.observers import COMPLETED, ProgressObserver, RunOutcome
from graphtasks.experiments.runs import cells
from graphtasks.experiments.spec import single_run_spec
from tests.terminal import graphtasks

REMAINING = re.compile(r"\[(?P<elapsed>[\d:]+)<(?P<eta>[\d:]+)[,\]]")


def seconds(clock: str) -> int:
    total = 0
    for part in clock.split(":"):
        total = total * 60 + int(part)
    return total


def etas(err: str) -> list[int]:
    """Every remaining time the bar showed, in seconds ('?' while it knew none)."""
    return [seconds(m["eta"]) for frame in err.split("\r") for m in REMAINING.finditer(frame)]


@pytest.mark.parametrize("how", [[], ["--per-agent"]])
@pytest.mark.slow
def test_run_bar_shows_no_eta_longer_than_the_run(tmp_path, how) -> None:
    started = time.perf_counter()
    shown = graphtasks("--store", str(tmp_path / "s.lbug"), "run", "rewardgym/two-step", "--agent", "hybrid",
                       "--episodes", "2000", *how, every_draw=False)  # on a terminal, at tqdm's own pace
    took = time.perf_counter() - started
    assert shown.code == 0, shown.raw
    err = shown.raw
    eta = etas(err)
    assert eta, err  # the bar was drawn, with a rate once it had one
    assert max(eta) <= took + 1, (max(eta), took, err[-400:])
    counts = shown.moved("rewardgym/two-step")
    if not how:  # the batch's episodes all at once, counted in one step
        assert counts == [0, 2000], counts
    else:  # one by one, drawn as tqdm's interval allows (the last, at the end, may not be)
        # a count between the first and the last shows episodes counted as they came
        assert counts == sorted(counts) and counts[-1] <= 2000 and any(0 < c < 2000 for c in counts), counts
    piped = graphtasks("--store", str(tmp_path / "s.lbug"), "run", "rewardgym/two-step", "--episodes", "20", *how,
                       terminal=False)
    assert piped.code == 0 and piped.raw == "", piped.raw


def test_sweep_bar_counts_a_batchs_runs_at_once(capsys) -> None:
    spec = single_run_spec("rewardgym/two-step", "q", seed=0, episodes=1)
    cell = cells(spec)[0]
    bar = ProgressObserver("sweep")
    batch = [dataclasses.replace(cell, index=i) for i in range(200)]
    bar.experiment_started(spec, batch, 0)
    time.sleep(0.5)  # the batch plays
    bar.runs_finished([RunOutcome(c, COMPLETED, [], None, "", "") for c in batch])  # and its 200 runs end together
    bar.experiment_finished(COMPLETED)
    err = capsys.readouterr().err
    assert "200/200" in err and max(etas(err)) <= 1, err
