"""The task versions an experiment runs, found from its task ids.

A spec names tasks by id. A built-in id is built from its definition file (the version every
environment of it runs); any other id (a user's graph file, grid map or POGE world put into
the store, a task written in Cypher or imported from Turtle) is read from the store, so a
store holds all it takes to check, resume and export the experiments recorded in it. An id
may pin its version, `id@<content hash or a prefix of it>`: the spec then runs on exactly
that version, or stops with a line saying which versions exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import tasks
from graphstore import GraphStore, StoreMissingError, TaskGraph, TaskNotFound, default_location, open_store
from graphstore.errors import GraphtasksError, did_you_mean
from gym_bridge import Family, family_of


class TaskVersionError(GraphtasksError, LookupError):
    """A task id names no task, or a pinned version that neither the files nor the store hold."""


@dataclass(frozen=True)
class TaskVersion:
    """One version of a task a phase runs: its graph, its family, and what a worker makes its
    env from (`Family.prepare`: the graph itself, or the graph and what the env reads from the
    store), so workers never open a store."""

    graph: TaskGraph
    family: str
    prepared: Any

    @property
    def task_id(self) -> str:
        return self.graph.task_id

    @cached_property
    def content_hash(self) -> str:
        return str(self.graph.task.get("content_hash") or self.graph.content_hash())


class TaskSource:
    """Task graphs by id, built-in first, else from the store (opened read-only, once).

    What an experiment plays is a task version: a built-in task is built from its file, a
    user's task is read from the store, and an id pinned with ``@hash`` must match. Each id is
    resolved once and kept, so every run of a sweep plays the same graph.

    Parameters
    ----------
    store : GraphStore or str, optional
        An open store or its location, where tasks that are not built in are read; None: the
        default store. A store that does not exist holds no tasks.

    Examples
    --------
    >>> from graphtasks.experiments.versions import TaskSource
    >>> source = TaskSource(":memory:")
    >>> graph = source.graph("neuronav/graph/linear")
    >>> graph, source.graph("neuronav/graph/linear") is graph
    (TaskGraph('neuronav/graph/linear', family='neuronav/graph', nodes=8, edges=7), True)
    >>> source.graph("neuronav/graph/linearr")
    Traceback (most recent call last):
    ...
    graphtasks.experiments.versions.TaskVersionError: unknown task 'neuronav/graph/linearr'; did you mean ...
    """

    def __init__(self, store: GraphStore | str | None = None) -> None:
        self.store = store
        self._graphs: dict[str, TaskGraph] = {}
        self._stored: dict[str, TaskGraph | None] = {}

    def location(self) -> str:
        return self.store.location if isinstance(self.store, GraphStore) else str(self.store or default_location())

    def _read(self, task_id: str) -> TaskGraph | None:
        if task_id not in self._stored:
            def get(s: GraphStore) -> TaskGraph | None:
                try:
                    return s.get(task_id)
                except TaskNotFound:
                    return None

            try:
                if isinstance(self.store, GraphStore):
                    self._stored[task_id] = get(self.store)
                else:
                    with open_store(self.store, "r") as opened:
                        self._stored[task_id] = get(opened)
            except StoreMissingError:
                self._stored[task_id] = None
        return self._stored[task_id]

    def stored_ids(self) -> list[str]:
        """The ids of the tasks in the store (none if it does not exist)."""
        try:
            if isinstance(self.store, GraphStore):
                return [t.task_id for t in self.store.list()]
            with open_store(self.store, "r") as opened:
                return [t.task_id for t in opened.list()]
        except StoreMissingError:
            return []

    def graph(self, task_id: str) -> TaskGraph:
        """The task version `task_id` names (see the module docstring).

        Parameters
        ----------
        task_id : str
            A task id, optionally pinned to a version with ``@hash``.

        Returns
        -------
        TaskGraph
            The task version (kept: the same id gives the same graph).
        """
        if task_id in self._graphs:
            return self._graphs[task_id]
        base, pin = tasks.split_pin(task_id)
        candidates: list[TaskGraph] = []
        if tasks.is_builtin(base):
            candidates.append(tasks.build(base))
        if not candidates or pin is not None:
            stored = self._read(base)
            if stored is not None:
                candidates.append(stored)
        if not candidates:
            hint = did_you_mean(base, tasks.builtin_ids() + self.stored_ids())
            raise TaskVersionError(
                f"unknown task {base!r}{hint}: not built in, and the store {self.location()!r} does not hold it "
                "(put a file of yours there with `graphtasks tasks load --file FILE`)"
            )
        for graph in candidates:
            digest = str(graph.task.get("content_hash") or graph.content_hash())
            if pin is None or digest.startswith(pin):
                self._graphs[task_id] = graph
                return graph
        found = ", ".join(
            f"{'the built-in file' if i == 0 and tasks.is_builtin(base) else 'the store'} has "
            f"{g.task.get('content_hash') or g.content_hash()}"
            for i, g in enumerate(candidates)
        )
        raise TaskVersionError(f"task {base!r} has no version {pin}: {found}")

    def family(self, task_id: str) -> Family:
        return family_of(self.graph(task_id))


def prepare_versions(spec: Any, store: GraphStore | str | None = None) -> dict[str, TaskVersion]:
    """Every task version of `spec` with what its workers need (`Family.prepare`), read once here."""
    out: dict[str, TaskVersion] = {}
    for version_id, graph in spec.graphs.items():
        fam = family_of(graph)
        out[version_id] = TaskVersion(graph, fam.name, fam.prepare(graph, store, spec.env))
    return out
