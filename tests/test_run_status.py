"""Runs have a status on their Run node (running, completed, failed, interrupted) and the sweep
tells observers what happens; a recorded experiment resumes from its store alone."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import COLUMNS, Experiment, ExperimentSpecError, parse_spec, run_experiment
from graphtasks.experiments.export import BidsDatasetObserver
from graphtasks.experiments.observers import CsvObserver, RunObserver
from graphtasks.experiments.records import StoreRecorder, record_experiment, record_runs, record_tasks
from graphtasks.experiments.runs import cells

SPEC = """
[experiment]
name = "statuses"
tasks = ["{task}"]
seeds = 4

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = {episodes}
max_episode_steps = 20
{extra}
"""


def spec_text(task: str = "neuronav/grid/t_maze/micro", episodes: int = 5, extra: str = "") -> str:
    return SPEC.format(task=task, episodes=episodes, extra=extra)


class Log(RunObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def experiment_started(self, spec, todo, done) -> None:
        self.events.append(("experiment", len(todo)))

    def run_started(self, cell, started_at) -> None:
        self.events.append(("started", cell.index))

    def run_finished(self, outcome) -> None:
        self.events.append((outcome.status, outcome.cell.index))

    def experiment_finished(self, status) -> None:
        self.events.append(("ended", status))


@pytest.mark.parametrize("workers", [1, 2])
def test_observers_hear_each_run_start_before_it_ends(workers: int) -> None:
    log = Log()
    result = run_experiment(parse_spec(spec_text()), workers=workers, observers=[log])
    assert log.events[0] == ("experiment", 4) and log.events[-1] == ("ended", "completed")
    for run in range(4):
        assert log.events.index(("started", run)) < log.events.index(("completed", run))
    assert len(result.rows) == 20 and not result.failures


def test_a_run_that_raises_is_failed_with_its_error_and_the_others_go_on(tmp_path: Path) -> None:
    """A schedule on a task without one fails at run time: every run is recorded as failed,
    with the error, and the status is read from the Run node, not from the error's text."""
    store = str(tmp_path / "s.lbug")
    text = spec_text(extra="schedule = true")
    experiment = Experiment(parse_spec(text), text)
    report = experiment.run(store=store, workers=1)
    assert len(report.failures) == 4
    with open_store(store, "r") as opened:
        rows = opened.cypher("MATCH (r:Run) RETURN r.status, r.error ORDER BY r.index").rows
    assert {status for status, _ in rows} == {"failed"}
    assert all("has no trial schedule" in error for _, error in rows)


def test_a_run_is_running_until_it_ends(tmp_path: Path) -> None:
    spec = parse_spec(spec_text())
    store = str(tmp_path / "s.lbug")
    every = cells(spec)
    with open_store(store, "w") as opened:
        record_experiment(opened, spec, "text")
        started = [(every[0], "2026-01-01T00:00:00+00:00"), (every[1], "2026-01-01T00:00:01+00:00")]
        record_runs(opened, spec, [], started)
        assert opened.cypher("MATCH (r:Run) RETURN r.index, r.status ORDER BY r.index").rows == [
            [0, "running"], [1, "running"]
        ]
    finished: list = []

    class Keep(RunObserver):
        def run_finished(self, outcome) -> None:
            finished.append(outcome)

    run_experiment(spec, workers=1, observers=[Keep()], skip={2, 3})
    with open_store(store, "w") as opened:
        record_runs(opened, spec, finished)
        rows = opened.cypher("MATCH (r:Run) RETURN r.index, r.status, r.started_at ORDER BY r.index").rows
        episodes = opened.cypher("MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) RETURN count(e)").rows[0][0]
    assert [row[:2] for row in rows] == [[0, "completed"], [1, "completed"]]
    assert episodes == 10


@pytest.mark.slow  # a sweep of real processes, stopped and resumed (about 13 s)
def test_ctrl_c_records_the_runs_under_way_as_interrupted_and_the_same_command_finishes(tmp_path: Path) -> None:
    spec_path = tmp_path / "long.toml"
    spec_path.write_text(spec_text("neuronav/grid/t_maze/small", episodes=3000).replace("seeds = 4", "seeds = 6"))
    store = str(tmp_path / "s.lbug")
    # per agent: a batch of these runs ends in a second, before the interrupt could land in it
    command = [sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(spec_path),
               "--workers", "2", "--no-progress", "--per-agent"]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # runs under way: its workers play (runs are marked running only after a second, and these
    # may end sooner), looked at without opening the store
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None:
        listed = subprocess.run(["pgrep", "-P", str(driver.pid)], capture_output=True, text=True).stdout
        if listed.split():
            break
        time.sleep(0.05)
    assert driver.poll() is None, "the sweep ended before it could be stopped"
    driver.send_signal(signal.SIGINT)
    out, err = driver.communicate(timeout=120)
    assert driver.returncode == 2 and "interrupted; the finished runs are recorded" in err, (out, err)
    with open_store(store, "r") as opened:
        statuses = dict(opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows)
    assert "running" not in statuses and statuses.get("interrupted", 0) >= 1, statuses
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows == [["completed", 6]]


def test_csv_and_bids_observers_write_what_the_runs_give(tmp_path: Path) -> None:
    spec = parse_spec(spec_text("rewardgym/two-step", episodes=3))
    table, folder = tmp_path / "episodes.csv", tmp_path / "events"
    bids = BidsDatasetObserver(folder, trial_duration=2.0)
    result = run_experiment(spec, workers=2, observers=[CsvObserver(table, COLUMNS), bids])
    with open(table, newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [(int(r["run"]), int(r["episode"])) for r in written] == [(r["run"], r["episode"]) for r in result.rows]
    events = sorted(p.name for p in folder.glob("sub-*/beh/*") if p.suffix == ".tsv")
    assert sorted(p.name for p in bids.written) == events  # each beside its _events.json sidecar
    assert sorted(p.name for p in folder.glob("sub-*/beh/*") if p.suffix == ".json") == [
        e[:-4] + ".json" for e in events]
    assert len(bids.written) == 4
    lines = bids.written[0].read_text().splitlines()
    assert lines[0].startswith("onset\tduration\ttrial_type") and len(lines) == 1 + 3 * 2  # two stages a trial


@pytest.mark.slow
def test_an_experiment_on_a_template_folder_grid_resumes_from_the_store_alone(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A grid from $GRAPHTASKS_GRID_TEMPLATES is built in while the variable is set; the store
    keeps it with the experiment, so without the variable (and without the spec file) the
    recorded experiment is still checked, resumed and exported."""
    folder = tmp_path / "maps"
    folder.mkdir()
    (folder / "mymaze.txt").write_text("name mymaze\n\n[small]\n#####\n#A..#\n#.#.#\n#..R#\n#####\nreward 3 3 1\n")
    store = str(tmp_path / "s.lbug")
    text = spec_text("neuronav/grid/mymaze/small").replace('name = "statuses"', 'name = "maze"')
    monkeypatch.setenv("GRAPHTASKS_GRID_TEMPLATES", str(folder))
    spec = parse_spec(text)
    with open_store(store, "w") as opened:  # a sweep killed after two of its four runs
        record_experiment(opened, spec, text)
        record_tasks(opened, spec.graphs)
    run_experiment(spec, workers=1, skip={2, 3}, observers=[StoreRecorder(store, spec)])
    monkeypatch.delenv("GRAPHTASKS_GRID_TEMPLATES")
    with pytest.raises(ExperimentSpecError, match="unknown task 'neuronav/grid/mymaze/small'"):
        parse_spec(text, store=str(tmp_path / "other.lbug"))
    capsys.readouterr()
    assert main(["--store", store, "experiment", "check", "maze"]) == 0
    assert "= 4 runs" in capsys.readouterr().out
    assert main(["--store", store, "experiment", "run", "maze", "--no-progress", "--workers", "1"]) == 0
    assert "2 run(s) already recorded, 2 to go" in capsys.readouterr().out
    assert main(["--store", store, "experiment", "export", "maze"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 4 * 5


def test_a_ctrl_c_during_a_store_write_is_raised_when_the_write_is_done() -> None:
    """`interrupts_held` (around a recorder's write and an embedded store's close): the block
    finishes, then the KeyboardInterrupt comes; the handler is the one from before."""
    import os

    from graphstore.interrupts import interrupts_held

    before = signal.getsignal(signal.SIGINT)
    finished = False
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the signal arrives inside the block
            finished = True
    assert finished and signal.getsignal(signal.SIGINT) is before
    with interrupts_held():  # no Ctrl-C: nothing is raised
        pass


def test_a_ctrl_c_swallowed_while_the_driver_forks_still_stops_the_sweep() -> None:
    """A KeyboardInterrupt raised in an at-fork callback is printed and dropped by Python; the
    sweep's handler notes the signal, so the driver raises it again at its next check."""
    from graphtasks.experiments.sweep import _CtrlC

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    ctrl_c = _CtrlC()
    try:
        ctrl_c.watch()
        ctrl_c.check()  # nothing noted yet
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass  # as an at-fork callback drops it
        with pytest.raises(KeyboardInterrupt):
            ctrl_c.check()
    finally:
        ctrl_c.restore()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        signal.signal(signal.SIGINT, before)
