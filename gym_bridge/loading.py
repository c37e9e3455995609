"""Resolve what a user passes as `task=` into a compiled task, through a store.

A task id is read from the store (default location unless `store` names one); a built-in
task missing from the store is built and put there first, so every environment runs
from the graph database. The store is closed again after compiling: nothing holds a
database lock while the environment runs.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

import tasks
from graphstore import GraphStore, TaskGraph, TaskNotFound, open_store

T = TypeVar("T")


def with_store(store: GraphStore | str | None, use: Callable[[GraphStore], T]) -> T:
    """Call `use` with an open store: the given object, or one opened (and closed) here."""
    if isinstance(store, GraphStore):
        return use(store)
    opened = open_store(store)
    try:
        return use(opened)
    finally:
        opened.close()


def load_task_graph(task: str | TaskGraph, store: GraphStore | str | None = None, **params: Any) -> TaskGraph:
    """The stored TaskGraph of `task` (a built-in is put into the store on first use)."""
    if isinstance(task, TaskGraph):
        return task
    if not isinstance(task, str) or not task:
        raise ValueError(f"task: expected a task id such as 'rewardgym/two-step', got {task!r}")
    task_id = tasks.build(task, **params).task_id if params else task

    def fetch(s: GraphStore) -> TaskGraph:
        # get first: a task written by hand (Cypher, Turtle) may have no content hash yet
        try:
            return s.get(task_id)
        except TaskNotFound:
            if not tasks.is_builtin(task_id):  # name the nearest stored and built-in ids
                raise TaskNotFound(task_id, s.location, [t.task_id for t in s.list()] + tasks.builtin_ids()) from None
        s.put(tasks.build(task_id))
        return s.get(task_id)

    return with_store(store, fetch)
