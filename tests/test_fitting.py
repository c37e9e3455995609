"""Fitting agents to behaviour: likelihoods (vectorised = replayed = worked by hand), maximum
likelihood, events files, fits in the store, parameter and model recovery, the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.experiments.api import delete_records
from graphtasks.experiments.records import ExperimentExists, chunk_table
from graphtasks.fitting import (
    MODELS,
    BehaviourError,
    Choices,
    FitModel,
    fit,
    load_run,
    log_likelihood,
    read_events,
    replay_log_likelihood,
    simulate,
    task_shape,
)
from graphtasks.fitting.behaviour import events_text
from graphtasks.fitting.figures import plot_parameter_recovery
from graphtasks.fitting.records import fit_runs, import_behaviour, record_fits, recorded_fits
from graphtasks.fitting.recovery import model_recovery, parameter_recovery
from graphtasks.fitting.vectorised import vectorised_log_likelihood

TWO_STEP = "rewardgym/two-step"


@pytest.fixture(scope="module")
def shape():
    return task_shape(TWO_STEP)


@pytest.mark.parametrize(
    "agent, simulated, tried",
    [
        ("q", {"lr": 0.3, "beta": 3.0, "gamma": 1.0}, {"lr": 0.6, "beta": 1.5, "gamma": 0.9, "q_init": 0.2}),
        ("q", {"lr": 0.8, "beta": 8.0}, {"lr": 0.05, "beta": 12.0}),
        ("hybrid", {"lr": 0.4, "beta": 4.0, "w": 0.6}, {"lr": 0.2, "beta": 2.0, "w": 0.3, "lam": 0.9}),
        ("hybrid", {"lr": 0.2, "beta": 6.0, "w": 1.0, "perseveration": 0.3}, {"lr": 0.7, "beta": 3.0, "w": 0.0,
                                                                             "perseveration": -0.4, "lam": 0.0}),
    ],
)
def test_vectorised_likelihood_equals_the_replay(agent, simulated, tried, shape) -> None:
    choices = simulate(TWO_STEP, agent, simulated, 150, seed=3)
    # a test phase in the middle: the replay stops learning there, and so must the vectorised form
    learn = np.ones(len(choices), dtype=bool)
    learn[100:160] = False
    choices = Choices(choices.task_id, choices.states, choices.actions, choices.rewards, choices.next_states,
                      choices.ends, learn, "test")
    for settings in (simulated, tried):
        fast = vectorised_log_likelihood(agent, settings, choices, shape)
        assert fast is not None
        assert fast == pytest.approx(replay_log_likelihood(agent, settings, choices, shape), abs=1e-9)


def test_the_vectorised_form_steps_aside_where_it_does_not_hold(shape) -> None:
    choices = simulate(TWO_STEP, "sarsa", {"beta": 3.0}, 30, seed=0)
    assert vectorised_log_likelihood("sarsa", {"beta": 3.0}, choices, shape) is None  # no kernel
    assert vectorised_log_likelihood("q", {"epsilon": 0.2}, choices, shape) is None  # epsilon-greedy
    assert vectorised_log_likelihood("q", {"beta": 2.0, "optimism": 0.5}, choices, shape) is None
    assert log_likelihood("sarsa", {"beta": 3.0}, choices, shape) == replay_log_likelihood(
        "sarsa", {"beta": 3.0}, choices, shape
    )


def test_likelihood_by_hand_on_a_bandit() -> None:
    """Q-learning, lr 0.5, softmax beta 1, two arms. Choice 1: arm 0 at Q = (0, 0): p = 1/2; it
    pays 1, Q(0) = 0.5. Choice 2: arm 1: p = e^0 / (e^0.5 + e^0) = 1 / (1 + e^0.5)."""
    shape = task_shape("rewardgym/two-armed-bandit")
    start = 0
    arms = [a for a in shape.available[start]][:2]
    target = [n for n in range(shape.n_states) if not shape.available[n]][0]
    choices = Choices.from_steps(shape.task_id, [(start, arms[0], 1.0, target, True), (start, arms[1], 0.0, target,
                                                                                        True)])
    expected = math.log(0.5) + math.log(1 / (1 + math.exp(0.5)))
    settings = {"lr": 0.5, "beta": 1.0}
    assert replay_log_likelihood("q", settings, choices, shape) == pytest.approx(expected)
    assert vectorised_log_likelihood("q", settings, choices, shape) == pytest.approx(expected)


def test_fit_recovers_a_simulated_agent_and_reports_aic_and_bic() -> None:
    choices = simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 300, seed=2)
    result = fit(MODELS["q"], choices, starts=3, seed=0)
    assert result.params["lr"] == pytest.approx(0.4, abs=0.15)
    assert result.params["beta"] == pytest.approx(5.0, abs=2.0)
    k, n, ll = 2, len(choices), result.log_likelihood
    assert result.aic == pytest.approx(2 * k - 2 * ll) and result.bic == pytest.approx(k * math.log(n) - 2 * ll)
    # the maximum beats the truth and a poor setting
    shape = task_shape(TWO_STEP)
    truth = log_likelihood("q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, choices, shape)
    assert ll >= truth - 1e-6 > log_likelihood("q", {"lr": 0.9, "beta": 0.5, "gamma": 1.0}, choices, shape)
    assert fit(MODELS["q"], choices, starts=3, seed=0) == result  # seeded: the same fit again


def test_bad_models_and_settings_are_one_line() -> None:
    with pytest.raises(BehaviourError, match="bta are not settings of agent 'q'"):
        FitModel.of("q", {"bta": (0, 1)})
    with pytest.raises(BehaviourError, match="lr: bounds 1.0:0.0 must rise"):
        FitModel.of("q", {"lr": (1.0, 0.0)})
    with pytest.raises(BehaviourError, match="starts: expected a positive number"):
        fit(MODELS["q"], simulate(TWO_STEP, "q", {"beta": 2.0}, 5, seed=0), starts=0)
    wrong = Choices.from_steps(TWO_STEP, [(0, 5, 0.0, 1, True)], "hand-made")
    with pytest.raises(BehaviourError, match="hand-made: choice 0: action 5 is not offered in state 0"):
        fit(MODELS["q"], wrong)


HEADER = "onset\tduration\ttrial\tevent_type\trl_label\taction\tresponse_button\tcurrent_location\treward"
REWARDGYM_EVENTS = HEADER + """\tparticipant_id\ttask
0.0\t1\t0\tfixation\tn/a\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
1.0\t1\t0\tstage-1\tobs\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
1.5\t0\t0\tresponse\taction\t1\tright\t0\t0\tP07\trewardgym/two-step
2.0\t1\t0\tstage-2\tobs\tn/a\tn/a\t2\t0\tP07\trewardgym/two-step
2.4\t0\t0\tresponse\taction\t0\tleft\t2\t0\tP07\trewardgym/two-step
3.0\t1\t0\toutcome\tobs\tn/a\tn/a\t5\t0\tP07\trewardgym/two-step
3.1\t1\t0\treward\treward\tn/a\tn/a\t5\t1\tP07\trewardgym/two-step
4.0\t1\t1\tbreak\tn/a\tn/a\tn/a\tn/a\t0\tP07\trewardgym/two-step
5.0\t1\t2\tstage-1\tobs\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
5.5\t0\t2\ttimeout\taction\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
6.0\t1\t3\tstage-1\tobs\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
6.5\t0\t3\tresponse\taction\t0\tleft\t0\t0\tP07\trewardgym/two-step
7.0\t1\t3\tstage-2\tobs\tn/a\tn/a\t1\t0\tP07\trewardgym/two-step
7.4\t0\t3\tresponse\taction\t1\tright\t1\t0\tP07\trewardgym/two-step
8.0\t1\t3\toutcome\tobs\tn/a\tn/a\t4\t0\tP07\trewardgym/two-step
8.1\t1\t3\treward\treward\tn/a\tn/a\t4\t0\tP07\trewardgym/two-step
9.0\t1\t4\tstage-1\tobs\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
9.5\t0\t4\tresponse\taction\t1\tright\t0\t0\tP07\trewardgym/two-step
9.6\t1\t4\treminder\tn/a\tn/a\tn/a\t0\t0\tP07\trewardgym/two-step
"""


def test_read_rewardgym_events(tmp_path) -> None:
    """Each action is a step from the last location to the next, paid by the reward rows that
    follow; a timeout (no action) and a break make no choice; a trial with a reminder is left
    out, as rewardGym's prepare_data does."""
    path = tmp_path / "sub-P07_task-twostep_events.tsv"
    path.write_text(REWARDGYM_EVENTS)
    choices = read_events(path)
    assert choices.task_id == TWO_STEP and len(choices) == 4 and choices.trials == 2
    steps = list(zip(choices.states, choices.actions, choices.rewards, choices.next_states, choices.ends))
    assert steps == [(0, 1, 0.0, 2, False), (2, 0, 1.0, 5, True), (0, 0, 0.0, 1, False), (1, 1, 0.0, 4, True)]
    kept = read_events(path, drop_reminded=False)  # the reminded trial's choice, led nowhere: ends where it was
    assert len(kept) == 5 and (kept.states[-1], kept.actions[-1], kept.next_states[-1]) == (0, 1, 0)


def test_bad_events_files_name_the_line(tmp_path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(REWARDGYM_EVENTS.replace("2.4\t0\t0\tresponse\taction\t0", "2.4\t0\t0\tresponse\taction\tleft"))
    with pytest.raises(BehaviourError, match=r"bad.tsv, line 6: column 'action': expected a number, got 'left'"):
        read_events(path)
    path.write_text("onset\tfoo\n1\t2\n")
    with pytest.raises(BehaviourError, match="neither rewardGym's columns"):
        read_events(path)


@pytest.mark.slow
def test_exported_trials_read_back_as_the_recorded_run(tmp_path) -> None:
    """graphtasks' own BIDS export reads back as the same choices as the store's Trial records."""
    store_path = tmp_path / "store"
    assert main(["--store", str(store_path), "experiment", "run", "daw2011-two-step", "--no-progress",
                 "--workers", "1"]) == 0
    assert main(["--store", str(store_path), "experiment", "export", "daw2011-two-step", "--bids",
                 str(tmp_path / "bids"), "--trial-duration", "2"]) == 0
    with open_store(store_path, "r") as store:
        recorded = load_run(store, "daw2011-two-step", 0)
    exported = read_events(tmp_path / "bids" / "sub-sim0000" / "beh" / "sub-sim0000_task-twostep_run-1_events.tsv")
    for column in ("states", "actions", "rewards", "next_states", "ends"):
        assert np.array_equal(getattr(recorded, column), getattr(exported, column)), column
    assert recorded.truth["agent"] == "hybrid"


def _write_participant(path, agent_settings, seed) -> Choices:
    """A participant's events file in rewardGym's layout, from a simulated agent."""
    choices = simulate(TWO_STEP, "q", agent_settings, 120, seed)
    path.write_text(events_text(choices, "n/a"))  # no id in the file: it comes from the name
    return choices


def test_written_events_read_back_as_the_same_choices(tmp_path) -> None:
    choices = simulate(TWO_STEP, "hybrid", {"lr": 0.3, "beta": 4.0, "w": 0.5}, 50, seed=0)
    (tmp_path / "e.tsv").write_text(events_text(choices, "S1"))
    back = read_events(tmp_path / "e.tsv")
    for column in ("states", "actions", "rewards", "next_states", "ends"):
        assert np.array_equal(getattr(choices, column), getattr(back, column)), column


def test_import_fit_and_query_participants(tmp_path) -> None:
    files = [tmp_path / "sub-A_task-twostep_events.tsv", tmp_path / "sub-B_task-twostep_events.tsv"]
    truth = [_write_participant(files[0], {"lr": 0.3, "beta": 4.0, "gamma": 1.0}, 0),
             _write_participant(files[1], {"lr": 0.7, "beta": 6.0, "gamma": 1.0}, 1)]
    with open_store(tmp_path / "store") as store:
        summary = import_behaviour(store, "people", files)
        assert [(r["participant"], r["trials"]) for r in summary] == [("A", 120), ("B", 120)]
        assert np.array_equal(load_run(store, "people", 1).actions, truth[1].actions)
        before = store.cypher("MATCH (t:Trial) RETURN count(t)").rows[0][0]
        import_behaviour(store, "people", files)  # the same files again: nothing changes
        assert store.cypher("MATCH (t:Trial) RETURN count(t)").rows[0][0] == before == 480
        with pytest.raises(ExperimentExists, match="recorded .* with other data"):
            import_behaviour(store, "people", files[:1])
        fits = fit_runs(store, "people", [0, 1], MODELS["q"], starts=2)
        assert fit_runs(store, "people", [0, 1], MODELS["q"], starts=2, workers=2) == fits  # any workers
        record_fits(store, "people", fits)
        record_fits(store, "people", fits)  # the same fit again replaces the old one
        rows = store.cypher(
            "MATCH (p:Participant)-[:PERFORMED]->(r:Run)<-[:FITS]-(f:Fit) "
            "RETURN p.participant_id, f.model, f.choices ORDER BY p.participant_id"
        ).rows
        assert rows == [["A", "q", 240], ["B", "q", 240]]
        models = store.cypher("MATCH (f:Fit)-[:OF_MODEL]->(m:Model) RETURN m.name, m.agent, count(f)").rows
        assert models == [["q", "q", 2]]  # one model node, both fits linked to it
        stored = recorded_fits(store, "people")
        assert stored[1]["params"]["lr"] > stored[0]["params"]["lr"]  # B learns faster, as simulated
        counts = delete_records(store, "people")
        assert counts["Fit"] == 2 and counts["Participant"] == 2 and counts["Model"] == 1
        assert store.cypher("MATCH (f:Fit) RETURN count(f)").rows[0][0] == 0


def test_imported_names_with_slashes_keep_their_records_apart(tmp_path) -> None:
    """Experiment, participant and model names go into record ids escaped: `lab` run 0's fit
    and the fits of experiment `lab/run/0` are different records, each read back on its own."""
    files = [tmp_path / "sub-A_task-twostep_events.tsv", tmp_path / "sub-B_task-twostep_events.tsv"]
    _write_participant(files[0], {"lr": 0.3, "beta": 4.0, "gamma": 1.0}, 0)
    _write_participant(files[1], {"lr": 0.7, "beta": 6.0, "gamma": 1.0}, 1)
    with open_store(tmp_path / "store") as store:
        import_behaviour(store, "lab", files)
        import_behaviour(store, "lab/run/0", files[1:])
        assert np.array_equal(load_run(store, "lab/run/0", 0).actions, load_run(store, "lab", 1).actions)
        for name, runs in (("lab", [0, 1]), ("lab/run/0", [0])):
            record_fits(store, name, fit_runs(store, name, runs, MODELS["q"], starts=1))
        fits = store.cypher("MATCH (f:Fit)-[:FITS]->(r:Run) RETURN f.uid, r.uid").rows
        assert len(fits) == 3 and len({f for f, _ in fits}) == 3
        assert len(recorded_fits(store, "lab")) == 2 and len(recorded_fits(store, "lab/run/0")) == 1
        delete_records(store, "lab/run/0")
        assert len(recorded_fits(store, "lab")) == 2
        assert store.cypher("MATCH (p:Participant) RETURN count(p)").rows[0][0] == 2


@pytest.mark.slow
def test_parameter_recovery_of_q_on_two_step(tmp_path) -> None:
    """The issue's bar: lr and beta of Q-learning on 200-trial two-step runs correlate above 0.8."""
    result = parameter_recovery("q", participants=12, trials=200, seed=0, starts=2)
    assert result.correlation("lr") > 0.8 and result.correlation("beta") > 0.8, result.as_dict()["correlation"]
    plot_parameter_recovery(result, str(tmp_path / "recovery.png"))
    assert (tmp_path / "recovery.png").stat().st_size > 10_000


def test_recovery_is_the_same_with_any_number_of_workers() -> None:
    one = parameter_recovery("q", participants=3, trials=60, seed=5, starts=1, workers=1)
    two = parameter_recovery("q", participants=3, trials=60, seed=5, starts=1, workers=2)
    assert one == two


def test_model_recovery_confusion_matrix() -> None:
    result = model_recovery(("q", "model-based"), participants=3, trials=200, seed=0, starts=1)
    assert result.confusion.shape == (2, 2) and result.confusion.sum() == 6
    assert np.trace(result.confusion) >= 5  # Q and model-based choices are told apart


@pytest.mark.slow
def test_cli_fit(tmp_path, capsys) -> None:
    store = str(tmp_path / "store")
    path = tmp_path / "sub-C_task-twostep_events.tsv"
    assert main(["fit", "simulate", str(path), "--params", "lr=0.5,beta=5", "--trials", "80", "--seed", "2"]) == 0
    assert "participant C" in capsys.readouterr().out
    assert main(["fit", "simulate", str(path), "--params", "lr=0.5"]) == 2
    assert "model 'q' needs lr, beta" in capsys.readouterr().err
    assert main(["fit", "models"]) == 0
    assert "model-based  hybrid" in capsys.readouterr().out
    assert main(["--store", store, "fit", "import", "lab", str(path)]) == 0
    assert main(["--store", store, "fit", "run", "lab", "--starts", "2", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["--store", store, "fit", "show", "lab", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown[0]["participant"] == "C" and shown[0]["source"] == "people" and shown[0]["model"] == "q"
    assert main(["--store", store, "fit", "show", "lab", "--plot", str(tmp_path / "fits.png")]) == 0
    assert (tmp_path / "fits.png").stat().st_size > 10_000
    assert main(["--store", store, "fit", "run", "lab", "--model", "model-based", "--starts", "1"]) == 0
    capsys.readouterr()
    assert main(["--store", store, "fit", "compare", "lab", "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in compared] == ["q", "model-based"]  # simulated by Q: Q's BIC is lower
    assert compared[0]["best_by_bic"] == 1 and compared[1]["best_by_bic"] == 0
    assert main(["--store", store, "fit", "compare", "nothing"]) == 2  # a name recorded nowhere: the recorded ones
    assert "no recorded experiment 'nothing'; recorded: lab" in capsys.readouterr().err
    assert main(["--store", store, "fit", "show", "nothing"]) == 2
    assert "no recorded experiment 'nothing'; recorded: lab" in capsys.readouterr().err
    assert main(["fit", "parameter-recovery", "--participants", "2"]) == 2
    assert "participants: expected a whole number of at least 3, got 2" in capsys.readouterr().err
    assert main(["fit", "model-recovery", "--models", "q,q"]) == 2
    assert "two or more different models" in capsys.readouterr().err
    assert main(["--store", store, "fit", "run", "lab", "--agent", "q", "--free", "lr=0:1,bta=0:5"]) == 2
    err = capsys.readouterr().err
    assert "bta are not settings of agent 'q'" in err and len(err.strip().splitlines()) == 1
    assert main(["--store", store, "fit", "run", "lab", "--runs", "7"]) == 2
    assert "no recorded trials for run(s) [7]" in capsys.readouterr().err
    figure = tmp_path / "p.png"
    assert main(["fit", "parameter-recovery", "--participants", "3", "--trials", "50", "--starts", "1", "-o",
                 str(figure), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["correlation"]) == {"lr", "beta"} and figure.exists()


@pytest.mark.slow  # every graph task; the quick run checks two-step
def test_vectorised_and_replayed_agree_on_every_graph_task() -> None:
    """Where the vectorised form applies (one-stage bandits, two-step, ...) it equals the replay;
    elsewhere (loops, long chains) it declines."""
    import tasks

    applied = []
    for task_id in [t for t in tasks.builtin_ids() if t.startswith(("neuronav/graph/", "rewardgym/"))]:
        shape = task_shape(task_id)
        for agent, settings in (("q", {"lr": 0.3, "beta": 3.0}), ("hybrid", {"lr": 0.3, "beta": 3.0, "w": 1.0,
                                                                              "perseveration": 0.2})):
            choices = simulate(task_id, agent, settings, 25, seed=0)
            fast = vectorised_log_likelihood(agent, settings, choices, shape)
            if fast is not None:
                applied.append(task_id)
                assert fast == pytest.approx(replay_log_likelihood(agent, settings, choices, shape), abs=1e-9)
    assert {"rewardgym/two-step", "rewardgym/two-armed-bandit", "neuronav/graph/two_step"} <= set(applied)
    assert "neuronav/graph/ring" not in applied


def test_fit_by_replay_finds_the_same_maximum() -> None:
    choices = simulate(TWO_STEP, "hybrid", {"lr": 0.5, "beta": 4.0, "w": 0.5, "perseveration": 0.0}, 100, seed=4)
    fast = fit(MODELS["hybrid"], choices, starts=1, seed=0)
    slow = fit(MODELS["hybrid"], choices, starts=1, seed=0, vectorised=False)
    assert fast.log_likelihood == pytest.approx(slow.log_likelihood, abs=1e-4)


@pytest.mark.slow  # a benchmark smoke test
def test_the_fit_benchmark_runs(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "fit_bench.py"
    done = subprocess.run([sys.executable, str(script), "--quick", "--trials", "40"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("x\n") == 4  # a ratio per model for the likelihood and the fit


def test_replay_of_a_recorded_run_gives_the_probabilities_it_recorded(tmp_path) -> None:
    """A run's trials carry p_action, the probability the agent gave its choice as it ran; the
    likelihood of the run under its own agent and settings is the sum of their logs. The
    sweep wrote them as chunks, which load_run reads as it reads Trial nodes."""
    store_path = tmp_path / "store"
    assert main(["--store", str(store_path), "experiment", "run", "daw2011-two-step", "--no-progress",
                 "--workers", "1"]) == 0
    with open_store(store_path, "r") as store:
        for run in (0, 15, 29):
            choices = load_run(store, "daw2011-two-step", run)
            trials = chunk_table(store, "daw2011-two-step", "trials", ["p_action"])  # a sweep keeps them in chunks
            recorded = [p for r, p in zip(trials.column("run").to_pylist(), trials.column("p_action").to_pylist())
                        if r == run]
            assert len(recorded) == len(choices)
            settings = {k: v for k, v in choices.truth.items() if k != "agent"}
            expected = sum(math.log(p) for p in recorded)
            shape = task_shape(TWO_STEP)
            assert replay_log_likelihood("hybrid", settings, choices, shape) == pytest.approx(expected, abs=1e-6)
            assert log_likelihood("hybrid", settings, choices, shape) == pytest.approx(expected, abs=1e-6)


def test_the_cached_plan_does_not_keep_choices_alive(shape) -> None:
    import gc
    import weakref

    choices = simulate(TWO_STEP, "hybrid", {"lr": 0.3, "beta": 3.0}, 20, seed=0)
    assert vectorised_log_likelihood("hybrid", {"lr": 0.3, "beta": 3.0}, choices, shape) is not None
    gone = weakref.ref(choices)
    del choices
    gc.collect()
    assert gone() is None


@pytest.mark.slow
def test_fits_from_parallel_processes_all_land(tmp_path) -> None:
    """Two `fit run` processes on one store: both read at once, their writes wait for each other."""
    import subprocess
    import sys

    store = str(tmp_path / "store")
    files = []
    for i, settings in enumerate(({"lr": 0.3, "beta": 4.0, "gamma": 1.0}, {"lr": 0.6, "beta": 5.0, "gamma": 1.0})):
        files.append(tmp_path / f"sub-{i}_task-twostep_events.tsv")
        _write_participant(files[-1], settings, i)
    assert main(["--store", store, "fit", "import", "lab", *map(str, files)]) == 0
    commands = [[sys.executable, "-m", "graphtasks", "--store", store, "fit", "run", "lab", "--model", model,
                 "--starts", "1"] for model in ("q", "model-based")]
    running = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
    for process in running:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    with open_store(store, "r") as opened:
        rows = opened.cypher("MATCH (f:Fit)-[:FITS]->(r:Run) RETURN f.model, count(f) ORDER BY f.model").rows
    assert rows == [["model-based", 2], ["q", 2]]


@pytest.mark.slow
def test_standard_errors_match_the_spread_of_estimates() -> None:
    """Fitted to many simulated participants with the same settings, the estimates spread as
    their standard errors say, and the errors shrink with more trials (about 1/sqrt(n))."""
    estimates, errors = [], []
    for seed in range(24):
        choices = simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 200, seed=100 + seed)
        result = fit(MODELS["q"], choices, starts=1, seed=0)
        if result.stderr["beta"] is not None:  # an estimate at a bound has no standard error
            estimates.append(result.params["beta"])
            errors.append(result.stderr["beta"])
    assert len(errors) >= 20
    assert 0.6 < np.std(estimates) / np.mean(errors) < 1.6
    longer = fit(MODELS["q"], simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 800, seed=100), starts=1)
    assert 0.3 < longer.stderr["beta"] / errors[0] < 0.8
    at_bound = fit(FitModel.of("q", {"lr": (0.01, 1.0), "beta": (0.1, 1.0)}, {"gamma": 1.0}),
                   simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 8.0, "gamma": 1.0}, 200, seed=1), starts=1)
    assert at_bound.params["beta"] == pytest.approx(1.0) and at_bound.stderr["beta"] is None
