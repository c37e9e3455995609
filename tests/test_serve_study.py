"""A study file is an experiment spec: `graphtasks experiment run STUDY.toml` runs the spec's
agents under the study's own name, on the same task version and seeds as the sessions, and
`graphtasks participants stay STUDY` draws the sessions beside them from the one experiment.

A real `graphtasks serve` process on 127.0.0.1, real HTTP, a real store.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments.export import BROWSER_COLUMNS, TRIAL_COLUMNS
from graphtasks.experiments.ids import experiment_uid
from graphtasks.experiments.records import recorded_episodes
from graphtasks.experiments.spec import ExperimentSpecError, parse_spec
from graphtasks.serve.study import StudyError, load_study, parse_study
from tests.test_serve import get, play, start_session
from tests.test_serve import serve as serve  # the fixture

STUDY = """
[experiment]
name = "study with agents"
tasks = ["rewardgym/two-step"]
seeds = [21, 22]
record = "steps"

[[agents]]
name = "hybrid"
label = "model-based"
params = {{ lr = 0.4, beta = 5.0, w = 1.0 }}

[[phases]]
name = "main"
episodes = {episodes}

[study]
title = "A two-step task"
keys = ["f", "j"]
feedback_ms = 100
break_every = 5

[[study.checks]]
question = "Which keys choose?"
options = ["F and J", "The mouse"]
answer = 0
"""


def graphtasks(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line, run in this process (as `graphtasks --store STORE ARGS`): its exit code and output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--store", str(store), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["graphtasks", *args], code, out.getvalue(), err.getvalue())


def test_the_spec_keeps_the_study_table_and_agents_ignore_it():
    spec = parse_spec(STUDY.format(episodes=3), "study.toml")
    assert spec.study["title"] == "A two-step task" and spec.study["checks"][0]["answer"] == 0
    plain = parse_spec(STUDY.format(episodes=3).split("[study]")[0], "study.toml")
    assert spec == plain and not plain.study  # the same experiment for agents (the study table takes no part)
    with pytest.raises(ExperimentSpecError, match=r"^study.toml, line 1: study: expected a table, got 5$"):
        parse_spec('study = 5\n' + STUDY.format(episodes=3).split("[study]")[0], "study.toml")


def test_sessions_follow_the_runs_of_the_files_agents():
    assert parse_study(STUDY.format(episodes=3), "study.toml").agent_runs == 2  # 1 agent x 2 seeds
    no_agents = STUDY.format(episodes=3).replace('[[agents]]\nname = "hybrid"\nlabel = "model-based"\n', "")
    no_agents = no_agents.replace("params = { lr = 0.4, beta = 5.0, w = 1.0 }\n", "")
    study = parse_study(no_agents, "study.toml")
    assert [a.name for a in study.spec.agents] == ["random"] and study.agent_runs == 0  # pilots only: no runs kept
    assert load_study("rewardgym/two-step").agent_runs == 0


def test_break_every_is_a_number_of_trials():
    assert parse_study(STUDY.format(episodes=3), "study.toml").break_every == 5
    assert parse_study(STUDY.format(episodes=3).replace("break_every = 5\n", ""), "study.toml").break_every == 0
    for bad in ("-1", '"5"', "true", "2.5"):
        with pytest.raises(StudyError, match=r"^study.toml: study.break_every: expected a number of trials"):
            parse_study(STUDY.format(episodes=3).replace("break_every = 5", f"break_every = {bad}"), "study.toml")


@pytest.mark.slow
def test_agents_run_under_the_study_name_beside_its_sessions(serve, tmp_path):
    """Sessions first, then `experiment run` of the same file: the agents' runs are 0..n-1 (the
    sessions, numbered after them, are neither skipped for them nor overwritten), on the task
    version and seeds the sessions got; a second `experiment run` has nothing to do; the figure
    is drawn from the one experiment."""
    server = serve(STUDY.format(episodes=12))
    token = start_session(server, pid="someone")
    status, view = get(f"{server.url}/api/s/{token}")
    assert status == 200 and view["study"]["break_every"] == 5  # the page shows a break after every 5 rounds
    assert len(play(server, token)) == 24
    server.stop()
    store, study = server.store, server.study
    result = graphtasks(store, "experiment", "run", study, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "2 runs" in result.stdout
    with open_store(store, "r") as s:  # the agents' runs are chunks, the session Episode nodes: read alike
        episodes = recorded_episodes(s, "study with agents")
        runs = [[*row, sum(e["run"] == row[0] for e in episodes), sorted({e["task_hash"] for e in episodes
                                                                        if e["run"] == row[0]})]
                for row in s.cypher("MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.agent, r.label, r.seed, "
                                    "r.status ORDER BY r.index", {"uid": experiment_uid("study with agents")}).rows]
    assert [r[:5] for r in runs] == [
        [0, "hybrid", "model-based", 21, "completed"], [1, "hybrid", "model-based", 22, "completed"],
        [2, "participant", runs[2][2], 21, "completed"]]
    assert runs[2][2].startswith("p-") and [r[5] for r in runs] == [12, 12, 12]
    assert len({h for r in runs for h in r[6]}) == 1  # one task version, by its hash
    again = graphtasks(store, "experiment", "run", study, "--no-progress")
    assert again.returncode == 0 and "runs:" not in again.stdout, again.stdout  # nothing left to run
    figure = tmp_path / "stay.png"
    result = graphtasks(store, "participants", "stay", "study with agents", "-o", str(figure))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("model-based (2 runs): rewarded_common ")
    assert lines[1].startswith("people (1 runs): rewarded_common ")
    assert lines[2] == f"wrote {figure}" and figure.read_bytes()[:4] == b"\x89PNG"
    # the trials exported with what the browser measured (people's trials) beside the agents' (empty)
    result = graphtasks(store, "experiment", "export", "study with agents", "--trials")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    settings = ("param_beta", "param_lr", "param_w")  # the agent's settings, a column each
    at = TRIAL_COLUMNS.index("params")
    assert tuple(rows[0]) == TRIAL_COLUMNS[:at] + settings + TRIAL_COLUMNS[at + 1:] + BROWSER_COLUMNS
    assert len(rows) == 3 * 24
    people = [r for r in rows if r["run"] == "2"]
    assert [float(r["rt"]) for r in people] == [400.0 + i for i in range(24)]  # as play() posted them
    assert all(r["shown_ms"] == "1000.0" and r["key"] and r["received_at"] and float(r["server_rt"]) >= 0
               for r in people)
    assert all(r[c] == "" for r in rows if r["run"] != "2" for c in BROWSER_COLUMNS)
    from graphtasks.experiments.api import Experiment

    frame = Experiment.from_file(study, store).results(store, trials=True)  # the Python API: the same columns
    assert tuple(frame.columns) == TRIAL_COLUMNS + BROWSER_COLUMNS and len(frame) == 3 * 24
    assert frame.loc[frame["run"] == 2, "rt"].tolist() == [400.0 + i for i in range(24)]
    parquet = tmp_path / "trials.parquet"
    result = graphtasks(store, "experiment", "export", "study with agents", "--trials", "--format", "parquet",
                        "-o", str(parquet))
    assert result.returncode == 0, result.stderr
    import pyarrow.parquet

    table = pyarrow.parquet.read_table(parquet).to_pydict()
    assert table["rt"][48:] == [400.0 + i for i in range(24)] and table["rt"][:48] == [None] * 48
    # BIDS: every events file has a sidecar describing each of its columns; people's response times in seconds
    bids = tmp_path / "bids"
    result = graphtasks(store, "experiment", "export", "study with agents", "--bids", str(bids),
                        "--trial-duration", "2")  # for the agents' runs: the person's times are recorded
    assert result.returncode == 0 and result.stdout.startswith("3 events files"), result.stderr
    events = sorted(bids.glob("sub-*/beh/*_events.tsv"))
    assert [e.with_suffix(".json").is_file() for e in events] == [True] * 3
    for path in events:
        table_rows = list(csv.DictReader(path.open(encoding="utf-8"), delimiter="\t"))
        sidecar = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        assert list(sidecar) == list(table_rows[0]) and all(v["Description"] for v in sidecar.values())
    (person_events,) = bids.glob("sub-p*/beh/*_events.tsv")  # the person's pseudonym, letters and digits
    person = list(csv.DictReader(person_events.open(encoding="utf-8"), delimiter="\t"))
    assert [float(r["response_time"]) for r in person] == [(400.0 + i) / 1000 for i in range(24)]
    agent = list(csv.DictReader(next(bids.glob("sub-sim*/beh/*_events.tsv")).open(encoding="utf-8"),
                                delimiter="\t"))
    assert {r["response_time"] for r in agent} == {"n/a"}
