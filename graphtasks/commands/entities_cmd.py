"""`graphtasks entities ...`: the entity registry of a stored task (create, update, remove, list, groups, classes)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

import tasks
from graphstore import open_store
from graphstore.entities import CREATED, Entity, groups, select
from gym_bridge.loading import load_task_graph

from .errors import CommandError
from .output import add_format_argument, parse_params, print_rows

SHOWN_UIDS = 5  # an edit's line names at most this many entities


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "entities", help="create, update, remove and select a task's entities (rewards, keys, ...)"
    )
    group = parser.add_subparsers(dest="entities_command", metavar="COMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])

    create = group.add_parser(
        "create",
        help="add typed entities to a stored task (a new version of the task, one transaction)",
        description="Add COUNT entities of a class (see `entities classes ID`) to a stored task; the task "
        "becomes a new version, in one transaction.",
    )
    create.add_argument("task_id", metavar="ID")
    create.add_argument("--type", required=True, help="entity class, e.g. Reward (see `entities classes ID`)")
    create.add_argument("--param", action="append", metavar="KEY=VALUE", help="a parameter; JSON values (repeatable)")
    create.add_argument("--count", type=int, default=1, help="how many (placement given as a list of COUNT)")
    create.add_argument("--group", default=CREATED, help=f"group of the new entities (default: {CREATED})")
    create.set_defaults(func=cmd_create)

    update = group.add_parser(
        "update",
        help="change entities' parameters, e.g. a reward's value or cell (a new version of the task, one transaction)",
        description="Entities are named by uid (or local id), or selected with "
        "--group and/or --type. A JSON null removes a parameter.",
    )
    update.add_argument("task_id", metavar="ID")
    update.add_argument("uids", nargs="*", metavar="UID", help="entities by uid or local id (see `entities list`)")
    _selection_arguments(update)
    update.add_argument("--param", action="append", metavar="KEY=VALUE", help="a parameter; JSON values (repeatable)")
    update.set_defaults(func=cmd_update)

    remove = group.add_parser(
        "remove",
        help="delete entities and their edges (a new version of the task, one transaction)",
        description="Entities are named by uid (or local id), or selected with --group and/or --type.",
    )
    remove.add_argument("task_id", metavar="ID")
    remove.add_argument("uids", nargs="*", metavar="UID", help="entities by uid or local id (see `entities list`)")
    _selection_arguments(remove)
    remove.set_defaults(func=cmd_remove)

    listing = group.add_parser("list", help="select entities by group, type and/or id")
    listing.add_argument("task_id", metavar="ID")
    listing.add_argument("--group", help="a group name, 'default' (the task's own) or 'all' (default)")
    listing.add_argument("--type", help="an entity type (node label), e.g. Reward, State")
    listing.add_argument("--id", dest="uid", help="one entity's uid")
    add_format_argument(listing)
    listing.set_defaults(func=cmd_list)

    counts = group.add_parser("groups", help="groups of a task with their sizes")
    counts.add_argument("task_id", metavar="ID")
    add_format_argument(counts)
    counts.set_defaults(func=cmd_groups)

    classes = group.add_parser("classes", help="entity classes a task can create, with their defaults")
    classes.add_argument("task_id", metavar="ID")
    add_format_argument(classes)
    classes.set_defaults(func=cmd_classes)


def _selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--group", help="instead of UIDs: every entity of this group ('default', 'all' or a name)")
    parser.add_argument("--type", help="instead of UIDs: every entity of this type, e.g. Reward (with --group: both)")


def _selection(args: argparse.Namespace, verb: str) -> dict[str, Any]:
    """uids or (group, type), exactly one of the two ways."""
    chosen = args.group is not None or args.type is not None
    if args.uids and chosen:
        raise CommandError(f"entities {verb}: name entities by UID or select them with --group/--type, not both")
    if not args.uids and not chosen:
        raise CommandError(f"entities {verb}: name the entities: UID..., --group G and/or --type T")
    return {"group": args.group, "type": args.type} if chosen else {"uids": list(args.uids)}


def _described(entities: list[Entity], task_id: str) -> str:
    """'1 Reward (created/reward/0)': counts per type, then the local ids (at most SHOWN_UIDS)."""
    counts = ", ".join(f"{n} {label}" for label, n in sorted(Counter(e.type for e in entities).items()))
    local = [e.uid[len(task_id) + 1 :] for e in entities]
    more = len(local) - SHOWN_UIDS
    shown = ", ".join(local[:SHOWN_UIDS]) + (f", ... ({more} more)" if more > 0 else "")
    return f"{counts} ({shown})"


def cmd_update(args: argparse.Namespace) -> int:
    params = parse_params(args.param)
    if not params:
        raise CommandError("entities update: --param: give at least one KEY=VALUE to change")
    selection = _selection(args, "update")
    uids = selection.pop("uids", None)
    with open_store(args.store, "w") as store:
        before = store.content_hash(args.task_id)
        changed = tasks.update(store, args.task_id, uids, params, **selection)
        new_hash = store.content_hash(args.task_id)
    verb = "updated" if new_hash != before else "unchanged"
    values = ", ".join(f"{k}={json.dumps(v)}" for k, v in params.items())
    print(f"{verb} {_described(changed, args.task_id)} of {args.task_id}: {values} (content hash {new_hash})")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    selection = _selection(args, "remove")
    uids = selection.pop("uids", None)
    with open_store(args.store, "w") as store:
        removed = tasks.remove(store, args.task_id, uids, **selection)
        new_hash = store.content_hash(args.task_id)
    print(f"removed {_described(removed, args.task_id)} from {args.task_id} (content hash {new_hash})")
    return 0


def _stored(location: str | None, task_id: str) -> None:
    """A built-in task is put into the store on first use (as a writer, only then), as environments do."""
    if tasks.is_builtin(task_id):
        load_task_graph(task_id, location)


def cmd_create(args: argparse.Namespace) -> int:
    request = {args.type: {"params": parse_params(args.param), "count": args.count, "group": args.group}}
    with open_store(args.store, "w") as store:
        uids = tasks.create(store, args.task_id, request)
        new_hash = store.content_hash(args.task_id)
    for uid in uids:
        print(uid)
    print(f"created {len(uids)} {args.type} in group {args.group!r} of {args.task_id} (content hash {new_hash})")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    _stored(args.store, args.task_id)
    with open_store(args.store, "r") as store:
        found = select(store, args.task_id, uid=args.uid, group=args.group, type=args.type)
    print_rows(["uid", "type", "group", "properties"], [e.row() for e in found], args.format)
    return 0


def cmd_groups(args: argparse.Namespace) -> int:
    _stored(args.store, args.task_id)
    with open_store(args.store, "r") as store:
        counts = groups(store, args.task_id)
    print_rows(["group", "entities"], list(counts.items()), args.format)
    return 0


def cmd_classes(args: argparse.Namespace) -> int:
    _stored(args.store, args.task_id)
    with open_store(args.store, "r") as store:
        graph = store.get(args.task_id)
    space = tasks.entity_space(graph.family, graph)
    rows = [[c.name, c.label, c.placement, dict(c.defaults), c.doc] for c in space.values()]
    print_rows(["class", "type", "placement", "defaults", "description"], rows, args.format)
    return 0
