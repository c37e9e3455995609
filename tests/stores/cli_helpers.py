"""Run the real `graphtasks` entry point in-process, with the command modules that exist on this branch."""

from __future__ import annotations

import importlib.util

import pytest

from graphtasks import cli


def run_cli(argv: list[str], capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """`graphtasks ARGV` -> (exit code, stdout, stderr)."""
    present = [m for m in cli.COMMAND_MODULES if importlib.util.find_spec(m) is not None]
    monkeypatch.setattr(cli, "COMMAND_MODULES", present)
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err
