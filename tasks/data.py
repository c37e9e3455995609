"""Where the project's data files are, and reading them with errors that name the file.

Every file a user hands in is read through `open_input`: only a regular file (not a device
such as /dev/zero, a FIFO or a directory) of at most a stated size, checked on the open file
before a byte is read. Text must be UTF-8; a decoding error names the line and the byte
offset. JSON is checked for nesting depth with a linear scan before Python's parser, which
recurses once per level, sees it. The limits are listed in docs/limits.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Callable

import numpy as np

from graphstore.errors import GraphtasksError

MAX_TASK_FILE_BYTES = 16 * 2**20  # a JSON task file; the largest shipped one is 0.4 MB
MAX_JSON_DEPTH = 32  # nesting of [ and { in a JSON task file; the shipped ones reach 6


class TaskFileError(GraphtasksError, ValueError):
    """A task definition file cannot be read; the message names the file (and field)."""


@lru_cache(maxsize=1)
def data_dir() -> Path:
    """The `data/` folder: installed as the `graphtasks.data` resource package, or the checkout's."""
    try:  # installed: a namespace package whose search location is the data folder
        spec = importlib.util.find_spec("graphtasks.data")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location)
        if root.is_dir() and any(p.suffix == ".json" for p in root.rglob("*.json")):
            return root
    checkout = Path(__file__).resolve().parents[1] / "data"
    if not checkout.is_dir():
        raise TaskFileError(
            "graphtasks' data files are missing: reinstall the package (pip install .) or run from a checkout"
        )
    return checkout


Refusal = Callable[[str], Exception]  # the error class of the caller (TaskFileError, BehaviourError, ...)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def size_text(size: int) -> str:
    """A byte count for a message: '16 MiB', '1,234 bytes'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} bytes"


def open_input(path: str | os.PathLike[str], limit: int, error: Refusal = TaskFileError) -> BinaryIO:
    """`path` opened to read bytes, after checking on the open file that it is a regular file
    of at most `limit` bytes; `error(message)` otherwise, naming the file.

    The file is opened without blocking (a FIFO with no writer would wait for ever) and
    checked with fstat, so what is checked is what is read.
    """
    p = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise error(f"{p}: {kind}, not a regular file; give a file")
        if info.st_size > limit:
            raise error(f"{p}: {info.st_size:,} bytes; files of at most {size_text(limit)} are read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(path: str | os.PathLike[str], limit: int, error: Refusal = TaskFileError) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (see `open_input`); a file that grows
    past the limit while it is read is refused too."""
    with open_input(path, limit, error) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise error(f"{Path(path)}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{Path(path)}: more than {size_text(limit)}; files of at most {size_text(limit)} are read")
    return data


def decode_utf8(data: bytes, source: str, error: Refusal = TaskFileError, start: int = 0, line: int = 1) -> str:
    """`data` as text; a byte that is not UTF-8 is `error` naming the line and the byte offset
    (counted from `start`, the offset of `data` in its file, and `line`, the line it begins on)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = line + data.count(b"\n", 0, exc.start)
        byte = data[exc.start]
        reason = f"not UTF-8 text (byte 0x{byte:02x}: {exc.reason})"
        raise error(f"{source}, line {at}, byte {start + exc.start}: {reason}") from None


JSON_SCAN_CHUNK = 2**20  # bytes per step of the depth scan: its arrays stay a few MB for a file of any size


def json_nesting(data: bytes | str, limit: int | None = None) -> tuple[int, int]:
    """(deepest nesting of [ and { outside strings, byte offset of the first bracket that goes
    past `limit`, or -1) of JSON text (UTF-8 bytes, or a str, scanned as its UTF-8 bytes).

    Linear and without recursion, in steps of JSON_SCAN_CHUNK bytes: numpy finds the quotes
    that are not escaped (an odd run of backslashes before a quote escapes it), which brackets
    lie between them, and the running depth. Up to the first error of a text that is not JSON
    the depth is the one a JSON parser reaches there, so a parser that stops at the error
    never recurses deeper.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    depth = deepest = 0
    first = -1
    in_string = False
    backslashes_before = 0  # the run of backslashes that ends the text scanned so far
    for offset in range(0, len(raw), JSON_SCAN_CHUNK):
        b = np.frombuffer(raw, dtype=np.uint8, count=min(JSON_SCAN_CHUNK, len(raw) - offset), offset=offset)
        quotes = np.flatnonzero(b == ord('"'))
        slashes = np.flatnonzero(b == ord("\\"))
        run_start = np.zeros(0, dtype=np.int64)
        if len(slashes):
            fresh = np.ones(len(slashes), dtype=bool)
            fresh[1:] = np.diff(slashes) != 1
            run_start = slashes[np.maximum.accumulate(np.where(fresh, np.arange(len(slashes)), 0))]
            # a run that starts this step at byte 0 continues the previous step's
            run_start = np.where(run_start == 0, -backslashes_before, run_start)
        if len(quotes):
            before = np.searchsorted(slashes, quotes) - 1  # the last backslash before each quote
            last = np.maximum(before, 0)
            if len(slashes):
                touching = (before >= 0) & (slashes[last] == quotes - 1)
                run = np.where(touching, quotes - run_start[last], 0)
            else:
                run = np.zeros(len(quotes), dtype=np.int64)
            run = np.where(quotes == 0, backslashes_before, run)  # a quote at byte 0: the previous step's run
            quotes = quotes[run % 2 == 0]
        if len(b) and b[-1] == ord("\\"):
            backslashes_before = len(b) - int(run_start[-1])
        else:
            backslashes_before = 0
        marks = np.flatnonzero((b == ord("[")) | (b == ord("{")) | (b == ord("]")) | (b == ord("}")))
        outside = (np.searchsorted(quotes, marks) + in_string) % 2 == 0  # an even count of quotes before
        in_string = bool((len(quotes) + in_string) % 2)
        marks = marks[outside]
        if not len(marks):
            continue
        opening = (b[marks] == ord("[")) | (b[marks] == ord("{"))
        level = depth + np.cumsum(np.where(opening, 1, -1))
        deepest = max(deepest, int(level.max()))
        if first < 0 and limit is not None and deepest > limit:
            first = offset + int(marks[int(np.argmax(level > limit))])
        depth = int(level[-1])
    return deepest, first


def json_depth(text: bytes | str) -> int:
    """The deepest nesting of [ and { in JSON text, outside strings (see `json_nesting`)."""
    return json_nesting(text)[0]


def read_json(path: Path, limit: int = MAX_TASK_FILE_BYTES, depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON file, refused with one line naming the file (and line, column or byte) when it is
    not a regular file, larger than `limit` bytes, not UTF-8, nested deeper than `depth`, or not JSON."""
    data = read_input(path, limit)
    text = decode_utf8(data, str(path))
    deepest, at = json_nesting(data, depth)
    if at >= 0:
        line = data.count(b"\n", 0, at) + 1
        column = len(data[data.rfind(b"\n", 0, at) + 1 : at].decode("utf-8")) + 1
        raise TaskFileError(
            f"{path}, line {line}, column {column}: JSON nested {deepest} levels deep; the limit is {depth}"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise TaskFileError(f"{path}: invalid JSON: {exc}") from None
