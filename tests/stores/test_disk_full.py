"""An embedded store on a full disk: one error line, nothing half-written, readable afterwards.

Each test mounts a small tmpfs of its own (`small_disk`, unmounted at the end) and drives the
real `graphtasks` command in subprocesses: the write that meets the full disk fails with one
`graphtasks: error:` line (exit code 2, no traceback, no abort), and the store keeps exactly
what it held before that write, readable by a read-only command.

Mounting needs root (CAP_SYS_ADMIN), which CI has (`.ci/run` runs as root); a loop-mounted
image would need it too. Without it these tests fail saying so, rather than skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import tasks
from graphstore import StoreFullError, open_store

from .test_store_semantics import small_task

TIMEOUT = 300


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """`small_disk("2m")`: a fresh tmpfs of that size mounted under tmp_path; all unmounted at the end."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        target = tmp_path / f"disk-{len(mounted)}"
        target.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.fail(
                f"cannot mount a {size} tmpfs on {target} ({done.stderr.strip() or done.returncode}): the disk-full "
                f"tests need root (CAP_SYS_ADMIN) to mount a small file system, as CI (.ci/run) runs them"
            )
        mounted.append(target)
        return target

    yield mount
    for target in reversed(mounted):
        if subprocess.run(["umount", str(target)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], check=True)


def fill(disk: Path, leave: int = 0) -> Path:
    """Write a file that leaves about `leave` bytes free on `disk`."""
    filler = disk / "filler"
    with open(filler, "ab") as handle:
        while shutil.disk_usage(disk).free > leave:
            chunk = min(1 << 16, shutil.disk_usage(disk).free - leave)
            try:
                handle.write(b"\0" * max(chunk, 1))
                handle.flush()
            except OSError:
                break
    return filler


def cli(*args: object) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("graphtasks")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "graphtasks"]
    return subprocess.run(command + [str(a) for a in args], capture_output=True, text=True, timeout=TIMEOUT)


def assert_one_error_line(run: subprocess.CompletedProcess, *fragments: str) -> str:
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert len(lines) == 1 and lines[0].startswith("graphtasks: error: "), run.stderr
    assert "Traceback" not in run.stderr and "terminate called" not in run.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def stored_ids(store: Path) -> list[str]:
    """The task ids a read-only command lists."""
    run = cli("--store", store, "tasks", "list", "--format", "json")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    return [row["id"] for row in json.loads(run.stdout)]


@pytest.mark.slow  # a full disk, command by command: the quick run keeps the store-level cases
def test_loading_tasks_onto_a_full_disk_keeps_what_was_stored(small_disk):
    store = small_disk("2m") / "tasks.lbug"
    assert cli("--store", store, "tasks", "load", "rewardgym/two-step", "rewardgym/hcp").returncode == 0
    run = cli("--store", store, "tasks", "load", "--all", "--no-progress")  # does not fit: about 2 MB of log for some
    line = assert_one_error_line(run, repr(str(store)), "the disk is full", "failed and nothing of it was kept")
    failed = re.search(r"writing task '([^']+)'", line)
    assert failed, line

    ids = stored_ids(store)  # a read-only command opens the store at once
    assert {"rewardgym/two-step", "rewardgym/hcp"} <= set(ids) and failed.group(1) not in ids
    with open_store(store, "r") as opened:
        for task_id in ids:
            assert opened.get(task_id) == tasks.build(task_id)  # every task whole, as built
    again = cli("--store", store, "tasks", "load", "rewardgym/hcp")  # a writer opens it too
    assert again.returncode == 0 and "0 written, 1 unchanged" in again.stdout, again.stderr


@pytest.mark.slow  # a full disk, command by command: the quick run keeps the store-level cases
def test_ingesting_onto_a_full_disk_writes_nothing(small_disk):
    store = small_disk("512k") / "tasks.lbug"
    assert cli("--store", store, "tasks", "load", "rewardgym/two-step").returncode == 0
    run = cli("--store", store, "ingest", "snapshot")
    assert_one_error_line(run, repr(str(store)), "the disk is full", "nothing of it was kept")
    status = cli("--store", store, "ingest", "status")
    assert status.returncode == 0 and "0 concepts" in status.stdout, status.stderr
    assert stored_ids(store) == ["rewardgym/two-step"]


@pytest.mark.slow  # a full disk, command by command: the quick run keeps the store-level cases
def test_an_experiment_run_on_a_full_disk_is_one_line(small_disk):
    store = small_disk("2m") / "tasks.lbug"
    assert cli("--store", store, "tasks", "load", "rewardgym/two-step").returncode == 0
    fill(store.parent, 16 << 10)  # the experiment's records have no room: the store's nor the chunks'
    run = cli("--store", store, "experiment", "run", "daw2011-two-step", "--workers", "1", "--no-progress")
    line = assert_one_error_line(run)
    assert ("the disk is full" in line and "nothing of it was kept" in line) or (
        "cannot write record chunk" in line and "No space left on device" in line and "run the same command" in line
    ), line
    assert stored_ids(store) == ["rewardgym/two-step"]
    listed = cli("--store", store, "experiment", "list")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    with open_store(store, "r") as opened:
        assert opened.get("rewardgym/two-step") == tasks.build("rewardgym/two-step")


@pytest.mark.parametrize("leave", [0, 8 << 10])  # no room for the database file / for its tables
@pytest.mark.slow
def test_a_store_is_not_created_on_a_full_disk(small_disk, leave):
    disk = small_disk("1m")
    fill(disk, leave)
    store = disk / "new.lbug"
    run = cli("--store", store, "tasks", "load", "rewardgym/hcp")
    assert_one_error_line(run, repr(str(store)), "the disk is full", "creating the store failed", "no store was")
    assert not store.exists() and not store.with_name("new.lbug.wal").exists()
    missing = cli("--store", store, "tasks", "list")
    assert_one_error_line(missing, "does not exist")


UNFINISHED_CHECKPOINT = textwrap.dedent(
    """
    import sys
    import ladybug

    # LadybugDB's own checkpoint on a full disk (graphtasks checkpoints only with room for it;
    # an older graphtasks, or another LadybugDB client, did it anyway)
    db = ladybug.Database(sys.argv[1])
    conn = ladybug.Connection(db)
    try:
        conn.execute("CHECKPOINT")
        print("checkpoint done")
    except RuntimeError as exc:
        print("checkpoint failed:", exc)
    conn.execute("CALL force_checkpoint_on_close=false")
    conn.close()
    db.close()
    try:
        ladybug.Database(sys.argv[1], read_only=True)
        print("read-only opening accepted")
    except RuntimeError as exc:
        print("read-only opening refused:", exc)
    """
)


def leave_an_unfinished_checkpoint(store: Path) -> str:
    """Run LadybugDB's own checkpoint on `store`, on a disk too small for it; what it printed."""
    left = subprocess.run(
        [sys.executable, "-c", UNFINISHED_CHECKPOINT, str(store)], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert "checkpoint failed: IO exception" in left.stdout, left  # the disk is too small for it
    assert "read-only opening refused" in left.stdout and "recovery is pending" in left.stdout, left.stdout
    return left.stdout


@pytest.mark.slow  # a full disk, command by command: the quick run keeps the store-level cases
def test_a_reader_finishes_a_checkpoint_a_full_disk_interrupted(small_disk):
    """LadybugDB refuses read-only openings until a writer finishes the recovery of a failed
    checkpoint; graphtasks's read-only commands do that themselves. Whether finishing it needs
    free space depends on where the checkpoint failed (the next test covers a lack of it), so
    the disk is given room first."""
    disk = small_disk("3m")
    store = disk / "tasks.lbug"
    loaded = sorted(tasks.builtin_ids())[:25]
    assert cli("--store", store, "tasks", "load", *loaded).returncode == 0
    leave_an_unfinished_checkpoint(store)
    subprocess.run(["mount", "-o", "remount,size=16m", "tmpfs", str(disk)], check=True)
    assert stored_ids(store) == sorted(loaded)
    with open_store(store, "r") as opened:
        assert all(opened.get(task_id) == tasks.build(task_id) for task_id in loaded)


@pytest.mark.slow  # a full disk, command by command: the quick run keeps the store-level cases
def test_a_checkpoint_that_needs_room_to_finish_is_one_line_until_there_is_room(small_disk):
    """A checkpoint that failed half-way must be finished before anyone reads, which needs
    space: one line saying so, and once there is room a read-only command reads everything."""
    disk = small_disk("3m")
    store = disk / "tasks.lbug"
    loaded = sorted(tasks.builtin_ids())[:25]  # the checkpoint of these fails half-way
    assert cli("--store", store, "tasks", "load", *loaded).returncode == 0
    leave_an_unfinished_checkpoint(store)
    run = cli("--store", store, "tasks", "list")
    assert_one_error_line(run, repr(str(store)), "the disk is full", "free some in", "nothing was changed")
    assert "rewardgym/hcp" not in loaded
    run = cli("--store", store, "tasks", "load", "rewardgym/hcp")  # a writer: no room either
    assert_one_error_line(run, repr(str(store)), "the disk is full", "nothing")
    subprocess.run(["mount", "-o", "remount,size=16m", "tmpfs", str(disk)], check=True)  # room again
    assert stored_ids(store) == loaded
    with open_store(store, "r") as opened:
        assert all(opened.get(task_id) == tasks.build(task_id) for task_id in loaded)


def test_the_store_keeps_working_after_a_full_disk(small_disk):
    """In Python: StoreFullError, the store as it was, and once there is room again the same
    store object writes, for good (read back by another opening)."""
    disk = small_disk("2m")
    store = disk / "tasks.lbug"
    big = small_task("t/big", n=3000)  # about 1 MB of log
    with open_store(store, "w") as opened:
        assert opened.put(small_task("t/small")) is True
        filler = fill(disk, leave=4096)
        with pytest.raises(StoreFullError, match=r"the disk is full .*writing task 't/big' failed"):
            opened.put(big)
        assert opened.list()[0].task_id == "t/small" and "t/big" not in opened
        os.remove(filler)
        assert opened.put(big) is True
    with open_store(store, "r") as opened:
        assert opened.get("t/big") == big and opened.get("t/small") == small_task("t/small")


@pytest.mark.parametrize(
    "size, rows, outcome",
    [("8m", 60000, "not kept"), ("4m", 20000, "kept once finished")],  # where the checkpoint fails differs
)
@pytest.mark.slow
def test_a_bulk_load_whose_checkpoint_fails_is_kept_whole_or_not_at_all(small_disk, monkeypatch, size, rows, outcome):
    """COPY FROM's rows last only through the checkpoint after its commit. With the room a
    checkpoint is thought to need set to nothing, that checkpoint fails on a small disk: the
    rows are then either not kept (one line saying so), or, when the checkpoint failed half-way,
    kept whole once there is room to finish it (one line saying to free some); never half."""
    from graphstore import ladybug_store

    monkeypatch.setattr(ladybug_store, "CHECKPOINT_SPARE_BYTES", 0)  # COPY FROM is used however small the disk
    disk = small_disk(size)
    store = disk / "tasks.lbug"
    concepts = [
        {"uid": f"c/{i}", "task": "conceptnet", "name": f"concept number {i}", "language": "en"} for i in range(rows)
    ]
    with open_store(store, "w") as opened:
        assert opened.put(small_task("t/small")) is True
        with pytest.raises(StoreFullError) as caught:
            opened.create_shared([("Concept", concepts)])
    message = str(caught.value)
    assert "\n" not in message and "the disk is full" in message and "writing shared records failed" in message
    if outcome == "not kept":
        assert "nothing of it was kept" in message
    else:
        assert "failed in the checkpoint that makes it last" in message and "free some in" in message
        run = cli("--store", store, "tasks", "list")
        assert_one_error_line(run, "the disk is full", "free some in")
        subprocess.run(["mount", "-o", "remount,size=64m", "tmpfs", str(disk)], check=True)  # room again
    with open_store(store, "r") as opened:
        count = opened.cypher("MATCH (c:Concept) RETURN count(c)").rows[0][0]
        assert count == (0 if outcome == "not kept" else rows)
        assert [t.task_id for t in opened.list()] == ["t/small"]


@pytest.mark.slow
def test_chunks_on_a_full_disk_stop_the_sweep_in_one_line_and_the_same_command_goes_on(small_disk, tmp_path):
    """The store has room, its records folder (a full disk of its own) has none: the sweep stops
    with one line naming the chunk, nothing of it is catalogued, and once there is room the same
    command finishes with the records an uninterrupted sweep makes."""
    store = tmp_path / "roomy.lbug"
    records = small_disk("1m")
    Path(str(store) + ".records").symlink_to(records, target_is_directory=True)
    filler = fill(records, 0)
    run = cli("--store", store, "experiment", "run", "daw2011-two-step", "--workers", "1", "--no-progress")
    line = assert_one_error_line(run, "cannot write record chunk", "run the same command to go on")
    assert str(records) in line or ".records" in line, line
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (c:Chunk) RETURN count(c)").rows == [[0]]
        statuses = dict(opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows)
    assert statuses.get("completed", 0) == 0, statuses
    assert not [p for p in records.rglob("*") if p.is_file() and p != filler]  # no half chunk left behind
    filler.unlink()
    again = cli("--store", store, "experiment", "run", "daw2011-two-step", "--workers", "1", "--no-progress")
    assert again.returncode == 0, again.stderr
    from graphtasks.experiments import load_spec, run_experiment
    from graphtasks.experiments.records import recorded_episodes

    with open_store(store, "r") as opened:
        assert recorded_episodes(opened, "daw2011-two-step") == run_experiment(
            load_spec("daw2011-two-step"), workers=1).rows
