"""One participant's choices (`Choices`, and `EventsFile`: the choices with the lines of the file
they came from), the error every reader of behaviour raises, and the reading of a
tab-separated events file cell by cell (`_Table`, with checked cells: `_index`, `_real`).

`graphtasks.fitting.behaviour` (runs in the store, rewardGym's and graphtasks' own files, any
file's participants) and `graphtasks.fitting.hbayesdm` (hBayesDM's layouts) read with these;
this module imports neither.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from graphstore.errors import GraphtasksError
from tasks.data import decode_utf8

MAX_EVENTS_LINE = 64 * 2**10  # bytes of one row
MAX_INDEX = 2**31 - 1  # trials, states, actions: whole numbers in 0..MAX_INDEX
MAX_REWARD = 1e15  # |reward| of one cell, so that sums over millions of rows stay finite and exact enough
MISSING = frozenset({"", "n/a", "none", "nan", "-nan"})  # rewardGym's (and pandas') missing values, any case


class BehaviourError(GraphtasksError, ValueError):
    """Behaviour that cannot be read or fitted: one line naming the file, line or field."""


@dataclass(frozen=True, eq=False)
class Choices:
    """One sequence of choices, in order (arrays of one length); compared by identity."""

    task_id: str
    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_states: np.ndarray
    ends: np.ndarray  # the step ended its trial (episode)
    learn: np.ndarray  # the chooser learnt from the step (false in a test phase)
    source: str = ""
    truth: dict[str, Any] = field(default_factory=dict)  # the generating agent's settings, when known
    rts: np.ndarray | None = None  # response times in seconds, NaN where none was recorded; None: none at all

    def __post_init__(self) -> None:
        if not len(self.states):
            raise BehaviourError(f"{self.source or 'choices'}: no choices to fit")
        if self.rts is not None and len(self.rts) != len(self.states):
            raise BehaviourError(f"{self.source or 'choices'}: {len(self.rts)} response times for "
                                 f"{len(self.states)} choices")

    def __len__(self) -> int:
        return len(self.states)

    @property
    def trials(self) -> int:
        return int(self.ends.sum())

    @classmethod
    def from_steps(
        cls,
        task_id: str,
        steps: Sequence[tuple[int, int, float, int, bool]],
        source: str = "",
        learn: Sequence[bool] | None = None,
        truth: dict[str, Any] | None = None,
        rts: Sequence[float | None] | None = None,
    ) -> Choices:
        """From (state, action, reward, next_state, ended) tuples (and each one's response
        time in seconds, None where none was recorded)."""
        columns: list[Sequence[Any]] = list(zip(*steps)) if steps else [[], [], [], [], []]
        return cls(
            task_id,
            np.asarray(columns[0], dtype=np.int64),
            np.asarray(columns[1], dtype=np.int64),
            np.asarray(columns[2], dtype=np.float64),
            np.asarray(columns[3], dtype=np.int64),
            np.asarray(columns[4], dtype=bool),
            np.ones(len(steps), dtype=bool) if learn is None else np.asarray(learn, dtype=bool),
            source,
            dict(truth or {}),
            None if rts is None else np.array([math.nan if r is None else float(r) for r in rts], dtype=np.float64),
        )


@dataclass(frozen=True, eq=False)
class EventsFile:
    """What an events file holds: its choices, the participant id of its first row ("" if
    none) and, per choice, the line of the file it was read from."""

    choices: Choices
    participant: str
    lines: np.ndarray


def _where(path: Path, line: int) -> str:
    return f"{path}, line {line}"


def _index(text: str, path: Path, line: int, column: str) -> int:
    """A cell holding a trial, state or action: a whole number in 0..MAX_INDEX, or -1 if missing."""
    try:
        value = int(text)
    except ValueError:
        stripped = text.strip()
        if stripped.lower() in MISSING:
            return -1
        try:
            number = float(stripped)
        except ValueError:
            raise BehaviourError(
                f"{_where(path, line)}: column {column!r}: expected a number, got {text!r:.60}"
            ) from None
        if not number.is_integer():
            raise BehaviourError(
                f"{_where(path, line)}: column {column!r}: expected a whole number, got {text!r:.60}"
            ) from None
        value = int(number)
    if not 0 <= value <= MAX_INDEX:
        raise BehaviourError(
            f"{_where(path, line)}: column {column!r}: expected a whole number in 0..{MAX_INDEX}, got {text!r:.60}"
        )
    return value


def _real(text: str, path: Path, line: int, column: str, bound: float = math.inf) -> float | None:
    """A cell holding a number: finite, |value| <= bound; None if missing."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
        if text.strip().lower() not in MISSING:
            raise BehaviourError(
                f"{_where(path, line)}: column {column!r}: expected a number, got {text!r:.60}"
            ) from None
    if value != value:  # NaN: pandas' and rewardGym's missing value
        return None
    if not math.isfinite(value) or abs(value) > bound:
        limit = "a finite number" if bound == math.inf else f"a number between -{bound:g} and {bound:g}"
        raise BehaviourError(f"{_where(path, line)}: column {column!r}: expected {limit}, got {text!r:.60}")
    return value


def _lines(handle: Any, path: Path, digest: Any = None) -> Iterator[str]:
    """The decoded lines of an events file, one row of bytes at a time: a line longer than
    MAX_EVENTS_LINE, or bytes that are not UTF-8, stop the reading with the line and byte offset."""
    offset, number = 0, 0
    while True:
        raw = handle.readline(MAX_EVENTS_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_EVENTS_LINE:
            raise BehaviourError(
                f"{_where(path, number)}: longer than {MAX_EVENTS_LINE:,} bytes, the most a row of an events file holds"
            )
        if digest is not None:
            digest.update(raw)
        text = decode_utf8(raw, str(path), BehaviourError, offset, number)
        if number == 1 and text.startswith("\ufeff"):  # a byte order mark, as some spreadsheets write
            text = text[1:]
        offset += len(raw)
        yield text


class _Table:
    """An events file opened for reading: its header's columns and an iterator of its rows."""

    def __init__(self, path: Path, handle: Any, digest: Any = None) -> None:
        self.path = path
        self.reader = csv.reader(_lines(handle, path, digest), delimiter="\t")
        header = self._next() or []
        self.columns = {name: i for i, name in enumerate(header)}
        twice = sorted({name for name in header if header.count(name) > 1}) if len(self.columns) < len(header) else []
        if twice:
            raise BehaviourError(f"{_where(path, 1)}: column(s) {', '.join(map(repr, twice))} appear more than once")
        self.width = len(header)

    def _next(self) -> list[str] | None:
        try:
            return next(self.reader)
        except StopIteration:
            return None
        except csv.Error as exc:
            raise BehaviourError(f"{_where(self.path, self.reader.line_num)}: {exc}") from None

    @property
    def line(self) -> int:
        return self.reader.line_num

    def rows(self) -> Iterator[list[str]]:
        """Rows with as many cells as the header (a blank line is skipped)."""
        while True:
            row = self._next()
            if row is None:
                return
            if len(row) != self.width:
                if not row:
                    continue
                raise BehaviourError(
                    f"{_where(self.path, self.line)}: {len(row)} tab-separated cells; the header has {self.width}"
                )
            yield row

    def column(self, name: str) -> int:
        return self.columns.get(name, -1)
