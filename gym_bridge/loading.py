"""Resolve what a user passes as `task=` into a compiled task, through a store.

A task id is read from the store (default location unless `store` names one) in a
read-only session, so any number of processes can make environments from one store at
once. A built-in task missing from the store is built and put there first, in a writer
session (the only case that writes; it also creates a missing store). The store is
closed again after compiling: nothing holds a database lock while the environment runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import tasks
from graphstore import GraphStore, StoreMissingError, TaskGraph, TaskNotFound, default_location, open_store

T = TypeVar("T")


def with_store(store: GraphStore | str | None, use: Callable[[GraphStore], T], mode: str = "r") -> T:
    """Call `use` with an open store: the given object, or one opened (to read, by default) and closed here."""
    if isinstance(store, GraphStore):
        return use(store)
    opened = open_store(store, mode)
    try:
        return use(opened)
    finally:
        opened.close()


def read_else_write(
    store: GraphStore | str | None,
    read: Callable[[GraphStore], T | None],
    write: Callable[[GraphStore], T],
    may_create: bool,
) -> T:
    """`read` in a read-only session; when it returns None (something must be put first), `write` as a writer.

    A store that does not exist yet counts as None if `may_create` (a built-in is asked
    for), and is an error otherwise: reading never creates a store.
    """
    try:
        found = with_store(store, read)
    except StoreMissingError:
        if not may_create:
            raise
        found = None
    return found if found is not None else with_store(store, write, "w")


def load_task_graph(task: str | TaskGraph, store: GraphStore | str | None = None, **params: Any) -> TaskGraph:
    """The stored TaskGraph of `task` (a built-in is put into the store on first use)."""
    if isinstance(task, TaskGraph):
        return task
    if not isinstance(task, str) or not task:
        raise ValueError(f"task: expected a task id such as 'rewardgym/two-step', got {task!r}")
    task_id = tasks.build(task, **params).task_id if params else task
    builtin = tasks.is_builtin(task_id)

    def read(s: GraphStore) -> TaskGraph | None:
        # get first: a task written by hand (Cypher, Turtle) may have no content hash yet
        try:
            return s.get(task_id)
        except TaskNotFound:
            if not builtin:  # name the nearest stored and built-in ids
                raise TaskNotFound(task_id, s.location, [t.task_id for t in s.list()] + tasks.builtin_ids()) from None
        return None

    def write(s: GraphStore) -> TaskGraph:
        try:
            return s.get(task_id)  # another process may have put it while this one waited for the lock
        except TaskNotFound:
            s.put(tasks.build(task_id))
        return s.get(task_id)

    try:
        return read_else_write(store, read, write, builtin)
    except StoreMissingError:  # only for a task that is not built in: the store is never created for it
        raise not_in_missing_store(task_id, store) from None


def not_in_missing_store(task_id: str, store: GraphStore | str | None) -> TaskNotFound:
    """The error for a task that is not built in, asked for from a store that does not exist."""
    where = store if isinstance(store, str) else default_location()
    return TaskNotFound(task_id, f"{where!r}, a store that does not exist", tasks.builtin_ids())
