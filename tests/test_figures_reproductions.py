"""What the reproductions' and decision tasks' figures plot, read back from the saved Figure's
artists: each bar is the mean over runs of the measure the figure names (worked out here by
hand from a few recorded choices), its error bar one standard error, one legend entry per
agent with its number of runs, the axis labels, and no empty panel.

The records come from a small stand-in store that answers the figures' own Cypher queries
with rows written here (what a real store returns for them is tested with the records);
every figure is caught as it is saved (`Figure.savefig`), so the tests see exactly what
`graphtasks reproduce` writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.container import BarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from graphtasks.experiments import decision, figures, records, reproduce  # noqa: E402
from graphtasks.experiments.ids import experiment_uid  # noqa: E402

NAME = "x"  # the experiment's name in every stand-in store


@dataclass
class Result:
    rows: list[tuple]


class Answers:
    """A store that answers the queries it is given (by their text) with fixed rows."""

    def __init__(self, answers: dict[str, list[tuple]]) -> None:
        self.answers = answers
        self.asked: list[dict[str, Any]] = []

    def cypher(self, query: str, params: dict[str, Any] | None = None) -> Result:
        assert query in self.answers, f"a query the test did not expect: {query}"
        self.asked.append(dict(params or {}))
        return Result(self.answers[query])


@pytest.fixture
def saved(monkeypatch) -> list[Figure]:
    """Every Figure saved while the test runs (still readable after pyplot closed it)."""
    out: list[Figure] = []
    original = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        out.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return out


def only_figure(saved: list[Figure], path: Path) -> Figure:
    assert len(saved) == 1 and path.stat().st_size > 0
    figure = saved[0]
    for ax in figure.axes:  # no empty panel: every axes (but a colour bar's) shows data
        if ax.get_label() != "<colorbar>":
            assert ax.lines or ax.patches or ax.images or ax.collections, f"an empty panel: {ax.get_title()!r}"
    return figure


def bars(figure: Figure) -> dict[tuple[str, str], tuple[float, float]]:
    """(agent, group) -> (bar height, half the error bar), read from the bars' containers of
    every panel; the group is the x tick label under the bar."""
    out = {}
    for ax in figure.axes:
        ticks = {round(float(x)): t.get_text().replace("\n", "_")
                 for x, t in zip(ax.get_xticks(), ax.get_xticklabels())}
        for container in ax.containers:
            if not isinstance(container, BarContainer):
                continue
            agent = container.get_label().rsplit(" (n=", 1)[0]
            segments = container.errorbar.lines[2][0].get_segments() if container.errorbar else []
            for patch, segment in zip(container.patches, segments):
                if np.isnan(patch.get_height()):
                    continue
                group = ticks[round(patch.get_x() + patch.get_width() / 2)]
                assert patch.get_gid() == f"bar:{agent}" and (agent, group) not in out
                out[agent, group] = (float(patch.get_height()), float(np.ptp(np.asarray(segment)[:, 1]) / 2))
    return out


def legend(figure: Figure) -> list[str]:
    """The entries of the figure's one legend (under its panel, or under all of them)."""
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()] + list(figure.legends)
    assert len(legends) == 1
    return [t.get_text() for t in legends[0].get_texts()]


def chance_line(figure: Figure) -> float:
    """The height of the dotted reference line (chance), named in the legend."""
    (line,) = [line for line in figure.axes[0].lines if line.get_gid() == "reference"]
    assert line.get_linestyle() == ":" and len(set(line.get_ydata())) == 1
    level = float(line.get_ydata()[0])
    assert legend(figure)[-1] == f"chance ({level:g})"
    return level


def mean_se(*values: float) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0


def assert_bars(figure: Figure, expected: dict[tuple[str, str], tuple[float, float]]) -> None:
    got = bars(figure)
    assert sorted(got) == sorted(expected)
    for key, (height, error) in expected.items():
        assert got[key] == pytest.approx((height, error), abs=1e-9), key


def choice_rows(runs: dict[int, tuple[str, list[int], list[str]]], step: int = 0) -> dict[str, list[tuple]]:
    """The answers `records.step_rows` reads of a store whose runs chose these actions in these
    conditions at `step` of each episode: Trial nodes (STEP_QUERY's rows), no chunks, the runs' labels."""
    trials = [(run, 0, i, step, 0, action, 0.0, 1, 0.5, condition, "t", 0.0)
              for run, (_, actions, conditions) in runs.items()
              for i, (action, condition) in enumerate(zip(actions, conditions))]
    labels = [(run, label) for run, (label, _, _) in runs.items()]
    return {records.STEP_QUERY: trials, records.CHUNKS_QUERY: [], records.RUN_LABELS_QUERY: labels}


# -- decision tasks ----------------------------------------------------------------------------
def test_reversal_bars_are_the_runs_perseverative_errors(saved, tmp_path):
    a, b = "A-better", "B-better"
    store = Answers({**choice_rows({
        0: ("Q lr=0.1", [0, 0, 0, 0, 0, 1, 1], [a, a, a, b, b, b, b]),  # two more choices of A after the reversal
        1: ("Q lr=0.1", [0, 0, 0, 1, 1, 0, 0], [a, a, a, b, b, a, a]),  # switched at once, twice: 0
        2: ("Q lr=0.5", [0, 0, 1, 1, 1, 1, 1], [a, a, b, b, b, b, b]),  # 0
        3: ("Q lr=0.5", [0, 0, 0, 1, 1, 1, 1], [a, a, b, b, b, b, b]),  # 1
    })})
    path = tmp_path / "reversal.png"
    decision.draw_reversal(store, NAME, str(path))
    figure = only_figure(saved, path)
    group = "after a reversal"
    assert_bars(figure, {("Q lr=0.1", group): mean_se(2, 0), ("Q lr=0.5", group): mean_se(0, 1)})
    assert legend(figure) == ["Q lr=0.1 (n=2)", "Q lr=0.5 (n=2)"]
    assert figure.axes[0].get_ylabel() == "perseverative errors (trials)"
    uid = experiment_uid(NAME)
    assert store.asked == [{"uid": uid, "steps": [0]}, {"uid": uid, "kind": "trials"}, {"uid": uid}]


def test_criterion_bars_are_errors_and_reversals_replayed_from_the_choices(saved, tmp_path):
    store = Answers({
        decision.CRITERION_QUERY: [(2,)],  # two correct choices in a row hand the lead on
        **choice_rows({
            0: ("Q lr=0.2", [0, 0, 1, 1, 0, 0], [""] * 6),  # A, A | B, B | A, A: 2 reversals, no error
            1: ("Q lr=0.2", [0, 0, 0, 0, 1, 1], [""] * 6),  # A, A | B, B, B, B: 1 reversal, 2 errors
        }),
    })
    path = tmp_path / "criterion.png"
    decision.draw_criterion(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("Q lr=0.2", "perseverative errors"): mean_se(0, 2),
                         ("Q lr=0.2", "reversals"): mean_se(2, 1)})
    # two measures in different units: a panel each, on its own scale and with its own label
    assert [[t.get_text() for t in ax.get_xticklabels()] for ax in figure.axes] == [["perseverative errors"],
                                                                                   ["reversals"]]
    assert [ax.get_ylabel() for ax in figure.axes] == ["perseverative errors (trials)",
                                                       "reversals earned (per session)"]
    assert legend(figure) == ["Q lr=0.2 (n=2)"]


def test_selection_bars_are_training_accuracy_and_test_choices(saved, tmp_path):
    # actions are stimuli (A = 0 ... F = 5); test-AB is left out of choose A / avoid B
    trials = [("AB", 0), ("AB", 1), ("CD", 2), ("CD", 2), ("EF", 5), ("EF", 4),
              ("test-AC", 0), ("test-AD", 3), ("test-BC", 2), ("test-BD", 1), ("test-AB", 1)]
    other = [("AB", 0), ("AB", 0), ("CD", 3), ("CD", 2), ("EF", 4), ("EF", 4),
             ("test-AC", 0), ("test-AE", 0), ("test-BC", 2), ("test-BF", 5)]
    store = Answers({**choice_rows({
        0: ("Q", [a for _, a in trials], [c for c, _ in trials]),
        1: ("Q", [a for _, a in other], [c for c, _ in other]),
    })})
    path = tmp_path / "selection.png"
    decision.draw_selection(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("Q", "training AB"): mean_se(0.5, 1.0), ("Q", "training CD"): mean_se(1.0, 0.5),
                         ("Q", "training EF"): mean_se(0.5, 1.0), ("Q", "choose A"): mean_se(0.5, 1.0),
                         ("Q", "avoid B"): mean_se(0.5, 1.0)})
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "training AB", "training CD", "training EF", "choose A", "avoid B"]
    assert ax.get_ylabel() == "P(better choice)" and ax.get_ylim()[1] == 1.05
    assert chance_line(figure) == 0.5 and legend(figure) == ["Q (n=2)", "chance (0.5)"]


def test_iowa_bars_are_the_share_of_good_decks_per_block(saved, tmp_path):
    first = [0] * 15 + [2] * 5  # 5 of 20 from C or D
    last = [1] * 4 + [3] * 8 + [2] * 8  # 16 of 20
    store = Answers({**choice_rows({
        0: ("Q", first + last, [""] * 40),
        1: ("Q", last + last, [""] * 40),
        2: ("random", first + first, [""] * 40),
    })})
    path = tmp_path / "iowa.png"
    decision.draw_iowa(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("Q", "trials 1-20"): mean_se(0.25, 0.8), ("Q", "trials 21-40"): mean_se(0.8, 0.8),
                         ("random", "trials 1-20"): (0.25, 0.0), ("random", "trials 21-40"): (0.25, 0.0)})
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["trials 1-20", "trials 21-40"]
    assert legend(figure) == ["Q (n=2)", "random (n=1)", "chance (0.5)"] and chance_line(figure) == 0.5
    assert figure.axes[0].get_ylabel() == "P(deck C or D)"


def test_restless_bars_are_switch_rates(saved, tmp_path):
    store = Answers({**choice_rows({
        0: ("Q beta=1", [0, 0, 1, 1, 2], [""] * 5),  # 2 switches in 4
        1: ("Q beta=1", [0, 1, 2, 3, 0], [""] * 5),  # 4 in 4
        2: ("Q beta=8", [3, 3, 3, 3, 3], [""] * 5),  # none: a zero bar
        3: ("Q beta=8", [3, 3, 3, 3, 3], [""] * 5),
    })})
    path = tmp_path / "restless.png"
    decision.draw_restless(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("Q beta=1", "per trial"): mean_se(0.5, 1.0), ("Q beta=8", "per trial"): (0.0, 0.0)})
    assert [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "zero-label"] == ["0"]
    assert figure.axes[0].get_ylabel() == "P(switch arm)"


def test_horizon_bars_are_the_less_known_arm_in_unequal_games(saved, tmp_path):
    rows = [  # run, label, first free action, condition; equal games do not count
        (0, "info bonus", 0, "h6-unequal-LRRR"), (0, "info bonus", 1, "h6-unequal-RLLL"),
        (0, "info bonus", 1, "h1-unequal-LRRR"), (0, "info bonus", 0, "h1-equal-LLRR"),
        (1, "info bonus", 0, "h6-unequal-LRRR"), (1, "info bonus", 0, "h6-unequal-RLLL"),
        (1, "info bonus", 0, "h1-unequal-LRRR"), (1, "info bonus", 0, "h1-unequal-RLLL"),
    ]
    by_run: dict[int, tuple[str, list[int], list[str]]] = {}
    for run, label, action, condition in rows:
        by_run.setdefault(run, (label, [], []))[1].append(action)
        by_run[run][2].append(condition)
    store = Answers(choice_rows(by_run, step=decision.FORCED_CHOICES))
    path = tmp_path / "horizon.png"
    decision.draw_horizon(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("info bonus", "horizon 1"): mean_se(0.0, 0.5),
                         ("info bonus", "horizon 6"): mean_se(1.0, 0.5)})
    uid = experiment_uid(NAME)
    assert store.asked == [{"uid": uid, "steps": [decision.FORCED_CHOICES]}, {"uid": uid, "kind": "trials"},
                           {"uid": uid}]
    assert legend(figure) == ["info bonus (n=2)", "chance (0.5)"]


def episode(label: str, run: int, phase_index: int, phase: str, index: int, length: float = 0.0,
            ret: float = 0.0, condition: str = "") -> dict[str, Any]:
    return {"task": "t", "label": label, "run": run, "phase_index": phase_index, "phase": phase, "episode": index,
            "length": length, "return": ret, "condition": condition}


def test_latent_learning_bars_are_test_steps_per_condition(saved, tmp_path, monkeypatch):
    rows = [episode("SR", 0, 0, "explore", 0, 50.0, condition="pre-exposed")]  # not the test: left out
    for run, condition, lengths in ((0, "pre-exposed", (10, 12)), (1, "pre-exposed", (8, 8)),
                                    (2, "naive", (30, 40)), (3, "naive", (20, 20))):
        rows += [episode("SR", run, 1, "test", i, length, condition=condition) for i, length in enumerate(lengths)]
    monkeypatch.setattr(records, "recorded_episodes", lambda store, name: rows)
    store = Answers({decision.TEST_LIMIT_QUERY: [(100,)]})
    path = tmp_path / "latent.png"
    decision.draw_latent(store, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("SR", "pre-exposed"): mean_se(11, 8), ("SR", "naive"): mean_se(35, 20)})
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["pre-exposed", "naive"]
    assert figure.axes[0].get_ylabel() == "steps from the start to the goal (test, greedy)"
    # a bar at the episode limit is a learner that never reached the goal: the limit is drawn and named
    (limit,) = [line for line in figure.axes[0].lines if line.get_gid() == "reference"]
    assert set(limit.get_ydata()) == {100} and legend(figure) == ["SR (n=2)", "episode limit: goal not reached (100)"]


def test_foraging_bars_are_the_learnt_and_the_optimal_leaving_times(saved, tmp_path):
    path = tmp_path / "foraging.png"
    checks = decision.foraging_study(1, str(path), reproduce._measured)
    figure = only_figure(saved, path)
    got = bars(figure)
    short, long = decision.FORAGING_TRAVEL
    import tasks

    assert sorted(got) == [("Q-learner", f"travel {short}"), ("Q-learner", f"travel {long}")]
    learnt = (got["Q-learner", f"travel {short}"][0], got["Q-learner", f"travel {long}"][0])
    assert f"learnt {learnt[0]:.1f} and {learnt[1]:.1f} harvests" in checks[1].finding  # the numbers the checks read
    assert checks[0].measured == pytest.approx(learnt[1] - learnt[0], abs=1e-3)
    # the theorem's optimum is a mark across its group, not a bar of one "run" with a standard error
    (marks,) = [c for c in figure.axes[0].collections if c.get_gid() == "reference"]
    heights = [float(segment[0][1]) for segment in marks.get_segments()]
    centres = [float(np.mean(np.asarray(segment)[:, 0])) for segment in marks.get_segments()]
    optima = []
    for travel in (short, long):
        graph = tasks.build(f"{decision.FORAGING}?travel={travel}")
        optima.append(decision.mvt_harvests(decision.harvest_rewards(graph), travel))
    assert heights == optima and centres == pytest.approx([0.0, 1.0])
    assert legend(figure) == ["Q-learner (n=1)", "marginal value theorem (optimum)"]


# -- reproductions of spec experiments ---------------------------------------------------------
def test_steps_per_episode_figure_draws_each_agents_mean_and_band(saved, tmp_path, monkeypatch):
    rows = []
    for label, base in (("TD-Q", 100.0), ("MBV", 20.0)):
        for run in (0, 1):
            rows += [episode(label, run, 0, "learn", e, base - 10 * e + run) for e in range(3)]
            rows += [episode(label, run, 1, "goal moves", e, base / 2 + 2 * run) for e in range(2)]
    monkeypatch.setattr(reproduce, "recorded_episodes", lambda store, name: rows)
    path = tmp_path / "steps.png"
    reproduce._draw_steps_per_episode(("TD-Q", "MBV"))(None, NAME, str(path))
    figure = only_figure(saved, path)
    (ax,) = figure.axes
    lines = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
    assert list(lines) == ["TD-Q", "MBV"] and legend(figure) == ["TD-Q", "MBV"]
    assert np.allclose(lines["TD-Q"].get_ydata(), [100.5, 90.5, 80.5, 51.0, 51.0])
    assert np.allclose(lines["MBV"].get_ydata(), [20.5, 10.5, 0.5, 11.0, 11.0])
    change = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert [list(line.get_xdata()) for line in change] == [[2.5, 2.5]]  # between the phases
    assert [t.get_text() for t in ax.texts] == ["goal moves"]
    assert ax.get_ylabel() == "steps per episode" and ax.get_xlabel() == "episode"
    assert ax.get_legend().get_title().get_text() == "mean of 2 runs\nband: 1 SE"
    bands = ax.collections
    assert len(bands) == 2
    top = bands[0].get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(100.5 + 0.5)  # one standard error of (100, 101)
    assert ax.get_ylim()[1] >= top  # nothing is cut off


def test_phase_returns_bars_are_each_runs_mean_test_return(saved, tmp_path, monkeypatch):
    rows = [episode("model-based", 0, 0, "learn", 0, ret=0.0)]  # not the test phase
    rows += [episode("model-based", run, 1, "test", e, ret=r) for run, rs in ((0, (1, 1)), (1, (1, 0)))
             for e, r in enumerate(rs)]
    rows += [episode("model-free (Q)", run, 1, "test", e, ret=0.0) for run in (0, 1) for e in range(2)]
    monkeypatch.setattr(reproduce, "recorded_episodes", lambda store, name: rows)
    path = tmp_path / "returns.png"
    reproduce._draw_phase_returns(None, NAME, str(path))
    figure = only_figure(saved, path)
    assert_bars(figure, {("model-based", "test"): mean_se(1.0, 0.5), ("model-free (Q)", "test"): (0.0, 0.0)})
    assert legend(figure) == ["model-based (n=2)", "model-free (Q) (n=2)"]
    assert figure.axes[0].get_ylabel() == "mean return per test episode"


def test_stay_bars_are_the_runs_stay_probabilities_in_daws_order(saved, tmp_path, monkeypatch):
    stay = {("hybrid w=0.0", condition): [0.8, 0.6] for condition in figures.STAY_ORDER}
    stay.update({("hybrid w=1.0", "rewarded_common"): [0.9, 0.9], ("hybrid w=1.0", "rewarded_rare"): [0.3, 0.5],
                 ("hybrid w=1.0", "unrewarded_common"): [0.4, 0.2], ("hybrid w=1.0", "unrewarded_rare"): [0.7, 0.7]})
    panels = {("rewardgym/two-step", agent, after): values for (agent, after), values in stay.items()}
    monkeypatch.setattr(figures, "stay_by_panel", lambda store, name, *selection: panels)
    path = tmp_path / "stay.png"
    assert figures.plot_experiment(None, NAME, str(path), kind="stay") == "stay"
    figure = only_figure(saved, path)
    assert_bars(figure, {key: mean_se(*values) for key, values in stay.items()})
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [c.replace("_", "\n") for c in figures.STAY_ORDER]
    assert ax.get_ylabel() == "P(repeat first choice)" and chance_line(figure) == 0.5
    assert legend(figure) == ["hybrid w=0.0 (n=2)", "hybrid w=1.0 (n=2)", "chance (0.5)"]


def test_revaluation_bars_are_the_runs_scores_in_the_specs_order(saved, tmp_path, monkeypatch):
    scores = {("TD-SR", "reward"): [0.9, 0.7], ("TD-SR", "transition"): [0.0, 0.0],
              ("model-based", "reward"): [1.0, 1.0], ("model-based", "transition"): [0.8, 0.6]}
    panels = {("neuronav/graph/human_a", agent, condition): values for (agent, condition), values in scores.items()}
    monkeypatch.setattr(figures, "revaluation_by_panel", lambda store, name, *selection: panels)
    path = tmp_path / "revaluation.png"
    assert figures.plot_experiment(None, NAME, str(path)) == "revaluation"
    figure = only_figure(saved, path)
    assert_bars(figure, {key: mean_se(*values) for key, values in scores.items()})
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["reward", "transition"]
    assert [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "zero-label"] == ["0"]


def test_choice_bars_are_the_test_phases_choice_rates(saved, tmp_path, monkeypatch):
    choices = {("q", "test: action 0"): [0.9, 0.7], ("q", "test: action 1"): [0.1, 0.3],
               ("sr", "test: action 0"): [0.5, 0.5], ("sr", "test: action 1"): [0.5, 0.5]}
    panels = {("t", agent, group): values for (agent, group), values in choices.items()}
    monkeypatch.setattr(figures, "choices_in_test_phases", lambda store, name, *selection: panels)
    path = tmp_path / "choices.png"
    assert figures.plot_experiment(None, NAME, str(path), kind="choices") == "choices"
    figure = only_figure(saved, path)
    assert_bars(figure, {key: mean_se(*values) for key, values in choices.items()})
    assert chance_line(figure) == 0.5  # two actions: chance is 1/2


# -- studies (run here with one seed: they record nothing) ---------------------------------------
@pytest.mark.slow
def test_dabney_lines_are_the_cells_values_the_checks_read(saved, tmp_path):
    from graphtasks.experiments import studies

    path = tmp_path / "dabney.png"
    rho, spread, flat = studies.dabney2020(1, str(path), reproduce._measured)
    figure = only_figure(saved, path)
    (ax,) = figure.axes
    dist, classical = ax.lines
    assert [dist.get_label(), classical.get_label()] == legend(figure) == [
        "distributional (asymmetric rates)", "classical TD (equal rates)"]
    tau = (np.arange(20) + 0.5) / 20
    assert np.allclose(dist.get_xdata(), tau) and np.allclose(classical.get_xdata(), tau)
    assert rho.measured == round(studies.spearman(tau, dist.get_ydata()), 3)  # one run: the figure is that run
    assert spread.measured == round(float(np.ptp(dist.get_ydata())), 3)
    assert flat.measured == round(float(np.ptp(classical.get_ydata())), 3)
    assert ax.get_title().endswith("(mean of 1 run)")


def test_schapiro_images_are_the_correlations_the_checks_read(saved, tmp_path):
    from graphtasks.experiments import studies

    path = tmp_path / "schapiro.png"
    sr, one_hot = studies.schapiro2013(1, str(path), reproduce._measured)
    figure = only_figure(saved, path)
    left, right = (ax for ax in figure.axes if ax.get_label() != "<colorbar>")
    (sr_image,), (one_hot_image,) = left.images, right.images
    assert sr.measured == round(studies._within_minus_between(np.asarray(sr_image.get_array())), 3)
    assert np.allclose(one_hot_image.get_array(), np.corrcoef(np.eye(15)))
    assert one_hot.measured == round(studies._within_minus_between(np.asarray(one_hot_image.get_array())), 3)
    for ax in (left, right):  # states are whole numbers
        assert all(float(t).is_integer() for t in [*ax.get_xticks(), *ax.get_yticks()])
    assert figure.axes[-1].get_ylabel() == "correlation of representations"


def test_cued_maze_bars_are_the_shares_the_checks_read(saved, tmp_path):
    path = tmp_path / "cued.png"
    keeps, blind = decision.cued_maze_study(1, str(path), reproduce._measured)
    figure = only_figure(saved, path)
    got = bars(figure)
    assert sorted(got) == [("cell only", "last 100 episodes"), ("keeps the cue", "last 100 episodes")]
    assert keeps.measured == round(got["keeps the cue", "last 100 episodes"][0] - 0.5, 3)
    assert blind.measured == round(abs(got["cell only", "last 100 episodes"][0] - 0.5), 3)
    assert chance_line(figure) == 0.5


FIGURE_TESTS = {  # reproduction -> the test above that reads its figure back
    "cools2002-reversal": test_reversal_bars_are_the_runs_perseverative_errors,
    "cools2002-reversal-criterion": test_criterion_bars_are_errors_and_reversals_replayed_from_the_choices,
    "frank2004-selection": test_selection_bars_are_training_accuracy_and_test_choices,
    "bechara1994-iowa": test_iowa_bars_are_the_share_of_good_decks_per_block,
    "daw2006-restless-bandit": test_restless_bars_are_switch_rates,
    "wilson2014-horizon": test_horizon_bars_are_the_less_known_arm_in_unequal_games,
    "tolman1930-latent-learning": test_latent_learning_bars_are_test_steps_per_condition,
    "charnov1976-foraging": test_foraging_bars_are_the_learnt_and_the_optimal_leaving_times,
    "bakker2002-cued-t-maze": test_cued_maze_bars_are_the_shares_the_checks_read,
    "russek2017-reward-transfer": test_steps_per_episode_figure_draws_each_agents_mean_and_band,
    "russek2017-structure-transfer": test_steps_per_episode_figure_draws_each_agents_mean_and_band,
    "russek2017-reward-transfer-tested": test_phase_returns_bars_are_each_runs_mean_test_return,
    "russek2017-structure-transfer-tested": test_phase_returns_bars_are_each_runs_mean_test_return,
    "daw2011-two-step": test_stay_bars_are_the_runs_stay_probabilities_in_daws_order,
    "momennejad2017-design-a": test_revaluation_bars_are_the_runs_scores_in_the_specs_order,
    "momennejad2017-design-b": test_revaluation_bars_are_the_runs_scores_in_the_specs_order,
    "dabney2020-distributional": test_dabney_lines_are_the_cells_values_the_checks_read,
    "schapiro2013-communities": test_schapiro_images_are_the_correlations_the_checks_read,
}
# Too slow for the suite's budget with even one seed (3.5-7 s each on 2 cores); looked at by eye.
LOOKED_AT = {"stachenfeld2017-place-fields", "zorowitz2020-pessimism", "eldar2016-mood"}


def test_every_reproductions_figure_is_read_back_by_a_test():
    """Adding a reproduction without a test of its figure fails here: add one above (a figure
    test reads the numbers the figure plots back from its artists) and name it in FIGURE_TESTS."""
    missing = sorted(set(reproduce.REPRODUCTIONS) - set(FIGURE_TESTS) - LOOKED_AT)
    assert missing == [], f"reproductions whose figure no test reads back: {missing}"
