"""The entity registry, on top of the task graph: typed entities added to stored tasks.

Three stages:
1. engrained defaults: each family's entity space (`entity_space(family)`) maps a class
   name to an `EntityClass`: its node type (entity classes are node types), its default
   parameters (from the family's templates) and how an entity attaches to the task
   (a reward to a state, a key to a grid cell);
2. parametrised structure: `create`'s `params` override the defaults; users may add
   their own classes with `register_entity_class`;
3. dynamic creation: `create(store, task_id, {type: {"params": {...}, "count": k,
   "group": "name"}})` adds typed nodes to a stored task. It is a new version of the
   task (new content hash), written in one transaction that checks nobody else changed
   the task meanwhile and adds only the new nodes and edges (`GraphStore.extend`);
   putting the same content again changes nothing.

Selections (by uid, group, type) are `graphstore.entities.select`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from graphstore import SCHEMA, GraphStore, SchemaError, TaskGraph
from graphstore.entities import CREATED, check_group, entity_type, graph_entities, select  # noqa: F401 (re-export)
from graphstore.schema import GROUP_PROPERTY
from graphstore.taskgraph import uid_of

from .registry import build, is_builtin
from .rewards import RewardSpecError, reward_spec

MAX_COUNT = 10_000
OPTION_KEYS = ("params", "count", "group")

# attach(graph, local id of the new node, its parameters, placement value, where) adds the
# node's edges; it raises SchemaError naming the field when the placement is invalid.
Attach = Callable[[TaskGraph, str, dict[str, Any], Any, str], None]
# props(params, where) -> node properties (checked further by the schema when sealed).
Props = Callable[[dict[str, Any], str], dict[str, Any]]


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

    def node_props(self, params: dict[str, Any], where: str) -> dict[str, Any]:
        return self.props(params, where) if self.props is not None else dict(params)


_SPACES: dict[str, dict[str, EntityClass]] = {}
GRAPH_FAMILIES = ("neuronav/graph", "rewardgym", "user")


def register_entity_class(family: str, entity_class: EntityClass) -> None:
    """Add (or replace) a class in a family's entity space; its label must be an entity type of the schema.

    The built-in classes register while `tasks` is imported, possibly while the schema is
    still loading its fragments: they are checked when a space is first used instead.
    """
    if SCHEMA.loaded:
        entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
    _SPACES.setdefault(family, {})[entity_class.name] = entity_class


def entity_space(family: str, graph: TaskGraph | None = None) -> dict[str, EntityClass]:
    """The classes a task of `family` can create. Tasks of an unknown family (e.g. authored
    in the database) use the graph-task space when they have State nodes."""
    if family in _SPACES:
        for entity_class in _SPACES[family].values():
            entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
        return dict(_SPACES[family])
    if graph is not None and any(True for _ in graph.nodes("State")):
        return dict(_SPACES[GRAPH_FAMILIES[0]])
    return {}


# -- graph tasks: rewards attached to states ------------------------------------------------
def _state_local(graph: TaskGraph, index: Any, where: str) -> str:
    if isinstance(index, bool) or not isinstance(index, int):
        raise SchemaError(f"{where}: a state index (integer) is needed, got {index!r}")
    for local_id, props in graph.nodes("State"):
        if props.get("index") == index:
            return local_id
    raise SchemaError(f"{where}: task {graph.task_id!r} has no state {index}")


def _occupied(graph: TaskGraph, local_id: str, rel: str, label: str) -> str | None:
    for _, target, data in graph.graph.out_edges(local_id, data=True):
        if data["rel"] == rel and graph.label(target) == label:
            return uid_of(graph.task_id, target)
    return None


def _attach_graph_reward(graph: TaskGraph, local_id: str, params: dict[str, Any], state: Any, where: str) -> None:
    source = _state_local(graph, state, where)
    existing = _occupied(graph, source, "HAS_REWARD", "Reward")
    if existing is not None:
        raise SchemaError(f"{where}: state {state} of task {graph.task_id!r} already has a reward ({existing})")
    graph.add_edge(source, local_id, "HAS_REWARD")


def _graph_reward_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    if "value" in params:  # shorthand for a fixed reward, as in grids
        params = dict(params)
        params["values"] = [params.pop("value")]
    try:
        return reward_spec(params, where).node_props()
    except RewardSpecError as exc:
        raise SchemaError(str(exc)) from None


GRAPH_REWARD = EntityClass(
    "Reward", "Reward", "state", _attach_graph_reward, {"kind": "fixed"}, _graph_reward_props,
    "A reward source paid at a state: value (fixed), or kind, values, probs, borders, sd as in task files.",
)
for _family in GRAPH_FAMILIES:
    register_entity_class(_family, GRAPH_REWARD)


# -- grid tasks: objects attached to cells (node types of the grid family) ---------------------
def _cell_local(graph: TaskGraph, cell: Any, where: str) -> str:
    if (
        not isinstance(cell, (list, tuple)) or len(cell) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in cell)
    ):
        raise SchemaError(f"{where}: a cell [row, col] is needed, got {cell!r}")
    row, col = cell
    for local_id, props in graph.nodes("Cell"):
        if props.get("row") == row and props.get("col") == col:
            if props.get("wall"):
                raise SchemaError(f"{where}: cell ({row}, {col}) of task {graph.task_id!r} is a wall")
            return local_id
    raise SchemaError(f"{where}: task {graph.task_id!r} has no cell ({row}, {col})")


def _grid_attach(rel: str) -> Attach:
    def attach(graph: TaskGraph, local_id: str, params: dict[str, Any], cell: Any, where: str) -> None:
        source = _cell_local(graph, cell, where)
        label = graph.label(local_id)
        existing = _occupied(graph, source, rel, label)
        if existing is not None:
            raise SchemaError(
                f"{where}: cell {tuple(cell)} of task {graph.task_id!r} already holds a {label} ({existing})"
            )
        graph.add_edge(source, local_id, rel)
        if label == "Warp":
            graph.add_edge(local_id, _cell_local(graph, params.get("_to"), f"{where}: to"), "WARPS_TO")

    return attach


def _grid_reward_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    value = params.pop("value", None if "values" in params else 1.0)
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SchemaError(f"{where}: 'value' must be a number, got {value!r}")
        params["values"] = [float(value)]
    return {"kind": "fixed", **params}


def _warp_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    if "to" not in params:
        raise SchemaError(f"{where}: a Warp needs 'to': the [row, col] it takes the agent to")
    return {"_to": params.pop("to"), **params}


def register_grid_entities(family: str = "neuronav/grid") -> bool:
    """The grid family's objects as entity classes, if the schema has the grid types."""
    if not {"Cell", "Key", "Door", "Warp", "Marker"} <= set(SCHEMA.nodes):
        return False
    has_object = _grid_attach("HAS_OBJECT")
    for cls in (
        EntityClass("Reward", "Reward", "cell", _grid_attach("HAS_REWARD"), {"visible": True},
                    _grid_reward_props, "A reward lying on a cell (value, visible, terminate)."),
        EntityClass("Key", "Key", "cell", has_object, {}, None, "A key lying on a cell."),
        EntityClass("Door", "Door", "cell", has_object, {"orientation": "h"}, None, "A locked door on a cell."),
        EntityClass("Warp", "Warp", "cell", has_object, {}, _warp_props, "A warp on a cell to the cell `to`."),
        EntityClass("Marker", "Marker", "cell", has_object, {"color": [255, 0, 0]}, None, "A coloured cell."),
    ):
        register_entity_class(family, cls)
    return True


register_grid_entities()


# -- create ------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"^created/([a-z0-9_]+)/(\d+)$")


def _next_numbers(graph: TaskGraph) -> dict[str, int]:
    """Next free number per type: created entities get local ids 'created/<type>/<n>' (stable, no user text)."""
    out: dict[str, int] = {}
    for local_id, _ in graph.nodes():
        m = _NUMBERED.match(local_id)
        if m:
            out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(2)) + 1)
    return out


def add_entities(graph: TaskGraph, request: Mapping[str, Any]) -> list[str]:
    """Add the requested entities to an in-memory task graph; return their uids.

    `request`: {class name: {"params": {...}, "count": k, "group": "name"}}. With count > 1
    the placement parameter ('state', 'cell') is a list of one placement per entity.
    Everything is checked before the graph is changed: on any error it stays as it was.
    """
    if not isinstance(request, Mapping) or not request:
        raise SchemaError(
            f"task {graph.task_id!r}: create takes {{type: {{'params': ..., 'count': k, 'group': name}}}}"
        )
    space = entity_space(graph.family, graph)
    trial = _copy(graph)
    numbers = _next_numbers(trial)
    created: list[str] = []
    for name, options in request.items():
        where = f"task {graph.task_id!r}, create {name}"
        if name not in space:
            known = ", ".join(sorted(space)) or "none"
            raise SchemaError(f"{where}: family {graph.family!r} has no entity class {name!r}; classes: {known}")
        cls = space[name]
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise SchemaError(f"{where}: options must be a dict with {', '.join(OPTION_KEYS)}, got {options!r}")
        unknown = sorted(set(options) - set(OPTION_KEYS))
        if unknown:
            raise SchemaError(
                f"{where}: unknown option(s) {', '.join(map(str, unknown))}; use {', '.join(OPTION_KEYS)}"
            )
        count = options.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
            raise SchemaError(f"{where}: 'count' must be an integer in 1..{MAX_COUNT}, got {count!r}")
        group = check_group(options.get("group", CREATED), f"{where}: group")
        params = options.get("params", {})
        if not isinstance(params, Mapping):
            raise SchemaError(f"{where}: 'params' must be a dict, got {params!r}")
        params = {**cls.defaults, **params}
        if cls.placement not in params:
            raise SchemaError(f"{where}: params: {cls.placement!r} is required (where the {name} goes)")
        placement = params.pop(cls.placement)
        if GROUP_PROPERTY in params:
            raise SchemaError(f"{where}: params: set the group with the 'group' option, not a parameter")
        places = _places(placement, count, cls.placement, where)
        props = cls.node_props(dict(params), f"{where}: params")
        for i, place in enumerate(places):
            kind = cls.label.lower()
            n = numbers.get(kind, 0)
            numbers[kind] = n + 1
            local_id = f"created/{kind}/{n}"
            node_props = {k: v for k, v in props.items() if not k.startswith("_")}
            trial.add_node(local_id, cls.label, **node_props, **{GROUP_PROPERTY: group})
            cls.attach(trial, local_id, props, place, f"{where} #{i}: params: {cls.placement}")
            created.append(uid_of(graph.task_id, local_id))
    try:
        trial.validate()
    except SchemaError as exc:
        raise SchemaError(f"create: {exc}") from None
    graph.graph = trial.graph
    return created


def _places(placement: Any, count: int, field_name: str, where: str) -> list[Any]:
    if count == 1:
        return [placement]
    if not isinstance(placement, (list, tuple)) or len(placement) != count:
        raise SchemaError(
            f"{where}: params: with count {count}, {field_name!r} must list {count} placements "
            f"(one per entity; two of a kind cannot share one), got {placement!r}"
        )
    return list(placement)


def _copy(graph: TaskGraph) -> TaskGraph:
    out = TaskGraph(graph.task_id, graph.family, schema=graph.schema)
    out.graph = graph.graph.copy()
    for node in out.graph.nodes:  # props dicts are mutable: copy them too
        out.graph.nodes[node]["props"] = dict(out.graph.nodes[node]["props"])
    return out


def create(store: GraphStore, task_id: str, request: Mapping[str, Any]) -> list[str]:
    """Add entities to a stored task: a new version written in one transaction; returns the new uids.

    A built-in task missing from the store is built and put there first, as environments and
    `graphtasks entities create` do. Fails with ConflictError (nothing written) if the task
    changed since it was read.
    """
    if task_id not in store and is_builtin(task_id):
        store.put(build(task_id))
    graph = store.get(task_id)
    base = graph.task.get("content_hash") or graph.content_hash()
    uids = add_entities(graph, request)  # validated there; extend seals (hash) before writing
    prefix = len(task_id) + 1
    store.extend(graph, [uid[prefix:] for uid in uids], expected_hash=base)  # only the new nodes and edges travel
    return uids
