"""Long commands show progress (tqdm.auto: a text bar in a terminal, a widget in a notebook) on
stderr, and `--no-progress` turns it off; what they print on stdout is the same either way."""

from __future__ import annotations

from graphtasks.cli import main


def test_tasks_load_all_shows_progress(tmp_path, capsys) -> None:
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "tasks", "load", "--all"]) == 0
    out, err = capsys.readouterr()
    assert "building" in err and "storing" in err and "task/s" in err
    assert main(["--store", store, "tasks", "load", "--all", "--no-progress"]) == 0
    quiet_out, quiet_err = capsys.readouterr()
    assert quiet_err == "" and quiet_out.split(":")[0] == out.split(":")[0]  # "N task(s) in ..."


def test_reproduce_shows_its_runs(tmp_path, capsys) -> None:
    store = str(tmp_path / "store.lbug")
    code = main(["--store", store, "reproduce", "daw2011-two-step", "--seeds", "1", "--no-figure", "--workers", "1"])
    assert code in (0, 1)  # one seed: the checks may fail; the run is what is shown
    out, err = capsys.readouterr()
    assert "daw2011-two-step" in err and ("run/s" in err or "s/run" in err)
    assert "check" in out


def test_fit_recovery_shows_its_fits_and_no_progress_hides_them(tmp_path, capsys) -> None:
    command = ["fit", "parameter-recovery", "--model", "q", "--participants", "4", "--trials", "30",
               "--workers", "1"]
    assert main(command) == 0
    shown = capsys.readouterr()
    assert "simulated and fitted" in shown.err and "parameter recovery: q" in shown.out
    assert main([*command, "--no-progress"]) == 0
    quiet = capsys.readouterr()
    assert "simulated and fitted" not in quiet.err and quiet.out == shown.out
