"""Many processes on one embedded store: readers share it, a writer waits (bounded) and names the holder.

Real processes throughout: gymnasium's async vector env workers, `multiprocessing` with
spawn, and a child Python holding a store open while the test process tries to open it.
"""

from __future__ import annotations

import multiprocessing as mp
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gym_bridge
import tasks
from graphstore import StoreLocationError, StoreLockedError, StoreMissingError, open_store
from graphtasks import cli

IDS = sorted(gym_bridge.registered_ids())
# one id per family in a quick run (-m "not slow"); every id in CI
QUICK_IDS = {"graphtasks/TwoStep-v0", "graphtasks/GridFourRooms-v0", "graphtasks/Poge-v0", "graphtasks/Room-v0"}
LONG_WAIT = "120"  # seconds: generous, the machine may be loaded; only a bug makes a test wait that long


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> Path:
    """One on-disk store with every built-in task and the Room task's knowledge, closed again."""
    from ingest.conceptnet_snapshot import ingest_snapshot

    location = tmp_path_factory.mktemp("parallel") / "store.lbug"
    with open_store(location, "w") as store:
        for task_id in tasks.builtin_ids():
            store.put(tasks.build(task_id))
        ingest_snapshot(store)
    return location


@pytest.mark.parametrize(
    "env_id", [i if i in QUICK_IDS else pytest.param(i, marks=pytest.mark.slow) for i in IDS]
)
@pytest.mark.slow
def test_async_make_vec_from_one_store(env_id, shared_store, monkeypatch):
    """Every registered id: worker processes compile from the same store at once, then step.
    Four at once for one id of each family (QUICK_IDS); two for each other id, which is enough
    to have readers share the store, at half the process starts."""
    monkeypatch.setenv("GRAPHTASKS_STORE", str(shared_store))
    monkeypatch.setenv("GRAPHTASKS_LOCK_TIMEOUT", LONG_WAIT)
    envs = gym.make_vec(env_id, num_envs=4 if env_id in QUICK_IDS else 2, vectorization_mode="async")
    try:
        envs.reset(seed=1)
        for _ in range(3):
            envs.step(envs.action_space.sample())
    finally:
        envs.close()


PROCESS_IDS = ["graphtasks/TwoStep-v0", "graphtasks/GridFourRooms-v0", "graphtasks/Poge-v0", "graphtasks/Grid-v0"]


def _make_and_step(location: str, start: mp.synchronize.Barrier, worker: int) -> list[float]:
    """In a spawned process: make each env from the store (all workers start together) and step it."""
    import os

    os.environ["GRAPHTASKS_LOCK_TIMEOUT"] = LONG_WAIT
    import gymnasium as gym

    import gym_bridge  # noqa: F401  (registers the ids)

    start.wait()
    totals = []
    for env_id in PROCESS_IDS:
        env = gym.make(env_id, store=location)
        env.reset(seed=worker)
        env.action_space.seed(worker)
        total = 0.0
        for _ in range(25):
            _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            total += float(reward)
            if terminated or truncated:
                env.reset()
        env.close()
        totals.append(total)
    return totals


@pytest.mark.slow  # eight processes; two processes share a store in the quick run
def test_eight_processes_make_and_step_from_one_new_store(tmp_path):
    """8 spawned processes at once on a store that does not exist yet: the first put each built-in, all run."""
    location = tmp_path / "store.lbug"
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(8)
        with ctx.Pool(8) as pool:
            results = pool.starmap(_make_and_step, [(str(location), start, w) for w in range(8)])
    assert len(results) == 8 and all(len(r) == len(PROCESS_IDS) and np.isfinite(r).all() for r in results)
    with open_store(location, "r") as store:
        stored = {t.task_id for t in store.list()}
    assert {"rewardgym/two-step", "neuronav/grid/four_rooms/small", "poge/world0"} <= stored


HOLD = textwrap.dedent(
    """
    import sys
    from graphstore import open_store
    store = open_store(sys.argv[1], sys.argv[2])
    print("ready", flush=True)
    sys.stdin.read()  # hold the store until the test closes our stdin
    store.close()
    """
)


class Holder:
    """A child Python process that keeps a store open ('r' or 'w') until stopped."""

    def __init__(self, location: Path, mode: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(location), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def store_with_task(tmp_path) -> Path:
    location = tmp_path / "held.lbug"
    with open_store(location, "w") as store:
        store.put(tasks.build("rewardgym/two-step"))
    return location


def test_second_writer_waits_then_fails_naming_the_holder(store_with_task, monkeypatch, capsys):
    monkeypatch.setenv("GRAPHTASKS_LOCK_TIMEOUT", "0.5")
    holder = Holder(store_with_task, "w")
    try:
        with pytest.raises(StoreLockedError) as caught:
            open_store(store_with_task, "w")
        message = str(caught.value)
        assert f"PID {holder.proc.pid}" in message and str(store_with_task) in message and "\n" not in message
        code = cli.main(["--lock-timeout", "0.3", "--store", str(store_with_task), "tasks", "load", "rewardgym/hcp"])
        err = capsys.readouterr().err.strip()
        assert code == 2 and err.startswith("graphtasks: error: ") and f"PID {holder.proc.pid}" in err
        assert "\n" not in err and "0.3 s" in err
    finally:
        holder.stop()
    with open_store(store_with_task, "w") as store:  # free again once the holder is gone
        assert store.put(tasks.build("rewardgym/hcp"))


@pytest.mark.slow
def test_reader_waits_bounded_for_a_writer_and_shares_with_readers(store_with_task, monkeypatch):
    monkeypatch.setenv("GRAPHTASKS_LOCK_TIMEOUT", "0.5")
    writer = Holder(store_with_task, "w")
    try:
        with pytest.raises(StoreLockedError, match=f"PID {writer.proc.pid}"):
            open_store(store_with_task, "r")
        with pytest.raises(ValueError, match=f"^store: .* locked by PID {writer.proc.pid}"):  # env args name `store`
            gym.make("graphtasks/TwoStep-v0", store=str(store_with_task))
    finally:
        writer.stop()
    reader = Holder(store_with_task, "r")
    try:
        with open_store(store_with_task, "r") as store:  # readers do not wait for each other
            assert "rewardgym/two-step" in store
        env = gym.make("graphtasks/TwoStep-v0", store=str(store_with_task))
        env.reset(seed=0)
        with pytest.raises(StoreLockedError, match="reading"):
            open_store(store_with_task, "w")  # a writer waits for readers, bounded too
    finally:
        reader.stop()


def test_unknown_scheme_is_an_error_and_creates_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreLocationError, match="unknown scheme 'http'"):
        open_store("http://127.0.0.1:1")
    code = cli.main(["--store", "http://127.0.0.1:1", "tasks", "load", "rewardgym/two-step"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown scheme 'http'" in err
    assert list(tmp_path.iterdir()) == []


def test_reading_a_missing_store_is_an_error_and_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "nothing" / "store.lbug"
    with pytest.raises(StoreMissingError, match="does not exist"):
        open_store(missing, "r")
    for argv in (["tasks", "list"], ["cypher", "MATCH (t:Task) RETURN t.uid"], ["tasks", "show", "rewardgym/hcp"]):
        code = cli.main(["--store", str(missing), *argv])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err
        assert err.startswith(f"graphtasks: error: store {str(missing)!r} does not exist; ")
    with pytest.raises(ValueError, match="^task: .*a store that does not exist"):  # no store is created for it
        gym.make("graphtasks/Graph-v0", task="mine/not-built-in", store=str(missing))
    assert list(tmp_path.iterdir()) == []


def test_copy_from_a_missing_store_exits_2(tmp_path, capsys):
    source, target = tmp_path / "missing.lbug", tmp_path / "target.lbug"
    code = cli.main(["tasks", "copy", "--from", str(source), "--to", str(target), "--all"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"graphtasks: error: store {str(source)!r} does not exist; ")
    assert list(tmp_path.iterdir()) == []


def test_a_bad_lock_timeout_is_one_line(store_with_task, monkeypatch, capsys):
    monkeypatch.setenv("GRAPHTASKS_LOCK_TIMEOUT", "soon")
    assert cli.main(["--store", str(store_with_task), "tasks", "list"]) == 2
    assert capsys.readouterr().err.strip() == (
        "graphtasks: error: GRAPHTASKS_LOCK_TIMEOUT: expected a number of seconds >= 0, got 'soon'"
    )
    assert cli.main(["--lock-timeout", "-1", "--store", str(store_with_task), "tasks", "list"]) == 2
    assert "got '-1.0'" in capsys.readouterr().err
