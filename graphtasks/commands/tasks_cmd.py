"""`graphtasks tasks load | list | delete`."""

from __future__ import annotations

import argparse

import tasks
from graphstore import did_you_mean, open_store

from .errors import CommandError
from .output import parse_params, print_rows
from .progress import add_no_progress, bar, shown


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("tasks", help="put, list and delete stored tasks")
    sub = group.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    load = sub.add_parser("load", help="build tasks and put them into the store")
    load.add_argument("ids", nargs="*", help="built-in task ids (see `tasks list --builtin`)")
    load.add_argument("--all", action="store_true", help="every built-in task")
    load.add_argument(
        "--file",
        action="append",
        default=[],
        help="your own task file of any family: a graph task (.json), a grid map or a POGE world (.txt); repeatable",
    )
    load.add_argument("--family", help="read --file as a file of this family instead of recognising it")
    load.add_argument("--param", action="append", metavar="KEY=VALUE", help="override a task parameter")
    add_no_progress(load, "no progress bars (of tasks built and stored)")
    load.set_defaults(func=cmd_load)

    listing = sub.add_parser("list", help="list stored tasks (or the built-in catalogue)")
    listing.add_argument("--builtin", action="store_true", help="list the built-in tasks instead of the store")
    listing.add_argument("--format", choices=["table", "json", "csv"], default="table")
    listing.set_defaults(func=cmd_list)

    delete = sub.add_parser("delete", help="remove tasks from the store")
    delete.add_argument("ids", nargs="+")
    delete.set_defaults(func=cmd_delete)


def cmd_load(args: argparse.Namespace) -> int:
    params = parse_params(args.param)
    ids = list(tasks.builtin_ids()) if args.all else list(args.ids)
    if not ids and not args.file:
        raise CommandError("tasks load: name task ids, --all, or --file FILE")
    if params and args.all:
        raise CommandError("tasks load: --param applies to named tasks, not to --all")
    show = shown(args)
    graphs = []  # build all first: bad input writes nothing
    with bar(len(ids) + len(args.file), "building", "task", show and len(ids) + len(args.file) > 1) as building:
        for task_id in ids:
            graphs.append(tasks.build(task_id, **params))
            building.update(1)
        for path in args.file:  # a file's tasks count as one unit: how many it holds is known once it is read
            graphs += tasks.read_file(path, family=args.family, **params)
            building.update(1)
    with open_store(args.store, "w") as store:
        changed = 0
        with bar(len(graphs), "storing", "task", show and len(graphs) > 1) as storing:
            for graph in graphs:
                changed += store.put(graph)
                storing.update(1)
        print(f"{len(graphs)} task(s) in {store.location}: {changed} written, {len(graphs) - changed} unchanged")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    if args.builtin:
        builtins = [[tid, tasks.resolve(tid)[0].kind] for tid in tasks.builtin_ids()]
        print_rows(["id", "family"], builtins, args.format)
        return 0
    with open_store(args.store, "r") as store:
        rows = [[t.task_id, t.family, t.n_states, t.n_actions, t.source] for t in store.list()]
    print_rows(["id", "family", "states", "actions", "source"], rows, args.format)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    open_store(args.store, "r").close()  # a missing store is an error here, not created empty
    with open_store(args.store, "w") as store:
        for task_id in args.ids:
            if store.delete(task_id):
                print(f"{task_id}: deleted")
            else:  # a typo is named, not passed over
                print(f"{task_id}: not stored{did_you_mean(task_id, [t.task_id for t in store.list()])}")
    return 0
