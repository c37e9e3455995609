"""Held-out (cross-validated) log-likelihood (issue 38, part 2): seeded folds by block, session
and participant; the held-out likelihood of a block equals the replayed probabilities of its
choices; on data simulated from the hybrid, the hybrid is ranked above Q; results are stored as
CrossValidation nodes, exported, ranked by `fit compare --by cv`, and drawn."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")

from graphstore import open_store  # noqa: E402
from graphtasks.cli import main  # noqa: E402
from graphtasks.fitting import MODELS, cross_validate, log_likelihood, simulate, task_shape  # noqa: E402
from graphtasks.fitting.behaviour import BehaviourError  # noqa: E402
from graphtasks.fitting.cv import _Split, make_folds  # noqa: E402
from graphtasks.fitting.hierarchical import fit_group, to_natural  # noqa: E402
from graphtasks.fitting.shape import FLOOR  # noqa: E402
from gym_bridge.agents import make_agent  # noqa: E402

TASK = "rewardgym/two-step"


def people(count: int, trials: int, agent: str = "hybrid", seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for s in range(count):
        settings = {"lr": float(rng.uniform(0.3, 0.7)), "beta": float(rng.uniform(3, 7))}
        if agent == "hybrid":
            settings["w"] = float(rng.uniform(0.6, 1.0))
        out.append(simulate(TASK, agent, settings, trials=trials, seed=100 * seed + s))
    return out


def choice_log_probs(agent: str, settings: dict, choices) -> np.ndarray:
    """Every choice's log-probability, replayed step by step (the reference, written here)."""
    shape = task_shape(TASK)
    chooser = make_agent(agent, shape.n_states, shape.n_actions, seed=0, **settings)
    out, new = [], True
    for s, a, r, n, end in zip(choices.states.tolist(), choices.actions.tolist(), choices.rewards.tolist(),
                               choices.next_states.tolist(), choices.ends.tolist()):
        if new:
            chooser.begin_episode()
        out.append(math.log(max(float(chooser.action_probabilities(s, shape.available[s])[a]), FLOOR)))
        chooser.learn(s, a, r, n, end, shape.available[n])
        new = end
    return np.array(out)


def test_block_folds_are_contiguous_whole_trials_seeded():
    data = people(3, 17, "q")
    folds = make_folds(data, "block", 4, seed=5)
    for c, pieces in zip(data, folds.pieces):
        starts = set(np.flatnonzero(np.concatenate(([True], c.ends[:-1]))).tolist())
        assert [p[1] for p in pieces][0] == 0 and pieces[-1][2] == len(c)
        assert all(a[2] == b[1] for a, b in zip(pieces, pieces[1:]))  # contiguous, covering every choice
        assert all(p[1] in starts for p in pieces)  # cut at trial starts
        assert sorted(p[3] for p in pieces) == [0, 1, 2, 3]  # one block per fold
    assert folds == make_folds(data, "block", 4, seed=5)
    assert folds.pieces != make_folds(data, "block", 4, seed=6).pieces
    assert sum(folds.choices()) == sum(len(c) for c in data)


@pytest.mark.parametrize("agent,settings", [("q", {"lr": 0.4, "beta": 4.0, "gamma": 1.0}),
                                            ("hybrid", {"lr": 0.4, "beta": 4.0, "w": 0.6})])
def test_a_blocks_likelihood_is_the_sum_of_its_choices_replayed(agent, settings):
    (c,) = people(1, 30, agent, seed=3)
    folds = make_folds([c], "block", 3, seed=1)
    shape = task_shape(TASK)
    each = choice_log_probs(agent, settings, c)
    for fold in range(3):
        held = folds.held_out(0, fold)
        kept, out = _Split([c], [shape], held).kept_and_held(agent, settings)
        mask = np.zeros(len(c), dtype=bool)
        for _, first, end, _ in held:
            mask[first:end] = True
        assert out == pytest.approx(each[mask].sum(), abs=1e-9)
        assert kept == pytest.approx(each[~mask].sum(), abs=1e-9)


@pytest.mark.slow
def test_hybrid_ranks_above_q_on_hybrid_data():
    """The issue's done-when check, small: 8 participants x 150 trials simulated from the hybrid."""
    result = cross_validate(["q", "hybrid"], people(8, 150), by="block", folds=3, seed=0, starts=1)
    rows = result.rows()
    assert [r["model"] for r in rows] == ["hybrid", "q"]
    assert rows[0]["best_by_cv"] >= 6
    hybrid, q = result.of("hybrid"), result.of("q")
    assert all(h > v for h, v in zip(hybrid.heldout, q.heldout))  # every fold
    assert result.as_dict()["choices"] == result.folds.choices()


def test_session_folds_hold_out_whole_sessions():
    sessions = people(6, 12, "q", seed=2)
    data = [sessions[0:3], sessions[3:6]]
    result = cross_validate(["q"], data, by="session", folds=3, seed=4, starts=1)
    for pieces, own in zip(result.folds.pieces, data):
        assert sorted(p[3] for p in pieces) == [0, 1, 2]
        assert [(p[1], p[2]) for p in pieces] == [(0, len(c)) for c in own]
    assert result.folds.choices() == [48, 48, 48]
    assert all(v < 0 for v in result.of("q").heldout)
    with pytest.raises(BehaviourError, match="needs 4 or more sessions per participant; participant 0"):
        cross_validate(["q"], data, by="session", folds=4)


@pytest.mark.slow
def test_participant_folds_score_by_the_group_prior_of_the_others():
    data = people(5, 30, "q", seed=7)
    mean_score = cross_validate(["q"], data, by="participant", folds=2, seed=1, starts=1, score="mean")
    marginal = cross_validate(["q"], data, by="participant", folds=2, seed=1, starts=1)
    assert mean_score.folds == marginal.folds and marginal.score == "marginal"
    # fold 0 recomputed: EM on the others, each held-out participant at the group's median settings
    kept = [p for p in range(5) if mean_score.folds.pieces[p][0][3] != 0]
    group = fit_group(MODELS["q"], [data[p] for p in kept], starts=1, seed=1)
    median = MODELS["q"].settings(to_natural(MODELS["q"], [group.mean[n] for n in MODELS["q"].free]))
    expected = sum(log_likelihood("q", median, data[p], task_shape(TASK)) for p in range(5) if p not in kept)
    assert mean_score.of("q").heldout[0] == pytest.approx(expected, abs=1e-6)
    assert all(-200 < v < 0 for v in marginal.of("q").heldout)


def test_bad_requests_are_refused_in_one_line():
    data = people(2, 5, "q")
    for call, message in [
        (lambda: cross_validate(["q", "sarsa-ish"], data), "--models: no model 'sarsa-ish'"),
        (lambda: cross_validate(["q"], data, by="trial"), "--by: expected one of block, session, participant"),
        (lambda: cross_validate(["q"], data, folds=1), "--folds: expected a whole number from 2 to 100"),
        (lambda: cross_validate(["q"], data, folds=6), "5 trial\\(s\\), fewer than the 6 blocks"),
        (lambda: cross_validate(["q"], data, by="participant", folds=2), "fewer than 2 to fit a group"),
        (lambda: cross_validate(["q", "q"], data), "q given twice"),
        (lambda: cross_validate(["gru-17"], data), "a GRU has 2 to 16 units"),
    ]:
        with pytest.raises(BehaviourError, match=message) as caught:
            call()
        assert "\n" not in str(caught.value)


# -- the store, the command line, the figure ----------------------------------------------------------
def cli(store: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--store", str(store), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """A store with three imported participants (hybrid, 30 trials each)."""
    from graphtasks.fitting.behaviour import events_text

    folder = tmp_path_factory.mktemp("cv")
    files = []
    for i, c in enumerate(people(3, 30, "hybrid", seed=9)):
        path = folder / f"sub-0{i + 1}_events.tsv"
        path.write_text(events_text(c, f"0{i + 1}"))
        files.append(str(path))
    store = folder / "store.lbug"
    assert cli(store, "fit", "import", "lab", *files)[0] == 0
    assert cli(store, "fit", "run", "lab", "--model", "q", "--starts", "1", "--no-progress")[0] == 0
    return store


@pytest.mark.slow
def test_fit_cv_stores_reports_and_ranks(lab, tmp_path):
    from graphtasks.experiments.export import rdf_text
    from graphtasks.fitting.records import recorded_cross_validations

    code, out, err = cli(lab, "fit", "cv", "lab", "--models", "q,hybrid", "--folds", "2", "--starts", "1",
                         "--no-progress", "--plot", str(tmp_path / "cv.png"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["model", "heldout_log_likelihood", "per_choice", "p_choice", "fold_sd", "aic", "bic",
                                "best_by_cv"]
    by_model = {line.split()[0]: line.split() for line in lines[2:4]}
    assert by_model["hybrid"][5:7] == ["n/a", "n/a"] and by_model["q"][5] != "n/a"  # q's stored fits give AIC, BIC
    assert "3 runs (3 of people); 2 folds by block, seed 0; 180 held-out choices" in out
    assert (tmp_path / "cv.png").stat().st_size > 10_000
    with open_store(str(lab), "r") as store:
        stored = recorded_cross_validations(store, "lab")
        edges = store.cypher("MATCH (c:CrossValidation)-[:VALIDATES]->(r:Run) RETURN c.model, count(r)").rows
        turtle = rdf_text(store, "lab", "turtle")
    assert sorted(r["model"] for r in stored) == ["hybrid", "q"]
    assert len({r["plan"] for r in stored}) == 1 and all(r["runs"] == [0, 1, 2] for r in stored)
    assert sorted(map(tuple, edges)) == [("hybrid", 3), ("q", 3)]
    assert "CrossValidation" in turtle and "heldout_log_likelihood" in turtle
    q = next(r for r in stored if r["model"] == "q")
    assert len(q["heldout"]) == 2 and q["heldout_log_likelihood"] == pytest.approx(sum(q["heldout"]))

    code, out, _ = cli(lab, "fit", "compare", "lab", "--by", "cv")
    assert code == 0 and [line.split()[0] for line in out.splitlines()[2:4]] == [lines[2].split()[0],
                                                                               lines[3].split()[0]]
    code, out, _ = cli(lab, "fit", "compare", "lab", "--by", "cv", "--format", "json")
    assert code == 0 and json.loads(out)["plan"]["by"] == "block"
    code, _, err = cli(lab, "fit", "compare", "lab", "--by", "cv", "--models", "q,model-based")
    assert code != 0 and err.count("\n") == 1
    assert "no cross-validation of q, model-based over these runs (graphtasks fit cv --models q,model-based" in err
    code, _, err = cli(lab, "fit", "compare", "lab", "--by", "cv", "--label", "01")
    assert code != 0 and "no cross-validation of hybrid, q over these runs" not in err and err.count("\n") == 1
    code, _, err = cli(lab, "fit", "cv", "lab", "--score", "mean")
    assert code != 0 and "--score goes with --by participant" in err


def test_the_figure_reads_back():
    from graphtasks.fitting.cv_figures import plot_cross_validation

    figure = plot_cross_validation(["q", "hybrid", "gru-4"], [[-60, -62, -61], [-55, -58, -54], [-70, -69, -71]],
                                   [100, 100, 100], None, "lab: held-out log-likelihood", chance=math.log(0.5))
    left, right = figure.axes
    lines = [line for line in left.get_lines() if line.get_label() in ("q", "hybrid", "gru-4")]
    assert [tuple(line.get_ydata()) for line in lines][1] == pytest.approx((-0.55, -0.58, -0.54))
    assert [t.get_text() for t in right.get_yticklabels()] == ["gru-4", "q", "hybrid"]  # best on top
    low, high = right.get_xlim()
    assert low < -0.71 and -0.54 < high and low < math.log(0.5) < high  # chance and every model inside the panel
    figure.canvas.draw()
    box = figure.get_window_extent()
    title = figure._suptitle
    assert title is not None and box.contains(*title.get_window_extent().p0)
    (legend,) = figure.legends  # below the panels, every model and the chance line
    assert [t.get_text() for t in legend.get_texts()] == ["q", "hybrid", "gru-4",
                                                          "chance (uniform over offered actions)"]
    shown = legend.get_window_extent()
    assert box.contains(*shown.p0) and box.contains(*shown.p1)
    assert shown.y1 < min(axes.get_window_extent().y0 for axes in figure.axes)


@pytest.mark.parametrize("name", ["graphtasks.fitting.cv", "graphtasks.fitting.cv_figures",
                                  "graphtasks.fitting.neural", "graphtasks.fitting.selection"])
@pytest.mark.slow
def test_docstring_examples_run(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
