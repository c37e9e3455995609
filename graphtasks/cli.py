"""`graphtasks`: the command line. Thin: parse arguments, call the layers, print.

Each command group lives in its own module under `graphtasks/commands/` with a
`register(subparsers)` function that adds its sub-commands; list it in COMMAND_MODULES.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMAND_MODULES = [
    "graphtasks.commands.tasks_cmd",
    "graphtasks.commands.query_cmd",
    "graphtasks.commands.run_cmd",
    "graphtasks.commands.stores_cmd",  # after tasks_cmd: adds `tasks copy` / `tasks show` to its group
    "graphtasks.commands.rdf_cmd",
    "graphtasks.commands.entities_cmd",
    "graphtasks.commands.poge_cmd",
    "graphtasks.commands.ingest_cmd",
    "graphtasks.commands.room_cmd",
    "graphtasks.commands.grid_cmd",
    "graphtasks.commands.bench_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphtasks",
        description="Cognitive-neuroscience tasks as typed property graphs, run as gymnasium environments.",
    )
    parser.add_argument(
        "--store",
        default=None,
        help="store location: a path (embedded LadybugDB), ':memory:', or bolt://... / neo4j://... "
        "(default: $GRAPHTASKS_STORE or ~/.local/share/graphtasks/store.lbug)",
    )
    parser.add_argument(
        "--lock-timeout", type=float, default=None, metavar="SECONDS",
        help="how long to wait for another process's hold on an embedded store before failing "
        "(default: $GRAPHTASKS_LOCK_TIMEOUT or 5)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


# Commands spelled as another command's arguments: `graphtasks run room ...` is the Room baselines.
ALIASES = {("run", "room"): ["room", "baselines"]}


def expand_aliases(argv: list[str]) -> list[str]:
    for i in range(len(argv) - 1):
        if (argv[i], argv[i + 1]) in ALIASES:
            return argv[:i] + ALIASES[(argv[i], argv[i + 1])] + argv[i + 2 :]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(expand_aliases(list(sys.argv[1:] if argv is None else argv)))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from graphstore import LOCK_TIMEOUT_ENV_VAR, GraphStoreError
    from tasks import TaskFileError, UnknownTask

    if args.lock_timeout is not None:  # through the environment: vector env workers and subprocesses see it too
        os.environ[LOCK_TIMEOUT_ENV_VAR] = str(args.lock_timeout)
    try:
        return int(args.func(args) or 0)
    except (GraphStoreError, TaskFileError, UnknownTask, ValueError) as exc:
        print(f"graphtasks: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
