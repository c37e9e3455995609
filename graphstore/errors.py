"""Errors raised by the graph store layer.

Every error names what was wrong (task, node, property, query) so a user can fix the
input without reading a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GraphtasksError(Exception):
    """Root of every error graphtasks raises on purpose (bad input, missing task, refused query).

    The command line prints these as one line and exits 2; anything else is a bug and keeps
    its traceback. It lives in this bottom layer so every package can derive from it.
    """


class GraphStoreError(GraphtasksError):
    """Base class of every error this package raises on purpose."""


def did_you_mean(word: str, known: Iterable[str], n: int = 3) -> str:
    """'; did you mean 'a' or 'b'?' naming the ids closest to a mistyped `word`, or ''.

    Task ids share long prefixes ('rewardgym/...'), so every id of a family looks alike;
    only the ids about as close as the closest one are named.
    """
    scored = [
        (difflib.SequenceMatcher(None, word, k).ratio(), k)
        for k in difflib.get_close_matches(word, sorted(set(known)), n=10, cutoff=0.6)
    ]
    if not scored:
        return ""
    best = max(score for score, _ in scored)
    close = [repr(k) for score, k in scored if score >= best - 0.05][:n]
    return "; did you mean " + (close[0] if len(close) == 1 else ", ".join(close[:-1]) + " or " + close[-1]) + "?"


class SchemaError(GraphStoreError):
    """A node or relationship does not match the declared schema."""


class TaskNotFound(GraphStoreError, KeyError):
    """A task id is not in the store."""

    def __init__(self, task_id: str, location: str = "", known: Iterable[str] = ()) -> None:
        where = f" in {location}" if location else ""
        hint = did_you_mean(task_id, known) or "; `graphtasks tasks list` shows what is stored"
        super().__init__(f"task {task_id!r} not found{where}{hint}")
        self.task_id = task_id

    def __str__(self) -> str:  # KeyError would otherwise print the repr
        return str(self.args[0])


class QueryError(GraphStoreError):
    """A Cypher or SPARQL query failed or tried to write through a read-only entry point."""


class StoreLocationError(GraphStoreError):
    """A store location cannot be opened or is not understood."""


class ConflictError(GraphStoreError):
    """The stored task changed since it was read (a concurrent writer); nothing was written."""


class StoreFullError(GraphStoreError):
    """The disk holding a store is full: the write that met it was not kept, the store holds
    what it held before."""


class StoreLockedError(GraphStoreError):
    """Another process holds the store's lock longer than the lock timeout; nothing was done."""


class StoreMissingError(StoreLocationError):
    """A store opened for reading does not exist (only commands that write create one)."""


class LockSettingError(GraphStoreError, ValueError):
    """The lock timeout (`--lock-timeout`, GRAPHTASKS_LOCK_TIMEOUT) is not a number of seconds >= 0."""
