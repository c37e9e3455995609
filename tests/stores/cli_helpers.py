"""Run the real `graphtasks` entry point in-process."""

from __future__ import annotations

import pytest

from graphtasks import cli


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    """`graphtasks ARGV` -> (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err
