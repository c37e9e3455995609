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
    assert data.name == "study-psychds_data.csv"
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
