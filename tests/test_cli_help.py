"""Every command's help ends with real examples: each parses, and a sample of them runs."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from graphtasks import cli
from graphtasks.commands.examples import EXAMPLES

FULL = cli.build_parser()


def parsers(parser: argparse.ArgumentParser, path: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command's parser under `parser`, by its path of names ('tasks load')."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                child_path = f"{path} {name}".strip()
                found[child_path] = child
                found.update(parsers(child, child_path))
    return found


COMMANDS = parsers(FULL)
LINES = [(path, line) for path, lines in EXAMPLES.items() for line in lines]


def test_the_examples_are_those_of_the_commands_there_are() -> None:
    assert sorted(EXAMPLES) == sorted(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_help_ends_with_one_to_three_examples_of_itself(path: str) -> None:
    parser = COMMANDS[path]
    epilog = parser.epilog or ""
    assert epilog.startswith("Examples:\n"), path
    lines = epilog.splitlines()[1:]
    assert 1 <= len(lines) <= 3
    assert all(line.startswith(f"  graphtasks {path}") for line in lines), lines


def test_the_help_shows_the_examples_line_by_line(capsys) -> None:
    """Examples are not re-wrapped as prose is: each stays one line to copy."""
    with pytest.raises(SystemExit) as exit:
        cli.main(["run", "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.endswith("\n\nExamples:\n" + "".join(f"  {line}\n" for line in EXAMPLES["run"]))
    with pytest.raises(SystemExit):
        cli.main(["bench", "--help"])  # the suite's own parser
    assert "Examples:\n  graphtasks bench --quick\n" in capsys.readouterr().out


@pytest.mark.parametrize("path, line", LINES, ids=[line for _, line in LINES])
def test_every_example_parses(path: str, line: str) -> None:
    """What a reader copies is a valid command line, for the command's own parser and the full one."""
    words = shlex.split(line)
    assert words[0] == "graphtasks"
    argv = cli.expand_aliases(words[1:])
    for parser in (cli.build_parser(argv), FULL):
        args = parser.parse_args(argv)
        assert callable(args.func)


# Run in this order, on one fresh store: each example as written.
SAMPLE = [
    "tasks load rewardgym/two-step --param p_common=0.8",
    "tasks load rewardgym/two-step",
    "tasks list",
    "tasks show rewardgym/two-step",
    "schema --format json",
    'cypher "MATCH (t:Task) RETURN t.task, t.family ORDER BY t.task"',
    'cypher "MATCH (s:State) WHERE s.task = $t RETURN count(s) AS states" --param t=rewardgym/two-step',
    "agents",
    "families --verbose",
    "entities classes neuronav/graph/neighborhood",
    "entities create neuronav/graph/neighborhood --type Reward --param state=3 --param value=5 --group bonus",
    "entities list neuronav/graph/neighborhood --group bonus --format json",
    "entities update neuronav/graph/neighborhood --group bonus --param value=7",
    "entities remove neuronav/graph/neighborhood --group bonus",
    "render neuronav/grid/two_step/micro --ansi",
    "export rewardgym/two-step -o two-step.ttl",
    "import two-step.ttl",
    "experiment specs",
    "experiment check daw2011-two-step",
    "fit models",
    "fit simulate sub-01_task-twostep_events.tsv --params lr=0.3,beta=4 --seed 1",
    "poge stats poge/world1",
    "run rewardgym/two-step --agent q --episodes 200",
]


@pytest.mark.slow
def test_a_sample_of_the_examples_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    known = {line for _, line in LINES}
    monkeypatch.chdir(tmp_path)
    for line in SAMPLE:
        assert f"graphtasks {line}" in known, line
        code = cli.main(["--store", str(tmp_path / "store.lbug"), *shlex.split(line)])
        assert code == 0, (line, capsys.readouterr().err)
    assert (tmp_path / "two-step.ttl").stat().st_size > 0
    assert (tmp_path / "sub-01_task-twostep_events.tsv").stat().st_size > 0
