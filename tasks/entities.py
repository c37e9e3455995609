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


_USER_CLASSES: dict[str, dict[str, EntityClass]] = {}  # kind -> classes users added


def register_entity_class(kind: str, entity_class: EntityClass) -> None:
    """Add (or replace) a class in the entity space of tasks of `kind` (a Task node's `family`,
    e.g. 'rewardgym'); its label must be an entity type of the schema."""
    entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
    _USER_CLASSES.setdefault(kind, {})[entity_class.name] = entity_class


def entity_space(kind: str, graph: TaskGraph | None = None) -> dict[str, EntityClass]:
    """The classes a task of `kind` can create: its family's, then those users added. Tasks of
    a kind no family owns (e.g. authored in the database) use the graph-task space when they
    have State nodes."""
    from .families import family_of_kind, task_family

    family = family_of_kind(kind)
    if family is None and graph is not None and any(True for _ in graph.nodes("State")):
        family = task_family("graph")
    space = {c.name: c for c in family.entity_classes()} if family is not None else {}
    space.update(_USER_CLASSES.get(kind, {}))
    for entity_class in space.values():
        entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
    return space


def occupied(graph: TaskGraph, local_id: str, rel: str, label: str) -> str | None:
    """The uid of the `label` node `local_id` already has a `rel` edge to (one reward per state, ...)."""
    for _, target, data in graph.graph.out_edges(local_id, data=True):
        if data["rel"] == rel and graph.label(target) == label:
            return uid_of(graph.task_id, target)
    return None


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
    from .families import build, is_builtin

    if task_id not in store and is_builtin(task_id):
        store.put(build(task_id))
    graph = store.get(task_id)
    base = graph.task.get("content_hash") or graph.content_hash()
    uids = add_entities(graph, request)  # validated there; extend seals (hash) before writing
    prefix = len(task_id) + 1
    store.extend(graph, [uid[prefix:] for uid in uids], expected_hash=base)  # only the new nodes and edges travel
    return uids
