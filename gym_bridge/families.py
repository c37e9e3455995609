"""The one list of task families, and what is looked up through it.

Built-in families are listed in `BUILT_IN`, in this order; a package of a third party adds
its own with an entry point in the group `graphtasks.families` naming a `Family` object
(`[project.entry-points."graphtasks.families"] maze = "mypackage.maze:FAMILY"`), or at run
time with `register_family`. Importing `gym_bridge` registers every family's gym ids.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import gymnasium as gym

from graphstore.errors import GraphtasksError, did_you_mean

from .family import Family
from .graph.family import GRAPH
from .grid.family import GRID
from .poge.family import POGE
from .room.family import ROOM

BUILT_IN: tuple[Family, ...] = (GRAPH, GRID, POGE, ROOM)
ENTRY_POINT_GROUP = "graphtasks.families"

_FAMILIES: dict[str, Family] = {}


class UnknownFamily(GraphtasksError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def register_family(family: Family) -> Family:
    """Add (or replace) a family and register its gym ids."""
    _FAMILIES[family.name] = family
    family.register()
    return family


def _load() -> None:
    if _FAMILIES:
        return
    for family in BUILT_IN:
        register_family(family)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        register_family(entry.load())


def families() -> list[Family]:
    """Every family: the built-in ones first, then those of entry points and `register_family`."""
    _load()
    return list(_FAMILIES.values())


def family(name: str) -> Family:
    _load()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise UnknownFamily(f"unknown family {name!r}{did_you_mean(name, _FAMILIES)}") from None


def family_of(task_id: str) -> Family:
    """The family that runs `task_id`: the one with the longest matching id prefix (graph tasks otherwise)."""
    matches = [(len(prefix), f) for f in families() for prefix in f.prefixes if task_id.startswith(prefix)]
    return max(matches, key=lambda m: m[0])[1] if matches else GRAPH


def make_env(task_id: str, store: Any = None, **kwargs: Any) -> gym.Env:
    """The environment of any task id, made by its family (as `graphtasks run` does)."""
    return family_of(task_id).make_env(task_id, store=store, **kwargs)


def register_all() -> None:
    """Register every family's gym ids (done when `gym_bridge` is imported)."""
    _load()


def registered_ids() -> list[str]:
    return [env_id for env_id in gym.registry if env_id.startswith("graphtasks/")]
