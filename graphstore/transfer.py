"""Copy tasks between stores (embedded <-> Bolt, or store to store of the same kind)."""

from __future__ import annotations

from typing import Iterable

from .store import GraphStore


def copy_tasks(source: GraphStore, target: GraphStore, task_ids: Iterable[str] | None = None) -> list[tuple[str, bool]]:
    """Copy whole tasks; return (task id, changed) pairs. `None` copies every task of `source`.

    Each task is one `put` on the target, so a task is either copied whole or not at all,
    and copying again changes nothing.
    """
    ids = [t.task_id for t in source.list()] if task_ids is None else list(task_ids)
    graphs = [source.get(task_id) for task_id in ids]  # read all first: a missing id writes nothing
    return [(graph.task_id, target.put(graph)) for graph in graphs]
