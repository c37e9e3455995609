"""`graphtasks`: the command line. Thin: parse arguments, call the layers, print.

Each command group lives in its own module under `graphtasks/commands/` with a
`register(subparsers)` function that adds its sub-commands; list it in COMMAND_MODULES with
the top-level commands it adds or extends (a command line imports only those modules).
A family's own commands are its `Family.cli` module; a third-party family adds its module
with an entry point in the group `graphtasks.commands` (the value names the module).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Each command module and the top-level commands it adds or extends (`stores_cmd` adds
# `tasks copy/show/check` to the `tasks` group, so it comes after `tasks_cmd`). A command line
# imports only the modules of its command: `graphtasks cypher ...` starts without gymnasium,
# rdflib or the agents. `-h` and any command not listed here import every module.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "graphtasks.commands.tasks_cmd": ("tasks",),
    "graphtasks.commands.query_cmd": ("cypher",),
    "graphtasks.commands.run_cmd": ("run",),
    "graphtasks.commands.agents_cmd": ("agents",),
    "graphtasks.commands.families_cmd": ("families",),
    "graphtasks.commands.stores_cmd": ("tasks", "schema"),
    "graphtasks.commands.rdf_cmd": ("sparql", "export", "import"),
    "graphtasks.commands.validate_cmd": ("validate",),
    "graphtasks.commands.entities_cmd": ("entities",),
    "graphtasks.commands.poge_cmd": ("poge",),
    "graphtasks.commands.ingest_cmd": ("ingest",),
    "graphtasks.commands.room_cmd": ("room",),
    "graphtasks.commands.grid_cmd": ("render",),
    "graphtasks.commands.view_cmd": ("view",),
    "graphtasks.commands.bench_cmd": ("bench",),
    "graphtasks.commands.experiment_cmd": ("experiment",),
    "graphtasks.commands.reproduce_cmd": ("reproduce",),
    "graphtasks.commands.fit_cmd": ("fit",),
    "graphtasks.commands.serve_cmd": ("serve", "participants"),
}


COMMANDS_GROUP = "graphtasks.commands"


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        default=None,
        help="store location: a path (embedded LadybugDB), ':memory:', or bolt://... / neo4j://... "
        "(default: $GRAPHTASKS_STORE or ~/.local/share/graphtasks/store.lbug)",
    )
    parser.add_argument(
        "--lock-timeout", type=float, default=None, metavar="SECONDS",
        help="how long to wait for another process's hold on an embedded store before failing "
        "(default: $GRAPHTASKS_LOCK_TIMEOUT, else no limit: wait for your turn)",
    )


def modules_for(argv: list[str] | None) -> list[str]:
    """The command modules a command line needs: those of its command, or all of them (with
    the `graphtasks.commands` entry points) for `-h`, no command or a command not listed."""
    if argv is not None:
        before = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        _add_global_options(before)
        try:
            _, rest = before.parse_known_args(argv)
        except SystemExit:  # a bad global option: the full parser says what is wrong
            rest = []
        if rest and not rest[0].startswith("-"):
            modules = [name for name, commands in COMMAND_MODULES.items() if rest[0] in commands]
            if modules:
                return modules
    from importlib.metadata import entry_points

    return list(COMMAND_MODULES) + [entry.value for entry in entry_points(group=COMMANDS_GROUP)]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The `graphtasks` parser; given the command line, with only the commands it needs."""
    parser = argparse.ArgumentParser(
        prog="graphtasks",
        description="Cognitive-neuroscience tasks as typed property graphs, run as gymnasium environments.",
    )
    _add_global_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules_for(argv):
        importlib.import_module(name).register(subparsers)
    return parser


# Commands spelled as another command's arguments: `graphtasks run room ...` is the Room baselines.
ALIASES = {("run", "room"): ["room", "baselines"]}


def expand_aliases(argv: list[str]) -> list[str]:
    for i in range(len(argv) - 1):
        if (argv[i], argv[i + 1]) in ALIASES:
            return argv[:i] + ALIASES[(argv[i], argv[i + 1])] + argv[i + 2 :]
    return argv


def one_line(exc: BaseException) -> str:
    """The error as one line: an OSError names its file, a multi-line message is joined."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _drop_stdout() -> None:
    """Point stdout at the null device, so output still buffered is not flushed (and failing) at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already closed
        pass


def main(argv: list[str] | None = None) -> int:
    """Run one command. Exit 0 on success, 2 with one `graphtasks: error:` line for bad input.

    Only the project's own errors (GraphtasksError) and OSError (a missing file, a full disk)
    are reported that way; any other exception is a bug and keeps its traceback.
    """
    arguments = expand_aliases(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):  # no command: the usage and one error line, as argparse does
        parser.print_usage(sys.stderr)
        print("graphtasks: error: no command given; `graphtasks -h` lists the commands, "
              "`graphtasks COMMAND -h` describes one", file=sys.stderr)
        return 2
    from graphstore import LOCK_TIMEOUT_ENV_VAR, GraphtasksError

    if args.lock_timeout is not None:  # through the environment: vector env workers and subprocesses see it too
        os.environ[LOCK_TIMEOUT_ENV_VAR] = str(args.lock_timeout)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not as a message at exit
        return code
    except BrokenPipeError:  # the reader (e.g. `head`) has gone: not an error
        _drop_stdout()
        return 0
    except (GraphtasksError, OSError) as exc:
        try:
            sys.stdout.flush()  # what was printed before the error still goes out
        except OSError:
            _drop_stdout()
        print(f"graphtasks: error: {one_line(exc)}", file=sys.stderr)
        return 2
