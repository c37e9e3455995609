"""Psych-DS `dataset_description.json` beside the exports (graphtasks.experiments.psychds): the
trials CSV's dataset (`experiment export --psychds DIR`) and the BIDS dataset (`--bids DIR`)
each describe their columns as schema.org JSON-LD, with the keys Psych-DS 0.x requires."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from graphtasks.cli import main
from graphtasks.experiments.psychds import REQUIRED, check_description

SPEC = """
[experiment]
name = "psychds"
tasks = ["rewardgym/two-step"]
seeds = 2

[[agents]]
name = "q"
params = { beta = 2.0 }

[[phases]]
name = "learning"
episodes = 3
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("psychds")
    spec = folder / "psychds.toml"
    spec.write_text(SPEC, encoding="utf-8")
    location = str(folder / "store.lbug")
    assert main(["--store", location, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return location


def required_keys(description: dict) -> None:
    """Psych-DS 0.x's required keys, each of the kind it asks for."""
    assert set(REQUIRED) <= set(description)
    assert description["@context"] == "https://schema.org/" and description["@type"] == "Dataset"
    assert isinstance(description["name"], str) and description["name"]
    assert isinstance(description["description"], str) and description["description"]
    measured = description["variableMeasured"]
    assert all(v["@type"] == "PropertyValue" and v["name"] and v["description"] for v in measured)
    assert check_description(description) == []


def test_the_trials_csv_gets_a_psychds_dataset(store: str, tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    assert main(["--store", store, "experiment", "export", "psychds", "--psychds", str(folder)]) == 0
    description = json.loads((folder / "dataset_description.json").read_text())
    required_keys(description)
    (data,) = (folder / "data").iterdir()
    assert data.name == "study-psychds_table-trials_data.csv"  # no sessions: no events table
    with data.open() as f:
        header = next(csv.reader(f))
        rows = list(csv.reader(f))
    assert [v["name"] for v in description["variableMeasured"]] == header  # every column, in order
    assert len(rows) == 2 * 3 * 2  # 2 runs x 3 episodes x 2 steps
    assert "param_beta" in header and description["name"] == "psychds"


def test_the_bids_dataset_description_is_psychds_too(store: str, tmp_path: Path) -> None:
    folder = tmp_path / "bids"
    assert main(["--store", store, "experiment", "export", "psychds", "--bids", str(folder),
                 "--trial-duration", "2"]) == 0
    description = json.loads((folder / "dataset_description.json").read_text())
    assert description["Name"] == "psychds" and "BIDSVersion" in description  # BIDS's keys are kept
    required_keys(description)
    events = sorted(folder.glob("sub-*/beh/*_events.tsv"))[0]
    header = events.read_text().split("\n", 1)[0].split("\t")
    measured = {v["name"]: v for v in description["variableMeasured"]}
    assert list(measured) == header and measured["onset"]["unitText"] == "s"


def test_a_description_without_a_required_key_is_named() -> None:
    problems = check_description({"@context": "https://schema.org/", "@type": "Thing", "name": "x",
                                  "variableMeasured": [{"name": "rt"}]})
    assert problems == ["description: missing", "@type: expected 'Dataset', got 'Thing'",
                        "variableMeasured[0]: expected a column name or a PropertyValue with a name"]


def test_a_studys_screens_and_breaks_are_an_events_table(tmp_path: Path) -> None:
    from graphtasks.serve.app import StudyServer
    from graphtasks.serve.study import parse_study

    study = parse_study(SPEC.replace("[[agents]]", "[study]\nbreak_every = 1\n\n[[agents]]"))
    store = str(tmp_path / "store.lbug")
    server = StudyServer(study, store)
    try:
        token = server.start_session({})["token"]
        server.record_screen(token, {"kind": "instructions", "onset": 100.0, "duration": 3000.0, "page": 0})
        server.post_trial(token, {"index": 0, "action": 0, "rt": 500.0})
        server.post_trial(token, {"index": 1, "action": 1, "rt": 400.0})
        server.record_screen(token, {"kind": "break", "onset": 9000.0, "duration": 12000.5, "page": 1})
    finally:
        server.close()
    folder = tmp_path / "dataset"
    assert main(["--store", store, "experiment", "export", "psychds", "--psychds", str(folder)]) == 0
    with (folder / "data" / "study-psychds_table-events_data.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["kind"], r["page"], r["trial"], r["onset_ms"], r["duration_ms"]) for r in rows] == [
        ("instructions", "0", "0", "100.0", "3000.0"), ("break", "1", "2", "9000.0", "12000.5")]
    description = json.loads((folder / "dataset_description.json").read_text())
    required_keys(description)
    measured = {v["name"]: v for v in description["variableMeasured"]}
    assert measured["duration_ms"]["unitText"] == "ms" and "kind" in measured and "step" in measured
