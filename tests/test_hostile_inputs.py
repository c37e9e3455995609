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
import subprocess
import sys
from pathlib import Path

import pytest

import tasks
from graphstore import open_store
from tasks.data import MAX_JSON_DEPTH, MAX_TASK_FILE_BYTES, TaskFileError, json_nesting, read_json
from tests.test_cli_errors import assert_one_error_line, run

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


def test_the_depth_scan_agrees_with_a_scan_character_by_character():
    """json_nesting (numpy, in chunks) = the obvious loop, on JSON-like texts with strings,
    escapes and multi-byte characters, for every chunk boundary."""
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
    for _ in range(3000):
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
