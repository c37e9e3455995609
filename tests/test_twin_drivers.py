"""Twin drivers: a second driver of an experiment waits for the first, holding nothing else,
then skips the runs the first completed (graphtasks.experiments.drivers)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.experiments.drivers import ExperimentBusy, driver_lock, driver_lock_path

SPEC = """
[experiment]
name = "twin"
tasks = ["neuronav/grid/t_maze/small"]
seeds = 4

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = 1500
max_episode_steps = 20
"""


def test_a_second_holder_waits_names_the_first_and_gives_up_after_the_timeout(tmp_path: Path) -> None:
    store = str(tmp_path / "s.lbug")
    said: list[str | None] = []
    with driver_lock(store, "twin"):
        with pytest.raises(ExperimentBusy, match=rf"'twin' .* is being run by PID {os.getpid()} on .*gave up"):
            with driver_lock(store, "twin", on_wait=said.append, timeout=0.3):
                pass
        with driver_lock(store, "another"):  # other experiments never wait
            pass
    assert said == [f"waiting for the other driver of experiment 'twin' (PID {os.getpid()} on {os.uname().nodename})"
                    " to finish"]


def test_the_second_goes_on_when_the_first_is_done(tmp_path: Path) -> None:
    store = str(tmp_path / "s.lbug")
    order: list[str] = []
    first_in = threading.Event()

    def first() -> None:
        with driver_lock(store, "twin"):
            first_in.set()
            time.sleep(0.5)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    said: list[str | None] = []
    with driver_lock(store, "twin", on_wait=said.append):
        order.append("second in")
    thread.join()
    assert order == ["first done", "second in"]
    assert said[-1] is None and said[0] is not None and len(said) == 2


def test_stores_in_memory_need_no_lock_and_servers_get_one_per_machine() -> None:
    assert driver_lock_path(None, "x") is None and driver_lock_path(":memory:", "x") is None
    path = driver_lock_path("bolt://127.0.0.1:7687", "x")
    assert path is not None and path.name.endswith(".lock") and "graphtasks-drivers" in str(path)
    assert driver_lock_path("bolt://127.0.0.1:7687", "x") == path != driver_lock_path("bolt://10.0.0.1:7687", "x")


@pytest.mark.slow
def test_two_identical_experiment_runs_play_each_run_once(tmp_path: Path) -> None:
    """Two `graphtasks experiment run` of one spec on one store: the second says whom it waits
    for, plays nothing, and every run is recorded once (one chunk of episodes holds it)."""
    store = str(tmp_path / "s.lbug")
    spec = tmp_path / "twin.toml"
    spec.write_text(SPEC)
    command = [sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(spec),
               "--workers", "1", "--per-agent"]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = driver_lock_path(store, "twin")
    assert lock is not None
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().startswith("PID")) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out1, err1 = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert "4 runs:" in out1
    assert "runs:" not in out2  # it played none
    assert f"waiting for the other driver of experiment 'twin' (PID {first.pid} on" in err2
    with open_store(store, "r") as opened:
        held = opened.cypher("MATCH (c:Chunk)-[:HOLDS_RUN]->(r:Run) WHERE c.kind = 'episodes' "
                             "RETURN r.index, r.status, count(c) ORDER BY r.index").rows
    assert held == [[i, "completed", 1] for i in range(4)]


@pytest.mark.slow
def test_an_experiment_is_not_deleted_under_its_driver_even_before_a_run_is_marked(tmp_path: Path) -> None:
    """The driver lock is held from the driver's start: `experiment delete` refuses at once,
    before any run has been under way long enough to be marked running."""
    store = str(tmp_path / "s.lbug")
    spec = tmp_path / "twin.toml"
    spec.write_text(SPEC)
    driver = subprocess.Popen([sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(spec),
                               "--workers", "1", "--per-agent", "--no-progress"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = driver_lock_path(store, "twin")
    assert lock is not None
    deadline = time.monotonic() + 60
    refused = None
    while time.monotonic() < deadline and driver.poll() is None:
        if lock.exists() and lock.read_text().startswith("PID"):
            refused = subprocess.run([sys.executable, "-m", "graphtasks", "--store", store, "experiment", "delete",
                                      "twin"], capture_output=True, text=True)
            if "no recorded experiment" not in refused.stderr:  # the driver had not recorded it yet
                break
        time.sleep(0.05)
    assert refused is not None
    assert refused.returncode == 2 and f"is running (driver PID {driver.pid} on" in refused.stderr, refused.stderr
    out, err = driver.communicate(timeout=300)
    assert driver.returncode == 0, err


def test_a_run_is_marked_running_once_it_has_run_a_while(tmp_path: Path) -> None:
    """The store recorder writes a run's running marker only once the run has been under way
    for `marker_delay` (on the driver's heartbeat); a run that ends sooner is written once."""
    from graphtasks.experiments.observers import RunOutcome
    from graphtasks.experiments.records import StoreRecorder, record_experiment
    from graphtasks.experiments.runs import cells
    from graphtasks.experiments.spec import parse_spec
    from graphtasks.experiments.sweep import run_cell
    from graphtasks.experiments.versions import prepare_versions

    text = SPEC.replace("episodes = 1500", "episodes = 2")
    spec = parse_spec(text)
    store = str(tmp_path / "s.lbug")
    with open_store(store, "w") as opened:
        record_experiment(opened, spec, text)
    first, second = cells(spec)[:2]
    recorder = StoreRecorder(store, spec, seconds=0.0, marker_delay=0.4)

    def statuses() -> list:
        with open_store(store, "r") as opened:
            return opened.cypher("MATCH (r:Run) RETURN r.index, r.status ORDER BY r.index").rows

    recorder.run_started(first, "2026-01-01T00:00:00+00:00")
    recorder.run_started(second, "2026-01-01T00:00:00+00:00")
    recorder.heartbeat()
    assert statuses() == []  # not yet under way for long
    time.sleep(0.5)
    recorder.run_finished(RunOutcome(second, "completed", run_cell(spec, second, prepare_versions(spec)), None,
                                     "a", "b"))
    assert statuses() == [[0, "running"], [1, "completed"]]
