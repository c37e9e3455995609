"""The command line imports only the modules of its command, and that parser is the full one's;
`graphtasks -h` lists every command from the table alone, importing no command module."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphtasks import cli

REPO = Path(__file__).resolve().parents[1]


def described(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Every (sub)command's help text under `parser`, by its path of names."""
    texts = {parser.prog: parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                texts.update(described(child))
    return texts


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[command]


FULL = cli.build_parser()
COMMANDS = [command.name for command in cli.COMMANDS]


def test_every_command_of_the_full_parser_is_in_the_table() -> None:
    subparsers = next(a for a in FULL._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(subparsers.choices) == sorted(COMMANDS)


def test_the_help_lists_the_commands_from_the_table_as_the_full_parser_does() -> None:
    """The table's one-line helps are the modules' own: `-h` reads the same as with every module loaded."""
    assert cli.build_parser(["--help"]).format_help() == FULL.format_help()
    assert cli.build_parser([]).format_help() == FULL.format_help()


def test_the_help_imports_no_command_module_and_nothing_heavy() -> None:
    """`graphtasks -h` (and `graphtasks` alone) build no command: it used to import every layer (1.2 s of CPU)."""
    probe = (
        "import sys, contextlib, io\n"
        "from graphtasks import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        cli.main(['--help'])\n"
        "    except SystemExit as exit:\n"
        "        code = exit.code\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        "    bare = cli.main([])\n"
        "heavy = ('numpy', 'gymnasium', 'rdflib', 'pyoxigraph', 'scipy', 'matplotlib', 'pyarrow', 'ladybug', 'tqdm',\n"
        "         'graphstore', 'tasks', 'gym_bridge', 'graphtasks.experiments', 'graphtasks.commands')\n"
        "print(code, bare, 'run an agent on a task' in out.getvalue(), sorted(m for m in heavy if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "0 2 True []", (done.stdout, done.stderr)


@pytest.mark.parametrize("typed, near", [("rnu", "'run'"), ("experiments", "'experiment'"), ("sparq", "'sparql'")])
def test_a_mistyped_command_gets_one_line_naming_the_closest(typed: str, near: str, capsys) -> None:
    assert cli.main([typed, "x"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    expected = f"unknown command {typed!r}; did you mean {near}? (`graphtasks -h` lists the commands)"
    assert err == f"graphtasks: error: {expected}"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_line_gets_the_same_parser_from_its_own_modules(command: str) -> None:
    """The table names every module that adds or extends a command (`stores_cmd` extends `tasks`)."""
    alone = cli.build_parser(["--store", "x.lbug", command, "--help"])
    assert described(command_parser(alone, command)) == described(command_parser(FULL, command))


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["cypher", "RETURN 1"], ["graphtasks.commands.query_cmd"]),
        (["--store", "run", "tasks", "list"], ["graphtasks.commands.tasks_cmd", "graphtasks.commands.stores_cmd"]),
        (["--lock-timeout=3", "schema"], ["graphtasks.commands.stores_cmd"]),
        (["--help"], []),
        ([], []),
        (["no-such-command"], []),
        (["--no-such-option", "cypher"], []),
    ],
)
def test_the_modules_a_command_line_needs(argv: list[str], expected: list[str]) -> None:
    """The command, not an option's value, picks the modules; anything else gets none of the
    built-in ones (only the `graphtasks.commands` entry points', none installed here)."""
    assert cli.modules_for(argv) == expected
    assert cli.modules_for(None) == list(cli.MODULES)


def test_a_query_starts_without_the_environments_or_the_agents() -> None:
    """`graphtasks cypher` imports neither gymnasium, rdflib, scipy nor the agents (it starts in 0.3 s, not 0.8 s)."""
    probe = (
        "import sys\n"
        "from graphtasks import cli\n"
        "code = cli.main(['--store', ':memory:', 'cypher', 'RETURN 1 AS one'])\n"
        "heavy = sorted(m for m in ('gymnasium', 'rdflib', 'gym_bridge.agents', 'scipy') if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "0 []", (done.stdout, done.stderr)
