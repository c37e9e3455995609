"""Agents that answer with response times (issue 38): an [[agents]] table's `response` ("ddm",
"lba") chooses and times each choice from the agent's values, in `graphtasks experiment run`,
the same code as fitting's simulated participants (`graphtasks.responses`); the records keep
an rt per trial (ms), `graphtasks fit run` fits an RT model to them, and a bad setting is
refused naming its line."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments import ExperimentSpecError, load_spec, parse_spec, run_experiment
from graphtasks.experiments.chunks import read_chunk, write_chunk
from graphtasks.experiments.records import chunk_table
from graphtasks.fitting import load_run, simulate

SPEC = """\
[experiment]
name = "two-step rts"
tasks = ["rewardgym/two-step"]
seeds = [3, 4]

[[agents]]
name = "q"
response = "ddm"
params = {{ lr = 0.5, gamma = 1.0, drift_scale = 3.0, threshold = 1.5, t0 = 0.3 }}

[[phases]]
name = "learning"
episodes = {episodes}
"""


def recorded_rts(store: str) -> list[float]:
    with open_store(store, "r") as opened:
        table = chunk_table(opened, "two-step rts", "trials", ["rt"])
    return table.column("rt").to_pylist()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("rts")
    spec = folder / "rts.toml"
    spec.write_text(SPEC.format(episodes=60), encoding="utf-8")
    store = str(folder / "one.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return spec, store


@pytest.mark.slow
def test_a_ddm_agent_records_an_rt_per_trial_the_same_with_any_number_of_workers(recorded, tmp_path, capsys) -> None:
    spec, store = recorded
    rts = recorded_rts(store)
    assert len(rts) == 2 * 60 * 2  # two runs, 60 two-step trials, both stages timed
    assert all(rt is not None and rt > 300.0 for rt in rts)  # ms, past the non-decision time
    assert 500 < float(np.median(rts)) < 3000
    other = str(tmp_path / "two.lbug")
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # said on every sweep, not only the first of this process
        assert main(["--store", other, "experiment", "run", str(spec), "--no-progress", "--workers", "2"]) == 0
    assert "plays per agent (the batched lanes draw no response times)" in capsys.readouterr().err
    assert recorded_rts(other) == rts
    # the same code as fitting's simulated participant of that seed: the same choices and times
    settings = {"lr": 0.5, "gamma": 1.0, "rt": "ddm", "drift_scale": 3.0, "threshold": 1.5, "t0": 0.3, "z": 0.5}
    simulated = simulate("rewardgym/two-step", "q", settings, trials=60, seed=3, store=":memory:")
    with open_store(store, "r") as opened:
        run = load_run(opened, "two-step rts", 0)
    assert run.rts is not None and simulated.rts is not None
    assert np.allclose(run.rts, simulated.rts) and np.array_equal(run.actions, simulated.actions)
    assert run.truth["rt"] == "ddm" and run.truth["threshold"] == 1.5  # the Run records its response model


@pytest.mark.slow
def test_fit_run_recovers_the_response_model_from_the_agents_records(recorded, capsys) -> None:
    _, store = recorded
    assert main(["--store", store, "fit", "run", "two-step rts", "--model", "q-ddm", "--runs", "0",
                 "--no-progress", "--no-record", "--workers", "1", "--format", "json"]) == 0
    import json

    (row,) = json.loads(capsys.readouterr().out)
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    assert 1.5 < params["drift_scale"] < 6.0
    assert 1.2 < params["threshold"] < 1.9
    assert 0.2 < params["t0"] < 0.4


def test_without_chunks_each_trial_row_keeps_its_rt_in_ms() -> None:
    trials = run_experiment(parse_spec(SPEC.format(episodes=3)), workers=1).trials
    assert len(trials) == 2 * 3 * 2 and all(t["rt"] > 300.0 for t in trials)


@pytest.mark.parametrize(("old", "new", "field", "why"), [
    ("threshold = 1.5", "threshold = -1.0", "line 9: agents[0].params.threshold", "threshold must be > 0"),
    ('response = "ddm"', 'response = "wiener"', "line 8: agents[0].response", "expected one of 'ddm', 'lba'"),
    ("t0 = 0.3", "t0 = 0.3, start_range = 0.5", "line 9: agents[0].params.start_range",
     "nor its ddm response model (drift_scale, threshold, t0, z)"),
    ('"q"\nresponse = "ddm"\nparams = { lr = 0.5, gamma = 1.0,', '"explorer"\nresponse = "ddm"\nparams = {',
     "line 8: agents[0].response", "the explorer agent has no values(state)"),
])
def test_a_bad_response_setting_is_refused_naming_its_line(tmp_path, old, new, field, why) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SPEC.format(episodes=3).replace(old, new), encoding="utf-8")
    with pytest.raises(ExperimentSpecError) as caught:
        load_spec(path)
    message = str(caught.value)
    assert field in message and why in message and "\n" not in message


def test_a_greedy_phase_is_refused_for_an_agent_with_a_response_model() -> None:
    with pytest.raises(ExperimentSpecError, match=r"phases\[0\].greedy: agent 'q' chooses through its response model"):
        parse_spec(SPEC.format(episodes=3) + "greedy = true\n")


def test_a_chunk_without_rts_reads_as_nulls_beside_one_with_them(tmp_path) -> None:
    row = {"experiment": ["x"], "run": [0], "phase_index": [0], "episode": [0], "step": [0], "state": [0],
           "action": [1], "reward": [1.0], "next_state": [2], "p_action": [0.5], "condition": [None],
           "task_version": ["rewardgym/two-step"]}
    old = write_chunk(tmp_path, "x", "trials", row)
    timed = write_chunk(tmp_path, "x", "trials", {**row, "run": [1], "rt": [512.5]})
    assert read_chunk(tmp_path, old.file, 1, ["run", "rt"]).column("rt").to_pylist() == [None]
    assert read_chunk(tmp_path, timed.file, 1, ["rt"]).column("rt").to_pylist() == [512.5]
    assert "rt" not in read_chunk(tmp_path, old.file).column_names


@pytest.mark.slow
def test_a_query_scans_chunks_with_and_without_rts_together(recorded, tmp_path, capsys) -> None:
    spec, store = recorded
    plain = tmp_path / "plain.toml"
    plain.write_text(SPEC.format(episodes=5).replace("two-step rts", "plain").replace('response = "ddm"\n', "")
                     .replace(", drift_scale = 3.0, threshold = 1.5, t0 = 0.3", ""), encoding="utf-8")
    assert main(["--store", store, "experiment", "run", str(plain), "--no-progress", "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["--store", store, "cypher", "LOAD FROM $trials RETURN experiment, count(*), count(rt) ORDER BY "
                 "experiment", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["experiment,COUNT_STAR(),COUNT(rt)", "plain,20,0",
                                                    "two-step rts,240,240"]


STUDY = """
[experiment]
name = "timed pilots"
tasks = ["rewardgym/two-step"]
seeds = [1]
record = "steps"

[[agents]]
name = "q"
response = "ddm"
params = { lr = 0.5, drift_scale = 3.0, threshold = 1.5, t0 = 2.0 }

[[phases]]
name = "main"
episodes = 4

[study]
title = "A two-step task"
keys = ["f", "j"]
"""


@pytest.mark.slow
def test_a_pilot_of_an_agent_with_a_response_model_posts_its_drawn_times(tmp_path) -> None:
    import socket
    import subprocess
    import sys

    study = tmp_path / "study.toml"
    study.write_text(STUDY, encoding="utf-8")
    store = tmp_path / "pilot.lbug"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port",
                             str(port), "--pilot", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with open_store(str(store), "r") as opened:
        rts = [r[0] for r in opened.cypher("MATCH (p:Participant)-[:PERFORMED]->(:Run)-[:HAS_EPISODE]->(:Episode)"
                                           "-[:HAS_TRIAL]->(t:Trial) RETURN t.rt").rows]
    assert len(rts) == 8 and all(rt > 2000.0 for rt in rts)  # t0 = 2 s: not the log-normal's 600 ms


def test_an_lba_agent_races_the_four_options_of_a_bandit() -> None:
    text = SPEC.format(episodes=5).replace("rewardgym/two-step", "decision/restless-bandit").replace(
        'response = "ddm"', 'response = "lba"').replace("threshold = 1.5", "threshold = 0.6")
    trials = run_experiment(parse_spec(text), workers=1).trials
    assert len(trials) == 2 * 5 and all(t["rt"] > 300.0 for t in trials)
    assert {t["action"] for t in trials} <= {0, 1, 2, 3}
