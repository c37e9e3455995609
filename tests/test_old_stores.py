"""A store written before records were chunks (Episode and Trial nodes, `tests/data/stores/`)
is read, exported, resumed and fitted by today's code: its node records and the chunks a
resume adds are one experiment to every reader."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import load_spec, run_experiment
from graphtasks.experiments.export import recorded_trials
from graphtasks.experiments.records import record_sources, recorded_episodes

DATA = Path(__file__).parent / "data" / "stores"
NAME = "old-release"


@pytest.fixture
def old_store(tmp_path: Path) -> str:
    """A copy of the old store (a test may write to it)."""
    path = tmp_path / "old-release.lbug"
    shutil.copyfile(DATA / "old-release.lbug", path)
    return str(path)


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("rt", "shown_ms", "pressed_ms", "key", "timeouts", "server_rt",
                                                      "received_at")} for r in rows]


def test_an_old_store_is_read_and_exported_as_before(old_store: str, capsys) -> None:
    with open_store(old_store, "r") as store:
        episodes = recorded_episodes(store, NAME)
        assert store.cypher("MATCH (c:Chunk) RETURN count(c)").rows == [[0]]  # nothing but nodes
        assert store.cypher("MATCH (e:Episode) RETURN count(e)").rows == [[len(episodes)]]
    assert sorted({e["run"] for e in episodes}) == [0, 2] and len(episodes) == 2 * 16
    assert main(["--store", old_store, "experiment", "show", NAME]) == 0
    assert "completed" in capsys.readouterr().out
    assert main(["--store", old_store, "experiment", "export", NAME]) == 0
    exported = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [float(r["return"]) for r in exported] == [e["return"] for e in episodes]


@pytest.mark.slow
def test_an_old_store_resumes_with_chunks_and_reads_as_one_experiment(old_store: str, capsys) -> None:
    spec = load_spec(DATA / "old-release.toml")
    assert main(["--store", old_store, "experiment", "run", NAME, "--no-progress", "--workers", "1"]) == 0
    assert "2 run(s) already recorded, 2 to go" in capsys.readouterr().out
    # the old runs were played per agent (as that release did), the resumed ones as batches
    per_agent = run_experiment(spec, workers=1, batched=False)
    batched = run_experiment(spec, workers=1)
    expected = [r for r in per_agent.rows if r["run"] in (0, 2)] + [r for r in batched.rows if r["run"] in (1, 3)]
    expected_trials = ([t for t in per_agent.trials if t["run"] in (0, 2)]
                       + [t for t in batched.trials if t["run"] in (1, 3)])
    with open_store(old_store, "r") as store:
        assert recorded_episodes(store, NAME) == sorted(expected, key=lambda r: (r["run"], r["phase_index"],
                                                                                 r["episode"]))
        trials = recorded_trials(store, NAME)
        assert [(t["run"], t["phase_index"], t["episode"], t["step"], t["action"], t["reward"]) for t in trials] == [
            (t["run"], t["phase_index"], t["episode"], t["step"], t["action"], t["reward"])
            for t in sorted(expected_trials, key=lambda t: (t["run"], t["phase_index"], t["episode"], t["step"]))]
        assert store.cypher("MATCH (e:Episode) RETURN count(e)").rows == [[32]]  # the old nodes, untouched
        scanned = store.cypher("LOAD FROM $episodes RETURN count(*)", sources=record_sources(store)).rows
        assert scanned == [[32]]  # the two resumed runs: chunks
    assert main(["--store", old_store, "experiment", "run", NAME, "--no-progress"]) == 0
    assert "4 run(s) already recorded, 0 to go" in capsys.readouterr().out


@pytest.mark.slow
def test_an_old_store_is_fitted_before_and_after_a_resume(old_store: str, capsys) -> None:
    """Run 0 (two-step, Trial nodes) is fitted as before; after a resume, run 1 (the other
    two-step seed, a trial chunk) is fitted beside it."""
    assert main(["--store", old_store, "fit", "run", NAME, "--model", "q", "--starts", "2"]) == 0
    with open_store(old_store, "r") as store:
        assert store.cypher("MATCH (f:Fit)-[:FITS]->(r:Run) RETURN r.index").rows == [[0]]
    assert main(["--store", old_store, "experiment", "run", NAME, "--no-progress", "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["--store", old_store, "fit", "run", NAME, "--model", "q", "--starts", "2"]) == 0
    out = capsys.readouterr().out
    with open_store(old_store, "r") as store:
        fitted = store.cypher("MATCH (f:Fit)-[:FITS]->(r:Run) RETURN r.index, f.choices ORDER BY r.index").rows
    assert [run for run, _ in fitted] == [0, 1], out
    assert all(choices == 32 for _, choices in fitted)  # 16 trials of two stages each
