"""The task registry: families register their built-in tasks and defaults; parameters
override defaults; every task has a stable id.

A task id is '<family prefix><name>' for the defaults, and with parameters that differ
from the defaults '<family prefix><name>?key=value&...' (sorted keys, JSON values), so
the same parameters always give the same id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl

from graphstore import TaskGraph
from graphstore.errors import GraphtasksError, did_you_mean

from .data import TaskFileError, data_dir
from .graph_tasks import build_graph_task, load_definition


class UnknownTask(GraphtasksError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Family:
    """A task family: its id prefix, its built-in task names, their defaults and a builder."""

    name: str
    prefix: str
    names: Callable[[], list[str]]
    defaults: Callable[[str], dict[str, Any]]
    build: Callable[[str, str, dict[str, Any]], TaskGraph]  # (task id, name, params)
    description: str = ""
    source: Callable[[str], Path] | None = None  # the definition file of a built-in name


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> None:
    _FAMILIES[family.name] = family


def families() -> list[Family]:
    return list(_FAMILIES.values())


def split_task_id(task_id: str) -> tuple[str, dict[str, Any]]:
    """'rewardgym/two-step?p_common=0.8' -> ('rewardgym/two-step', {'p_common': 0.8})."""
    base, _, query = task_id.partition("?")
    params: dict[str, Any] = {}
    for key, text in parse_qsl(query, keep_blank_values=True):
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return base, params


def make_task_id(base: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    changed = {k: v for k, v in sorted(params.items()) if defaults.get(k) != v}
    if not changed:
        return base
    return base + "?" + "&".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in changed.items())


def resolve(task_id: str) -> tuple[Family, str]:
    """The family and name of a built-in task id (parameters stripped)."""
    base, _ = split_task_id(task_id)
    for family in sorted(_FAMILIES.values(), key=lambda f: -len(f.prefix)):
        if base.startswith(family.prefix):
            name = base[len(family.prefix) :]
            if name in family.names():
                return family, name
    hint = did_you_mean(base, builtin_ids()) or "; built-in tasks: `graphtasks tasks list --builtin`"
    raise UnknownTask(f"unknown task {task_id!r}{hint}")


def builtin_ids(family: str | None = None) -> list[str]:
    """Every built-in task id, or those of one family (e.g. 'rewardgym', 'poge')."""
    return [f.prefix + n for f in _FAMILIES.values() if family in (None, f.name) for n in f.names()]


def source_file(task_id: str) -> Path | None:
    """The definition file of a built-in task (None if its family does not name one)."""
    family, name = resolve(task_id)
    return family.source(name) if family.source is not None else None


def is_builtin(task_id: str) -> bool:
    try:
        resolve(task_id)
    except UnknownTask:
        return False
    return True


def build(task_id: str, **params: Any) -> TaskGraph:
    """Build a built-in task; parameters given here or in the id override the defaults.

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
    family, name = resolve(task_id)
    _, id_params = split_task_id(task_id)
    chosen = {**id_params, **params}
    defaults = family.defaults(name)
    stable_id = make_task_id(family.prefix + name, chosen, defaults)
    return family.build(stable_id, name, chosen)


# -- graph families backed by JSON definition files -------------------------------------
def _json_family(name: str, prefix: str, folder: str, description: str) -> Family:
    def path(task_name: str) -> Path:
        return data_dir() / folder / f"{task_name}.json"

    def names() -> list[str]:
        return sorted(p.stem for p in (data_dir() / folder).glob("*.json"))

    def defaults(task_name: str) -> dict[str, Any]:
        return dict(load_definition(path(task_name)).get("defaults", {}))

    def builder(task_id: str, task_name: str, params: dict[str, Any]) -> TaskGraph:
        p = path(task_name)
        return build_graph_task(task_id, name, load_definition(p), params, source=f"data/{folder}/{p.name}")

    return Family(name, prefix, names, defaults, builder, description, source=path)


register_family(_json_family("neuronav/graph", "neuronav/graph/", "neuronav/graphs", "neuro-nav GraphEnv templates"))
register_family(_json_family("rewardgym", "rewardgym/", "rewardgym", "rewardGym tasks"))


def build_from_file(path: str | Path, task_id: str | None = None, **params: Any) -> TaskGraph:
    """A user's own graph-task file (same format as data/rewardgym/*.json); id 'user/<name>'."""
    p = Path(path)
    definition = load_definition(p)
    name = definition.get("name") or p.stem
    if not isinstance(name, str):
        raise TaskFileError(f"{p}: 'name' must be a string")
    base = task_id or f"user/{name}"
    return build_graph_task(
        make_task_id(base, params, definition.get("defaults", {})), "user", definition, params, source=str(p)
    )
