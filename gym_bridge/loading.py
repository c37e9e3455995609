"""Resolve what a user passes as `task=` into a compiled task, through a store.

A task id is read from the store (default location unless `store` names one) in a
read-only session, so any number of processes can make environments from one store at
once. A built-in task missing from the store, or whose definition file changed, is built
and put there first, in a writer session (the only case that writes; it also creates a
missing store): see `load_stored`. The store is
closed again after compiling: nothing holds a database lock while the environment runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import tasks
from graphstore import GraphStore, StoreMissingError, TaskGraph, TaskNotFound, default_location, open_store
from graphstore.entities import rebase

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


def load_stored(task_id: str, store: GraphStore | str | None, read_task: Callable[[GraphStore, str], T]) -> T:
    """`read_task(store, task_id)` on the stored task, after making sure a built-in is up to date.

    The policy for built-in tasks, the same for every family: the definition file in
    `data/` is the source of truth. A built-in missing from the store, or stored in a
    version other than the one its file builds now, is (re)built and put as a writer,
    keeping the entities users added with the registry (`graphstore.entities.rebase`).
    Otherwise this only reads. The check builds the task once per process and file
    version (path and modification time). A task that is not built in is read as stored.
    """
    builtin = tasks.is_builtin(task_id)
    if not builtin:

        def read_as_stored(s: GraphStore) -> T:
            try:  # read first: a task written by hand (Cypher, Turtle) may have no content hash
                return read_task(s, task_id)
            except TaskNotFound:  # name the nearest stored and built-in ids
                raise TaskNotFound(task_id, s.location, [t.task_id for t in s.list()] + tasks.builtin_ids()) from None

        try:
            return with_store(store, read_as_stored)
        except StoreMissingError:
            raise not_in_missing_store(task_id, store) from None
    source = tasks.source_file(task_id)
    key = (task_id, str(source), source.stat().st_mtime if source is not None and source.exists() else None)

    def wanted(s: GraphStore, stored: str | None) -> TaskGraph:
        """The version the store should hold: the file's, keeping entities created with the registry."""
        graph = tasks.build(task_id)
        if stored is not None and stored != graph.task["content_hash"]:
            graph = rebase(s.get(task_id), graph)
        return graph

    def read(s: GraphStore) -> T | None:
        stored = s.content_hash(task_id)
        if stored is None:
            return None
        if _BUILT_HASHES.get(key) != stored:
            if wanted(s, stored).task["content_hash"] != stored:
                return None  # the definition file changed: put the new version as a writer
            _BUILT_HASHES[key] = stored
        return read_task(s, task_id)

    def write(s: GraphStore) -> T:
        # another process may have put the same version while this one waited for the lock
        graph = wanted(s, s.content_hash(task_id))
        s.put(graph)
        _BUILT_HASHES[key] = graph.task["content_hash"]
        return read_task(s, task_id)

    return read_else_write(store, read, write, may_create=True)


_BUILT_HASHES: dict[tuple[str, str, float | None], str] = {}  # (task id, file, mtime) -> content hash


def load_task_graph(task: str | TaskGraph, store: GraphStore | str | None = None, **params: Any) -> TaskGraph:
    """The stored TaskGraph of `task`; a built-in is put or updated first (see `load_stored`)."""
    if isinstance(task, TaskGraph):
        return task
    if not isinstance(task, str) or not task:
        raise ValueError(f"task: expected a task id such as 'rewardgym/two-step', got {task!r}")
    task_id = tasks.build(task, **params).task_id if params else task
    return load_stored(task_id, store, lambda s, t: s.get(t))


def not_in_missing_store(task_id: str, store: GraphStore | str | None) -> TaskNotFound:
    """The error for a task that is not built in, asked for from a store that does not exist."""
    where = store if isinstance(store, str) else default_location()
    return TaskNotFound(task_id, f"{where!r}, a store that does not exist", tasks.builtin_ids())
