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
max_steps = 20
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
