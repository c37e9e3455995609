"""The command line imports only the modules of its command, and that parser is the full one's."""

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
COMMANDS = sorted({command for commands in cli.COMMAND_MODULES.values() for command in commands})


def test_every_command_of_the_full_parser_is_in_the_table() -> None:
    subparsers = next(a for a in FULL._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(subparsers.choices) == COMMANDS


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
        (["--help"], None),
        ([], None),
        (["no-such-command"], None),
        (["--no-such-option", "cypher"], None),
    ],
)
def test_the_modules_a_command_line_needs(argv: list[str], expected: list[str] | None) -> None:
    """The command, not an option's value, picks the modules; anything else gets them all."""
    modules = cli.modules_for(argv)
    if expected is None:
        assert modules[: len(cli.COMMAND_MODULES)] == list(cli.COMMAND_MODULES)
    else:
        assert modules == expected


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
