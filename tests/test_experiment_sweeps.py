"""Sweeps at the size users run: 48 cells on 2 workers with either engine, and readers looking
at the store while a sweep records into it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments.records import recorded_episodes

SPEC = """
[experiment]
name = "forty-eight"
tasks = ["neuronav/grid/t_maze/micro", "rewardgym/two-step"]
seeds = 6

[[agents]]
name = "q"
grid = { lr = [0.1, 0.3], beta = [1.0, 5.0] }

[[phases]]
name = "learning"
episodes = {episodes}
max_episode_steps = 20
"""


def sweep(tmp_path: Path, name: str, *options: str, episodes: int = 8) -> list[dict]:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("{episodes}", str(episodes)), encoding="utf-8")
    store = str(tmp_path / f"{name}.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", *options]) == 0
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows == [["completed", 48]]
        return recorded_episodes(opened, "forty-eight")


def test_48_cells_on_2_processes_record_what_one_process_records(tmp_path: Path) -> None:
    two = sweep(tmp_path, "two", "--workers", "2")
    assert len(two) == 48 * 8
    assert two == sweep(tmp_path, "one", "--workers", "1")


@pytest.mark.slow
def test_48_cells_on_a_dask_local_cluster_record_what_the_process_pool_records(tmp_path: Path) -> None:
    assert sweep(tmp_path, "dask", "--dask", "local", "--workers", "2") == sweep(tmp_path, "pool", "--workers", "2")


@pytest.mark.slow
def test_readers_can_look_at_a_store_while_a_sweep_records_into_it(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("{episodes}", "1000"), encoding="utf-8")  # long enough to be read while it runs
    store = str(tmp_path / "store.lbug")
    graphtasks = [sys.executable, "-m", "graphtasks", "--store", store]
    driver = subprocess.Popen(
        [*graphtasks, "experiment", "run", str(spec), "--workers", "2", "--no-progress", "--per-agent"],  # long enough
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    readings: list[int] = []
    try:
        while driver.poll() is None:
            reader = [*graphtasks, "experiment", "list", "--format", "csv"]
            listed = subprocess.run(reader, capture_output=True, text=True)
            if listed.returncode == 0 and "forty-eight" in listed.stdout:
                readings.append(int(listed.stdout.splitlines()[1].split(",")[-1]))  # runs done so far
            elif "does not exist" not in listed.stderr:  # before the first write there is no store yet
                pytest.fail(f"a reader failed during the sweep: {listed.stderr}")
            time.sleep(0.2)
    finally:
        _, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err
    assert len(readings) >= 3 and readings == sorted(readings) and readings[0] < 48, readings
