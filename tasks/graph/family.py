"""The graph-task family: neuro-nav graph templates, rewardGym tasks, decision tasks and users' JSON files,
all in rewardGym's notation (`tasks.graph.notation`), stored as State nodes with
probability-labelled MOVE edges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir
from ..family import Catalogue, TaskFamily, UserFiles, make_task_id
from .definitions import build_graph_task, load_definition
from .entities import graph_entity_classes
from .schema import add_schema
from .variants import CHANGES, change_graph_task

USER_PREFIX = "user/"
USER_KIND = "user"
DECISION_KIND = "decision"  # data/decision/: reversal learning, probabilistic selection, Iowa gambling, ...


def _catalogue(kind: str, folder: str, description: str) -> Catalogue:
    """The JSON definition files of one folder of data/ as built-in tasks '<kind>/<file stem>'."""

    def path(name: str) -> Path:
        return data_dir() / folder / f"{name}.json"

    def names() -> list[str]:
        return sorted(p.stem for p in (data_dir() / folder).glob("*.json"))

    def defaults(name: str) -> dict[str, Any]:
        return dict(load_definition(path(name)).get("defaults", {}))

    def build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
        p = path(name)
        return build_graph_task(task_id, kind, load_definition(p), params, source=f"data/{folder}/{p.name}")

    return Catalogue(kind + "/", kind, names, build, defaults, path, description)


def build_from_file(path: str | Path, task_id: str | None = None, **params: Any) -> TaskGraph:
    """A user's own graph-task file (same format as data/rewardgym/*.json); id 'user/<name>'."""
    p = Path(path)
    definition = load_definition(p)
    name = definition.get("name") or p.stem
    if not isinstance(name, str):
        raise TaskFileError(f"{p}: 'name' must be a string")
    base = task_id or f"{USER_PREFIX}{name}"
    return build_graph_task(
        make_task_id(base, params, definition.get("defaults", {})), USER_KIND, definition, params, source=str(p)
    )


def _read(path: Path, task_id: str | None, params: dict[str, Any]) -> list[TaskGraph]:
    return [build_from_file(path, task_id, **params)]


GRAPH = TaskFamily(
    name="graph",
    description="state graphs with probabilistic action edges: neuro-nav graphs, rewardGym tasks, your own files",
    kinds=("neuronav/graph", "rewardgym", DECISION_KIND, USER_KIND),
    catalogues=(
        _catalogue("neuronav/graph", "neuronav/graphs", "neuro-nav GraphEnv templates"),
        _catalogue("rewardgym", "rewardgym", "rewardGym tasks"),
        _catalogue(DECISION_KIND, "decision", "decision-making tasks people fit most (reversal, selection, IGT, ...)"),
    ),
    add_schema=add_schema,
    user_files=UserFiles(USER_PREFIX, _read, lambda path, head: path.suffix.lower() == ".json",
                         "a JSON task file in rewardGym's notation (*.json)"),
    changes=CHANGES,
    apply_changes=change_graph_task,
    entity_classes=graph_entity_classes,
    docs="docs/graph-tasks.md",
)
