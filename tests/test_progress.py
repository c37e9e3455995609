"""Long commands show progress (tqdm.auto: a text bar in a terminal, a widget in a notebook) on
stderr, and `--no-progress` turns it off; what they print on stdout is the same either way.
tests/test_progress_commands.py runs each command on a terminal (where alone bars are drawn)."""

from __future__ import annotations

from graphtasks.cli import main


def test_reproduce_shows_its_runs(tmp_path, capsys) -> None:
    store = str(tmp_path / "store.lbug")
    code = main(["--store", store, "reproduce", "daw2011-two-step", "--seeds", "1", "--no-figure", "--workers", "1"])
    assert code in (0, 1)  # one seed: the checks may fail; the run is what is shown
    out, err = capsys.readouterr()
    assert "daw2011-two-step" in err and ("run/s" in err or "s/run" in err)
    assert "check" in out
