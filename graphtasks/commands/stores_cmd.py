"""Commands across stores and for inspection: `tasks copy`, `tasks show`, `tasks check`, `schema`.

`tasks copy` and `tasks show` join the `tasks` group that `tasks_cmd` creates (this
module is listed after it in graphtasks.cli.COMMANDS); if no `tasks` group exists yet, one is
created here. Bolt credentials come from the environment (GRAPHTASKS_NEO4J_USER,
GRAPHTASKS_NEO4J_PASSWORD, GRAPHTASKS_NEO4J_DATABASE), never from the command line,
where other users could read them in the process list.
"""

from __future__ import annotations

import argparse
import json
import sys

from graphstore import SCHEMA, GraphStoreError, TaskNotFound, open_store
from graphstore.inspect import format_summary, summarise
from graphstore.transfer import copy_tasks, same_location
from graphstore.validate import explain

from .errors import CommandError
from .output import add_format_argument, print_rows


def subcommands(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse._SubParsersAction:
    """The sub-command action of group `name` (e.g. `tasks`), created if no module made it yet."""
    parser = subparsers.choices.get(name)
    if parser is None:
        parser = subparsers.add_parser(name, help=help_text)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    group = parser.add_subparsers(dest=f"{name}_command", metavar="COMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    return group


def register(subparsers: argparse._SubParsersAction) -> None:
    tasks_group = subcommands(subparsers, "tasks", "list, load, show and copy tasks")

    copy = tasks_group.add_parser(
        "copy",
        help="copy tasks from one store to another (e.g. embedded -> Neo4j)",
        description="Copy whole tasks between stores; each task is one transaction and copying again changes nothing.",
    )
    copy.add_argument("--from", dest="source", required=True, help="source store location (path, :memory:, bolt://...)")
    copy.add_argument("--to", dest="target", required=True, help="target store location")
    copy.add_argument("ids", nargs="*", metavar="ID", help="task ids to copy")
    copy.add_argument("--all", action="store_true", help="copy every task of the source store")
    copy.set_defaults(func=cmd_copy)

    show = tasks_group.add_parser(
        "show", help="summarise a stored task: states, actions, rewards, terminals, stochastic edges, reachability"
    )
    show.add_argument("task_id", metavar="ID")
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.set_defaults(func=cmd_show)

    check = tasks_group.add_parser(
        "check", help="explain what a stored (e.g. hand-written) task lacks before it can run as an environment"
    )
    check.add_argument("task_id", metavar="ID")
    check.set_defaults(func=cmd_check)

    schema = subparsers.add_parser("schema", help="print the node and relationship types of the schema")
    add_format_argument(schema)
    schema.set_defaults(func=cmd_schema)


def cmd_copy(args: argparse.Namespace) -> int:
    if bool(args.ids) == bool(args.all):
        raise CommandError("tasks copy: give task ids or --all (not both)")
    if same_location(args.source, args.target):  # refused before either is opened
        raise CommandError(f"tasks copy: --from and --to name one store ({args.target}); nothing was copied")
    with open_store(args.source, "r") as source, open_store(args.target, "w") as target:
        results = copy_tasks(source, target, None if args.all else args.ids)
        for task_id, changed in results:
            print(f"{'copied   ' if changed else 'unchanged'} {task_id}")
        print(f"{sum(c for _, c in results)} of {len(results)} task(s) written to {target.location}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        summary = summarise(store.get(args.task_id))
    print(json.dumps(summary, indent=2, default=str) if args.format == "json" else format_summary(summary))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        try:
            problems = explain(store.get(args.task_id))
        except TaskNotFound:
            raise
        except GraphStoreError as exc:  # the task cannot even be read as a graph
            problems = [str(exc)]
    if not problems:
        print(f"{args.task_id}: ok, the task can run")
        return 0
    print(f"{args.task_id}: {len(problems)} problem(s)")
    for problem in problems:
        print(f"  - {problem}")
    return 1


def schema_rows() -> tuple[list[str], list[list[str]]]:
    """One row per property of every node and relationship type."""
    columns = ["kind", "type", "property", "value type", "required", "meaning"]
    rows: list[list[str]] = []
    for label, node in SCHEMA.nodes.items():
        rows.append(["node", label, "", "", "", node.doc])
        for p in node.properties:
            rows.append(["", "", p.name, p.kind, "yes" if p.required else "", p.doc])
    for name, rel in SCHEMA.rels.items():
        ends = ", ".join(f"({a})->({b})" for a, b in rel.endpoints)
        rows.append(["relationship", name, "", ends, "", rel.doc])
        for p in rel.properties:
            rows.append(["", "", p.name, p.kind, "yes" if p.required else "", p.doc])
    return columns, rows


def cmd_schema(args: argparse.Namespace) -> int:
    columns, rows = schema_rows()
    print_rows(columns, rows, args.format, out=sys.stdout)
    return 0
