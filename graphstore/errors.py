"""Errors raised by the graph store layer.

Every error names what was wrong (task, node, property, query) so a user can fix the
input without reading a traceback.
"""

from __future__ import annotations

import difflib
from typing import Iterable


class GraphtasksError(Exception):
    """Root of every error graphtasks raises on purpose (bad input, missing task, refused query).

    The command line prints these as one line and exits 2; anything else is a bug and keeps
    its traceback. It lives in this bottom layer so every package can derive from it.
    """


class GraphStoreError(GraphtasksError):
    """Base class of every error this package raises on purpose."""


def did_you_mean(word: str, known: Iterable[str], n: int = 3) -> str:
    """'; did you mean 'a' or 'b'?' naming the ids closest to a mistyped `word`, or ''."""
    close = difflib.get_close_matches(word, sorted(set(known)), n=n, cutoff=0.6)
    if not close:
        return ""
    quoted = [repr(c) for c in close]
    return "; did you mean " + (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]) + "?"


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
