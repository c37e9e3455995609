"""Experiment records under faults: ids that cannot collide (and the migration of old ones), an
experiment deleted while it runs, a driver killed with kill -9 (no orphan workers)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphtasks.experiments.ids as ids
from graphstore import open_store
from graphstore.rdf import store_to_rdf
from graphtasks.cli import main
from graphtasks.experiments import Experiment, parse_spec
from graphtasks.experiments.observers import RunOutcome
from graphtasks.experiments.records import (
    ExperimentGone,
    record_experiment,
    record_runs,
    record_sources,
    recorded_episodes,
)
from graphtasks.experiments.runs import cells
from graphtasks.experiments.schema import RECORD_LABELS
from graphtasks.experiments.sweep import run_cell
from graphtasks.experiments.versions import prepare_versions

SPEC = """
[experiment]
name = "{name}"
tasks = ["neuronav/grid/t_maze/micro"]
seeds = {seeds}

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = {episodes}
max_episode_steps = 20
{conditions}
"""
CONDITION = """
[[conditions]]
name = "c"
[[conditions]]
name = "d"
"""


def spec_text(name: str, seeds: int = 2, episodes: int = 3, conditions: str = "") -> str:
    return SPEC.format(name=name, seeds=seeds, episodes=episodes, conditions=conditions)


def run(name: str, store: str, **kw) -> None:
    text = spec_text(name, **kw)
    Experiment(parse_spec(text), text).run(store=store, workers=1)


@pytest.mark.slow
def test_names_with_slashes_do_not_share_records(tmp_path: Path) -> None:
    """`coll/c` and condition `c` of `coll` were one Phase; `a/run/0` and run 0 of `a` one IRI."""
    store = str(tmp_path / "s.lbug")
    run("coll", store, conditions=CONDITION)
    run("coll/c", store)
    run("a", store)
    run("a/run/0", store)
    with open_store(store, "r") as opened:
        phases = opened.cypher("MATCH (p:Phase) RETURN p.uid ORDER BY p.uid").rows
        assert len(phases) == 5 and len({p[0] for p in phases}) == 5  # coll: c and d; coll/c; a; a/run/0: one each
    with open_store(store, "w") as opened:
        opened.delete_shared(ids.experiment_uid("coll/c"), RECORD_LABELS)
    with open_store(store, "r") as opened:
        orphans = opened.cypher(
            "MATCH (e:Episode) WHERE e.experiment = 'coll' AND NOT EXISTS { MATCH (e)-[:IN_PHASE]->(:Phase) } "
            "RETURN count(e)"
        ).rows[0][0]
        assert orphans == 0
        graph = store_to_rdf(opened, task_ids=[], shared=True)
    subjects = {str(s) for s in graph.subjects()}
    experiment_iri = next(s for s in subjects if s.endswith("experiment/a%252Frun%252F0"))
    run_iri = next(s for s in subjects if s.endswith("experiment/a/run/0"))
    assert experiment_iri != run_iri


@pytest.mark.slow
def test_records_of_an_earlier_version_are_migrated(tmp_path: Path, monkeypatch, capsys) -> None:
    """An experiment named with a slash, recorded with the unescaped ids of earlier versions:
    commands say what to run, `experiment migrate` rewrites the ids and nothing else."""
    store = str(tmp_path / "s.lbug")
    monkeypatch.setattr(ids, "part", lambda name: name)  # the ids earlier versions wrote
    run("lab/a", store)
    monkeypatch.undo()
    with open_store(store, "r") as opened:
        episodes = "LOAD FROM $episodes RETURN reward, length, run, phase_index, episode"
        before = opened.cypher(episodes, sources=record_sources(opened)).rows
        assert opened.cypher("MATCH (x:Experiment) RETURN x.uid").rows == [["experiment/lab/a"]]
    assert main(["--store", store, "experiment", "show", "lab/a"]) == 2
    assert "run `graphtasks experiment migrate`" in capsys.readouterr().err
    assert main(["--store", store, "experiment", "migrate"]) == 0
    assert "lab/a: " in capsys.readouterr().out
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (x:Experiment) RETURN x.uid").rows == [["experiment/lab%2Fa"]]
        after = opened.cypher(episodes, sources=record_sources(opened)).rows
        linked = opened.cypher(  # the chunks and runs were renamed together: still linked
            "MATCH (x:Experiment)-[:HAS_CHUNK]->(c:Chunk)-[:HOLDS_RUN]->(r:Run)<-[:HAS_RUN]-(x) "
            "WITH DISTINCT c RETURN sum(c.rows)"
        )
        assert linked.rows[0][0] == len(after) == 6
        assert len(recorded_episodes(opened, "lab/a")) == 6
    assert sorted(after) == sorted(before)
    assert main(["--store", store, "experiment", "show", "lab/a"]) == 0
    assert main(["--store", store, "experiment", "migrate"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out


def test_nothing_is_written_for_an_experiment_deleted_meanwhile(tmp_path: Path) -> None:
    """The pattern that crashed LadybugDB: finished runs written after their experiment was
    deleted. Now one error and no record, on both write paths (new and known runs)."""
    text = spec_text("gone", seeds=4)
    spec = parse_spec(text)
    every = cells(spec)
    versions = prepare_versions(spec)
    outcome = [RunOutcome(c, "completed", run_cell(spec, c, versions), None, "a", "b") for c in every]
    location = str(tmp_path / "s.lbug")
    with open_store(location, "w") as store:
        record_experiment(store, spec, text)
        record_runs(store, spec, outcome[:1], [(every[1], "a")])
    with open_store(location, "w") as store:
        store.delete_shared(ids.experiment_uid("gone"), RECORD_LABELS)
    for finished in ([outcome[1]], [outcome[2]]):  # a run marked running before, and a new one
        with open_store(location, "w") as store:
            with pytest.raises(ExperimentGone, match="'gone' was deleted .* while it ran"):
                record_runs(store, spec, finished)
    with open_store(location, "r") as store:
        assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[0]]
        assert store.cypher("MATCH (e:Episode) RETURN count(e)").rows == [[0]]


def recorded_count(store, name: str) -> tuple[int, int]:
    """An experiment's recorded episodes, and how many distinct (run, phase, episode) they are."""
    rows = recorded_episodes(store, name)
    return len(rows), len({(r["run"], r["phase_index"], r["episode"]) for r in rows})


def start_sweep(tmp_path: Path, store: str, name: str = "long", stdout=subprocess.PIPE) -> subprocess.Popen:
    spec = tmp_path / f"{name}.toml"
    spec.write_text(spec_text(name, seeds=12, episodes=4000).replace("t_maze/micro", "t_maze/small"))
    # per agent: the sweep must still be running when the test acts on it (as batches these runs end in seconds)
    command = [sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(spec),
               "--workers", "2", "--no-progress", "--per-agent"]
    return subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True)


def wait_until_running(store: str, driver: subprocess.Popen) -> None:
    """Until the driver has recorded its experiment and its workers play (it forks them after
    recording it): looked at without opening the store, so a loaded machine's slow command
    starts cannot let the sweep end first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None:
        if children(driver.pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"the sweep's workers never started (driver exit code {driver.poll()})")


def children(pid: int) -> list[int]:
    listed = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in listed.split()]


def alive(pid: int) -> bool:
    state = Path(f"/proc/{pid}/stat")
    return state.exists() and state.read_text().split()[2] != "Z"


@pytest.mark.slow
def test_an_experiment_being_run_is_not_deleted_under_it_unless_forced(tmp_path: Path) -> None:
    store = str(tmp_path / "s.lbug")
    driver = start_sweep(tmp_path, store)
    wait_until_running(store, driver)
    refused = subprocess.run([sys.executable, "-m", "graphtasks", "--store", store, "experiment", "delete", "long"],
                             capture_output=True, text=True)
    assert refused.returncode == 2 and "is running" in refused.stderr and "--force" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    forced = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", store, "experiment", "delete", "long", "--force"],
        capture_output=True, text=True,
    )
    assert forced.returncode == 0, forced.stderr
    out, err = driver.communicate(timeout=300)
    assert driver.returncode == 2, (out, err)  # not a segfault (-11), not a success
    assert err.strip().splitlines() == [
        f"graphtasks: error: experiment 'long' was deleted from {store!r} while it ran; "
        "the runs that ended since are not recorded"
    ]
    with open_store(store, "r") as opened:
        for label in ("Experiment", "Run", "Episode"):
            assert opened.cypher(f"MATCH (n:{label}) RETURN count(n)").rows == [[0]], label


@pytest.mark.slow
def test_a_killed_driver_takes_its_workers_with_it(tmp_path: Path) -> None:
    """kill -9 of the driver: its workers end too, so `graphtasks experiment run ... | cat` ends;
    the runs the killed driver left running do not stop a delete, and the same command resumes."""
    store = str(tmp_path / "s.lbug")
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    driver = start_sweep(tmp_path, store, stdout=reader.stdin)
    reader.stdin.close()  # the driver and its workers hold the pipe's writing end now
    wait_until_running(store, driver)
    workers = children(driver.pid)
    assert workers
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=30)
    reader.wait(timeout=30)  # every writer of the pipe is gone
    deadline = time.monotonic() + 10
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(w) for w in workers)
    resumed = subprocess.run([sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run",
                              str(tmp_path / "long.toml"), "--workers", "2", "--no-progress"],
                             capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    with open_store(store, "r") as opened:
        assert opened.cypher("MATCH (r:Run) RETURN r.status, count(r)").rows == [["completed", 12]]


@pytest.mark.slow
def test_eight_drivers_on_one_store_each_wait_their_turn_and_record_everything(tmp_path: Path) -> None:
    """Eight `experiment run` drivers at once, two of them of one spec: every driver ends well,
    every run is recorded once, and no experiment is left empty."""
    store = str(tmp_path / "s.lbug")
    specs = []
    for i in range(7):
        path = tmp_path / f"e{i}.toml"
        path.write_text(spec_text(f"e{i}", seeds=6, episodes=300))
        specs.append(path)
    specs.append(specs[0])  # two identical drivers
    drivers = [
        subprocess.Popen([sys.executable, "-m", "graphtasks", "--store", store, "experiment", "run", str(path),
                          "--workers", "1", "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for path in specs
    ]
    for driver in drivers:
        out, err = driver.communicate(timeout=600)
        assert driver.returncode == 0, err
    with open_store(store, "r") as opened:
        runs = dict(opened.cypher(
            "MATCH (x:Experiment) OPTIONAL MATCH (x)-[:HAS_RUN]->(r:Run) WHERE r.status = 'completed' "
            "RETURN x.name, count(r)"
        ).rows)
        episodes = [[name, *(recorded_count(opened, name))] for name, in opened.cypher(
            "MATCH (x:Experiment) RETURN x.name").rows]
    assert runs == {f"e{i}": 6 for i in range(7)}
    assert sorted(episodes) == [[f"e{i}", 6 * 300, 6 * 300] for i in range(7)]
