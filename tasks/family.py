"""`TaskFamily`: everything the tasks layer knows of one family, in one object.

A family (graph tasks, grid worlds, POGE worlds, the Room task, or one a user adds) lives in
its own folder, `tasks/<family>/`, whose `family.py` declares one `TaskFamily`: its built-in
catalogues (an id prefix, the names, a builder), the `family` values its Task nodes carry,
its schema fragment, how a user's own file becomes a task, which changes a variant can make
and how, and its entity classes. `tasks.families` holds the one list of them (`BUILT_IN`,
plus the entry-point group `graphtasks.task_families`) and the lookups every other layer
asks instead of comparing id prefixes or family names.

Why one object: the layers above (the gym bridge, experiments, the command line) ask "which
family is this task, and what can it do?", and each answer has one home. Before, families
registered themselves at import time in four styles and the layers above compared id
prefixes; adding a family meant finding every such place.

The id rules live here too (`make_task_id`, `split_task_id`, pins, `variant_id`): a family's
own modules use them, and this module imports no family and not the table, so no family
module ever imports `tasks.families`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from graphstore import TaskGraph
from graphstore.errors import GraphtasksError
from graphstore.schema import Schema

if TYPE_CHECKING:
    from .entity_classes import EntityClass

Builder = Callable[[str, str, dict[str, Any]], TaskGraph]  # (task id, built-in name, params) -> graph
Changer = Callable[[TaskGraph, Mapping[str, Any], str, str], TaskGraph]  # (graph, changes, new id, where)
FileReader = Callable[[Path, "str | None", dict[str, Any]], list[TaskGraph]]  # (path, task id, params)

PIN = re.compile(r"^(?P<id>[^@]+)@(?P<hash>[0-9a-f]{6,64})$")


class TaskChangeError(GraphtasksError, ValueError):
    """A change does not fit the task (unknown field, a cell or state that does not exist)."""


def _no_defaults(name: str) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Catalogue:
    """The built-in tasks of a family under one id prefix (e.g. 'rewardgym/').

    A family may hold several catalogues (the graph family holds neuro-nav's graphs, the
    rewardgym tasks and the decision tasks); each says which ids it owns and how to build
    them, so `tasks.build` finds the builder from the id alone.

    Parameters
    ----------
    prefix : str
        The start of its tasks' ids, ending in ``/`` (``"rewardgym/"``).
    kind : str
        The `family` property their Task nodes carry (``"rewardgym"``): what a stored task
        says it is.
    names : callable
        ``names()`` lists the built-in names; the task ``prefix + name`` is one of them.
    build : callable
        ``build(task_id, name, params)`` makes the task `prefix + name` as a `TaskGraph`.
    defaults : callable, optional
        ``defaults(name)``: the parameters a task is built with when the id names none
        (none by default).
    source : callable, optional
        ``source(name)`` is its definition file, whose changes a store picks up on the next use.
    description : str, optional
        One line for listings.

    Examples
    --------
    >>> from graphstore import TaskGraph
    >>> from tasks import Catalogue
    >>> def build_demo(task_id, name, params):
    ...     return TaskGraph(task_id, "demo", name)
    >>> catalogue = Catalogue(prefix="demo/", kind="demo", names=lambda: ["one"], build=build_demo)
    >>> catalogue.ids(), catalogue.name_of("demo/one"), catalogue.name_of("demo/two")
    (['demo/one'], 'one', None)
    >>> catalogue.build("demo/one", "one", {})
    TaskGraph('demo/one', family='demo', nodes=1, edges=0)
    """

    prefix: str
    kind: str
    names: Callable[[], list[str]]
    build: Builder
    defaults: Callable[[str], dict[str, Any]] = _no_defaults
    source: Callable[[str], Path] | None = None
    description: str = ""

    def ids(self) -> list[str]:
        return [self.prefix + name for name in self.names()]

    def name_of(self, base_id: str) -> str | None:
        """The built-in name of `base_id` (no parameters), or None if it is not one of this catalogue's.

        Parameters
        ----------
        base_id : str
            A task id without parameters or pin.

        Returns
        -------
        str or None
            The built-in name.
        """
        if not base_id.startswith(self.prefix):
            return None
        name = base_id[len(self.prefix) :]
        return name if name in self.names() else None


@dataclass(frozen=True)
class UserFiles:
    """How a user's own file of this family becomes stored tasks (`graphtasks tasks load --file`).

    `read(path, task_id, params)` returns the file's tasks (a grid map holds one per size);
    `recognises(path, head)` says from the name and the first kilobyte whether the file is
    one of this family's, so one command loads any family's files.
    """

    prefix: str  # the ids of users' tasks: 'user/', 'user/grid/', 'user/poge/'
    read: FileReader
    recognises: Callable[[Path, str], bool]
    description: str = ""


@dataclass(frozen=True)
class TaskFamily:
    """One task family as the tasks layer sees it; see the module docstring.

    Parameters
    ----------
    name : str
        The family's name ('graph', 'grid', 'poge', 'room'); the gym bridge's family of the
        same name holds this object.
    description : str
        One line for listings.
    kinds : tuple of str
        The values of the `family` property of its Task nodes (a stored task names its kind;
        `tasks.family_of` maps the kind back to the family).
    catalogues : tuple of Catalogue
        Its built-in tasks.
    add_schema : callable
        Adds its node and relationship types to a `Schema`.
    user_files : UserFiles or None
        How users' own files become its tasks.
    changes : mapping of str to str
        The fields a variant may change, each with one line on what it does.
    apply_changes : callable or None
        `(graph, changes, new_id, where) -> graph`: a changed copy of a task (a new version
        with its own id and content hash); errors name `where`.
    entity_classes : callable
        The classes `graphtasks entities create` can add to its tasks.
    docs : str
        Its documentation page.

    Examples
    --------
    A stored task's id leads to its family, and the family to what it can build and change:

    >>> import tasks
    >>> family = tasks.family_of("neuronav/graph/linear")
    >>> family.name, family.kinds[:2], [catalogue.prefix for catalogue in family.catalogues]
    ('graph', ('neuronav/graph', 'rewardgym'), ['neuronav/graph/', 'rewardgym/', 'decision/'])
    >>> sorted(family.changes)
    ['edges', 'rewards']
    """

    name: str
    description: str
    kinds: tuple[str, ...]
    catalogues: tuple[Catalogue, ...]
    add_schema: Callable[[Schema], None]
    user_files: UserFiles | None = None
    changes: Mapping[str, str] = field(default_factory=dict)
    apply_changes: Changer | None = None
    entity_classes: Callable[[], Iterable[EntityClass]] = tuple
    docs: str = ""

    def builtin_ids(self) -> list[str]:
        return [task_id for catalogue in self.catalogues for task_id in catalogue.ids()]

    def change(self, graph: TaskGraph, changes: Mapping[str, Any], where: str = "changes") -> TaskGraph:
        """A version of `graph` with `changes` (none: `graph` itself), under the id `variant_id` gives.

        Parameters
        ----------
        graph : TaskGraph
            A task of this family.
        changes : mapping
            The fields to change (`changes` lists them); empty: `graph` itself.
        where : str, optional
            Where the changes came from, named by every error.

        Returns
        -------
        TaskGraph
            The changed copy, under its own variant id.

        Raises
        ------
        TaskChangeError
            A field this family does not change, or a change that does not fit the task.

        Examples
        --------
        >>> import tasks
        >>> graph = tasks.build("neuronav/graph/two_step")
        >>> changed = tasks.family_of(graph).change(graph, {"rewards": {"3": 1.0}})
        >>> changed.task_id.startswith("neuronav/graph/two_step/variant-")
        True
        >>> changed.content_hash() != graph.content_hash()
        True
        """
        if not changes:
            return graph
        if self.apply_changes is None:
            raise TaskChangeError(f"{where}: {self.name} tasks take no changes")
        unknown = sorted(set(changes) - set(self.changes))
        if unknown:
            raise TaskChangeError(
                f"{where}: unknown change(s) {', '.join(map(str, unknown))}; {self.name} tasks take "
                + ", ".join(self.changes)
            )
        return self.apply_changes(graph, changes, variant_id(graph.task_id, changes), where)


def variant_id(task_id: str, changes: Mapping[str, Any]) -> str:
    """The id of a task with `changes`: `<task id>/variant-<8 hex of the changes>` (a pin is dropped)."""
    digest = hashlib.sha256(json.dumps(changes, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{unpinned(task_id)}/variant-{digest}"


def split_pin(task_id: str) -> tuple[str, str | None]:
    """'rewardgym/two-step@3f2a9c' -> ('rewardgym/two-step', '3f2a9c'); no pin -> (task_id, None).

    A pin names the task version by (a prefix of) its content hash: a spec that pins its
    tasks runs only on exactly those versions.
    """
    match = PIN.match(task_id)
    return (match.group("id"), match.group("hash")) if match else (task_id, None)


def unpinned(task_id: str) -> str:
    return split_pin(task_id)[0]


def split_task_id(task_id: str) -> tuple[str, dict[str, Any]]:
    """A task id's base and the parameters it carries (JSON values; a value that is not JSON stays text).

    Parameters
    ----------
    task_id : str
        '<base>' or '<base>?key=value&...' as `make_task_id` writes it.

    Returns
    -------
    tuple of (str, dict)
        The base id and the parameters.

    Examples
    --------
    >>> from tasks.family import split_task_id
    >>> split_task_id("rewardgym/two-step?p_common=0.8")
    ('rewardgym/two-step', {'p_common': 0.8})
    """
    base, _, query = task_id.partition("?")
    params: dict[str, Any] = {}
    for key, text in parse_qsl(query, keep_blank_values=True):
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return base, params


def make_task_id(base: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """The stable id of a task built with `params`: `base` for the defaults, and with parameters
    that differ from them '<base>?key=value&...' (sorted keys, compact JSON values), so the same
    parameters always give the same id.

    Parameters
    ----------
    base : str
        The id without parameters ('<catalogue prefix><name>', 'user/<name>').
    params : mapping
        The parameters the task is built with.
    defaults : mapping
        The task's defaults: a parameter equal to its default is left out of the id.

    Returns
    -------
    str
        The task id.

    Examples
    --------
    >>> from tasks.family import make_task_id
    >>> make_task_id("rewardgym/two-step", {"p_common": 0.8, "n": 2}, {"n": 2})
    'rewardgym/two-step?p_common=0.8'
    """
    changed = {k: v for k, v in sorted(params.items()) if defaults.get(k) != v}
    if not changed:
        return base
    return base + "?" + "&".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in changed.items())
