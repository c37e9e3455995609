"""`graphtasks families`: every task family, and where each of its parts lives."""

from __future__ import annotations

import argparse

from .output import add_format_argument, print_rows

COLUMNS = ("family", "task ids", "built-in tasks", "gym ids", "observation types", "agents take", "changes", "docs")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "families",
        help="list the task families: task ids, built-in tasks, gym ids, observations, changes, docs",
        description="Every installed task family (built-in and from entry points), one row each.",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="also the modules of each part")
    add_format_argument(parser)
    parser.set_defaults(func=cmd_families)


def cmd_families(args: argparse.Namespace) -> int:
    from gym_bridge import families

    columns = list(COLUMNS)
    if args.verbose:
        columns += ["vector env", "env", "compiled form", "commands", "benchmark"]
    rows = []
    for family in families():
        declared = family.tasks
        prefixes = [c.prefix for c in declared.catalogues]
        if declared.user_files is not None:
            prefixes.append(declared.user_files.prefix)
        row = [
            family.name,
            " ".join(prefixes),
            len(declared.builtin_ids()),
            len(list(family.gym_ids())),
            " ".join(family.observations) if family.observations is not None else "",
            " ".join(view.observation for view in family.views),
            " ".join(declared.changes) or "-",
            family.docs,
        ]
        if args.verbose:
            compiled = f"{family.compiled.__module__}.{family.compiled.__name__}" if family.compiled else ""
            row += ["yes" if family.vector_env else "no", family.env, compiled, family.cli or "", family.bench or ""]
        rows.append(row)
    print_rows(columns, rows, args.format)
    return 0
