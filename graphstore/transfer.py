"""Copy tasks between stores (embedded <-> Bolt, or store to store of the same kind)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .errors import GraphStoreError
from .store import MEMORY, GraphStore


class SameStoreError(GraphStoreError):
    """A copy whose source and target are one store: nothing would be copied."""


def same_location(a: str, b: str) -> bool:
    """Whether two store locations name one store: the same file (through links and relative
    paths) or the same server URI (`bolt://` and `neo4j://` alike). Two `:memory:` stores are
    two stores.

    Examples
    --------
    >>> from graphstore.transfer import same_location
    >>> same_location("a/store.lbug", "a/../a/store.lbug"), same_location(":memory:", ":memory:")
    (True, False)
    """
    if MEMORY in (a, b):
        return False
    if "://" in a or "://" in b:
        return _server(a) == _server(b)
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    try:
        return os.path.samefile(pa, pb)
    except OSError:  # one of them does not exist (yet)
        return pa.resolve() == pb.resolve()


def _server(location: str) -> str:
    """A server location without its scheme and credentials, in lower case."""
    rest = location.split("://", 1)[-1]
    return rest.rsplit("@", 1)[-1].rstrip("/").lower()


def copy_tasks(source: GraphStore, target: GraphStore, task_ids: Iterable[str] | None = None) -> list[tuple[str, bool]]:
    """Copy whole tasks; return (task id, changed) pairs. `None` copies every task of `source`.

    Each task is one `put` on the target, so a task is either copied whole or not at all,
    and copying again changes nothing. A source and target that are one store are refused
    (`SameStoreError`): a copy onto itself would report success and copy nothing.

    Parameters
    ----------
    source, target : GraphStore
        Where the tasks are read, and where they are written.
    task_ids : iterable of str, optional
        The tasks to copy (None: every task of `source`).

    Returns
    -------
    list of (str, bool)
        Each task id with whether the target changed.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> from graphstore.transfer import copy_tasks
    >>> with open_store(":memory:") as a, open_store(":memory:") as b:
    ...     _ = a.put(tasks.build("neuronav/graph/linear"))
    ...     copy_tasks(a, b), copy_tasks(a, b)
    ([('neuronav/graph/linear', True)], [('neuronav/graph/linear', False)])
    """
    if source is target or same_location(str(source.location), str(target.location)):
        raise SameStoreError(f"cannot copy store {target.location!r} onto itself: the source and the target are "
                             "one store; nothing was copied")
    ids = [t.task_id for t in source.list()] if task_ids is None else list(task_ids)
    graphs = [source.get(task_id) for task_id in ids]  # read all first: a missing id writes nothing
    return [(graph.task_id, target.put(graph)) for graph in graphs]
