"""Managing recorded experiments: show, delete, export (CSV, parquet, trials, BIDS events) and
the Python API, all against a real embedded store."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import Experiment, UnknownExperiment
from graphtasks.experiments.export import BIDS_COLUMNS, TRIAL_COLUMNS
from graphtasks.experiments.records import record_sources

SPEC = """
[experiment]
name = "records"
tasks = ["rewardgym/two-step", "neuronav/graph/human_a"]
seeds = 2

[[agents]]
name = "q"
params = { beta = 2.0 }

[[phases]]
name = "learning"
episodes = 4
max_episode_steps = 3

[[phases]]
name = "test"
episodes = 2
max_episode_steps = 3
learn = false
"""


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[str, Path]:
    spec = tmp_path / "records.toml"
    spec.write_text(SPEC, encoding="utf-8")
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return store, spec


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_show_lists_phases_runs_and_task_versions(recorded, capsys) -> None:
    store, _ = recorded
    capsys.readouterr()
    assert main(["--store", store, "experiment", "show", "records"]) == 0
    out = capsys.readouterr().out
    assert "learning" in out and "test" in out and "q  " in out
    assert "rewardgym/two-step" in out and "neuronav/graph/human_a" in out
    assert main(["--store", store, "experiment", "show", "record"]) == 2
    assert "no recorded experiment 'record'; recorded: records" in capsys.readouterr().err


def test_export_trials_has_a_row_per_recorded_step(recorded, capsys) -> None:
    store, _ = recorded
    capsys.readouterr()
    assert main(["--store", store, "experiment", "export", "records", "--trials"]) == 0
    rows = csv_rows(capsys.readouterr().out)
    assert list(rows[0]) == [c if c != "params" else "param_beta" for c in TRIAL_COLUMNS]  # a column per setting
    with open_store(store, "r") as opened:  # the trials are chunks, scanned by Cypher with LOAD FROM $trials
        assert opened.cypher("MATCH (t:Trial) RETURN count(t)").rows == [[0]]
        scanned = opened.cypher("LOAD FROM $trials RETURN count(*)", sources=record_sources(opened)).rows
        assert scanned == [[len(rows)]]
    assert {r["task"] for r in rows} == {"rewardgym/two-step"}  # trials are recorded for trial tasks
    assert all(0.0 < float(r["p_action"]) <= 1.0 for r in rows)


def test_parquet_holds_what_csv_holds(recorded, tmp_path: Path, capsys) -> None:
    import pandas

    store, _ = recorded
    assert main(["--store", store, "experiment", "export", "records", "-o", str(tmp_path / "e.csv")]) == 0
    parquet = tmp_path / "e.parquet"
    assert main(["--store", store, "experiment", "export", "records", "--format", "parquet", "-o", str(parquet)]) == 0
    from_csv = pandas.read_csv(tmp_path / "e.csv", keep_default_na=False)
    from_parquet = pandas.read_parquet(parquet)
    assert from_parquet.shape == from_csv.shape == (2 * 2 * 6, len(from_csv.columns))
    assert from_parquet["return"].tolist() == from_csv["return"].tolist()
    capsys.readouterr()
    assert main(["--store", store, "experiment", "export", "records", "--format", "parquet"]) == 2
    assert "give -o FILE.parquet" in capsys.readouterr().err


def test_bids_events_one_tsv_per_trial_run(recorded, tmp_path: Path) -> None:
    store, _ = recorded
    target = tmp_path / "bids"
    assert main(["--store", store, "experiment", "export", "records", "--bids", str(target),
                 "--trial-duration", "1"]) == 0
    files = sorted(target.glob("sub-*/beh/*.tsv"))
    assert [f.name for f in files] == [f"sub-sim000{run}_task-twostep_run-1_events.tsv" for run in (0, 1)]
    rows = list(csv.DictReader(files[0].open(encoding="utf-8"), delimiter="\t"))
    assert tuple(rows[0]) == BIDS_COLUMNS and len(rows) == 6 * 2  # six trials of two stages
    assert [int(r["trial"]) for r in rows[:4]] == [0, 0, 1, 1] and rows[0]["event_type"] == "stage-0"
    assert float(rows[-1]["total_reward"]) == pytest.approx(sum(float(r["delta_reward"]) for r in rows))


@pytest.mark.slow
def test_delete_removes_every_record_and_a_rerun_starts_afresh(recorded, capsys) -> None:
    store, spec = recorded
    capsys.readouterr()
    assert main(["--store", store, "experiment", "delete", "records"]) == 0
    assert "4 runs, 24 episodes" in capsys.readouterr().out
    with open_store(store, "r") as opened:
        for label in ("Experiment", "Phase", "Run", "Episode", "Trial", "Chunk"):
            assert opened.cypher(f"MATCH (n:{label}) RETURN count(n)").rows == [[0]], label
        assert "rewardgym/two-step" in opened  # the task versions stay
    assert not any(Path(store + ".records").rglob("*.parquet"))  # and the chunk files are gone
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    assert "already recorded" not in capsys.readouterr().out
    assert main(["--store", store, "experiment", "delete", "records"]) == 0
    assert main(["--store", store, "experiment", "delete", "records"]) == 2


@pytest.mark.slow
def test_the_python_api_runs_and_reads_back_what_the_cli_exports(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "records.toml"
    spec.write_text(SPEC, encoding="utf-8")
    store = str(tmp_path / "api.lbug")
    experiment = Experiment.from_file(spec)
    assert experiment.name == "records" and len(experiment.cells) == 4
    report = experiment.run(store, workers=2)
    assert (report.skipped, report.ran, report.failures) == (0, 4, [])
    assert experiment.run(store).skipped == 4
    episodes = experiment.results(store)
    capsys.readouterr()
    assert main(["--store", store, "experiment", "export", "records"]) == 0
    exported = csv_rows(capsys.readouterr().out)
    assert len(episodes) == len(exported) == 24
    assert [float(r["return"]) for r in exported] == episodes["return"].tolist()
    trials = experiment.results(store, trials=True)
    assert list(trials.columns) == list(TRIAL_COLUMNS) and len(trials) == 2 * 6 * 2
    assert experiment.delete(store)["Run"] == 4
    with pytest.raises(UnknownExperiment, match="no recorded experiment 'records'"):
        experiment.results(store)
