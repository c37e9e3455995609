"""The one list of task families, and every lookup through it.

Built-in families are listed in `BUILT_IN`; a third party's package adds its own with an
entry point in the group `graphtasks.task_families` naming a `TaskFamily` object
(`[project.entry-points."graphtasks.task_families"] maze = "mypackage.maze:TASKS"`), or at
run time with `register_family`. Nothing registers itself on import: the list is read the
first time it is needed.

The id rules (`make_task_id`, `split_task_id`, pins) are `tasks.family`'s, below this table,
so a family's own modules use them without importing the table.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from graphstore import TaskGraph
from graphstore.errors import GraphtasksError, did_you_mean
from graphstore.registry import Registry
from graphstore.schema import Schema

from .data import TaskFileError
from .family import Catalogue, TaskFamily, make_task_id, split_task_id, unpinned  # noqa: F401 (re-export)
from .graph.family import GRAPH
from .grid.family import GRID
from .poge.family import POGE
from .room.family import ROOM
from .room.v1_family import ROOM_V1
from .roommap.family import ROOM_MAP

BUILT_IN: tuple[TaskFamily, ...] = (GRAPH, GRID, POGE, ROOM, ROOM_MAP, ROOM_V1)
ENTRY_POINT_GROUP = "graphtasks.task_families"

class UnknownTask(GraphtasksError, KeyError):
    """No family knows the task id (not built in, not under a user prefix)."""

    def __str__(self) -> str:
        return str(self.args[0])


class UnknownFamily(GraphtasksError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def _built_in(registry: Registry[TaskFamily]) -> None:
    for family in BUILT_IN:
        registry.register(family.name, family, replace=True)


def _load_entry(entry: EntryPoint) -> None:
    family = entry.load()
    _FAMILIES.register(family.name, family, replace=True)


_FAMILIES: Registry[TaskFamily] = Registry(
    "task family", entries=lambda: entry_points(group=ENTRY_POINT_GROUP), load_entry=_load_entry,
    before_entries=_built_in, error=UnknownFamily,
    message=lambda name, known: (f"unknown task family {name!r}{did_you_mean(name, known)} "
                                 f"(families: {', '.join(known)})"),
)


def _load() -> Registry[TaskFamily]:
    return _FAMILIES.load()


def register_family(family: TaskFamily) -> TaskFamily:
    """Add (or replace) a family at run time (a package adds one with an entry point instead)."""
    return _load().register(family.name, family, replace=True)


def task_families() -> list[TaskFamily]:
    """Every family: the built-in ones first, then those of entry points and `register_family`."""
    return list(_load().values())


def task_family(name: str) -> TaskFamily:
    """The family called `name` ('graph', 'grid', 'poge', 'room', ...)."""
    return _FAMILIES.lookup(name)


def family_of_kind(kind: str) -> TaskFamily | None:
    """The family whose Task nodes carry `family = kind` (None: no installed family owns it)."""
    return next((f for f in _load().values() if kind in f.kinds), None)


def family_of(task: str | TaskGraph) -> TaskFamily:
    """The family of a task: a TaskGraph (or stored task) by the kind its Task node names, an id
    by its built-in catalogue or, for users' tasks, the longest matching user prefix.

    Parameters
    ----------
    task : str or TaskGraph
        A task id (parameters and a pin `@hash` allowed) or a task graph.

    Returns
    -------
    TaskFamily
        Its family; UnknownTask (naming the nearest built-in ids) if none knows it.

    Examples
    --------
    >>> import tasks
    >>> tasks.family_of("rewardgym/two-step").name, tasks.family_of("user/poge/myworld").name
    ('graph', 'poge')
    """
    if isinstance(task, TaskGraph):
        family = family_of_kind(task.family)
        if family is None:
            raise UnknownTask(f"task {task.task_id!r} is of kind {task.family!r}, which no installed family owns")
        return family
    found = catalogue_of(task)
    if found is not None:
        return found[0]
    base = unpinned(split_task_id(task)[0])
    users = [
        (len(f.user_files.prefix), f)
        for f in _load().values()
        if f.user_files is not None and base.startswith(f.user_files.prefix)
    ]
    if users:
        return max(users, key=lambda pair: pair[0])[1]
    raise UnknownTask(f"unknown task {task!r}{did_you_mean(base, builtin_ids()) or ''}; "
                      "built-in tasks: `graphtasks tasks list --builtin`")


def catalogue_of(task_id: str) -> tuple[TaskFamily, Catalogue, str] | None:
    """(family, catalogue, name) of a built-in task id (parameters and pin stripped), else None."""
    base = unpinned(split_task_id(task_id)[0])
    for family in _load().values():
        for catalogue in sorted(family.catalogues, key=lambda c: -len(c.prefix)):
            name = catalogue.name_of(base)
            if name is not None:
                return family, catalogue, name
    return None


def resolve(task_id: str) -> tuple[Catalogue, str]:
    """The catalogue and name of a built-in task id; UnknownTask (with the nearest ids) otherwise."""
    found = catalogue_of(task_id)
    if found is None:
        base = split_task_id(task_id)[0]
        hint = did_you_mean(base, builtin_ids()) or "; built-in tasks: `graphtasks tasks list --builtin`"
        raise UnknownTask(f"unknown task {task_id!r}{hint}")
    return found[1], found[2]


def builtin_ids(which: str | None = None) -> list[str]:
    """Every built-in task id, or those of one family ('grid') or catalogue kind ('rewardgym')."""
    return [
        task_id
        for family in _load().values()
        for catalogue in family.catalogues
        if which in (None, family.name, catalogue.kind)
        for task_id in catalogue.ids()
    ]


def is_builtin(task_id: str) -> bool:
    return catalogue_of(task_id) is not None


def source_file(task_id: str) -> Path | None:
    """The definition file of a built-in task (None if its catalogue does not name one)."""
    catalogue, name = resolve(task_id)
    return catalogue.source(name) if catalogue.source is not None else None


def build(task_id: str, **params: Any) -> TaskGraph:
    """Build a built-in task; parameters given here or in the id override the defaults.

    Parameters
    ----------
    task_id : str
        A built-in task's id (``graphtasks tasks list --builtin``), optionally with parameters
        (``"rewardgym/two-step?p_common=0.8"``).
    **params
        The task's parameters (its file's ``defaults``); these win over those in the id.

    Returns
    -------
    TaskGraph
        The task, with the stable id its parameters give (only those that differ from the
        defaults are part of it). Nothing is stored: `GraphStore.put` stores it.

    Examples
    --------
    Parameters that differ from the defaults become part of the stable task id.

    >>> import tasks
    >>> graph = tasks.build("rewardgym/two-step", p_common=0.8)
    >>> graph.task_id, graph.family
    ('rewardgym/two-step?p_common=0.8', 'rewardgym')
    >>> tasks.build("rewardgym/two-step?p_common=0.8").content_hash() == graph.content_hash()
    True
    """
    catalogue, name = resolve(task_id)
    _, id_params = split_task_id(unpinned(task_id))
    chosen = {**id_params, **params}
    stable_id = make_task_id(catalogue.prefix + name, chosen, catalogue.defaults(name))
    return catalogue.build(stable_id, name, chosen)


def read_file(
    path: str | Path, task_id: str | None = None, family: str | None = None, **params: Any
) -> list[TaskGraph]:
    """The tasks of a user's own file, of whichever family reads it (or of `family`).

    A graph-task JSON file gives one task (`user/<name>`), a grid map one per size
    (`user/grid/<name>/<size>`), a POGE world file one (`user/poge/<file stem>`).

    Parameters
    ----------
    path : str or Path
        The file.
    task_id : str, optional
        The id to store it under instead (a grid map's sizes are appended).
    family : str, optional
        Read it as this family's file instead of recognising it.
    **params
        Task parameters (graph tasks' `"$name"` placeholders).

    Returns
    -------
    list of TaskGraph
        Its tasks, validated and sealed; TaskFileError naming the file and line otherwise.

    Examples
    --------
    >>> import json, tempfile, pathlib, tasks
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "lever.json").write_text(json.dumps({"graph": {"0": [1, 2], "1": [], "2": []}}))
    >>> [g.task_id for g in tasks.read_file(folder / "lever.json")]
    ['user/lever']
    """
    p = Path(path)
    try:
        with p.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise TaskFileError(f"{p}: cannot read: {exc.strerror or exc}") from None
    readers = [task_family(family)] if family else [f for f in _load().values() if f.user_files]
    for candidate in readers:
        if candidate.user_files is None:
            raise TaskFileError(f"{p}: {candidate.name} tasks are not read from files")
        if family or candidate.user_files.recognises(p, head):
            return candidate.user_files.read(p, task_id, params)
    kinds = "; ".join(f"{f.name}: {f.user_files.description}" for f in readers if f.user_files)
    raise TaskFileError(f"{p}: not a task file of any family ({kinds})")


def add_schema(schema: Schema) -> None:
    """Every family's node and relationship types (the `graphtasks.schema` entry point of `tasks`)."""
    for family in _load().values():
        family.add_schema(schema)
