"""On a plain install (no matplotlib: the `plot` extra), a command that draws refuses in one line
naming the extra, before any work; what does not draw still works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphtasks.commands.extras import EXTRAS, missing_extra

REPO = Path(__file__).resolve().parents[1]

# Runs each command line with matplotlib unimportable, as on `pip install graphtasks`: a finder
# first on sys.meta_path refuses it the way a missing package is refused.
PLAIN_INSTALL = r"""
import contextlib, io, json, sys, traceback
from importlib.abc import MetaPathFinder

class NoMatplotlib(MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoMatplotlib())
from graphtasks.cli import main

results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
        except BaseException:
            traceback.print_exc(file=err)
            code = "traceback"
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""

PLOT = "needs matplotlib: pip install 'graphtasks[plot]'"
DRAWING = [
    (["render", "rewardgym/two-step", "-o", "two-step.png"],
     f"render (a picture; --ansi draws the task as text without it) {PLOT}"),
    (["render", "four_rooms", "--size", "small", "-o", "four_rooms.svg"],
     f"render (a picture; --ansi draws the task as text without it) {PLOT}"),
    (["run", "rewardgym/two-step", "--episodes", "5", "--no-progress", "--plot", "run.png"], f"--plot {PLOT}"),
    (["reproduce", "cools2002-reversal", "--no-progress"],
     f"reproduce (its figure; --no-figure checks the findings without one) {PLOT}"),
    (["fit", "parameter-recovery", "--participants", "3", "--trials", "20", "--starts", "1", "-o", "r.png",
      "--no-progress"], f"-o (the figure) {PLOT}"),
    (["fit", "model-recovery", "--participants", "1", "--trials", "20", "--starts", "1", "-o", "r.png",
      "--no-progress"], f"-o (the figure) {PLOT}"),
    (["fit", "show", "lab", "--plot", "fits.png"], f"--plot {PLOT}"),
    (["fit", "compare", "lab", "--random-effects", "--plot", "bms.png"], f"--plot {PLOT}"),
    (["participants", "stay", "pilot", "-o", "stay.png"], f"participants stay {PLOT}"),
    (["experiment", "plot", "daw2011-two-step", "-o", "stay.png"], f"plotting {PLOT}"),
]
NOT_DRAWING = [
    ["render", "neuronav/grid/two_step/micro", "--ansi"],
    ["view", "rewardgym/two-step", "-o", "two-step.html"],
    ["run", "rewardgym/two-step", "--episodes", "5", "--no-progress"],
]


@pytest.mark.slow
def test_every_command_that_draws_refuses_in_one_line_naming_the_extra(tmp_path: Path) -> None:
    store = str(tmp_path / "store.lbug")
    lines = [["--store", store, *argv] for argv, _ in DRAWING] + [["--store", store, *argv] for argv in NOT_DRAWING]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", PLAIN_INSTALL, json.dumps(lines)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.splitlines()[-1])
    for (argv, expected), (code, err) in zip(DRAWING, results, strict=False):
        assert (code, err) == (2, f"graphtasks: error: {expected}\n"), argv
    for argv, (code, err) in zip(NOT_DRAWING, results[len(DRAWING):], strict=True):
        assert code == 0, (argv, err)
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.svg"))  # refused before any work
    assert (tmp_path / "two-step.html").exists()


def test_a_missing_extra_anywhere_is_one_line_naming_it() -> None:
    """The command line's net for an import no command checked for: one line, not a traceback."""
    for module, extra in EXTRAS.items():
        exc = ModuleNotFoundError(f"No module named '{module}.sub'", name=f"{module}.sub")
        assert missing_extra(exc) == f"{module} is not installed: pip install 'graphtasks[{extra}]'"
    assert missing_extra(ImportError("plotting needs matplotlib:\n pip install 'graphtasks[plot]'")) == (
        "plotting needs matplotlib: pip install 'graphtasks[plot]'")
    assert missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None  # always there: a bug
    assert missing_extra(ImportError("cannot import name 'x' from 'graphtasks.cli'", name="graphtasks.cli")) is None


def test_the_net_answers_for_an_import_a_command_makes(monkeypatch, capsys) -> None:
    """An ImportError of an extra's module out of a command is the same one line (exit 2)."""
    from graphtasks import cli
    from graphtasks.commands import agents_cmd

    def needs_scipy(args):
        raise ModuleNotFoundError("No module named 'scipy'", name="scipy")

    monkeypatch.setattr(agents_cmd, "cmd_agents", needs_scipy)
    assert cli.main(["agents"]) == 2
    assert capsys.readouterr().err == "graphtasks: error: scipy is not installed: pip install 'graphtasks[fit]'\n"
