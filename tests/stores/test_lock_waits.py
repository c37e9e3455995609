"""Processes on one embedded store wait their turn: without limit by default, fairly, and say so.

Real processes throughout: a child Python holding the store, spawned writer processes, the
installed `graphtasks` command. Nothing is timed: a test waits for what processes report
(bounded only so that a bug fails instead of hanging).
"""

from __future__ import annotations

import logging
import math
import multiprocessing as mp
import os
import queue
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphstore import LOCK_TIMEOUT_ENV_VAR, open_store
from graphstore.errors import LockSettingError
from graphstore.filelock import LockWait, lock_timeout, queue_path

from .test_store_semantics import small_task

BOUND = 300  # seconds: only a bug makes a test wait this long for a report
WRITERS = 8

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
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        assert self.proc.wait(timeout=BOUND) == 0


def graphtasks(args: list[str], **kwargs: Any) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("graphtasks")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "graphtasks"]
    return subprocess.Popen(command + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def assert_one_error_line(code: int, err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("graphtasks: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def stored(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv(LOCK_TIMEOUT_ENV_VAR, raising=False)  # the default: no limit (children inherit it)
    location = tmp_path / "turns.lbug"
    with open_store(location, "w") as store:
        store.put(small_task("t/first"))
    return location


def test_the_default_is_no_limit_and_a_timeout_can_be_set(monkeypatch):
    monkeypatch.delenv(LOCK_TIMEOUT_ENV_VAR, raising=False)
    assert lock_timeout() == math.inf
    for text, seconds in (("0.5", 0.5), ("0", 0.0), ("inf", math.inf), ("", math.inf)):
        monkeypatch.setenv(LOCK_TIMEOUT_ENV_VAR, text)
        assert lock_timeout() == seconds
    for bad in ("soon", "-1", "nan"):
        monkeypatch.setenv(LOCK_TIMEOUT_ENV_VAR, bad)
        with pytest.raises(LockSettingError, match=LOCK_TIMEOUT_ENV_VAR):
            lock_timeout()


def _write_in_turn(location: str, worker: int, reports: Any) -> list[tuple[str, int | None, bool]]:
    """In a spawned process: open the store to write (no lock timeout), telling `reports` that it
    waits; put one task. Returns what the callback heard: (text, holder PID, done)."""
    heard: list[tuple[str, int | None, bool]] = []

    def on_wait(wait: LockWait) -> None:
        if not heard:
            reports.put((worker, wait.pid))
        heard.append((str(wait), wait.pid, wait.done))

    with open_store(location, "w", on_wait=on_wait) as store:
        store.put(small_task(f"t/writer-{worker}", n=worker + 2))
    return heard


@pytest.mark.slow
def test_eight_writers_wait_their_turn_and_all_write(stored):
    """8 processes want to write while another holds the store: each waits (and says so, naming
    the holder) until its turn, then writes; none gives up."""
    holder = Holder(stored, "w")
    ctx = mp.get_context("spawn")
    try:
        with ctx.Manager() as manager:
            reports = manager.Queue()
            with ctx.Pool(WRITERS) as pool:
                pending = pool.starmap_async(_write_in_turn, [(str(stored), w, reports) for w in range(WRITERS)])
                waiting = dict(reports.get(timeout=BOUND) for _ in range(WRITERS))  # every one is waiting now
                holder.stop()
                heard = pending.get(timeout=BOUND)
    finally:
        holder.stop()
    assert sorted(waiting) == list(range(WRITERS))
    assert set(waiting.values()) == {holder.proc.pid}, waiting  # the first word of each names the holder
    for seen in heard:
        assert seen[0][1] == holder.proc.pid and f"PID {holder.proc.pid} (writing)" in seen[0][0]
        assert seen[-1][2] is True and "got it to write to" in seen[-1][0]
        assert all(not done for _, _, done in seen[:-1])
    with open_store(stored, "r") as store:
        assert {t.task_id for t in store.list()} == {"t/first", *(f"t/writer-{w}" for w in range(WRITERS))}
        for w in range(WRITERS):
            assert store.get(f"t/writer-{w}") == small_task(f"t/writer-{w}", n=w + 2)


@pytest.mark.slow
def test_a_waiting_writer_is_told_and_logged(stored, caplog):
    """In one process: the callback hears the wait start (naming the holder) and end; the
    `graphstore.filelock` logger says the same at INFO."""
    holder = Holder(stored, "w")
    heard: list[LockWait] = []
    started = threading.Event()
    outcome: list[object] = []

    def on_wait(wait: LockWait) -> None:
        heard.append(wait)
        started.set()

    def write() -> None:
        try:
            with open_store(stored, "w", on_wait=on_wait) as store:
                outcome.append(store.put(small_task("t/late")))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            outcome.append(exc)

    caplog.set_level(logging.INFO, logger="graphstore.filelock")
    writer = threading.Thread(target=write)
    try:
        writer.start()
        assert started.wait(BOUND), "the writer never said it was waiting"
        assert outcome == []  # still waiting: the holder has not let go
    finally:
        holder.stop()
        writer.join(BOUND)
    assert outcome == [True]
    first, last = heard[0], heard[-1]
    assert (first.want, first.pid, first.done) == ("write to", holder.proc.pid, False)
    expected = f"store {str(stored)!r} is locked by PID {holder.proc.pid} (writing); waiting to write to it"
    assert str(first).startswith(expected), str(first)
    assert last.done and last.waited >= first.waited
    logged = [r.getMessage() for r in caplog.records if r.name == "graphstore.filelock"]
    assert logged[0] == str(first) and logged[-1] == str(last)


@pytest.mark.slow
def test_a_cli_writer_waits_for_its_turn_by_default(stored):
    holder = Holder(stored, "w")
    try:
        load = graphtasks(["--store", str(stored), "tasks", "load", "rewardgym/hcp"])
        _wait_until_queued(stored, load)
    finally:
        holder.stop()
    out, err = load.communicate(timeout=BOUND)
    assert load.returncode == 0 and err == "", err
    assert "1 written" in out
    with open_store(stored, "r") as store:
        assert "rewardgym/hcp" in store


def _wait_until_queued(location: Path, process: subprocess.Popen) -> None:
    """Until `process` is queued for the store's lock (a waiting writer holds the queue file alone)."""
    import fcntl

    fd = os.open(queue_path(location), os.O_RDONLY | os.O_CREAT)
    try:
        for _ in range(BOUND * 20):
            assert process.poll() is None, process.communicate()
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return
            time.sleep(0.05)
        raise AssertionError("the writer never queued for the lock")
    finally:
        os.close(fd)


@pytest.mark.parametrize("how", ["option", "environment"])
@pytest.mark.slow
def test_a_set_timeout_is_one_error_line_and_writes_nothing(stored, how):
    holder = Holder(stored, "w")
    try:
        if how == "option":
            run = graphtasks(["--lock-timeout", "0.5", "--store", str(stored), "tasks", "load", "rewardgym/hcp"])
        else:
            env = {**os.environ, LOCK_TIMEOUT_ENV_VAR: "0.5"}
            run = graphtasks(["--store", str(stored), "tasks", "load", "rewardgym/hcp"], env=env)
        out, err = run.communicate(timeout=BOUND)
    finally:
        holder.stop()
    assert_one_error_line(
        run.returncode, err, str(stored), f"locked by PID {holder.proc.pid} (writing)", "after 0.5 s", "--lock-timeout"
    )
    with open_store(stored, "r") as store:
        assert "rewardgym/hcp" not in store


def _read_until_stopped(location: str, stop: Any, reads: Any) -> int:
    """In a spawned process: open the store to read and close it, over and over, until `stop`."""
    n = 0
    while not stop.is_set():
        with open_store(location, "r") as store:
            store.list()
        n += 1
        if n == 3:
            reads.put(n)
    return n


@pytest.mark.slow
def test_a_writer_gets_its_turn_among_readers_that_never_stop(stored, monkeypatch):
    """4 processes read the store over and over, their holds overlapping, so the store is never
    free of readers; a writer still gets in: readers that come after it wait behind it."""
    monkeypatch.setenv(LOCK_TIMEOUT_ENV_VAR, str(BOUND))  # a starved writer fails instead of hanging
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        stop, reads = manager.Event(), manager.Queue()
        with ctx.Pool(4) as pool:
            readers = pool.starmap_async(_read_until_stopped, [(str(stored), stop, reads) for _ in range(4)])
            try:
                for _ in range(4):
                    reads.get(timeout=BOUND)  # every reader is going
                with open_store(stored, "w") as store:
                    assert store.put(small_task("t/among-readers")) is True
            finally:
                stop.set()
            assert all(n >= 3 for n in readers.get(timeout=BOUND))
    with open_store(stored, "r") as store:
        assert "t/among-readers" in store


@pytest.mark.slow
def test_a_reader_waits_for_a_writer_too(stored):
    holder = Holder(stored, "w")
    heard: queue.Queue[LockWait] = queue.Queue()
    found: list[bool] = []

    def read() -> None:
        with open_store(stored, "r", on_wait=heard.put) as store:
            found.append("t/first" in store)

    reader = threading.Thread(target=read)
    try:
        reader.start()
        first = heard.get(timeout=BOUND)
        assert (first.want, first.pid, first.done) == ("read", holder.proc.pid, False)
    finally:
        holder.stop()
        reader.join(BOUND)
    assert found == [True]
