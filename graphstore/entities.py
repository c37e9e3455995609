"""The entity registry's storage side: groups and selections by id, group and type.

Entity classes are the schema's entity node types (every per-task label except Task).
A created entity carries its group in the `group` property; the task's own entities
have none and form the group 'default'; 'all' is every entity of the task. Selections
are read-only Cypher with the values as parameters and labels taken from the schema, so
the same text runs on the embedded store and on Bolt servers. Creating, updating and
removing entities (which needs a family's entity classes and defaults) lives in
`tasks.entities`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from .errors import SchemaError, TaskNotFound
from .schema import GROUP_PROPERTY, SCHEMA, Schema
from .schema import quote_name as _q
from .store import GraphStore
from .taskgraph import TASK_LOCAL_ID, TaskGraph, uid_of

ALL = "all"
DEFAULT = "default"
CREATED = "created"  # group of created entities when `create` is given none
RESERVED_GROUPS = (ALL, DEFAULT)
MAX_GROUP_LENGTH = 200


@dataclass(frozen=True)
class Entity:
    """One selected entity: its uid, type (node label), group and typed properties."""

    uid: str
    type: str
    group: str
    props: dict[str, Any] = field(default_factory=dict)

    def row(self) -> list[Any]:
        return [self.uid, self.type, self.group, self.props]


def check_group(group: Any, where: str = "group") -> str:
    """A group name for created entities: any non-empty text except the reserved 'all' and 'default'.

    Names are stored verbatim as a property value, so quotes, braces or Cypher keywords
    in them are harmless.
    """
    if not isinstance(group, str) or not group.strip():
        raise SchemaError(f"{where}: a group name is a non-empty string, got {group!r}")
    if len(group) > MAX_GROUP_LENGTH:
        raise SchemaError(f"{where}: group names have at most {MAX_GROUP_LENGTH} characters, got {len(group)}")
    if group in RESERVED_GROUPS:
        raise SchemaError(
            f"{where}: {group!r} is a built-in group ('all': every entity, 'default': the task's own); "
            "choose another name"
        )
    return group


def entity_type(schema: Schema, name: Any, where: str = "type") -> str:
    """The label of entity class `name`, or SchemaError listing the entity classes."""
    if not isinstance(name, str) or name not in schema.nodes or not schema.nodes[name].entity:
        raise SchemaError(f"{where}: unknown entity type {name!r}; entity types: {', '.join(schema.entity_types())}")
    return name


def selection_query(schema: Schema, label: str, uid: bool = False, group: str | None = None) -> str:
    """The Cypher of one selection on one entity type; values go as `$task`, `$uid`, `$grp`.

    (`$group` is a reserved word in LadybugDB, hence `$grp`.)

    group None: every group ('all'); 'default': entities without a group; else `$grp`.
    """
    node_type = schema.nodes[label]
    props = [p for p in node_type.properties if p.name not in ("uid", "task", GROUP_PROPERTY)]
    where = ["n.task = $task"]
    if uid:
        where.append("n.uid = $uid")
    if group == DEFAULT:
        where.append(f"n.{_q(GROUP_PROPERTY)} IS NULL")
    elif group is not None and group != ALL:
        where.append(f"n.{_q(GROUP_PROPERTY)} = $grp")
    cols = "".join(f", n.{_q(p.name)} AS {_q(p.name)}" for p in props)
    return (
        f"MATCH (n:{_q(label)}) WHERE {' AND '.join(where)} "
        f"RETURN n.uid AS uid, n.{_q(GROUP_PROPERTY)} AS {_q(GROUP_PROPERTY)}{cols} ORDER BY uid"
    )


def select(
    store: GraphStore,
    task_id: str,
    uid: str | None = None,
    group: str | None = None,
    type: str | None = None,
    schema: Schema = SCHEMA,
) -> list[Entity]:
    """Entities of a stored task by uid, group ('all', 'default' or a created group) and/or type.

    Criteria combine (AND); none selects every entity. Raises TaskNotFound for an unknown task.
    """
    if task_id not in store:
        raise TaskNotFound(task_id, store.location, [t.task_id for t in store.list()])
    labels = [entity_type(schema, type)] if type is not None else schema.entity_types()
    if group is not None and (not isinstance(group, str) or not group):
        raise SchemaError(f"group: expected a group name, got {group!r}")
    params: dict[str, Any] = {"task": task_id}
    if uid is not None:
        params["uid"] = uid
    if group is not None and group not in RESERVED_GROUPS:
        params["grp"] = group
    out: list[Entity] = []
    for label in labels:
        node_type = schema.nodes[label]
        result = store.cypher(selection_query(schema, label, uid is not None, group), params)
        for record in result.records():
            props = {}
            for p in node_type.properties:
                value = record.get(p.name)
                if p.name in ("uid", "task", GROUP_PROPERTY) or value is None:
                    continue
                props[p.name] = _typed(p.kind, value)
            out.append(Entity(record["uid"], label, record[GROUP_PROPERTY] or DEFAULT, props))
    out.sort(key=lambda e: e.uid)
    return out


def _typed(kind: str, value: Any) -> Any:
    """Values as the schema types them (JSON kept as text by the stores; numbers a server may widen)."""
    if kind == "json" and isinstance(value, str):
        return json.loads(value)
    if kind == "float":
        return float(value)
    if kind == "float[]":
        return [float(v) for v in value]
    if kind == "int" and not isinstance(value, bool):
        return int(value)
    return value


def graph_entities(graph: TaskGraph, group: str | None = None, type: str | None = None) -> Iterator[Entity]:
    """The same selection on an in-memory TaskGraph (before it is stored)."""
    for local_id, props in graph.nodes(type):
        if local_id == TASK_LOCAL_ID or not graph.schema.nodes[graph.label(local_id)].entity:
            continue
        own = props.get(GROUP_PROPERTY) or DEFAULT
        if group is None or group == ALL or group == own:
            rest = {k: v for k, v in props.items() if k != GROUP_PROPERTY}
            yield Entity(uid_of(graph.task_id, local_id), graph.label(local_id), own, rest)


def groups(store: GraphStore, task_id: str, schema: Schema = SCHEMA) -> dict[str, int]:
    """Group name -> number of entities, with 'default' and 'all'."""
    counts: dict[str, int] = {}
    for entity in select(store, task_id, schema=schema):
        counts[entity.group] = counts.get(entity.group, 0) + 1
    counts[ALL] = sum(counts.values())
    counts.setdefault(DEFAULT, 0)
    return dict(sorted(counts.items()))


def created_part(graph: TaskGraph) -> tuple[set[str], list[tuple[str, str, str, dict[str, Any]]]]:
    """Local ids of the entities created after the task was built (they have a group), and
    every edge touching them as (source, target, type, properties)."""
    created = {local_id for local_id, props in graph.nodes() if props.get(GROUP_PROPERTY) is not None}
    edges = [
        (s, t, data["rel"], dict(data["props"]))
        for s, t, data in graph.graph.edges(data=True)
        if s in created or t in created
    ]
    return created, edges


def rebase(stored: TaskGraph, built: TaskGraph) -> TaskGraph:
    """`built` (a task rebuilt from its definition) plus the entities created in `stored`.

    For built-in tasks, whose definition file is the source of truth: rebuilding after the
    file changed must not drop what users created with the registry. The created entities
    are taken as stored, so updates of them (`tasks.update`: new values, a new cell or
    state) are kept and removed ones stay removed. The task's own entities (no group) come
    from `built`: an edit of one in the store would be undone here, which is why the
    registry refuses to update or remove them in built-in tasks. Raises SchemaError naming
    the entity when it no longer fits (e.g. its cell became a wall).
    """
    created, edges = created_part(stored)
    out = TaskGraph(built.task_id, built.family, schema=built.schema)
    out.graph = built.graph.copy()
    for node in out.graph.nodes:
        out.graph.nodes[node]["props"] = dict(out.graph.nodes[node]["props"])
    for local_id in sorted(created):
        if local_id in out.graph:
            raise SchemaError(
                f"task {built.task_id!r}: created entity {local_id!r} clashes with a node of the rebuilt task"
            )
        out.add_node(local_id, stored.label(local_id), **stored.props(local_id))
    for source, target, rel, props in edges:
        missing = [end for end in (source, target) if end not in out.graph]
        if missing:
            raise SchemaError(
                f"task {built.task_id!r}: created entity "
                f"{uid_of(built.task_id, source if source in created else target)!r} "
                f"is attached to {missing[0]!r}, which the rebuilt task no longer has; delete and re-create it"
            )
        out.add_edge(source, target, rel, **props)
    return out.seal()
