"""Entity classes: what a family declares about the entities users may add to its tasks.

An `EntityClass` names a node type, its default parameters and how an entity attaches to a
task (a reward to a state, a key to a grid cell); the helpers here (`occupied`, `own_params`,
`attached_to`, `reward_replaces`) are what the families' classes are written with. Each
family's folder declares its classes (`tasks/grid/entities.py`, `tasks/graph/entities.py`)
and its `TaskFamily` lists them. Authoring (creating, updating and removing entities of
stored tasks) is `tasks.entities`, which sits above the family table: this module imports
no family and no table, so the families can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from graphstore import TaskGraph
from graphstore.schema import GROUP_PROPERTY
from graphstore.taskgraph import uid_of

from .rewards import REWARD_KINDS

# attach(graph, local id of the new node, its parameters, placement value, where) adds the
# node's edges; it raises SchemaError naming the field when the placement is invalid.
Attach = Callable[[TaskGraph, str, dict[str, Any], Any, str], None]
# props(params, where) -> node properties (checked further by the schema when sealed).
Props = Callable[[dict[str, Any], str], dict[str, Any]]
# params_of(graph, local id) -> the parameters that would create the entity as it is now,
# placement included (what `update` starts from).
ParamsOf = Callable[[TaskGraph, str], dict[str, Any]]


@dataclass(frozen=True)
class EntityClass:
    """A creatable entity class: node type, defaults, placement parameter and attachment."""

    name: str
    label: str
    placement: str  # the parameter that says where an entity goes ('state', 'cell')
    attach: Attach
    defaults: Mapping[str, Any] = field(default_factory=dict)
    props: Props | None = None  # parameters -> node properties; default: the parameters themselves
    doc: str = ""
    # an entity's current parameters (update); default: its node properties, without placement
    params_of: ParamsOf | None = None
    # update: a changed parameter -> the current parameters it replaces (e.g. a new reward
    # 'kind' drops the old kind's 'values', 'probs', ...)
    replaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def node_props(self, params: dict[str, Any], where: str) -> dict[str, Any]:
        return self.props(params, where) if self.props is not None else dict(params)

    def current_params(self, graph: TaskGraph, local_id: str) -> dict[str, Any]:
        """The parameters that would create the entity `local_id` of `graph` as it is now."""
        if self.params_of is not None:
            return self.params_of(graph, local_id)
        return own_params(graph, local_id)


def occupied(graph: TaskGraph, local_id: str, rel: str, label: str) -> str | None:
    """The uid of the `label` node `local_id` already has a `rel` edge to (one reward per state, ...)."""
    for _, target, data in graph.graph.out_edges(local_id, data=True):
        if data["rel"] == rel and graph.label(target) == label:
            return uid_of(graph.task_id, target)
    return None


def own_params(graph: TaskGraph, local_id: str) -> dict[str, Any]:
    """An entity's node properties without its group: the parameters most classes are created with."""
    return {k: v for k, v in graph.props(local_id).items() if k != GROUP_PROPERTY}


def reward_replaces() -> dict[str, tuple[str, ...]]:
    """`EntityClass.replaces` of reward classes: a new `kind` drops what the old kind read
    (`values` and every kind's fields: `probs`, `borders`, `sd`, ...); `value` (a fixed
    reward) drops those and the kind."""
    spec = ("values", *sorted({name for kind in REWARD_KINDS.values() for name in kind.params.names()}))
    return {"kind": spec, "value": ("kind", *spec)}


def attached_to(graph: TaskGraph, local_id: str, rel: str) -> str | None:
    """The local id of the node an entity hangs from by a `rel` edge (its placement), or None."""
    for source, _, data in graph.graph.in_edges(local_id, data=True):
        if data["rel"] == rel:
            return source
    return None
