"""hBayesDM's data layouts (a subjID column, a row per trial) imported as runs of participants
and fitted: the example files of tests/data/hbayesdm/ (simulated, not hBayesDM's own)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import tasks
from graphstore import open_store
from graphtasks.cli import main
from graphtasks.fitting import MODELS, BehaviourError, fit, simulate, task_shape
from graphtasks.fitting.behaviour import load_run, read_participants
from graphtasks.fitting.hbayesdm import LAYOUTS, layout_text
from graphtasks.fitting.likelihood import log_likelihood, replay_log_likelihood
from graphtasks.fitting.records import import_behaviour, recorded_fits

DATA = Path(__file__).parent / "data" / "hbayesdm"
TWO_STEP = "rewardgym/two-step"


def test_two_step_layout_reads_back_the_simulated_choices(tmp_path) -> None:
    people = [(str(i + 1), simulate(TWO_STEP, "hybrid", {"lr": 0.5, "beta": 5.0, "w": w, "perseveration": 0.0}, 80,
                                    seed=i)) for i, w in enumerate((0.2, 0.9))]
    path = tmp_path / "ts_mine.txt"
    path.write_text(layout_text("ts", people))
    assert path.read_text().splitlines()[0] == "subjID\ttrial\tlevel1_choice\tlevel2_choice\treward"
    read = read_participants(path)
    assert [p for p, _ in read] == ["1", "2"]
    shape = task_shape(TWO_STEP)
    for (_, simulated), (_, events) in zip(people, read):
        got = events.choices
        for column in ("states", "actions", "rewards", "next_states", "ends"):
            np.testing.assert_array_equal(getattr(got, column), getattr(simulated, column))
        assert got.task_id == TWO_STEP and got.trials == 80
        assert events.lines[0] == events.lines[1] and events.lines[2] == events.lines[0] + 1
        settings = MODELS["hybrid"].settings([0.5, 5.0, 0.5])
        assert log_likelihood("hybrid", settings, got, shape) == pytest.approx(
            replay_log_likelihood("hybrid", settings, simulated, shape), abs=1e-9)


@pytest.mark.slow
def test_the_example_two_step_file_imports_and_fits(tmp_path, capsys) -> None:
    store_path = str(tmp_path / "store.lbug")
    assert main(["--store", store_path, "fit", "import", "hb", str(DATA / "ts_example.tsv")]) == 0
    shown = capsys.readouterr().out
    assert [line.split()[:4] for line in shown.splitlines()[2:6]] == [[str(i + 1), str(i), "100", "200"]
                                                                     for i in range(4)]
    assert main(["--store", store_path, "fit", "run", "hb", "--model", "hybrid", "--starts", "2"]) == 0
    with open_store(store_path, "r") as store:
        fits = recorded_fits(store, "hb")
        description = store.cypher("MATCH (x:Experiment) RETURN x.description").rows[0][0]
    assert description == "behaviour imported from ts_example.tsv"
    assert [f["label"] for f in fits] == ["1", "2", "3", "4"]
    assert all(-200 * np.log(2) * 2 < f["log_likelihood"] < -50 for f in fits)  # better than chance, not perfect
    # the files were simulated with w 0.8, 0.3, 0.6, 0.9: the participant with w 0.3 is the least model-based
    ws = [f["params"]["w"] for f in fits]
    assert int(np.argmin(ws)) == 1


@pytest.mark.parametrize("name", [n for n in LAYOUTS if n != "ts"])
@pytest.mark.slow
def test_other_layouts_map_onto_their_task_or_are_refused_naming_it(tmp_path, name) -> None:
    path = DATA / f"{name}_example.tsv"
    layout = LAYOUTS[name]
    with open_store(str(tmp_path / "store.lbug"), "w") as store:
        if not tasks.is_builtin(layout.task):
            with pytest.raises(BehaviourError) as refused:
                import_behaviour(store, "x", [path], layout=name)
            message = str(refused.value)
            assert message.startswith(f"{path}: hBayesDM's {name} layout") and repr(layout.task) in message
            assert "\n" not in message
            assert store.cypher("MATCH (x:Experiment) RETURN count(x)").rows[0][0] == 0
            return
        rows = import_behaviour(store, "x", [path], layout=name)
        assert [r["participant"] for r in rows] == ["101", "102", "103"]
        assert [(r["trials"], r["choices"]) for r in rows] == [(60, 60)] * 3
        first = load_run(store, "x", 0)
        lines = path.read_text().splitlines()[1:61]
        assert first.task_id == layout.task and first.trials == 60
        assert first.states.tolist() == [0] * 60 and all(first.ends)
        cells = [dict(zip(path.read_text().splitlines()[0].split("\t"), line.split("\t"))) for line in lines]
        if name == "pst":  # the chosen stimulus of the pair shown
            chosen = [int(c["type"][0] if c["choice"] == "1" else c["type"][1]) - 1 for c in cells]
        else:
            chosen = [int(c["choice"]) - 1 for c in cells]
        assert first.actions.tolist() == chosen
        paid = [float(c.get(layout.gain)) if layout.gain else float(c["gain"]) - abs(float(c["loss"])) for c in cells]
        assert first.rewards.tolist() == paid
        result = fit(MODELS["q"], first, starts=1, seed=0)
        assert math.isfinite(result.log_likelihood) and result.log_likelihood <= 0


def test_a_reversal_outcome_leads_to_the_state_that_pays_it(tmp_path) -> None:
    path = tmp_path / "prl_lab.txt"
    path.write_text("subjID\tchoice\toutcome\n1\t1\t1\n1\t1\t-1\n1\t2\t1\n1\t2\t-1\n1\t2\t0\n")
    with pytest.raises(BehaviourError, match=r"prl_lab.txt, line 6: column 'outcome': 0 is not what a choice of 2 "
                                             r"pays in task 'decision/reversal-learning' \(-1, 1\)"):
        read_participants(path)
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    ((_, events),) = read_participants(path)
    assert events.choices.next_states.tolist() == [1, 2, 3, 4]  # A: win, A: loss, B: win, B: loss


def test_a_reversal_file_fits_on_a_two_armed_task_named_with_task(tmp_path) -> None:
    path = DATA / "prl_example.tsv"
    ((participant, events), *_) = read_participants(path, "rewardgym/two-armed-bandit", layout="prl")
    choices = events.choices
    assert participant == "101" and len(choices) == 60 and choices.trials == 60
    rows = path.read_text().splitlines()[1:61]
    assert choices.actions.tolist() == [int(r.split("\t")[2]) - 1 for r in rows]
    assert choices.rewards.tolist() == [float(r.split("\t")[3]) for r in rows]
    assert choices.next_states.tolist() == [a + 1 for a in choices.actions.tolist()]  # arm A is state 1, B state 2
    result = fit(MODELS["q"], choices, starts=2, seed=0)
    assert 0.05 < result.params["lr"] < 0.9 and result.log_likelihood > 60 * np.log(0.5)  # simulated lr 0.3


def test_a_file_named_after_its_layout_needs_no_layout_option(tmp_path) -> None:
    text = (DATA / "prl_example.tsv").read_text()
    (tmp_path / "prl_lab.txt").write_text(text)
    (tmp_path / "lab.txt").write_text(text)
    read = read_participants(tmp_path / "prl_lab.txt", "rewardgym/two-armed-bandit")
    assert len(read) == 3
    with pytest.raises(BehaviourError, match="are hBayesDM's prl and bandit4arm2 layouts: name one with --layout"):
        read_participants(tmp_path / "lab.txt", "rewardgym/two-armed-bandit")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("1\t1\t5\t1", "bad.tsv, line 3: column 'level2_choice': expected 1, 2, 3 or 4, got '5'"),
        ("1\t0\t2\t1", "bad.tsv, line 3: column 'level1_choice': expected 1 or 2, got '0'"),
        ("1\t2\t2\tmany", "bad.tsv, line 3: column 'reward': expected a number, got 'many'"),
        ("NA\t2\t2\t1", "bad.tsv, line 3: column 'subjID': a row without a participant"),
        ("1\t2\t2", "bad.tsv, line 3: 3 tab-separated cells; the header has 4"),
    ],
)
def test_a_bad_cell_is_one_line_naming_file_line_and_column_and_nothing_is_written(tmp_path, capsys, rows,
                                                                                     message) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("subjID\tlevel1_choice\tlevel2_choice\treward\n1\t1\t1\t0\n" + rows + "\n")
    store_path = str(tmp_path / "store.lbug")
    assert main(["--store", store_path, "fit", "import", "bad", str(path)]) != 0
    err = capsys.readouterr().err.strip()
    assert err.endswith(message) and len(err.splitlines()) == 1
    assert not Path(store_path).exists()  # read and checked before the store is opened


def test_missing_choices_are_left_out_and_a_task_of_another_shape_refused(tmp_path) -> None:
    path = tmp_path / "ts_gaps.tsv"
    path.write_text("subjID\tlevel1_choice\tlevel2_choice\treward\nA\t1\t1\t1\nA\tNA\tNA\t0\nA\t2\t4\t0\nB\t1\t2\t0\n")
    read = read_participants(path)
    assert [(p, len(e.choices), e.lines.tolist()) for p, e in read] == [("A", 4, [2, 2, 4, 4]), ("B", 2, [5, 5])]
    first = read[0][1].choices
    assert first.states.tolist() == [0, 1, 0, 2] and first.next_states.tolist() == [1, 3, 2, 6]
    assert first.rewards.tolist() == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(BehaviourError, match="does not have the shape of hBayesDM's ts layout"):
        read_participants(path, "rewardgym/two-armed-bandit")


def test_fit_simulate_writes_the_two_step_layout(tmp_path, capsys) -> None:
    path = tmp_path / "ts_sim.txt"
    assert main(["fit", "simulate", str(path), "--layout", "ts", "--participants", "2", "--model", "q", "--params",
                 "lr=0.4,beta=5", "--trials", "30", "--seed", "7"]) == 0
    assert "participants 1..2 (hBayesDM's ts)" in capsys.readouterr().out
    read = read_participants(path)
    expected = simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 30, seed=8)  # the second: seed + 1
    assert [p for p, _ in read] == ["1", "2"]
    np.testing.assert_array_equal(read[1][1].choices.actions, expected.actions)
    assert main(["fit", "simulate", str(path), "--layout", "ts", "--participant", "x", "--params",
                 "lr=0.4,beta=5"]) == 2
    assert "--participant goes without --layout" in capsys.readouterr().err
    assert main(["fit", "simulate", str(path), "--participants", "2", "--params", "lr=0.4,beta=5"]) == 2
    assert "--participants goes with --layout" in capsys.readouterr().err


def test_the_layout_docstring_examples_run() -> None:
    import doctest

    import graphtasks.fitting.hbayesdm as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0
