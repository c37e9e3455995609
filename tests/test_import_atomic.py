"""`fit import` killed with SIGKILL at any moment leaves nothing of the import or all of it.

Issue 43: killing `fit import` mid-way left episodes and trials linked to no run (4 of 6
kills) until the same import ran again. Here a real `graphtasks fit import` process on three
participants' files (about 4,000 choices) is killed at four growing delays spread over the
time one uninterrupted import takes; after each kill every Episode and Trial in the store is
linked to a Run, and the store holds either nothing of the import or all of it. Then the import
is run to its end and its records equal those of an uninterrupted import.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from graphtasks.fitting import simulate
from graphtasks.fitting.behaviour import events_text

TWO_STEP = "rewardgym/two-step"
PARTICIPANTS = 3
TRIALS = 700  # two choices each: 1,400 choices per file
KILLS = 4

RECORDS = {
    "runs": "MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.label, r.status, r.task ORDER BY r.index",
    "participants": "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid "
    "RETURN p.participant_id, r.index ORDER BY r.index",
    "episodes": "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE x.uid = $uid "
    "RETURN r.index, e.index, e.reward, e.length, e.start_state ORDER BY r.index, e.index",
    "trials": "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
    "RETURN r.index, e.index, t.step, t.state, t.action, t.reward, t.next_state "
    "ORDER BY r.index, e.index, t.step",
}


def command(store: Path, files: list[Path]) -> list[str]:
    return [sys.executable, "-m", "graphtasks", "--store", str(store), "fit", "import", "lab", *map(str, files)]


def records(store: Path) -> dict[str, list[list[object]]]:
    with open_store(store, "r") as opened:
        return {what: opened.cypher(query, {"uid": experiment_uid("lab")}).rows for what, query in RECORDS.items()}


def counts(store: Path) -> dict[str, int]:
    """Every record of the import, and those linked to a run (episodes) or to a run's episode (trials)."""
    queries = {
        label: f"MATCH (n:{label}) WHERE n.owner = $uid RETURN count(n)"
        for label in ("Experiment", "Participant", "Run", "Episode", "Trial")
    }
    queries["linked episodes"] = (
        "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE e.owner = $uid RETURN count(DISTINCT e)"
    )
    queries["linked trials"] = (
        "MATCH (r:Run)-[:HAS_EPISODE]->(:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE t.owner = $uid RETURN count(DISTINCT t)"
    )
    if not store.exists():  # killed before it made the store
        return dict.fromkeys(queries, 0)
    uid = {"uid": experiment_uid("lab")}
    with open_store(store, "r") as opened:
        return {what: opened.cypher(query, uid).rows[0][0] for what, query in queries.items()}


@pytest.mark.slow
def test_an_import_killed_at_any_moment_leaves_nothing_unlinked(tmp_path):
    files = []
    for i in range(PARTICIPANTS):
        path = tmp_path / f"sub-P{i}_task-twostep_events.tsv"
        path.write_text(events_text(simulate(TWO_STEP, "q", {"lr": 0.3 + 0.1 * i, "beta": 4.0}, TRIALS, seed=i), "n/a"))
        files.append(path)
    reference = tmp_path / "reference.lbug"
    started = time.monotonic()
    subprocess.run(command(reference, files), check=True, capture_output=True, timeout=300)
    took = time.monotonic() - started
    whole = counts(reference)
    assert whole["Trial"] == PARTICIPANTS * TRIALS * 2 and whole["Episode"] == PARTICIPANTS * TRIALS
    expected = records(reference)

    store = tmp_path / "killed.lbug"
    seen = []
    for k in range(KILLS):
        delay = took * (0.5 + 0.7 * k / (KILLS - 1))  # from start-up to past the commit
        process = subprocess.Popen(command(store, files), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        found = counts(store)
        seen.append((round(delay, 2), process.returncode, found["Trial"]))
        assert found["linked episodes"] == found["Episode"], (found, seen)
        assert found["linked trials"] == found["Trial"], (found, seen)
        # an import of fewer than IMPORT_BATCH choices is one transaction: all of it or nothing
        assert found in ({label: 0 for label in found}, whole), (found, seen)
    assert any(code == -signal.SIGKILL for _, code, _ in seen), f"no import was killed: {seen}"
    print("kills (delay s, exit code, trials found):", seen)
    subprocess.run(command(store, files), check=True, capture_output=True, timeout=300)
    assert counts(store) == whole
    assert records(store) == expected, seen


def test_an_import_larger_than_one_transaction_records_the_same(tmp_path, monkeypatch):
    """Above IMPORT_BATCH choices the files go a few per transaction, the experiment last: the
    records are those of the same import in one transaction."""
    from graphtasks.fitting import records as fitting_records

    files = []
    for i in range(PARTICIPANTS):
        path = tmp_path / f"sub-P{i}_task-twostep_events.tsv"
        path.write_text(events_text(simulate(TWO_STEP, "q", {"lr": 0.5, "beta": 3.0}, 40, seed=i), "n/a"))
        files.append(path)
    with open_store(tmp_path / "one.lbug") as store:
        fitting_records.import_behaviour(store, "lab", files)
    monkeypatch.setattr(fitting_records, "IMPORT_BATCH", 100)  # 80 choices a file: one file per transaction
    with open_store(tmp_path / "split.lbug") as store:
        fitting_records.import_behaviour(store, "lab", files)
    assert counts(tmp_path / "split.lbug") == counts(tmp_path / "one.lbug")
    assert records(tmp_path / "split.lbug") == records(tmp_path / "one.lbug")
