"""The one list of bridge families, and the lookup from a task to its family.

Built-in families are listed in `BUILT_IN`, in this order; a package of a third party adds
its own with an entry point in the group `graphtasks.families` naming a `Family` object
(`[project.entry-points."graphtasks.families"] maze = "mypackage.maze:FAMILY"`, next to its
`TaskFamily` in `graphtasks.task_families`), or at run time with `register_family`.
Importing `gym_bridge` registers every family's gym ids.

`family_of(task, store)` finds a task's family the way `tasks.family_of` does, and for an
id that is neither built in nor under a user prefix it reads the kind the stored Task node
names: a task put into a store by any means runs.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import gymnasium as gym

import tasks
from graphstore import GraphStore, StoreMissingError, TaskGraph
from graphstore.errors import GraphtasksError, did_you_mean
from graphstore.registry import Registry

from .family import Family
from .graph.family import GRAPH
from .grid.family import GRID
from .poge.family import POGE
from .room.family import ROOM
from .room.v1_family import ROOM_V1
from .roommap.family import ROOM_MAP

BUILT_IN: tuple[Family, ...] = (GRAPH, GRID, POGE, ROOM, ROOM_MAP, ROOM_V1)

ENTRY_POINT_GROUP = "graphtasks.families"

class UnknownFamily(GraphtasksError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def _built_in(registry: Registry[Family]) -> None:
    for family in BUILT_IN:
        register_family(family)


_FAMILIES: Registry[Family] = Registry(
    "family", entries=lambda: entry_points(group=ENTRY_POINT_GROUP),
    load_entry=lambda entry: register_family(entry.load()),
    before_entries=_built_in, error=UnknownFamily,
    message=lambda name, known: f"unknown family {name!r}{did_you_mean(name, known)}",
)


def register_family(family: Family) -> Family:
    """Add (or replace) a family, with its tasks-layer declaration, and register its gym ids."""
    _FAMILIES.register(family.name, family, replace=True)
    if family.tasks not in tasks.task_families():
        tasks.register_family(family.tasks)
    family.register()
    return family


def _load() -> None:
    _FAMILIES.load()


def families() -> list[Family]:
    """Every family: the built-in ones first, then those of entry points and `register_family`."""
    _load()
    return list(_FAMILIES.values())


def family(name: str) -> Family:
    return _FAMILIES.lookup(name)


def stored_kind(task_id: str, store: GraphStore | str | None) -> str | None:
    """The `family` property of the stored Task node `task_id` (None: not stored, or no store)."""
    from .loading import with_store

    def read(s: GraphStore) -> str | None:
        rows = s.cypher("MATCH (t:Task) WHERE t.uid = $uid RETURN t.family", {"uid": task_id}).rows
        return rows[0][0] if rows else None

    try:
        return with_store(store, read)
    except StoreMissingError:
        return None


def family_of(task: str | TaskGraph, store: GraphStore | str | None = None) -> Family:
    """The family that runs `task`: a TaskGraph by its kind; an id by its built-in catalogue,
    then by the kind its stored Task node names (when `store` is given or the default store
    holds it; a kind no family owns, as in a task written by hand in Cypher, is run as a graph
    task), then by the user prefix it is under.

    Parameters
    ----------
    task : str or TaskGraph
        A task id or a task graph.
    store : GraphStore or str, optional
        Where a task that is neither built in nor under a user prefix is looked up (None:
        the default store).

    Returns
    -------
    Family
        The bridge family that runs it.

    Examples
    --------
    >>> from gym_bridge import family_of
    >>> family_of("neuronav/grid/four_rooms/small").name, family_of("user/poge/myworld").name
    ('grid', 'poge')
    """
    _load()
    if isinstance(task, TaskGraph) or tasks.is_builtin(task):
        return family(tasks.family_of(task).name)
    kind = stored_kind(tasks.unpinned(task), store)
    if kind is not None:  # stored: its kind says; a kind no family owns (written by hand) is read as a graph task
        owner = tasks.family_of_kind(kind)
        return family(owner.name if owner is not None else "graph")
    return family(tasks.family_of(task).name)


def make_env(task_id: str, store: Any = None, **kwargs: Any) -> gym.Env:
    """The environment of any task id, made by its family (as `graphtasks run` does)."""
    return family_of(task_id, store).make_env(task_id, store=store, **kwargs)


def register_all() -> None:
    """Register every family's gym ids (done when `gym_bridge` is imported)."""
    _load()


def registered_ids() -> list[str]:
    return [env_id for env_id in gym.registry if env_id.startswith("graphtasks/")]
