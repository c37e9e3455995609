"""Task variants: a task with changes given as data (an experiment phase's changes).

A change is made by the task's family (`TaskFamily.change`) on the task graph, so a built-in
task and a user's stored task change alike. The variant is a task of its own: its id is
`<task id>/variant-<8 hex>` (the hash of the changes) and it has its own content hash, so a
record of what ran says exactly which version of the task it was. The changes each family
takes are listed by `graphtasks families` and in its docs page.
"""

from __future__ import annotations

from typing import Any, Mapping

from graphstore import TaskGraph

from .families import build, family_of
from .family import TaskChangeError, variant_id

__all__ = ["TaskChangeError", "task_variant", "variant_id"]


def task_variant(task: str | TaskGraph, changes: Mapping[str, Any] | None, where: str = "changes") -> TaskGraph:
    """`task` (a TaskGraph, or a built-in id) with `changes` (none: the task itself); errors name `where`.

    The changed task is a new version with its own id (``...variant-<hash>``) and content
    hash, so a run on it records which variant it played; its family (`TaskFamily.changes`)
    says which fields a variant may change.

    Parameters
    ----------
    task : str or TaskGraph
        The task to change: a graph, or the id of a built-in task (built here).
    changes : mapping or None
        The fields to change, e.g. ``{"rewards": [...]}`` for graph and grid tasks; None or
        empty returns the task itself.
    where : str, optional
        Where the changes came from (a file, a spec field), named by every error.

    Returns
    -------
    TaskGraph
        The changed copy, or `task` itself when there are no changes.

    Raises
    ------
    TaskChangeError
        A change the family does not know, or one that does not fit the task (a cell or
        state that does not exist).

    Examples
    --------
    >>> from tasks.variants import task_variant
    >>> moved = task_variant("neuronav/grid/t_maze/small", {"rewards": [{"cell": [1, 1], "value": 1.0}]})
    >>> moved.task_id.rsplit("/", 1)[-1].startswith("variant-")
    True
    """
    graph = build(task) if isinstance(task, str) else task
    return family_of(graph).change(graph, changes or {}, where)
