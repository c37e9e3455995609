"""Errors raised by the graph store layer.

Every error names what was wrong (task, node, property, query) so a user can fix the
input without reading a traceback.
"""

from __future__ import annotations


class GraphStoreError(Exception):
    """Base class of every error this package raises on purpose."""


class SchemaError(GraphStoreError):
    """A node or relationship does not match the declared schema."""


class TaskNotFound(GraphStoreError, KeyError):
    """A task id is not in the store."""

    def __init__(self, task_id: str, location: str = "") -> None:
        where = f" in {location}" if location else ""
        super().__init__(f"task {task_id!r} not found{where}; `graphtasks tasks list` shows what is stored")
        self.task_id = task_id

    def __str__(self) -> str:  # KeyError would otherwise print the repr
        return str(self.args[0])


class QueryError(GraphStoreError):
    """A Cypher or SPARQL query failed or tried to write through a read-only entry point."""


class StoreLocationError(GraphStoreError):
    """A store location cannot be opened or is not understood."""


class ConflictError(GraphStoreError):
    """The stored task changed since it was read (a concurrent writer); nothing was written."""


class StoreLockedError(GraphStoreError):
    """Another process holds the store's lock longer than the lock timeout; nothing was done."""


class StoreMissingError(StoreLocationError):
    """A store opened for reading does not exist (only commands that write create one)."""
