"""`experiment export --bids DIR` (and `experiment run --bids DIR`) write a BIDS dataset: a
dataset description, participants.tsv mapping the BIDS labels to the experiment's runs, and
per run `sub-<label>/beh/sub-<label>_task-<label>_run-1_events.tsv` with its sidecar. Every
file is checked by the BIDS validator's Python package (`bids_validator.BIDSValidator`, the
file-name rules); onsets and durations are seconds, from the recorded times or a stated trial
duration, never step numbers."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas
import pytest
from bids_validator import BIDSValidator  # type: ignore[import-untyped]

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import parse_spec, run_experiment
from graphtasks.experiments.export import (
    BIDS_COLUMNS,
    BidsDatasetObserver,
    ExportError,
    bids_events,
    recorded_trials,
    write_bids,
)
from graphtasks.fitting import read_events
from graphtasks.fitting.behaviour import load_run
from tests.test_serve import TWO_STEP_STUDY, free_port

SPEC = """
[experiment]
name = "bids"
tasks = ["rewardgym/two-step", "neuronav/graph/human_a"]
seeds = 2

[[agents]]
name = "q"
params = { beta = 2.0 }

[[phases]]
name = "learning"
episodes = 4
max_episode_steps = 3
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("bids")
    spec = folder / "bids.toml"
    spec.write_text(SPEC, encoding="utf-8")
    store = str(folder / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return store


def files_of(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def assert_valid(folder: Path) -> None:
    """What the BIDS validator's Python package checks, for every file, and the files BIDS requires."""
    validator = BIDSValidator()
    names = files_of(folder)
    assert [n for n in names if not validator.is_bids("/" + n)] == []
    assert {"dataset_description.json", "participants.tsv", "participants.json", "README"} <= set(names)
    description = json.loads((folder / "dataset_description.json").read_text(encoding="utf-8"))
    assert description["BIDSVersion"] and description["DatasetType"] == "raw"
    assert description["GeneratedBy"][0]["Name"] == "graphtasks" and description["GeneratedBy"][0]["Version"]
    participants = pandas.read_csv(folder / "participants.tsv", sep="\t", dtype=str)
    subjects = sorted(p.split("/")[0] for p in names if p.startswith("sub-"))
    assert sorted(participants["participant_id"]) == sorted(set(subjects))
    sidecar = json.loads((folder / "participants.json").read_text(encoding="utf-8"))
    assert set(sidecar) == set(participants.columns)
    for events in folder.glob("sub-*/beh/*_events.tsv"):
        table = pandas.read_csv(events, sep="\t", na_values="n/a", keep_default_na=False)
        assert list(table.columns[:2]) == ["onset", "duration"]
        assert table["onset"].dtype == float and table["duration"].dtype == float  # seconds, never "n/a"
        described = json.loads(events.with_suffix(".json").read_text(encoding="utf-8"))
        assert list(described) == list(table.columns) and all(v["Description"] for v in described.values())
        assert described["onset"]["Units"] == described["duration"]["Units"] == "s"


def test_agents_runs_need_a_stated_trial_duration_and_then_make_a_valid_dataset(recorded, tmp_path, capsys) -> None:
    target = tmp_path / "dataset"
    capsys.readouterr()
    assert main(["--store", recorded, "experiment", "export", "bids", "--bids", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--trial-duration SECONDS" in err and "run 0 (q) recorded no times" in err
    assert not target.exists()  # nothing written
    assert main(["--store", recorded, "experiment", "export", "bids", "--bids", str(target),
                 "--trial-duration", "2.5"]) == 0
    assert "2 events files written to the BIDS dataset" in capsys.readouterr().out
    assert files_of(target) == [
        "README", "dataset_description.json", "participants.json", "participants.tsv",
        "sub-sim0000/beh/sub-sim0000_task-twostep_run-1_events.json",
        "sub-sim0000/beh/sub-sim0000_task-twostep_run-1_events.tsv",
        "sub-sim0001/beh/sub-sim0001_task-twostep_run-1_events.json",
        "sub-sim0001/beh/sub-sim0001_task-twostep_run-1_events.tsv",
    ]  # trials are recorded for trial tasks only: human_a's runs (2, 3) have none
    assert_valid(target)
    description = json.loads((target / "dataset_description.json").read_text(encoding="utf-8"))
    assert description["Name"] == "bids"
    events = target / "sub-sim0000/beh/sub-sim0000_task-twostep_run-1_events.tsv"
    rows = list(csv.DictReader(events.open(encoding="utf-8"), delimiter="\t"))
    assert tuple(rows[0]) == BIDS_COLUMNS and len(rows) == 4 * 2
    assert [float(r["onset"]) for r in rows] == [2.5 * i for i in range(8)]
    assert {r["duration"] for r in rows} == {"2.5"} and rows[0]["participant_id"] == "sim0000"
    sidecar = json.loads(events.with_suffix(".json").read_text(encoding="utf-8"))
    assert "2.5 s, --trial-duration" in sidecar["onset"]["Description"]
    participants = list(csv.DictReader((target / "participants.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert [(p["participant_id"], p["run"], p["agent"], p["task"]) for p in participants] == [
        ("sub-sim0000", "0", "q", "rewardgym/two-step"), ("sub-sim0001", "1", "q", "rewardgym/two-step")]
    with open_store(recorded, "r") as store:  # fitting reads the events file back as the recorded run
        run = load_run(store, "bids", 0)
    back = read_events(events)
    for column in ("states", "actions", "rewards", "next_states", "ends"):
        assert np.array_equal(getattr(run, column), getattr(back, column)), column


def test_a_folder_that_is_not_this_experiments_dataset_is_refused(recorded, tmp_path, capsys) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    capsys.readouterr()
    args = ["--store", recorded, "experiment", "export", "bids", "--trial-duration", "1", "--bids"]
    assert main([*args, str(other)]) == 2
    assert "not empty and not a BIDS dataset (no dataset_description.json)" in capsys.readouterr().err
    assert files_of(other) == ["notes.txt"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "dataset_description.json").write_text(json.dumps({"Name": "a study", "BIDSVersion": "1.10.0"}))
    assert main([*args, str(foreign)]) == 2
    assert "holds the BIDS dataset of 'a study'; write 'bids' into another folder" in capsys.readouterr().err
    for bad in ("0", "-1", "nan", "inf"):
        assert main([*args, str(tmp_path / "new"), "--trial-duration", bad]) == 2
        assert "--trial-duration: expected a positive number of seconds" in capsys.readouterr().err
    assert main(["--store", recorded, "experiment", "export", "bids", "--trial-duration", "1"]) == 2
    assert "--trial-duration: only with --bids DIR" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def trial(run: int, step: int, **extra: Any) -> dict[str, Any]:
    return {"experiment": "people", "run": run, "task": "rewardgym/two-step", "agent": "participant",
            "label": f"p-{run}", "seed": run, "condition": "", "phase": "main", "phase_index": 0, "episode": step // 2,
            "step": step % 2, "state": 0, "action": 1, "reward": 0.0, "next_state": 1, "p_action": None,
            "trial_type": None, "start_state": 0, **extra}


def test_people_times_come_from_the_browser_clock_or_else_the_server_clock(tmp_path) -> None:
    browser = [trial(0, i, rt=500.0 + i, shown_ms=10_000.0 + 1500 * i, received_at=f"2026-01-01T10:00:0{i}.000+00:00")
               for i in range(4)]
    (text, sidecar), = bids_events(browser, subjects={0: "p0"}).values()
    rows = list(csv.DictReader(text.splitlines(), delimiter="\t"))
    assert [float(r["onset"]) for r in rows] == [0.0, 1.5, 3.0, 4.5]  # performance.now() at each display
    assert [float(r["duration"]) for r in rows] == [0.5, 0.501, 0.502, 0.503]  # the response times
    assert "browser's clock" in sidecar["onset"]["Description"]
    reloaded = [dict(t, shown_ms=t["shown_ms"] if i < 2 else 20.0 * i) for i, t in enumerate(browser)]
    (text, sidecar), = bids_events(reloaded, subjects={0: "p0"}).values()
    rows = list(csv.DictReader(text.splitlines(), delimiter="\t"))
    # the page's clock went back: received_at less rt, second by second here
    assert [float(r["onset"]) for r in rows] == [0.0, 0.999, 1.998, 2.997]
    assert "received_at" in sidecar["onset"]["Description"]
    partly = browser[:2] + [dict(t, rt=None, received_at=None) for t in browser[2:]]
    with pytest.raises(ExportError, match=r"^run 0: 2 of its 4 trials have no recorded time"):
        bids_events(partly, trial_duration=1.0)


def test_labels_are_letters_and_digits_and_participants_tsv_maps_them(tmp_path) -> None:
    rows = [dict(trial(0, 0, rt=400.0, received_at="2026-01-01T10:00:00+00:00"), label="P_01"),
            dict(trial(1, 0, rt=400.0, received_at="2026-01-01T10:00:00+00:00"), label="P-01"),
            dict(trial(2, 0, task="neuronav/graph/human_a"), agent="q", label="q lr=0.1")]
    written = write_bids(rows, tmp_path, trial_duration=3.0)
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "sub-P01/beh/sub-P01_task-twostep_run-1_events.tsv",
        "sub-P01run1/beh/sub-P01run1_task-twostep_run-1_events.tsv",  # the same label: the run added
        "sub-sim0002/beh/sub-sim0002_task-graphhumana_run-1_events.tsv",
    ]
    assert_valid(tmp_path)
    table = pandas.read_csv(tmp_path / "participants.tsv", sep="\t", dtype=str)
    assert table[["participant_id", "run", "label", "task"]].values.tolist() == [
        ["sub-P01", "0", "P_01", "rewardgym/two-step"], ["sub-P01run1", "1", "P-01", "rewardgym/two-step"],
        ["sub-sim0002", "2", "q lr=0.1", "neuronav/graph/human_a"]]
    write_bids([dict(rows[1], episode=5)], tmp_path, trial_duration=3.0)  # again: the same subject, one more row
    assert pandas.read_csv(tmp_path / "participants.tsv", sep="\t")["participant_id"].tolist() == [
        "sub-P01", "sub-P01run1", "sub-sim0002"]


def test_a_sweep_writes_each_run_into_the_dataset_as_it_ends(tmp_path, capsys) -> None:
    spec = parse_spec(SPEC.replace('"neuronav/graph/human_a"', '"rewardgym/hcp"'))
    observer = BidsDatasetObserver(tmp_path / "live", trial_duration=4.0)
    run_experiment(spec, workers=2, observers=[observer])
    assert len(observer.written) == 4 and all(p.is_file() for p in observer.written)
    assert_valid(tmp_path / "live")
    assert len(pandas.read_csv(tmp_path / "live" / "participants.tsv", sep="\t")) == 4
    path = tmp_path / "spec.toml"
    path.write_text(SPEC, encoding="utf-8")
    capsys.readouterr()
    store = str(tmp_path / "s.lbug")
    assert main(["--store", store, "experiment", "run", str(path), "--no-progress", "--bids", str(tmp_path / "b")]) == 2
    assert "--bids: agents' runs record no times" in capsys.readouterr().err
    assert not Path(store).exists() and not (tmp_path / "b").exists()  # refused before the sweep


@pytest.mark.slow
def test_a_pilot_study_exports_people_in_seconds_beside_agents(tmp_path) -> None:
    study = tmp_path / "study.toml"
    study.write_text(TWO_STEP_STUDY.format(episodes=3, timeout=0), encoding="utf-8")
    store = tmp_path / "pilot.lbug"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port", str(free_port()),
         "--pilot", "2", "--pilot-seed", "5"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert main(["--store", str(store), "experiment", "run", str(study), "--no-progress", "--workers", "1"]) == 0
    with open_store(store, "r") as opened:
        trials = recorded_trials(opened, "two-step people")
    with pytest.raises(ExportError, match=r"^run 0 \(hybrid\) recorded no times"):
        write_bids(trials, tmp_path / "bids")
    write_bids(trials, tmp_path / "bids", trial_duration=2.0)
    assert_valid(tmp_path / "bids")
    participants = pandas.read_csv(tmp_path / "bids" / "participants.tsv", sep="\t", dtype=str)
    people = participants[participants["agent"] == "participant"]
    assert len(participants) == 5 and len(people) == 2
    assert all(p == "sub-" + label.replace("-", "") for p, label in zip(people["participant_id"], people["label"]))
    for subject in people["participant_id"]:
        events = next((tmp_path / "bids" / subject / "beh").glob("*_events.tsv"))
        table = pandas.read_csv(events, sep="\t", na_values="n/a", keep_default_na=False)
        assert table["duration"].tolist() == table["response_time"].tolist()  # each screen until its key press
        assert table["onset"].iloc[0] == 0.0 and len(set(table["onset"])) == len(table)
        sidecar = json.loads(events.with_suffix(".json").read_text(encoding="utf-8"))
        assert "received_at" in sidecar["onset"]["Description"]  # pilots post no browser clock
