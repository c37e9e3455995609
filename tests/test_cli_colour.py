"""Colour on the command line (issue 42): an error's line red, a warning's yellow, a table's header
bold, on a terminal only; never through a pipe or into a file, never with NO_COLOR or `--no-color`;
FORCE_COLOR colours a pipe (https://no-color.org, https://force-color.org).

The command runs as a person runs it, with stdout and stderr each on a pseudo-terminal of its own
(`on_terminal`), and through pipes; the cases that vary only the settings run in-process, the
streams being a real pseudo-terminal or a real pipe."""

from __future__ import annotations

import contextlib
import io
import os
import pty
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import TextIO

import pytest

from graphtasks import cli
from graphtasks.colour import STYLES, error_line, paint, warning_line
from graphtasks.commands.output import print_rows

RED, YELLOW, BOLD = (f"\x1b[{STYLES[s]}m" for s in ("error", "warning", "header"))
RESET = "\x1b[0m"
BAD_SEED = ["run", "rewardgym/two-step", "--seed", "-1"]
TABLE = ["agents"]


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    """No colour setting inherited from the shell that runs the tests."""
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


def _drain(fd: int, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the command has closed the terminal
                return
            if not chunk:
                return
            into.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def on_terminal(*argv: str, **env: str) -> tuple[int, str, str]:
    """`python -m graphtasks *argv` with its stdout and its stderr each a pseudo-terminal."""
    (out_master, out_slave), (err_master, err_slave) = pty.openpty(), pty.openpty()
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(out_master, out), _drain(err_master, err)]
    try:
        process = subprocess.Popen([sys.executable, "-m", "graphtasks", *argv], stdin=subprocess.DEVNULL,
                                   stdout=out_slave, stderr=err_slave, env={**os.environ, **env})
        os.close(out_slave)
        os.close(err_slave)
        code = process.wait(timeout=120)
        for reader in readers:
            reader.join(timeout=10)
    finally:
        os.close(out_master)
        os.close(err_master)
    text = [b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n") for chunks in (out, err)]
    return code, text[0], text[1]


def through_pipes(*argv: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "graphtasks", *argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env={**os.environ, **env}, timeout=120)


@contextlib.contextmanager
def terminal_streams() -> Iterator[tuple[TextIO, TextIO, list[bytes], list[bytes]]]:
    """sys.stdout and sys.stderr replaced by two pseudo-terminals (in this process), and what each received."""
    (out_master, out_slave), (err_master, err_slave) = pty.openpty(), pty.openpty()
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [_drain(out_master, out), _drain(err_master, err)]
    stdout, stderr = open(out_slave, "w"), open(err_slave, "w")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        yield stdout, stderr, out, err
    finally:
        sys.stdout, sys.stderr = saved
        stdout.close()
        stderr.close()
        for reader in readers:
            reader.join(timeout=10)
        os.close(out_master)
        os.close(err_master)


def in_process(argv: list[str]) -> tuple[int, str, str]:
    """cli.main on two pseudo-terminals; what each showed."""
    with terminal_streams() as (_, _, out, err):
        try:
            code = cli.main(argv)
        except SystemExit as exit:  # argparse's own exit on a bad option
            code = int(exit.code or 0)
    return code, b"".join(out).decode(), b"".join(err).decode()


# -- a person at a terminal, and the same command in a pipe -------------------------------------
@pytest.mark.slow
def test_a_terminal_shows_the_error_red_and_the_header_bold():
    code, out, err = on_terminal(*BAD_SEED)
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(RED + "graphtasks: error: run: --seed") and line.endswith(RESET), repr(err)
    code, out, err = on_terminal(*TABLE)
    assert code == 0, err
    header, rule = out.splitlines()[:2]
    assert header.startswith(BOLD + "agent") and header.endswith(RESET), repr(header)
    assert "\x1b" not in rule and "\x1b" not in "".join(out.splitlines()[2:])  # only the header


@pytest.mark.slow
def test_a_pipe_gets_no_escape_sequence():
    done = through_pipes(*BAD_SEED)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1].startswith("graphtasks: error: run: --seed")
    assert "\x1b" not in done.stderr
    listing = through_pipes(*TABLE)
    assert listing.stdout.startswith("agent ") and "\x1b" not in listing.stdout + listing.stderr


# -- the settings --------------------------------------------------------------------------------
def test_no_color_and_the_flag_anywhere_turn_colour_off_on_a_terminal(monkeypatch):
    code, out, err = in_process(TABLE)  # the same terminal, colour on: the control
    assert code == 0 and out.startswith(BOLD)
    for argv in (["--no-color", *TABLE], [*TABLE, "--no-color"], [*BAD_SEED, "--no-color"]):
        code, out, err = in_process(argv)
        assert "\x1b" not in out + err, (argv, out, err)
        assert "NO_COLOR" not in os.environ  # the flag held for its command only
    assert in_process(TABLE)[1].startswith(BOLD)
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = in_process(BAD_SEED)
    assert code == 2 and "\x1b" not in out + err
    monkeypatch.setenv("FORCE_COLOR", "1")  # NO_COLOR wins
    assert "\x1b" not in in_process(TABLE)[1]


def test_force_color_colours_a_pipe_and_an_empty_value_counts_as_unset(monkeypatch, capsys):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert cli.main(TABLE) == 0
    assert capsys.readouterr().out.startswith(BOLD + "agent")
    monkeypatch.setenv("FORCE_COLOR", "")
    monkeypatch.setenv("NO_COLOR", "")
    assert cli.main(TABLE) == 0
    assert "\x1b" not in capsys.readouterr().out
    monkeypatch.setenv("TERM", "dumb")  # a terminal that takes no colour
    code, out, err = in_process(TABLE)
    assert code == 0 and "\x1b" not in out


def test_the_library_lines_each_style():
    with terminal_streams() as (stdout, stderr, _, _):
        assert error_line("x", stderr) == f"{RED}graphtasks: error: x{RESET}"
        # gymnasium colours its own warnings: the codes go, the line is ours; lines joined
        assert warning_line("\x1b[33mWARN: a\nb\x1b[0m", stderr) == f"{YELLOW}graphtasks: warning: WARN: a b{RESET}"
        print_rows(["a", "b"], [[1, 2]], out=stdout)
        assert paint("", "header", stdout) == ""
    plain = io.StringIO()
    print_rows(["a", "b"], [[1, 2]], out=plain)
    assert plain.getvalue().splitlines()[0] == "a  b"


def test_a_warning_during_a_command_is_one_yellow_line():
    from graphtasks.colour import show_warning

    with terminal_streams() as (_, stderr, _, err):
        show_warning(FutureWarning("max_steps is deprecated:\n use max_episode_steps"), FutureWarning, "x.py", 1)
        stderr.flush()
    assert b"".join(err).decode().strip() == f"{YELLOW}graphtasks: warning: max_steps is deprecated: use " \
                                             f"max_episode_steps{RESET}"
    # cli.main shows warnings that way while its command runs, and gives warnings.showwarning back after
    before = warnings.showwarning
    assert cli.main(TABLE + ["--format", "json"]) == 0
    assert warnings.showwarning is before


def test_a_deprecated_option_warns_in_yellow_on_a_terminal():
    argv = ["run", "rewardgym/two-step", "--episodes", "1", "--max-steps", "2", "--json", "--no-progress"]
    code, out, err = in_process(argv)
    assert code == 0, err
    assert err.strip() == f"{YELLOW}graphtasks: warning: --max-steps is deprecated: use --max-episode-steps{RESET}"
    assert "\x1b" not in out  # JSON on a terminal: no escapes either
