"""`graphtasks`: the command line. Thin: parse arguments, call the layers, print.

Each command group lives in its own module under `graphtasks/commands/` with a
`register(subparsers)` function that adds its sub-commands. COMMANDS below is the one table
of top-level commands: a command's name, its one-line help and the modules that add or extend
it. `graphtasks -h` lists the commands from the table alone, importing no command module; a
command line imports only its command's modules. A family's own commands are its
`Family.cli` module; a third-party package adds a module with an entry point in the group
`graphtasks.commands` (the value names the module), loaded for `-h` and for a command the
table lacks.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NamedTuple, NoReturn


class Command(NamedTuple):
    """One top-level command: its name, its line in `graphtasks -h`, the modules that build it."""

    name: str
    help: str
    modules: tuple[str, ...]


_C = "graphtasks.commands."

# The top-level commands, in the order `graphtasks -h` lists them. A new command is one row
# (and its module). The help must be the one the module gives `add_parser` (a test compares
# them). A command extended by a second module names both, in this order: `stores_cmd` adds
# `tasks copy/show/check` to the group `tasks_cmd` makes.
COMMANDS: tuple[Command, ...] = (
    Command("tasks", "put, list and delete stored tasks", (_C + "tasks_cmd", _C + "stores_cmd")),
    Command("cypher", "run a read-only Cypher query", (_C + "query_cmd",)),
    Command("run", "run an agent on a task (one run of the experiment loop)", (_C + "run_cmd",)),
    Command("agents", "list the agents: settings with their defaults, the task families each takes, "
            "the paper it comes from", (_C + "agents_cmd",)),
    Command("families", "list the task families: task ids, built-in tasks, gym ids, observations, changes, docs",
            (_C + "families_cmd",)),
    Command("schema", "print the node and relationship types of the schema", (_C + "stores_cmd",)),
    Command("sparql", "run a SPARQL query over stored tasks (RDF view, Oxigraph)", (_C + "rdf_cmd",)),
    Command("export", "write a stored task as Turtle or N-Triples", (_C + "rdf_cmd",)),
    Command("import", "load tasks from a Turtle (.ttl) or N-Triples (.nt) file into the store", (_C + "rdf_cmd",)),
    Command("validate", "check tasks against the RDF view's SHACL shapes (pyshacl: the shacl extra)",
            (_C + "validate_cmd",)),
    Command("entities", "create, update, remove and select a task's entities (rewards, keys, ...)",
            (_C + "entities_cmd",)),
    Command("poge", "POGE gridworld files (load, show, stats)", (_C + "poge_cmd",)),
    Command("ingest", "load ConceptNet assertions (API, dump, bundled snapshot)", (_C + "ingest_cmd",)),
    Command("room", "the Room memory task (RoomEnv-v0) on stored ConceptNet triples", (_C + "room_cmd",)),
    Command("render", "draw any task with a legend (PNG, SVG or PDF; text with --ansi)", (_C + "grid_cmd",)),
    Command("view", "write an interactive HTML view of a task (opens offline)", (_C + "view_cmd",)),
    Command("play", "play a task from the keyboard in a window (needs graphtasks[play])", (_C + "play_cmd",)),
    Command("bench", "benchmark every installed family: single env, vector env at N = 1..4096, compile time, "
            "memory", (_C + "bench_cmd",)),
    Command("experiment", "check or run an experiment spec (TOML)", (_C + "experiment_cmd",)),
    Command("reproduce", "reproduce a published result: run its experiment, draw its figure, check the paper's "
            "findings", (_C + "reproduce_cmd",)),
    Command("fit", "fit agents to behaviour (maximum likelihood, AIC, BIC), recovery", (_C + "fit_cmd",)),
    Command("serve", "serve a study to people in the browser (needs graphtasks[web])", (_C + "serve_cmd",)),
    Command("participants", "a study's sessions beside agents' runs", (_C + "serve_cmd", _C + "text_cmd")),
)
BY_NAME = {command.name: command for command in COMMANDS}
# Every built-in command module once, in the order of their first row (the order they register in).
MODULES: tuple[str, ...] = tuple(dict.fromkeys(module for command in COMMANDS for module in command.modules))

COMMANDS_GROUP = "graphtasks.commands"
NO_COLOR_OPTION = "--no-color"


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
    parser.add_argument(
        NO_COLOR_OPTION, action="store_true",
        help="no colour (also anywhere after the command, or NO_COLOR=1); colour is only ever on a "
        "terminal: errors red, warnings yellow, table headers bold (FORCE_COLOR=1 forces it)",
    )


def command_of(argv: list[str]) -> str | None:
    """The command a command line names (its first word after the global options), or None."""
    before = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_global_options(before)
    try:
        _, rest = before.parse_known_args(argv)
    except SystemExit:  # a bad global option: the full parser says what is wrong
        return None
    return rest[0] if rest and not rest[0].startswith("-") else None


def plugin_modules() -> list[str]:
    """The modules of the `graphtasks.commands` entry points (commands of other packages)."""
    from importlib.metadata import entry_points

    return [entry.value for entry in entry_points(group=COMMANDS_GROUP)]


def modules_for(argv: list[str] | None) -> list[str]:
    """The command modules a command line needs.

    Parameters
    ----------
    argv : list of str or None
        The command line without the program name; None for the full parser.

    Returns
    -------
    list of str
        The modules of its command when COMMANDS has it; else (`-h`, no command, a command of
        another package or a typo) only the entry points' modules, the built-in commands being
        listed from the table. None: every module, the entry points' included.

    Examples
    --------
    >>> modules_for(["cypher", "RETURN 1"])
    ['graphtasks.commands.query_cmd']
    """
    if argv is None:
        return list(MODULES) + plugin_modules()
    command = command_of(argv)
    if command in BY_NAME:
        return list(BY_NAME[command].modules)
    return plugin_modules()


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The `graphtasks` parser, with only what the command line `argv` needs.

    Parameters
    ----------
    argv : list of str or None
        The command line. Its command gets its full parser (its modules imported); every other
        built-in command is a placeholder holding its name and help, enough for `graphtasks -h`.
        None builds every command in full (tests compare the two).

    Returns
    -------
    argparse.ArgumentParser
        The parser.

    Examples
    --------
    >>> parser = build_parser(["run", "rewardgym/two-step"])  # imports run_cmd only
    >>> parser.parse_args(["run", "rewardgym/two-step"]).agent
    'q'
    """
    parser = argparse.ArgumentParser(
        prog="graphtasks",
        description="Cognitive-neuroscience tasks as typed property graphs, run as gymnasium environments.",
        epilog="Examples:\n"
        "  graphtasks tasks list --builtin\n"
        "  graphtasks run rewardgym/two-step --agent q --episodes 200\n"
        "  graphtasks COMMAND -h      (a command's options and examples)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_global_options(parser)

    def error(message: str) -> NoReturn:  # argparse's usage and line, the line red on a terminal
        parser.print_usage(sys.stderr)
        _error(message)
        parser.exit(2)

    parser.error = error  # type: ignore[method-assign]
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = modules_for(argv)
    for name in modules:
        importlib.import_module(name).register(subparsers)
    if modules:  # each command's help ends with examples (graphtasks/commands/examples.py)
        from graphtasks.commands.examples import add_examples

        add_examples(parser)
    for command in COMMANDS:
        if command.name not in subparsers.choices:
            subparsers.add_parser(command.name, help=command.help, add_help=False)  # a placeholder
    # `-h` lists the commands in the table's order, whichever were built in full
    order = {command.name: i for i, command in enumerate(COMMANDS)}
    subparsers._choices_actions.sort(key=lambda action: order.get(action.dest, len(order)))
    return parser


def unknown_command(argv: list[str], parser: argparse.ArgumentParser) -> str | None:
    """The error line for a command line whose command no module adds, naming the closest, or None."""
    import difflib

    command = command_of(argv)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if command is None or command in subparsers.choices:
        return None
    near = difflib.get_close_matches(command, list(subparsers.choices), n=3)
    hint = "; did you mean " + " or ".join(repr(n) for n in near) + "?" if near else ""
    return f"unknown command {command!r}{hint} (`graphtasks -h` lists the commands)"


# Commands spelled as another command's arguments: `graphtasks run room ...` is the Room baselines.
ALIASES = {("run", "room"): ["room", "baselines"]}


def expand_aliases(argv: list[str]) -> list[str]:
    for i in range(len(argv) - 1):
        if (argv[i], argv[i + 1]) in ALIASES:
            return argv[:i] + ALIASES[(argv[i], argv[i + 1])] + argv[i + 2 :]
    return argv


def take_no_color(argv: list[str]) -> list[str]:
    """`argv` without its `--no-color` flags (before a `--`), setting NO_COLOR for this process
    and the processes it starts when there was one: the flag is taken anywhere on the line.

    Parameters
    ----------
    argv : list of str
        The command line without the program name.

    Returns
    -------
    list of str
        The command line without the flag.

    Examples
    --------
    >>> take_no_color(["tasks", "list", "--", "--no-color"])
    ['tasks', 'list', '--', '--no-color']
    """
    end = argv.index("--") if "--" in argv else len(argv)
    kept = [a for a in argv[:end] if a != NO_COLOR_OPTION] + argv[end:]
    if len(kept) != len(argv):
        os.environ["NO_COLOR"] = "1"
    return kept


def _error(message: str) -> None:
    """Print the one error line, red on a terminal."""
    from graphtasks.colour import error_line

    print(error_line(message, sys.stderr), file=sys.stderr)


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

    Only the project's own errors (GraphtasksError), OSError (a missing file, a full disk) and
    a missing optional extra (matplotlib without `graphtasks[plot]`, ...) are reported that way;
    any other exception is a bug and keeps its traceback.

    Parameters
    ----------
    argv : list of str, optional
        The command line without the program name (default: `sys.argv[1:]`).

    Returns
    -------
    int
        The exit status.

    Examples
    --------
    >>> main(["--store", ":memory:", "cypher", "RETURN 1 AS one"])
    one
    ---
    1
    (1 row)
    0
    """
    no_color = os.environ.get("NO_COLOR")  # `--no-color` sets it for the command (and its workers) only
    try:
        return _main(argv)
    except ImportError as exc:
        from graphtasks.commands.extras import missing_extra

        line = missing_extra(exc)
        if line is None:
            raise  # a module of graphtasks or of a dependency it always has: a bug
        try:
            sys.stdout.flush()
        except OSError:
            _drop_stdout()
        _error(line)
        return 2
    finally:
        if no_color is None:
            os.environ.pop("NO_COLOR", None)
        else:
            os.environ["NO_COLOR"] = no_color


def _main(argv: list[str] | None) -> int:
    arguments = expand_aliases(take_no_color(list(sys.argv[1:] if argv is None else argv)))
    parser = build_parser(arguments)
    unknown = unknown_command(arguments, parser)
    if unknown:
        parser.print_usage(sys.stderr)
        _error(unknown)
        return 2
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):  # no command: the usage and one error line, as argparse does
        parser.print_usage(sys.stderr)
        _error("no command given; `graphtasks -h` lists the commands, `graphtasks COMMAND -h` describes one")
        return 2
    import warnings

    from graphstore import LOCK_TIMEOUT_ENV_VAR, GraphtasksError
    from graphtasks.colour import show_warning

    if args.lock_timeout is not None:  # through the environment: vector env workers and subprocesses see it too
        os.environ[LOCK_TIMEOUT_ENV_VAR] = str(args.lock_timeout)
    shown, warnings.showwarning = warnings.showwarning, show_warning  # each one line, yellow on a terminal
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
        _error(one_line(exc))
        return 2
    finally:
        warnings.showwarning = shown
