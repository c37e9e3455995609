"""Hostile input files: every one is refused with one line naming the file (and line, byte or
field) before anything is written, in time linear in its size, within stated limits
(docs/limits.md). Task JSON files (`tasks.data.read_json`), events files (`graphtasks fit
import`), RDF files (`graphtasks import`), and the envs' render modes.

The probes use real files and the real command line: in-process (`cli.main`), or as a
separate process with a timeout where the file could block or never end (/dev/zero, a FIFO).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tasks
from graphstore import open_store
from graphtasks.fitting import read_events
from graphtasks.fitting.behaviour import EVENT_COLUMNS
from tasks.data import MAX_JSON_DEPTH, MAX_TASK_FILE_BYTES, TaskFileError, json_nesting, read_json
from tests.budget import examples
from tests.test_cli_errors import assert_one_error_line, run
from tests.test_fitting import REWARDGYM_EVENTS

LEVER = {"graph": {"0": [1, 2], "1": [], "2": []}}


def in_a_process(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Python `code` in its own interpreter, killed after `timeout` seconds (a test that would hang fails)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


def stored_ids(location: Path) -> list[str]:
    if not location.exists():
        return []
    with open_store(location, "r") as store:
        return [t.task_id for t in store.list()]


# -- task JSON ----------------------------------------------------------------------------------
def test_binary_bytes_in_a_task_file_name_the_byte(tmp_path, capsys, isolated_store_location):
    path = tmp_path / "binary.json"
    path.write_bytes(b'{"graph": {"0": [1, 2], "1": [], "2": []},\n "name": "\xff\xfe\x00"}')
    offset = path.read_bytes().index(b"\xff")
    code, _, err = run(["tasks", "load", "--file", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}, line 2, byte {offset}: not UTF-8 text (byte 0xff")
    assert stored_ids(isolated_store_location) == []


def test_latin1_task_file_is_refused(tmp_path, isolated_store_location, capsys):
    path = tmp_path / "latin.json"
    path.write_bytes(json.dumps({**LEVER, "name": "café"}, ensure_ascii=False).encode("latin-1"))
    offset = path.read_bytes().index(b"\xe9")
    code, _, err = run(["tasks", "load", "--file", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}, line 1, byte {offset}: not UTF-8 text (byte 0xe9")
    assert stored_ids(isolated_store_location) == []


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 200_000])
def test_deeply_nested_task_file_is_refused_before_parsing(tmp_path, capsys, depth, isolated_store_location):
    path = tmp_path / "deep.json"
    path.write_text('{"graph": {"0": [1, 2], "1": [], "2": []}, "info": {"0": ' + "[" * depth + "]" * depth + "}}")
    code, _, err = run(["tasks", "load", "--file", str(path)], capsys)
    column = len('{"graph": {"0": [1, 2], "1": [], "2": []}, "info": {"0": ') + MAX_JSON_DEPTH - 1
    assert_one_error_line(code, err, f"{path}, line 1, column {column}: JSON nested {depth + 2} levels deep",
                          f"the limit is {MAX_JSON_DEPTH}")
    assert stored_ids(isolated_store_location) == []


def test_nesting_up_to_the_limit_is_read(tmp_path):
    nested: list = []
    for _ in range(MAX_JSON_DEPTH - 2):  # with the object around it: MAX_JSON_DEPTH levels
        nested = [nested]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"a": nested}))
    assert read_json(path) == {"a": nested}
    path.write_text(json.dumps({"a": [nested]}))
    with pytest.raises(TaskFileError, match=f"nested {MAX_JSON_DEPTH + 1} levels deep; the limit is {MAX_JSON_DEPTH}"):
        read_json(path)


def test_brackets_inside_strings_do_not_count(tmp_path):
    path = tmp_path / "strings.json"
    path.write_text(json.dumps({"name": "[" * 500 + '\\"{' * 100, "graph": LEVER["graph"]}))
    assert read_json(path)["name"].startswith("[[[")


def test_a_task_file_above_the_size_limit_is_refused_before_reading(tmp_path, capsys):
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: no disk is used, nothing could be read in time
        handle.truncate(MAX_TASK_FILE_BYTES + 1)
    code, _, err = run(["tasks", "load", "--family", "graph", "--file", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}: {MAX_TASK_FILE_BYTES + 1:,} bytes", "at most 16 MiB")


def test_a_number_too_long_for_python_is_one_line(tmp_path, capsys):
    path = tmp_path / "digits.json"
    path.write_text('{"graph": {"0": [1, 2], "1": [], "2": []}, "info": {"0": ' + "7" * 5000 + "}}")
    code, _, err = run(["tasks", "load", "--file", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}: invalid JSON", "4300")


def test_a_directory_as_a_task_file(tmp_path):
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(TaskFileError, match=f"^{folder}: a directory, not a regular file"):
        tasks.build_from_file(folder)


def test_dev_zero_as_a_task_file_in_a_real_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "s.lbug"), "tasks", "load", "--family", "graph",
         "--file", "/dev/zero"], capture_output=True, text=True, timeout=60)
    assert_one_error_line(proc.returncode, proc.stderr, "/dev/zero: a character device, not a regular file")
    assert not (tmp_path / "s.lbug").exists()


def test_a_fifo_as_a_task_file_does_not_block(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # nobody writes to it: opening it to read would wait for ever
    proc = in_a_process(f"import tasks\ntasks.build_from_file({str(fifo)!r})", timeout=60)
    assert f"TaskFileError: {fifo}: a FIFO (named pipe), not a regular file" in proc.stderr


@pytest.mark.slow
def test_the_depth_scan_agrees_with_a_scan_character_by_character():
    """json_nesting (numpy, in chunks) = the obvious loop, on JSON-like texts with strings,
    escapes and multi-byte characters, for every chunk boundary (3,000 random texts; a quick
    run draws fewer, tests/budget.py)."""
    import tasks.data as data

    def by_hand(text: str, limit: int) -> tuple[int, int]:
        depth = deepest = 0
        inside = escaped = False
        first = -1
        for i, byte in enumerate(text.encode()):
            char = chr(byte)
            if inside:
                escaped, inside = (False, inside) if escaped else (char == "\\", char != '"')
            elif char == '"':
                inside = True
            elif char in "[{":
                depth += 1
                deepest = max(deepest, depth)
                if depth > limit and first < 0:
                    first = i
            elif char in "]}":
                depth -= 1
        return deepest, first

    rng = random.Random(7)

    def string() -> str:
        parts = [rng.choice(["a", "[", "]", "{", "é", "\\\\", '\\"', "\\[", "\\n"]) for _ in range(rng.randint(0, 6))]
        return '"' + "".join(parts) + '"'

    texts = []
    for _ in range(examples(3000)):
        pieces = [rng.choice("[]{},1é") if rng.random() < 0.7 else string() for _ in range(rng.randint(0, 25))]
        texts.append("".join(pieces) + (string()[:-1] if rng.random() < 0.2 else ""))  # some end inside a string
    chunk = data.JSON_SCAN_CHUNK
    try:
        for data.JSON_SCAN_CHUNK in (1, 2, 3, 7, chunk):
            for text in texts:
                limit = rng.randint(0, 3)
                assert json_nesting(text, limit) == by_hand(text, limit), (text, limit, data.JSON_SCAN_CHUNK)
    finally:
        data.JSON_SCAN_CHUNK = chunk


# -- events files (graphtasks fit import) ---------------------------------------------------------
EVENTS = REWARDGYM_EVENTS.encode()
LINES = EVENTS.split(b"\n")


def with_line(number: int, old: bytes, new: bytes) -> bytes:
    """The events text with `old` replaced by `new` in line `number` (1-based; 1 is the header)."""
    lines = list(LINES)
    assert old in lines[number - 1], (old, lines[number - 1])
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    return b"\n".join(lines)


def cell(number: int, column: str, value: bytes) -> bytes:
    """The events text with the cell of `column` in line `number` set to `value`."""
    lines = [line.split(b"\t") for line in LINES]
    lines[number - 1][lines[0].index(column.encode())] = value
    return b"\n".join(b"\t".join(line) for line in lines)


NAME = "events.tsv"
REFUSED = [  # (case, file content, what the one line says after the file's name)
    ("action 1e30", cell(4, "action", b"1e30"), "line 4: column 'action': expected a whole number in 0..2147483647"),
    ("action -1", cell(4, "action", b"-1"), "line 4: column 'action': expected a whole number in 0..2147483647"),
    ("action 1.5", cell(4, "action", b"1.5"), "line 4: column 'action': expected a whole number, got '1.5'"),
    ("action text", cell(4, "action", b"left"), "line 4: column 'action': expected a number, got 'left'"),
    ("location 2**40", cell(5, "current_location", b"1099511627776"), "line 5: column 'current_location'"),
    ("trial -3", cell(6, "trial", b"-3"), "line 6: column 'trial': expected a whole number in 0..2147483647"),
    ("trial inf", cell(6, "trial", b"inf"), "line 6: column 'trial': expected a whole number, got 'inf'"),
    ("reward inf", cell(8, "reward", b"inf"), "line 8: column 'reward': expected a number between -1e+15 and 1e+15"),
    ("reward -Infinity", cell(8, "reward", b"-Infinity"), "line 8: column 'reward': expected a number between"),
    ("reward 1e400", cell(8, "reward", b"1e400"), "line 8: column 'reward': expected a number between"),
    ("reward 1e300", cell(8, "reward", b"1e300"), "line 8: column 'reward': expected a number between"),
    ("onset NaN", cell(5, "onset", b"NaN"), "line 5: column 'onset': expected a number, got 'NaN'"),
    ("onset n/a", cell(5, "onset", b"n/a"), "line 5: column 'onset': expected a number, got 'n/a'"),
    ("onset inf", cell(5, "onset", b"inf"), "line 5: column 'onset': expected a finite number, got 'inf'"),
    ("onset text", cell(5, "onset", b"soon"), "line 5: column 'onset': expected a number, got 'soon'"),
    ("latin-1 byte", cell(2, "event_type", "fixatión".encode("latin-1")),
     f"line 2, byte {EVENTS.index(b'fixation') + 6}: not UTF-8 text (byte 0xf3"),
    ("gzip bytes", b"\x1f\x8b\x08\x00" + EVENTS, "line 1, byte 1: not UTF-8 text (byte 0x8b"),
    ("10 MB cell", cell(3, "event_type", b"x" * 10_000_000), "line 3: longer than 65,536 bytes"),
    ("a line without end", EVENTS.replace(b"\n", b"\r"), "line 1:"),
    ("quoted cell over lines", EVENTS + b'"' + (b"y" * 60_000 + b"\n") * 3, "field larger than field limit"),
    ("duplicate column", with_line(1, b"duration", b"onset"), "line 1: column(s) 'onset' appear more than once"),
    ("row too short", with_line(4, b"\tP07\trewardgym/two-step", b""),
     "line 4: 9 tab-separated cells; the header has 11"),
    ("row too long", with_line(4, b"two-step", b"two-step\textra"),
     "line 4: 12 tab-separated cells; the header has 11"),
    ("empty file", b"", "neither rewardGym's columns"),
    ("header only", LINES[0] + b"\n", "no choices to fit"),
    ("no onset column", EVENTS.replace(b"onset\t", b"start\t", 1), "missing column(s) onset"),
    ("a choice before any obs", cell(3, "rl_label", b"n/a"), "line 4: a choice before any 'obs' row of trial 0"),
    ("two choices in a row", cell(5, "rl_label", b"n/a"), "line 6: trial 0: a choice before the last one's outcome"),
    ("a reward before a choice", cell(3, "rl_label", b"reward"), "line 3: a reward before any choice of trial 0"),
    ("no location after the last choice", cell(16, "current_location", b"n/a"),
     "line 15: trial 3: the choice's trial shows no location after it"),
    ("state outside the task", cell(5, "current_location", b"99"), "line 4: state 0 -> 99 outside task"),
    ("action not offered", cell(4, "action", b"7"), "line 4: action 7 is not offered in state 0"),
    ("an unknown task", EVENTS.replace(b"rewardgym/two-step", b"rewardgym/two-stp"),
     "task column: unknown task 'rewardgym/two-stp'; did you mean 'rewardgym/two-step'"),
    ("two tasks", cell(3, "task", b"rewardgym/posner"), "name the task (--task)"),
    ("a participant id with a control character", cell(2, "participant_id", b"P\x0107"),
     "participant id: control character '\\x01'"),
    ("a participant id of 300 characters", cell(2, "participant_id", b"P" * 300), "participant id: 300 characters"),
]


CHECKED_AGAINST_THE_TASK = {"state outside the task", "action not offered", "an unknown task"}


@pytest.mark.parametrize("case, content, expected", REFUSED, ids=[c[0] for c in REFUSED])
def test_hostile_events_files_are_refused_with_one_line_and_nothing_stored(tmp_path, capsys, case, content, expected):
    path = tmp_path / NAME
    path.write_bytes(content)
    store = tmp_path / "store.lbug"
    code, out, err = run(["--store", str(store), "fit", "import", "lab", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}", expected)
    assert out == "" and stored_ids(store) == []  # not even the task: it is put only once everything is checked
    if case not in CHECKED_AGAINST_THE_TASK:  # the file itself is wrong: the store is not even opened
        assert not store.exists()


def test_the_reference_file_is_imported(tmp_path, capsys):
    """The file the hostile cases are made from is fine: each refusal is its own change's."""
    path = tmp_path / NAME
    path.write_bytes(EVENTS)
    code, out, err = run(["--store", str(tmp_path / "store.lbug"), "fit", "import", "lab", str(path)], capsys)
    assert code == 0, err
    assert "P07          0    2       4" in out


def test_a_byte_order_mark_and_windows_line_ends_are_read(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(b"\xef\xbb\xbf" + EVENTS.replace(b"\n", b"\r\n"))
    choices = read_events(path)
    assert len(choices) == 4 and choices.trials == 2


@pytest.mark.parametrize("name", ["", "   ", "a\nb", "x" * 300])
def test_a_bad_experiment_name_is_refused(tmp_path, capsys, name):
    path = tmp_path / NAME
    path.write_bytes(EVENTS)
    store = tmp_path / "store.lbug"
    code, _, err = run(["--store", str(store), "fit", "import", name, str(path)], capsys)
    assert_one_error_line(code, err, "import: experiment name")
    assert not store.exists()


def test_a_bad_second_file_writes_nothing_of_the_first(tmp_path, capsys):
    good, bad = tmp_path / "sub-A_events.tsv", tmp_path / "sub-B_events.tsv"
    good.write_bytes(EVENTS.replace(b"P07", b"A"))
    bad.write_bytes(cell(8, "reward", b"inf").replace(b"P07", b"B"))
    store = tmp_path / "store.lbug"
    code, _, err = run(["--store", str(store), "fit", "import", "lab", str(good), str(bad)], capsys)
    assert_one_error_line(code, err, f"{bad}, line 8: column 'reward'")
    assert not store.exists()


def test_a_participant_twice_writes_nothing(tmp_path, capsys):
    from graphtasks.fitting import BehaviourError
    from graphtasks.fitting.records import import_behaviour

    first, second = tmp_path / "a.tsv", tmp_path / "b.tsv"
    first.write_bytes(EVENTS)
    second.write_bytes(EVENTS)
    store = tmp_path / "store.lbug"
    code, _, err = run(["--store", str(store), "fit", "import", "lab", str(first), str(second)], capsys)
    assert_one_error_line(code, err, "participant(s) 'P07' appear in more than one file")
    assert not store.exists()
    with open_store(store) as opened:  # and from Python, on an open store: the task is not put either
        with pytest.raises(BehaviourError, match="participant"):
            import_behaviour(opened, "lab", [first, second])
        assert opened.list() == []


def test_other_data_under_a_recorded_name_changes_nothing(tmp_path, capsys):
    path = tmp_path / NAME
    path.write_bytes(EVENTS)
    store = tmp_path / "store.lbug"
    assert run(["--store", str(store), "fit", "import", "lab", str(path)], capsys)[0] == 0
    count = "MATCH (t:Trial) RETURN count(t)"
    with open_store(store, "r") as opened:
        before = opened.cypher(count).rows
    path.write_bytes(cell(4, "action", b"0"))
    code, _, err = run(["--store", str(store), "fit", "import", "lab", str(path)], capsys)
    assert_one_error_line(code, err, "experiment 'lab' is recorded", "with other data")
    with open_store(store, "r") as opened:
        assert opened.cypher(count).rows == before == [[4]]


@pytest.mark.parametrize("kind", ["directory", "missing"])
def test_an_events_path_that_is_not_a_file(tmp_path, capsys, kind):
    path = tmp_path / "events"
    if kind == "directory":
        path.mkdir()
    code, _, err = run(["--store", str(tmp_path / "store.lbug"), "fit", "import", "lab", str(path)], capsys)
    assert_one_error_line(code, err, str(path), "a directory, not a regular file" if kind == "directory"
                          else "cannot read: No such file or directory")


def test_an_events_file_above_the_size_limit_is_refused_before_reading(tmp_path, capsys):
    from graphtasks.fitting.behaviour import MAX_EVENTS_BYTES

    path = tmp_path / NAME
    with path.open("wb") as handle:
        handle.write(EVENTS)
        handle.truncate(MAX_EVENTS_BYTES + 1)  # sparse: reading it would take long, refusing it takes no time
    code, _, err = run(["--store", str(tmp_path / "store.lbug"), "fit", "import", "lab", str(path)], capsys)
    assert_one_error_line(code, err, f"{path}: {MAX_EVENTS_BYTES + 1:,} bytes; files of at most 256 MiB are read")


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
@pytest.mark.slow
def test_endless_events_sources_are_refused_in_a_real_process(tmp_path, kind):
    path = Path(kind) if kind.startswith("/") else tmp_path / "pipe.tsv"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: reading it would wait for ever
    proc = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "s.lbug"), "fit", "import", "lab", str(path)],
        capture_output=True, text=True, timeout=60)
    what = "a character device" if kind == "/dev/zero" else "a FIFO (named pipe)"
    assert_one_error_line(proc.returncode, proc.stderr, f"{path}: {what}, not a regular file")


def big_events_file(path: Path, trials: int) -> int:
    """A valid two-step events file of `trials` trials (6 rows each), written in rewardGym's layout."""
    rows = [b"\t".join(c.encode() for c in EVENT_COLUMNS)]
    rng = random.Random(0)
    onset = 0
    for trial in range(trials):
        first, second = rng.randint(0, 1), rng.randint(0, 1)
        middle = 1 + rng.randint(0, 1)
        final = 3 + 2 * (middle - 1) + second
        for kind, label, action, location, reward in (
            ("stimulus", "obs", "n/a", 0, 0), ("response", "action", first, "n/a", 0),
            ("stimulus", "obs", "n/a", middle, 0), ("response", "action", second, "n/a", 0),
            ("stimulus", "obs", "n/a", final, 0), ("outcome", "reward", "n/a", "n/a", rng.randint(0, 1)),
        ):
            rows.append(f"{onset}\t1\t{trial}\t{kind}\t{label}\t{action}\t{location}\t{reward}\tS1\t"
                        f"rewardgym/two-step".encode())
            onset += 1
    path.write_bytes(b"\n".join(rows) + b"\n")
    return path.stat().st_size


@pytest.mark.slow
def test_reading_an_events_file_takes_memory_a_small_multiple_of_its_size(tmp_path):
    """200,000 rows (about 10 MB): numpy columns, not a dict per row (the old reader took ~16x)."""
    import tracemalloc

    path = tmp_path / "big.tsv"
    size = big_events_file(path, 200_000 // 6)
    tracemalloc.start()
    try:
        choices = read_events(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(choices) == 2 * (200_000 // 6)
    assert peak < 2 * size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"


def test_what_an_import_stopped_between_batches_leaves_is_invisible_and_cleared(tmp_path):
    """An import larger than IMPORT_BATCH writes whole files (participant, run, episodes,
    trials, linked) a few per transaction; the experiment, which makes them visible, last.
    What a stopped import wrote (its first file) is seen by no query of runs, and the next
    import under that name removes it first."""
    from graphtasks.experiments.ids import experiment_uid
    from graphtasks.fitting import load_run, recorded_runs, records
    from graphtasks.fitting.behaviour import read_events_file

    stopped, later = tmp_path / "sub-A_events.tsv", tmp_path / "sub-B_events.tsv"
    big_events_file(stopped, 40)
    big_events_file(later, 10)
    with open_store(tmp_path / "store.lbug") as store:
        store.put(tasks.build("rewardgym/two-step"))
        events = read_events_file(stopped)
        task_hash = str(store.content_hash("rewardgym/two-step"))
        # what an import of `stopped` and other files wrote before it was stopped
        store.create_shared(*records._import_unit(experiment_uid("lab"), "lab", 0, "S1", events, stopped, task_hash))
        trials = "MATCH (t:Trial) RETURN count(t)"
        assert store.cypher(trials).rows == [[80]] and recorded_runs(store, "lab") == []
        records.import_behaviour(store, "lab", [later])
        assert store.cypher(trials).rows == [[20]]  # the 80 trials of the stopped file's run are gone
        assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[1]]
        assert len(load_run(store, "lab", 0)) == 20 and load_run(store, "lab", 0).trials == 10


# -- render modes ------------------------------------------------------------------------------------
def test_human_rendering_is_refused_when_the_env_is_made_for_every_registered_id():
    """gymnasium.make would wrap an rgb_array env in its pygame window (HumanRendering), which
    fails only at reset without pygame; the envs' metadata refuses "human" first, naming their modes."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    import gym_bridge

    ids = gym_bridge.registered_ids()
    assert len(ids) >= 30
    for env_id in ids:
        modes = list(load_env_creator(gym.spec(env_id).entry_point).metadata["render_modes"])
        with pytest.raises(ValueError, match=rf"^render_mode: expected one of {re.escape(str(modes))} or None, "
                                             r"got 'human' \(these envs draw no window"):
            gym.make(env_id, render_mode="human")


def test_the_render_modes_there_are_still_work():
    import gymnasium as gym

    import gym_bridge  # noqa: F401 - registers the ids
    from gym_bridge.graph.env import GraphTaskEnv

    collected = gym.make("graphtasks/TwoStep-v0", render_mode="rgb_array_list")  # gymnasium's RenderCollection
    collected.reset(seed=0)
    assert collected.render()[0].ndim == 3
    with pytest.raises(ValueError, match="got 'human'"):
        GraphTaskEnv(task="rewardgym/two-step", render_mode="human")
    text = GraphTaskEnv(task="rewardgym/two-step", render_mode="ansi")
    text.reset(seed=0)
    assert isinstance(text.render(), str)
