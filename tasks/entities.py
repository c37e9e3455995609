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

`update` changes the parameters of existing entities (by uid, or a selection by group and
type) and `remove` deletes them with their edges: each is a new version of the task, the
changed graph written whole by `GraphStore.put(graph, expected_hash=...)` in one
transaction with the same check (ConflictError if the task changed since it was read,
nothing written). An update re-creates the entity under its own local id from its current
parameters (`EntityClass.params_of`) merged with the changes, through the class's `props`
and `attach` and the schema, exactly as `create` checks them. The own entities of a
built-in task (those without a group) come from its definition file, which rebuilds them
(`graphstore.entities.rebase`): they can be edited only in a copy under another id.

Selections (by uid, group, type) are `graphstore.entities.select`.

This module sits above the family table (`tasks.families`), which it asks for a task's
family; the entity classes the families declare, and the helpers they are written with, are
`tasks.entity_classes`, below the table (re-exported here).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from graphstore import SCHEMA, GraphStore, SchemaError, TaskGraph
from graphstore.entities import (  # noqa: F401 (re-export)
    ALL,
    CREATED,
    DEFAULT,
    Entity,
    check_group,
    entity_type,
    graph_entities,
    select,
)
from graphstore.registry import Registry
from graphstore.schema import GROUP_PROPERTY, validate_properties
from graphstore.taskgraph import TASK_LOCAL_ID, uid_of

from .entity_classes import (  # noqa: F401 (re-export; declared below the family table)
    Attach,
    EntityClass,
    ParamsOf,
    Props,
    attached_to,
    occupied,
    own_params,
    reward_replaces,
)
from .families import build, family_of_kind, is_builtin, source_file, task_family

MAX_COUNT = 10_000
OPTION_KEYS = ("params", "count", "group")

# kind -> the classes users added to its entity space (one registry of classes per task kind)
_USER_CLASSES: Registry[Registry[EntityClass]] = Registry("task kind with users' entity classes")


def register_entity_class(kind: str, entity_class: EntityClass) -> None:
    """Add (or replace) a class in the entity space of tasks of `kind` (a Task node's `family`,
    e.g. 'rewardgym'); its label must be an entity type of the schema."""
    entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
    if kind not in _USER_CLASSES:
        _USER_CLASSES.register(kind, Registry(f"{kind} entity class"))
    _USER_CLASSES[kind].register(entity_class.name, entity_class, replace=True)


def entity_space(kind: str, graph: TaskGraph | None = None) -> dict[str, EntityClass]:
    """The classes a task of `kind` can create: its family's, then those users added. Tasks of
    a kind no family owns (e.g. authored in the database) use the graph-task space when they
    have State nodes."""
    family = family_of_kind(kind)
    if family is None and graph is not None and any(True for _ in graph.nodes("State")):
        family = task_family("graph")
    space = {c.name: c for c in family.entity_classes()} if family is not None else {}
    space.update(_USER_CLASSES.get(kind, {}))
    for entity_class in space.values():
        entity_type(SCHEMA, entity_class.label, f"entity class {entity_class.name!r}")
    return space


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

    Parameters
    ----------
    store : GraphStore
        An open store, opened to write.
    task_id : str
        The stored task (or a built-in one, put first if it is missing).
    request : mapping
        ``{class name: {"params": {...}, "count": k, "group": "name"}}``: the entities to add,
        per entity class of the task's family; with ``count`` > 1 the placement parameter
        (``state``, ``cell``) is a list of one placement per entity.

    Returns
    -------
    list of str
        The uids of the new entities.

    Raises
    ------
    SchemaError
        Bad input (an unknown class, option or parameter, a placement that is not free),
        naming the task and the class; nothing is written.
    ConflictError
        The task changed since it was read; nothing is written.
    TaskNotFound
        No such task is stored and it is not a built-in one.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> with open_store(":memory:") as store:
    ...     tasks.create(store, "neuronav/graph/neighborhood", {"Reward": {"params": {"state": 3, "value": 5}}})
    ['neuronav/graph/neighborhood/created/reward/0']
    """
    if task_id not in store and is_builtin(task_id):
        store.put(build(task_id))
    graph = store.get(task_id)
    base = graph.task.get("content_hash") or graph.content_hash()
    uids = add_entities(graph, request)  # validated there; extend seals (hash) before writing
    prefix = len(task_id) + 1
    store.extend(graph, [uid[prefix:] for uid in uids], expected_hash=base)  # only the new nodes and edges travel
    return uids


# -- update and remove ---------------------------------------------------------------------------
def _local_id(graph: TaskGraph, uid: Any, where: str) -> str:
    """The local id of the node `uid` names (its uid '<task id>/<local id>', or the local id)."""
    if not isinstance(uid, str) or not uid:
        raise SchemaError(f"{where}: an entity uid is a non-empty string, got {uid!r}")
    prefix = graph.task_id + "/"
    candidates = ([uid[len(prefix) :]] if uid.startswith(prefix) else []) + [uid]
    for local_id in candidates:
        if local_id != TASK_LOCAL_ID and local_id in graph.graph:
            return local_id
    raise SchemaError(
        f"{where}: no entity {uid!r} in this task (`graphtasks entities list {graph.task_id}` lists them)"
    )


def _class_of(space: Mapping[str, EntityClass], graph: TaskGraph, local_id: str, where: str) -> EntityClass:
    """The class of an existing entity: the one named like its label, else the first with that label."""
    label = graph.label(local_id)
    named = space.get(label)
    if named is not None and named.label == label:
        return named
    for entity_class in space.values():
        if entity_class.label == label:
            return entity_class
    known = ", ".join(sorted(space)) or "none"
    raise SchemaError(
        f"{where}: {uid_of(graph.task_id, local_id)!r} is a {label}, which the registry does not edit "
        f"(entity classes of {graph.family!r}: {known})"
    )


def _targets(
    graph: TaskGraph,
    space: Mapping[str, EntityClass],
    uids: str | Sequence[str] | None,
    group: str | None,
    type: str | None,
    where: str,
) -> list[str]:
    """Local ids of the entities named by uid, or selected by group and/or type (among the
    family's entity classes: a selection never picks a State or a Cell); SchemaError if none."""
    selection = group is not None or type is not None
    if uids is not None and selection:
        raise SchemaError(f"{where}: give entity uids or a selection (group, type), not both")
    if uids is None and not selection:
        raise SchemaError(f"{where}: name the entities: their uids, or a group and/or a type")
    if uids is not None:
        if isinstance(uids, Mapping) or not isinstance(uids, (str, Iterable)):
            raise SchemaError(f"{where}: expected one or more entity uids, got {uids!r}")
        items = [uids] if isinstance(uids, str) else list(uids)
        if not items:
            raise SchemaError(f"{where}: expected one or more entity uids, got none")
        out: list[str] = []
        for uid in items:
            local_id = _local_id(graph, uid, where)
            _class_of(space, graph, local_id, where)
            if local_id not in out:
                out.append(local_id)
        return out
    labels = {c.label for c in space.values()}
    if type is not None:
        entity_type(graph.schema, type, f"{where}: type")
        if type not in labels:
            known = ", ".join(sorted(labels)) or "none"
            raise SchemaError(
                f"{where}: type {type!r} is not an entity class the registry edits in {graph.family!r} tasks ({known})"
            )
    if group is not None and (not isinstance(group, str) or not group):
        raise SchemaError(f"{where}: group: expected a group name, got {group!r}")
    found = sorted(
        local_id
        for local_id, props in graph.nodes(type)
        if local_id != TASK_LOCAL_ID
        and graph.label(local_id) in labels
        and (group is None or group == ALL or group == (props.get(GROUP_PROPERTY) or DEFAULT))
    )
    if not found:
        what = " and ".join(([f"group {group!r}"] if group is not None else []) + ([f"type {type!r}"] if type else []))
        raise SchemaError(f"{where}: no entity of {what} in this task")
    return found


def _refuse_builtin_own(graph: TaskGraph, local_ids: Iterable[str], verb: str) -> None:
    """A built-in task's own entities (no group) come from its file, which rebuilds them
    (`graphstore.entities.rebase` keeps only grouped entities): editing them is refused."""
    if not is_builtin(graph.task_id):
        return
    own = [local_id for local_id in local_ids if graph.props(local_id).get(GROUP_PROPERTY) is None]
    if own:
        path = source_file(graph.task_id)
        raise SchemaError(
            f"task {graph.task_id!r}, {verb} {uid_of(graph.task_id, own[0])}: this entity came with the built-in "
            f"task, and its file ({graph.task.get('source') or path}) rebuilds it, which would undo the {verb}; "
            f"{verb} entities created with the registry instead, or copy the task under an id of your own first "
            f"(`graphtasks tasks load --file {path or 'FILE'}` stores it as user/...; in Python "
            "store.put(store.get(ID).copy(NEW_ID)))"
        )


def _entity(graph: TaskGraph, local_id: str) -> Entity:
    props = graph.props(local_id)
    return Entity(
        uid_of(graph.task_id, local_id), graph.label(local_id), props.get(GROUP_PROPERTY) or DEFAULT,
        own_params(graph, local_id),
    )


def _replace(graph: TaskGraph, local_id: str, cls: EntityClass, props: dict[str, Any], place: Any, where: str) -> None:
    """Re-create entity `local_id` (same id, label and group) with these properties at `place`.

    Its old edges go; `attach` makes the new ones, and an old edge of a kind attach does
    not make (none for the built-in classes) is kept."""
    label = graph.label(local_id)
    group = graph.props(local_id).get(GROUP_PROPERTY)
    old = [(s, t, d["rel"], dict(d["props"])) for s, t, d in graph.graph.in_edges(local_id, data=True)]
    old += [(s, t, d["rel"], dict(d["props"])) for s, t, d in graph.graph.out_edges(local_id, data=True)]
    graph.graph.remove_node(local_id)
    node_props = {k: v for k, v in props.items() if not k.startswith("_")}
    graph.add_node(local_id, label, **node_props, **{GROUP_PROPERTY: group})
    cls.attach(graph, local_id, props, place, where)
    made = {(t == local_id, d["rel"]) for s, t, d in graph.graph.in_edges(local_id, data=True)}
    made |= {(False, d["rel"]) for _, _, d in graph.graph.out_edges(local_id, data=True)}
    for source, target, rel, edge_props in old:
        if (target == local_id, rel) not in made:
            graph.add_edge(source, target, rel, **edge_props)


def update_entities(
    graph: TaskGraph,
    uid: str | Sequence[str] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    group: str | None = None,
    type: str | None = None,
) -> list[Entity]:
    """Change the parameters of entities of an in-memory task graph; return them as changed.

    Each entity is re-created under its own local id (and group) from its current
    parameters merged with `params`, checked as `create` checks them (the class's `props`,
    its placement through `attach`, the schema). Everything is checked before the graph is
    changed: on any error it stays as it was.

    Parameters
    ----------
    graph : TaskGraph
        The task to change (in place, on success).
    uid : str or sequence of str, optional
        The entities by uid (`'<task id>/<local id>'`, or the local id).
    params : mapping
        The parameters to change, e.g. ``{"value": 5}``, ``{"cell": [2, 3]}`` (a placement
        moves the entity), ``{"to": [4, 4]}`` (a warp's target). A value None removes a
        parameter (its default, if the class has one, applies again). Setting a reward's
        ``kind`` starts its specification afresh (give its ``values``, ``probs``, ...);
        setting ``value`` makes it a fixed reward.
    group, type : str, optional
        Instead of uids, every entity of the task's entity classes in this group
        ('default', 'all' or a created group) and/or of this type (node label).

    Returns
    -------
    list of Entity
        The changed entities (uid, type, group, properties), in uid order for a selection.

    Raises
    ------
    SchemaError
        Naming the task, the entity's uid and the field: no such entity, a node the registry
        does not edit (e.g. a State), a parameter the class does not have, a placement that is
        not free, or an own entity of a built-in task (its file rebuilds it).

    Examples
    --------
    >>> import tasks
    >>> graph = tasks.build("neuronav/graph/neighborhood").copy("me/neighborhood")
    >>> [e.props for e in tasks.update_entities(graph, "r14", {"value": 3})]
    [{'kind': 'fixed', 'values': [3.0]}]
    >>> [e.uid for e in tasks.update_entities(graph, params={"kind": "probabilistic", "values": [1, 0],
    ...                                                       "probs": [0.8, 0.2]}, type="Reward")]
    ['me/neighborhood/r14']
    """
    where = f"task {graph.task_id!r}, update"
    if not isinstance(params, Mapping) or not params:
        raise SchemaError(
            f"{where}: params: give the parameters to change as a non-empty dict (e.g. {{'value': 5}}), got {params!r}"
        )
    if GROUP_PROPERTY in params:
        raise SchemaError(f"{where}: params: 'group' is not a parameter; an entity keeps the group it was created in")
    space = entity_space(graph.family, graph)
    targets = _targets(graph, space, uid, group, type, where)
    _refuse_builtin_own(graph, targets, "update")
    trial = graph.copy()
    for local_id in targets:
        cls = _class_of(space, trial, local_id, where)
        here = f"{where} {uid_of(graph.task_id, local_id)}"
        if cls.placement in params and len(targets) > 1:
            raise SchemaError(
                f"{here}: params: {cls.placement!r} moves one entity and {len(targets)} are selected; "
                "move them one at a time"
            )
        current = cls.current_params(trial, local_id)
        for key in params:
            for replaced in cls.replaces.get(key, ()):
                current.pop(replaced, None)
        merged = {k: v for k, v in {**cls.defaults, **current, **params}.items() if v is not None}
        if cls.placement not in merged:
            raise SchemaError(
                f"{here}: params: {cls.placement!r} is required (where the {cls.name} goes: "
                f"the class cannot tell where it is now)"
            )
        place = merged.pop(cls.placement)
        props = cls.node_props(dict(merged), f"{here}: params")
        _replace(trial, local_id, cls, props, place, f"{here}: params: {cls.placement}")
        declared = tuple(p for p in trial.schema.node_type(cls.label).properties if p.name not in ("uid", "task"))
        validate_properties(f"{here}: params", declared, trial.props(local_id))
    try:
        trial.validate()
    except SchemaError as exc:
        raise SchemaError(f"update: {exc}") from None
    graph.graph = trial.graph
    return [_entity(graph, local_id) for local_id in targets]


def remove_entities(
    graph: TaskGraph,
    uids: str | Sequence[str] | None = None,
    *,
    group: str | None = None,
    type: str | None = None,
) -> list[Entity]:
    """Delete entities and their edges from an in-memory task graph; return what was removed.

    Parameters
    ----------
    graph : TaskGraph
        The task to change (in place, on success; on any error it stays as it was).
    uids : str or sequence of str, optional
        The entities by uid (`'<task id>/<local id>'`, or the local id).
    group, type : str, optional
        Instead of uids, every entity of the task's entity classes in this group and/or of
        this type (a selection never picks a State or a Cell).

    Returns
    -------
    list of Entity
        The removed entities as they were.

    Raises
    ------
    SchemaError
        Naming the task and the uid: no such entity, a node the registry does not edit, an
        empty selection, or an own entity of a built-in task.

    Examples
    --------
    >>> import tasks
    >>> graph = tasks.build("neuronav/graph/neighborhood").copy("me/neighborhood")
    >>> [e.uid for e in tasks.remove_entities(graph, ["r14"])]
    ['me/neighborhood/r14']
    >>> graph.count("Reward")
    0
    """
    where = f"task {graph.task_id!r}, remove"
    space = entity_space(graph.family, graph)
    targets = _targets(graph, space, uids, group, type, where)
    _refuse_builtin_own(graph, targets, "remove")
    removed = [_entity(graph, local_id) for local_id in targets]
    trial = graph.copy()
    trial.graph.remove_nodes_from(targets)
    try:
        trial.validate()
    except SchemaError as exc:
        raise SchemaError(f"remove: {exc}") from None
    graph.graph = trial.graph
    return removed


def _read_for_edit(store: GraphStore, task_id: str) -> tuple[TaskGraph, str | None]:
    """The stored task and the content hash it was read at. A built-in task that is not stored
    is built (not put): its own entities cannot be edited, so the edit fails and writes nothing."""
    if task_id not in store and is_builtin(task_id):
        return build(task_id), None
    graph = store.get(task_id)
    return graph, graph.task.get("content_hash") or graph.content_hash()


def update(
    store: GraphStore,
    task_id: str,
    uid: str | Sequence[str] | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    group: str | None = None,
    type: str | None = None,
) -> list[Entity]:
    """Change the parameters of entities of a stored task: a new version, written in one transaction.

    The task is read, changed in a copy (`update_entities`, checked as `create` checks) and
    written whole by ``store.put(graph, expected_hash=<hash read>)``: if another writer
    changed the task meanwhile, ConflictError and nothing is written. The same update again
    changes nothing (same content hash).

    Parameters
    ----------
    store : GraphStore
        An open store (embedded or Bolt), opened to write.
    task_id : str
        The stored task.
    uid : str or sequence of str, optional
        The entities by uid (or local id).
    params : mapping
        The parameters to change (see `update_entities`).
    group, type : str, optional
        Instead of uids, a selection as `graphstore.entities.select` makes, among the
        task's entity classes.

    Returns
    -------
    list of Entity
        The entities as changed.

    Raises
    ------
    SchemaError
        Bad input, naming the uid and the field; nothing is written.
    ConflictError
        The task changed since it was read; nothing is written.
    TaskNotFound
        No such task.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> with open_store(":memory:") as store:
    ...     uids = tasks.create(store, "neuronav/graph/neighborhood", {"Reward": {"params": {"state": 3, "value": 5}}})
    ...     before = store.content_hash("neuronav/graph/neighborhood")
    ...     changed = tasks.update(store, "neuronav/graph/neighborhood", uids[0], {"value": 7, "state": 4})
    ...     print(changed[0].props, store.content_hash("neuronav/graph/neighborhood") != before)
    {'kind': 'fixed', 'values': [7.0]} True
    """
    graph, base = _read_for_edit(store, task_id)
    changed = update_entities(graph, uid, params, group=group, type=type)
    store.put(graph, expected_hash=base)
    return changed


def remove(
    store: GraphStore,
    task_id: str,
    uids: str | Sequence[str] | None = None,
    *,
    group: str | None = None,
    type: str | None = None,
) -> list[Entity]:
    """Delete entities (and their edges) from a stored task: a new version, written in one transaction.

    As `update`: read, changed in a copy (`remove_entities`), written whole with the check
    that the stored version is still the one read (ConflictError otherwise, nothing written).

    Parameters
    ----------
    store : GraphStore
        An open store, opened to write.
    task_id : str
        The stored task.
    uids : str or sequence of str, optional
        The entities by uid (or local id).
    group, type : str, optional
        Instead of uids, every entity of the task's entity classes in this group and/or
        of this type.

    Returns
    -------
    list of Entity
        The removed entities as they were.

    Raises
    ------
    SchemaError
        No such entity, an empty selection, a node the registry does not edit, an own
        entity of a built-in task; nothing is written.
    ConflictError
        The task changed since it was read; nothing is written.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> from graphstore.entities import groups
    >>> with open_store(":memory:") as store:
    ...     uids = tasks.create(store, "neuronav/graph/neighborhood",
    ...                         {"Reward": {"params": {"state": [3, 5], "value": 5}, "count": 2, "group": "bonus"}})
    ...     gone = tasks.remove(store, "neuronav/graph/neighborhood", group="bonus")
    ...     print([e.uid for e in gone] == uids, groups(store, "neuronav/graph/neighborhood"))
    True {'all': 16, 'default': 16}
    """
    graph, base = _read_for_edit(store, task_id)
    removed = remove_entities(graph, uids, group=group, type=type)
    store.put(graph, expected_hash=base)
    return removed
