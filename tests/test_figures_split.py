"""Figures split what differs (issue 41, "Nothing silent"), read back from the saved Figure's
artists: one panel per task and condition, never pooled; stay bars only on two-step-like
tasks (a named other task refused in one line); smoothing that restarts at each phase; a
wrapped grid (`--columns`); a test-phase figure of returns; `participants stay` that never
merges two experiments' agents of the same label; nothing cut at the figure's edges; the
nearest name for a misspelt experiment or task. The stores are small experiments run here
(two seeds, a few dozen episodes: about two seconds each)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from graphstore import open_store  # noqa: E402
from graphtasks.cli import main  # noqa: E402
from graphtasks.experiments import figures  # noqa: E402
from graphtasks.experiments.ids import experiment_uid  # noqa: E402
from graphtasks.experiments.records import recorded_episodes, stay_rows, step_rows  # noqa: E402

TWO_STEP, BANDIT, HUMAN_B = "rewardgym/two-step", "rewardgym/two-armed-bandit", "neuronav/graph/human_b"

MIXED = f"""
[experiment]
name = "mixed"
tasks = ["{TWO_STEP}", "{BANDIT}"]
seeds = 2

[[agents]]
name = "q"
label = "Q"

[[agents]]
name = "hybrid"
params = {{ w = 0.5 }}
tasks = ["{TWO_STEP}"]

[[phases]]
name = "learning"
episodes = 30

[[phases]]
name = "test"
episodes = 10
learn = false
"""

# Reward revaluation on a two-stage choice: in the reward condition the ends' rewards change,
# experienced from the ends only; a greedy test then shows who revalued the first choice.
REVALUATION = f"""
[experiment]
name = "reval"
tasks = ["{HUMAN_B}"]
seeds = 2
record = "steps"

[[agents]]
name = "mbv"
label = "MBV"
params = {{ gamma = 0.9, beta = 1e-4 }}

[[agents]]
name = "q"
label = "Q"
params = {{ lr = 0.1, gamma = 0.9, beta = 1e-4 }}

[[phases]]
name = "learning"
episodes = 40
max_episode_steps = 3

[[phases]]
name = "relearning"
episodes = 40
max_episode_steps = 3

[[phases]]
name = "test"
episodes = 6
max_episode_steps = 3
learn = false
agent = {{ beta = 20.0 }}

[[conditions]]
name = "control"

[[conditions]]
name = "reward"
[conditions.phases.relearning]
start = {{ random = [3, 4, 5] }}
changes = {{ rewards = {{ "3" = 45.0, "4" = 0, "5" = 30.0 }} }}
"""


def recorded(tmp_path_factory: Any, *specs: str) -> str:
    """A store with these specs run into it."""
    folder = tmp_path_factory.mktemp("store")
    store = str(folder / "store.lbug")
    for i, text in enumerate(specs):
        spec = folder / f"spec{i}.toml"
        spec.write_text(text)
        assert main(["--store", store, "experiment", "run", str(spec), "--no-progress"]) == 0
    return store


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> str:
    return recorded(tmp_path_factory, MIXED)


@pytest.fixture(scope="module")
def revaluation(tmp_path_factory) -> str:
    return recorded(tmp_path_factory, REVALUATION)


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


def plot(store: str, *args: str, tmp_path: Path, saved: list[Figure], capsys) -> tuple[Figure, str]:
    """`graphtasks experiment plot ARGS`: the figure it saved and what it printed."""
    capsys.readouterr()
    picture = tmp_path / "figure.png"
    assert main(["--store", store, "experiment", "plot", *args, "-o", str(picture)]) == 0
    assert picture.read_bytes()[:4] == b"\x89PNG" and len(saved) == 1
    return saved.pop(), capsys.readouterr().out


def refused(store: str, *args: str, tmp_path: Path, capsys) -> str:
    """The one line `graphtasks experiment plot ARGS` refuses with (exit 2, nothing written)."""
    capsys.readouterr()
    picture = tmp_path / "refused.png"
    assert main(["--store", store, "experiment", "plot", *args, "-o", str(picture)]) == 2
    assert not picture.exists()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def panel_bars(figure: Figure) -> dict[str, dict[tuple[str, str], float]]:
    """Panel title -> (agent, x tick label) -> the bar's height, from the bars' containers."""
    out: dict[str, dict[tuple[str, str], float]] = {}
    for ax in figure.axes:
        ticks = {round(float(x)): t.get_text().replace("\n", "_")
                 for x, t in zip(ax.get_xticks(), ax.get_xticklabels())}
        heights = out.setdefault(ax.get_title(), {})
        for container in ax.containers:
            if isinstance(container, BarContainer):
                agent = container.get_label().rsplit(" (n=", 1)[0]
                for patch in container.patches:
                    if not np.isnan(patch.get_height()):
                        heights[agent, ticks[round(patch.get_x() + patch.get_width() / 2)]] = patch.get_height()
    return out


def assert_nothing_cut(figure: Figure) -> None:
    """Everything drawn (titles, notes, tick labels, the legend) lies inside the figure: its
    tight bounding box (what `bbox_inches="tight"` would crop to) is within the figure's."""
    canvas = FigureCanvasAgg(figure)  # pyplot closed the figure once it was saved: draw it again
    canvas.draw()
    tight = figure.get_tightbbox(canvas.get_renderer())
    width, height = figure.get_size_inches()
    slack = 1 / figure.dpi
    assert tight.x0 >= -slack and tight.y0 >= -slack, tight
    assert tight.x1 <= width + slack and tight.y1 <= height + slack, (tight, width, height)


def legend_texts(figure: Figure) -> list[str]:
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()] + list(figure.legends)
    assert len(legends) == 1
    return [t.get_text() for t in legends[0].get_texts()]


@pytest.mark.slow
def test_a_revaluation_specs_choice_figure_shows_the_result_by_condition(revaluation, tmp_path, saved, capsys):
    """Pooled over conditions MBV's first choice sat at 0.5; split, it goes from 0 (control)
    to 1 (reward), and Q's bars are its own runs' choices in each condition."""
    figure, out = plot(revaluation, "reval", "--kind", "choices", tmp_path=tmp_path, saved=saved, capsys=capsys)
    assert out.startswith("test-phase choices written to")
    bars = panel_bars(figure)
    assert list(bars) == [f"{HUMAN_B}, control", f"{HUMAN_B}, reward"]
    control, reward = bars.values()
    assert control["MBV", "test: action 0"] == 0.0 and reward["MBV", "test: action 0"] == 1.0
    with open_store(revaluation, "r") as store:  # Q's share of first choices of action 0, per condition
        conditions = dict(store.cypher("MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.condition",
                                       {"uid": experiment_uid("reval")}).rows)
        rows = [(conditions[t["run"]], t["run"], t["action"]) for t in step_rows(store, "reval", (0,))
                if t["phase_index"] == 2 and t["label"] == "Q"]
    for condition, panel in (("control", control), ("reward", reward)):
        runs = {run for c, run, _ in rows if c == condition}
        share = np.mean([np.mean([a == 0 for c, r, a in rows if r == run]) for run in runs])
        assert panel["Q", "test: action 0"] == pytest.approx(share)
        assert panel["Q", "test: action 0"] + panel["Q", "test: action 1"] == pytest.approx(1.0)
    for ax in figure.axes:  # chance is one over the task's two first actions, in each panel
        (line,) = [line for line in ax.lines if line.get_gid() == "reference"]
        assert line.get_ydata()[0] == 0.5
    assert legend_texts(figure) == ["MBV (n=2)", "Q (n=2)", "chance (0.5)"]
    assert_nothing_cut(figure)
    figure, _ = plot(revaluation, "reval", "--kind", "choices", "--condition", "reward", tmp_path=tmp_path,
                     saved=saved, capsys=capsys)
    assert list(panel_bars(figure)) == [f"{HUMAN_B}, reward"]


@pytest.mark.slow
def test_the_test_phase_figure_is_each_runs_mean_return_per_task_and_condition(revaluation, tmp_path, saved,
                                                                               capsys):
    figure, out = plot(revaluation, "reval", "--kind", "test", tmp_path=tmp_path, saved=saved, capsys=capsys)
    assert out.startswith("test-phase returns written to")
    with open_store(revaluation, "r") as store:
        rows = [r for r in recorded_episodes(store, "reval") if r["phase"] == "test"]
    expected: dict[str, dict[tuple[str, str], float]] = {}
    for condition in ("control", "reward"):
        for label in ("MBV", "Q"):
            runs = sorted({r["run"] for r in rows if r["condition"] == condition and r["label"] == label})
            means = [np.mean([r["return"] for r in rows if r["run"] == run]) for run in runs]
            expected.setdefault(f"{HUMAN_B}, {condition}", {})[label, "test"] = float(np.mean(means))
    got = panel_bars(figure)
    assert got.keys() == expected.keys()
    for panel, bars in expected.items():
        assert got[panel] == pytest.approx(bars)
    assert [ax.get_ylabel() for ax in figure.axes] == ["mean return per test episode"] * 2
    assert_nothing_cut(figure)
    assert "has no recorded episodes in a test phase" in refused(
        recorded_mixed_without_test(tmp_path), "plain", "--kind", "test", tmp_path=tmp_path, capsys=capsys)


def recorded_mixed_without_test(tmp_path: Path) -> str:
    store = str(tmp_path / "plain.lbug")
    spec = tmp_path / "plain.toml"
    spec.write_text(MIXED.replace('"mixed"', '"plain"').split("[[phases]]\nname = \"test\"")[0]
                    .replace("episodes = 30", "episodes = 5"))
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress"]) == 0
    return store


@pytest.mark.slow
def test_stay_bars_only_on_two_step_like_tasks(mixed, tmp_path, saved, capsys):
    """The bandit's trials used to enter the two-step stay bars; now its task is left out and
    named, and asking for it by name is refused."""
    with open_store(mixed, "r") as store:
        task_of = dict(store.cypher("MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.task",
                                    {"uid": experiment_uid("mixed")}).rows)
        rows = stay_rows(store, "mixed")
    assert {task_of[run] for _, run, _, _ in rows} == {TWO_STEP, BANDIT}  # the query counts the bandit's trials
    expected: dict[tuple[str, str], list[float]] = {}
    for label, run, after, stay in rows:
        if task_of[run] == TWO_STEP:
            expected.setdefault((label, after), []).append(stay)
    figure, out = plot(mixed, "mixed", "--kind", "stay", tmp_path=tmp_path, saved=saved, capsys=capsys)
    assert out.splitlines()[1] == f"not drawn: {BANDIT} (no two-step structure)"
    assert f"not drawn: {BANDIT} (no two-step structure)" in figure.get_suptitle().replace("\n", " ")
    bars = panel_bars(figure)
    assert list(bars) == [TWO_STEP]
    assert bars[TWO_STEP] == pytest.approx({key: float(np.mean(v)) for key, v in expected.items()})
    assert all(len(v) == 2 for v in expected.values())  # two seeds of each agent on the two-step task only
    assert_nothing_cut(figure)
    line = refused(mixed, "mixed", "--kind", "stay", "--task", BANDIT, tmp_path=tmp_path, capsys=capsys)
    assert line == (f"graphtasks: error: task '{BANDIT}' of experiment 'mixed': its first choices do not lead on "
                    "by chance (no common and rare transitions): no stay probabilities")
    figure, _ = plot(mixed, "mixed", "--kind", "stay", "--task", TWO_STEP, tmp_path=tmp_path, saved=saved,
                     capsys=capsys)
    assert list(panel_bars(figure)) == [TWO_STEP]


def test_curves_are_split_by_task_and_auto_draws_them_for_mixed_tasks(mixed, tmp_path, saved, capsys):
    figure, out = plot(mixed, "mixed", tmp_path=tmp_path, saved=saved, capsys=capsys)
    assert out.startswith("learning curves written to")  # not stay bars: the bandit is no two-step task
    assert [ax.get_title() for ax in figure.axes] == [TWO_STEP, BANDIT]
    lines = {ax.get_title(): {line.get_gid(): line for line in ax.lines if (line.get_gid() or "").startswith("curve:")}
             for ax in figure.axes}
    assert set(lines[TWO_STEP]) == {"curve:Q", "curve:hybrid"} and set(lines[BANDIT]) == {"curve:Q"}
    assert lines[TWO_STEP]["curve:Q"].get_color() == lines[BANDIT]["curve:Q"].get_color()  # one colour per agent
    with open_store(mixed, "r") as store:
        rows = recorded_episodes(store, "mixed")
    bandit = np.array([[r["return"] for r in rows if r["run"] == run] for run in
                       sorted({r["run"] for r in rows if r["task"] == BANDIT})])
    assert np.allclose(lines[BANDIT]["curve:Q"].get_ydata(), bandit.mean(axis=0))  # the bandit's runs only
    figure, _ = plot(mixed, "mixed", "--kind", "curves", "--task", BANDIT, tmp_path=tmp_path, saved=saved,
                     capsys=capsys)
    assert [ax.get_title() for ax in figure.axes] == [BANDIT]


def rows_of(tasks: list[str], conditions: tuple[str, ...] = ("",), phases: tuple[int, ...] = (10,)) -> list[dict]:
    """Episode rows of two agents on these tasks: return = the phase's index, each phase
    `phases[i]` episodes long."""
    return [{"task": task, "condition": condition, "label": label, "run": run, "phase_index": p, "phase": f"phase {p}",
             "episode": e, "return": float(p)}
            for task in tasks for condition in conditions for label in ("q", "sr") for run in (0, 1)
            for p, n in enumerate(phases) for e in range(n)]


def test_smoothing_restarts_at_each_phase_and_phase_boundaries_are_drawn():
    """A test at 1.0 throughout after a learning phase at 0: drawn at 1.0 from its first
    episode (it was drawn rising through the window, averaged with the learning phase)."""
    figure = figures.learning_curves_figure(rows_of(["t"], phases=(20, 10)), smooth=10)
    (ax,) = figure.axes
    (line,) = [line for line in ax.lines if line.get_gid() == "curve:q"]
    assert list(line.get_ydata()) == [0.0] * 20 + [1.0] * 10
    (boundary,) = [line for line in ax.lines if (line.get_gid() or "").startswith("phase-boundary:")]
    assert boundary.get_gid() == "phase-boundary:phase 1" and list(boundary.get_xdata()) == [20.5, 20.5]
    assert [t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("phase-name:")] == ["phase 0", "phase 1"]
    assert "restarted at each phase" in legend_texts_title(figure)


def legend_texts_title(figure: Figure) -> str:
    (legend,) = figure.legends
    return legend.get_title().get_text().replace("\n", " ")


@pytest.mark.slow
def test_six_tasks_wrap_into_a_grid_with_nothing_cut():
    """Six tasks' curves were one row of 4,608 x 600 px; now three columns (or --columns)."""
    tasks = [f"family/a-rather-long-task-name-{i}" for i in range(6)]
    figure = figures.learning_curves_figure(rows_of(tasks), title="six tasks")
    positions = sorted({(round(ax.get_position().y0, 3), round(ax.get_position().x0, 3)) for ax in figure.axes})
    assert len(figure.axes) == 6 and len({y for y, _ in positions}) == 2 and len({x for _, x in positions}) == 3
    width, height = figure.get_size_inches() * 120
    assert width < 2100 and height < 1200
    assert [ax.get_title() for ax in figure.axes] == tasks
    assert_nothing_cut(figure)
    two = figures.learning_curves_figure(rows_of(tasks), columns=2)
    assert len({round(ax.get_position().y0, 3) for ax in two.axes}) == 3
    assert_nothing_cut(two)
    split = figures.learning_curves_figure(rows_of(["t"], conditions=("control", "reward")))
    assert [ax.get_title() for ax in split.axes] == ["t, control", "t, reward"]  # conditions never pooled


def test_grid_of_bars_keeps_agents_colours_and_wraps():
    values = {(f"task {p}", agent, group): [1.0, 0.5] for p in range(4) for agent in ("a", "b", "c")
              for group in ("x", "y")}
    del values["task 1", "a", "x"], values["task 1", "a", "y"]  # agent a did not run task 1
    figure = figures.panel_bars_figure(values, "P", "a title long enough to be wrapped " * 4, columns=3)
    colours = {}
    for ax in figure.axes:
        for container in ax.containers:
            if isinstance(container, BarContainer):
                colours.setdefault(container.get_label().rsplit(" (n=", 1)[0], set()).add(
                    tuple(container.patches[0].get_facecolor()))
    assert all(len(c) == 1 for c in colours.values()) and len({c.pop() for c in colours.values()}) == 3
    assert len({round(ax.get_position().y0, 3) for ax in figure.axes}) == 2
    assert_nothing_cut(figure)


def test_misspelt_names_get_the_nearest_one(mixed, tmp_path, capsys):
    assert refused(mixed, "mixd", tmp_path=tmp_path, capsys=capsys) == (
        "graphtasks: error: no recorded experiment 'mixd'; recorded: mixed; did you mean 'mixed'?")
    assert refused(mixed, "mixed", "--task", "rewardgym/two-stp", tmp_path=tmp_path, capsys=capsys) == (
        "graphtasks: error: experiment 'mixed' has no task 'rewardgym/two-stp' (did you mean 'rewardgym/two-step'?); "
        f"its tasks: {TWO_STEP}, {BANDIT}")
    assert refused(mixed, "mixed", "--condition", "reward", tmp_path=tmp_path, capsys=capsys) == (
        "graphtasks: error: experiment 'mixed' has no conditions: condition 'reward' selects nothing")
    assert refused(mixed, "mixed", "--columns", "0", tmp_path=tmp_path, capsys=capsys) == (
        "graphtasks: error: --columns: expected a positive number of panels side by side, got 0")


@pytest.mark.slow
def test_participants_stay_keeps_two_experiments_hybrids_apart(tmp_path_factory, tmp_path, saved, capsys):
    """Two experiments' `hybrid` (w 0.6 and 0.7) were one bar of their four runs."""
    spec = "[experiment]\nname = \"{name}\"\ntasks = [\"rewardgym/two-step\"]\nseeds = 2\n\n[[agents]]\n" \
           "name = \"hybrid\"\nparams = {{ w = {w} }}\n\n[[phases]]\nname = \"trials\"\nepisodes = 30\n"
    store = recorded(tmp_path_factory, spec.format(name="exp-a", w=0.6), spec.format(name="exp-b", w=0.7))
    capsys.readouterr()
    picture = tmp_path / "stay.png"
    assert main(["--store", store, "participants", "stay", "exp-a", "--agents", "exp-b", "-o", str(picture)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[0] for line in lines[:2]] == ["hybrid (exp-a", "hybrid (exp-b"]
    assert lines[0].startswith("hybrid (exp-a: w=0.6) (2 runs): ")
    assert lines[1].startswith("hybrid (exp-b: w=0.7) (2 runs): ")
    (figure,) = saved
    with open_store(store, "r") as opened:
        expected = {}
        for name, group in (("exp-a", "hybrid (exp-a: w=0.6)"), ("exp-b", "hybrid (exp-b: w=0.7)")):
            per_run: dict[str, list[float]] = {}
            for _, _, after, stay in stay_rows(opened, name):
                per_run.setdefault(after, []).append(stay)
            expected.update({(group, after): float(np.mean(v)) for after, v in per_run.items()})
    (bars,) = panel_bars(figure).values()
    assert bars == pytest.approx(expected)
    assert legend_texts(figure)[:2] == ["hybrid (exp-a: w=0.6) (n=2)", "hybrid (exp-b: w=0.7) (n=2)"]
    assert figure.axes[0].get_ylim()[1] > 1.0  # an error bar reaching past 1 is not cut off
    assert_nothing_cut(figure)
