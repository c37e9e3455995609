"""Long commands show progress that tells the truth (issue 42): on a terminal, a bar of units
that move (tasks, fits, rows, reproductions), through every count to its total; into a pipe or
a log, or with --no-progress, nothing on stderr. Each command is run as a person would run it,
its stderr a pseudo-terminal (tests/terminal.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.terminal import graphtasks

FIVE_TASKS = ["neuronav/graph/linear", "neuronav/graph/ring", "neuronav/graph/two_step", "rewardgym/gonogo",
              "rewardgym/two-armed-bandit"]


@pytest.mark.slow
def test_tasks_load_counts_tasks_built_and_stored(tmp_path: Path) -> None:
    store = str(tmp_path / "store.lbug")
    shown = graphtasks("--store", store, "tasks", "load", *FIVE_TASKS)
    assert shown.code == 0, shown.raw
    assert shown.moved("building") == [0, 1, 2, 3, 4, 5], shown.frames
    assert shown.moved("storing") == [0, 1, 2, 3, 4, 5], shown.frames
    assert {total for _, total in shown.counts("storing")} == {5}
    piped = graphtasks("--store", store, "tasks", "load", *FIVE_TASKS, terminal=False)
    assert piped.code == 0 and piped.raw == "" and "5 task(s)" in piped.out
    quiet = graphtasks("--store", store, "tasks", "load", *FIVE_TASKS, "--no-progress")
    assert quiet.code == 0 and quiet.raw.strip() == "" and quiet.out == piped.out


def imported(tmp_path: Path, participants: int = 3, trials: int = 60) -> str:
    """A store with an experiment 'lab' of simulated participants (events files, imported)."""
    from graphtasks.cli import main

    store = str(tmp_path / "store.lbug")
    files = []
    for k in range(participants):
        path = tmp_path / f"sub-{k}_task-twostep_events.tsv"
        assert main(["fit", "simulate", str(path), "--params", "lr=0.4,beta=4", "--trials", str(trials),
                     "--seed", str(k)]) == 0
        files.append(str(path))
    assert main(["--store", store, "fit", "import", "lab", *files]) == 0
    return store


@pytest.mark.parametrize(("participants", "starts"), [(3, 2), (18, 10)], ids=["one by one", "lockstep"])
@pytest.mark.slow
def test_fit_run_counts_each_start_as_it_ends(tmp_path: Path, capsys, participants: int, starts: int) -> None:
    """3 x 2 starts: each participant's starts one after another, with a remaining time; 18 x
    10 (540 likelihoods a round, enough for batched passes to pay): every start climbing at once
    in a lockstep, the batched passes beside the bar and no remaining time (most starts end
    together near the end: their rate would say many times too long)."""
    store = imported(tmp_path, participants, trials=30)
    capsys.readouterr()
    command = ["--store", store, "fit", "run", "lab", "--starts", str(starts), "--no-record"]
    shown = graphtasks(*command)
    assert shown.code == 0, shown.raw
    total = participants * starts
    assert shown.moved("fits of q") == list(range(total + 1)), shown.frames
    assert {t for _, t in shown.counts("fits of q")} == {total}
    lockstep = [f for f in shown.frames if f.startswith("fits of q") and "batched passes" in f]
    assert bool(lockstep) == (starts == 10), shown.frames
    assert bool(shown.eta_seconds("fits of q")) == (starts == 2), shown.frames
    if starts == 2:
        piped = graphtasks(*command, terminal=False)
        assert piped.code == 0 and piped.raw == "" and piped.out == shown.out


@pytest.mark.slow
def test_fit_em_counts_iterations_with_no_total(tmp_path: Path, capsys) -> None:
    """EM runs until its prior stops moving: the bar counts iterations, shows how far the prior
    moved, and claims no total and no remaining time."""
    store = imported(tmp_path)
    capsys.readouterr()
    shown = graphtasks("--store", store, "fit", "run", "lab", "--method", "em", "--starts", "1", "--no-record",
                       "--format", "csv")
    assert shown.code == 0, shown.raw
    iterations = int(shown.out.strip().splitlines()[-1].split(",")[-2])  # the group's row: ..., iterations, converged
    drawn = [int(m[1]) for f in shown.frames if (m := re.match(r"EM of q: (\d+)iteration", f))]
    assert drawn == sorted(drawn) and len(set(drawn)) > 2 and drawn[0] == 0, shown.frames
    assert all("/" not in f.split("[")[0] for f in shown.frames if f.startswith("EM of q")), shown.frames
    assert any("prior moved" in f for f in shown.frames if f.startswith("EM of q")), shown.frames
    assert max(drawn) == iterations, (drawn, shown.out)


@pytest.mark.slow
def test_fit_recovery_counts_participants_simulated_and_fitted() -> None:
    command = ["fit", "parameter-recovery", "--model", "q", "--participants", "4", "--trials", "30", "--workers", "1"]
    shown = graphtasks(*command)
    assert shown.code == 0, shown.raw
    assert shown.moved("simulated and fitted") == [0, 1, 2, 3, 4], shown.frames
    assert not any(f.startswith("fits of q") for f in shown.frames)  # a job the bar counts draws no bar of its own
    assert "parameter recovery: q" in shown.out
    piped = graphtasks(*command, terminal=False)
    assert piped.code == 0 and piped.raw == "" and piped.out == shown.out


@pytest.mark.slow
def test_reproduce_shows_its_runs_on_a_terminal_only(tmp_path: Path) -> None:
    command = ["--store", str(tmp_path / "store.lbug"), "reproduce", "daw2011-two-step", "--seeds", "1",
               "--no-figure", "--workers", "1"]
    shown = graphtasks(*command)
    assert shown.code in (0, 1), shown.raw  # one seed: the checks may fail; the run is what is shown
    counts = shown.counts("daw2011-two-step")
    total = counts[-1][1]  # the sweep's episodes: 3 agents x 1 seed, each run of the same length
    assert counts[0] == (0, total) and counts[-1] == (total, total) and total and total % 3 == 0, shown.frames
    assert "check" in shown.out
    piped = graphtasks("--store", str(tmp_path / "again.lbug"), *command[2:], terminal=False)
    assert piped.code == shown.code and piped.raw == "" and "check" in piped.out


@pytest.mark.slow
def test_ingest_dump_counts_lines_read_with_no_total(tmp_path: Path) -> None:
    """A dump's lines are not counted before it is read: the bar counts lines as each batch is
    committed, with no total and no remaining time."""
    import gzip
    import json as json_module

    rows = []
    for k in range(40):
        start, end = f"/c/en/thing_{k}", f"/c/en/place_{k}"
        meta = {"dataset": "/d/conceptnet/4/en", "sources": [{"contributor": "/s/contributor/omcs"}], "weight": 1.0}
        rows.append(f"/a/[/r/AtLocation/,{start}/,{end}/]\t/r/AtLocation\t{start}\t{end}\t{json_module.dumps(meta)}\n")
    dump = tmp_path / "assertions.csv.gz"
    dump.write_bytes(gzip.compress("".join(rows).encode()))
    command = ["--store", str(tmp_path / "store.lbug"), "ingest", "dump", str(dump), "--batch-size", "10"]
    shown = graphtasks(*command)
    assert shown.code == 0, shown.raw
    drawn = [m[1] for f in shown.frames if (m := re.match(r"assertions\.csv\.gz: ([\d.]+) lines", f))]
    assert [float(n) for n in dict.fromkeys(drawn)] == [0, 10, 20, 30, 40], shown.frames
    assert not shown.eta_seconds("assertions.csv.gz") and "40 rows kept" in shown.out
    piped = graphtasks(*command, "--restart", terminal=False)
    assert piped.code == 0 and piped.raw == "" and "40 lines read" in piped.out


@pytest.mark.slow
def test_turtle_export_counts_the_records_it_adds(tmp_path: Path) -> None:
    """The records' view holds every episode and trial: the bar counts them as they are added
    (their number known once they are read), then says it writes the Turtle; the text is the
    same with the bar or without."""
    from benchmarks.export_bench import SPEC
    from graphtasks.cli import main

    spec = tmp_path / "turtle.toml"
    spec.write_text(SPEC.format(seeds=2, episodes=150), encoding="utf-8")
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    command = ["--store", store, "experiment", "export", "turtle", "--format", "turtle"]
    shown = graphtasks(*command)
    assert shown.code == 0, shown.raw
    counts = shown.counts("records to RDF")
    total = counts[-1][1]
    assert total is not None and total > 1000 and counts[-1] == (total, total), shown.frames
    moved = shown.moved("records to RDF")
    steps = [b - a for a, b in zip(moved, moved[1:])]
    assert moved[0] == 0 and len(moved) > 4 and all(0 < step <= 500 for step in steps), moved  # 500 at most a step
    assert any("triples as Turtle" in f for f in shown.frames)
    piped = graphtasks(*command, terminal=False)
    assert piped.code == 0 and piped.raw == "" and piped.out == shown.out and "mls:Run" in piped.out


def test_a_jupyter_kernel_is_watched_where_a_pipe_is_not(tmp_path: Path) -> None:
    """In a notebook stderr is no terminal, yet someone watches: the long commands' bars are
    drawn there (tqdm.auto: a widget where ipywidgets is installed, text otherwise)."""
    import nbclient
    import nbformat

    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys\nfrom graphtasks.commands.progress import shown, watched\n"
        "print(sys.stderr.isatty(), watched(), shown(False), shown(True))"
    )])
    nbclient.NotebookClient(book, timeout=120, kernel_name="python3").execute()
    assert book.cells[0].outputs[0]["text"].split() == ["False", "True", "True", "False"]
    piped = subprocess.run([sys.executable, "-c", "from graphtasks.commands.progress import watched; "
                            "print(watched())"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert piped.stdout.split() == ["False"], piped.stderr
