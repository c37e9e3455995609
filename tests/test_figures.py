"""What the project's figures plot, read back from their artists: learning-curve bands (the
standard error across runs of the smoothed runs), distinguishable lines and the note when
curves coincide, zero bars, `run --plot`'s axes, the fitting figure's panels and the
test-phase choice figure."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.colors as mcolors
import numpy as np
import pytest
from matplotlib.collections import PolyCollection

from graphtasks.experiments.figures import bars_figure, learning_curves_figure, trailing_mean

pytest.importorskip("matplotlib")


def rows_of(values: dict[str, np.ndarray]) -> list[dict]:
    """Episode rows of agents' (runs, episodes) returns."""
    return [
        {"task": "t", "label": label, "run": run, "phase_index": 0, "phase": "learning", "episode": e,
         "return": float(table[run, e])}
        for label, table in values.items()
        for run in range(table.shape[0])
        for e in range(table.shape[1])
    ]


def band_halfwidth(figure, label: str) -> np.ndarray:
    """Half the band's height at each episode, from the polygon fill_between drew."""
    (band,) = [a for a in figure.findobj(PolyCollection) if a.get_gid() == f"band:{label}"]
    vertices = np.concatenate([path.vertices for path in band.get_paths()])
    xs = np.unique(vertices[:, 0])
    assert np.allclose(xs, np.arange(1, len(xs) + 1))
    return np.array([np.ptp(vertices[vertices[:, 0] == x, 1]) / 2 for x in xs])


def test_smoothed_band_is_the_error_of_the_smoothed_runs() -> None:
    rng = np.random.default_rng(0)
    table = (rng.random((10, 200)) < 0.5).astype(float)  # coin-flip rewards: per-episode SE about 0.16
    figure = learning_curves_figure(rows_of({"q": table}), smooth=20)
    half = band_halfwidth(figure, "q")
    smoothed = np.array([trailing_mean(run, 20) for run in table])
    expected = smoothed.std(axis=0, ddof=1) / np.sqrt(10)
    assert np.allclose(half, expected)
    old = trailing_mean(table.std(axis=0, ddof=1) / np.sqrt(10), 20)  # what the band was: mean of per-episode SEs
    assert half[20:].mean() < 0.5 * old[20:].mean()
    (line,) = [a for a in figure.axes[0].lines if a.get_gid() == "curve:q"]
    assert np.allclose(line.get_ydata(), smoothed.mean(axis=0))
    assert line.get_xdata()[0] == 1 and len(line.get_xdata()) == 200  # every episode, from the first
    assert figure.axes[0].get_xlim() == (0.5, 200.5)


def test_four_agents_differ_in_colour_dashes_and_markers_and_coinciding_curves_are_named() -> None:
    base = np.tile(np.linspace(0, 1, 30), (3, 1))
    figure = learning_curves_figure(rows_of({"q": base, "sr": base.copy(), "dyna": base * 0.5, "mbv": base * 0.2}))
    lines = [a for a in figure.axes[0].lines if (a.get_gid() or "").startswith("curve:")]
    assert len(lines) == 4
    for attribute in ("get_linestyle", "get_marker"):
        assert len({getattr(line, attribute)() for line in lines}) == 4, attribute
    assert len({mcolors.to_hex(line.get_color()) for line in lines}) == 4
    notes = [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "coincide-note"]
    assert notes == ["q and sr coincide: their lines lie on top of each other"]
    apart = learning_curves_figure(rows_of({"q": base, "dyna": base * 0.5}))
    assert not [t for t in apart.axes[0].texts if t.get_gid() == "coincide-note"]


def test_zero_bars_are_drawn_and_labelled() -> None:
    table = {("q", "a"): (0.0, 0.0, 5), ("q", "b"): (0.4, 0.05, 5), ("sr", "a"): (0.2, 0.02, 5),
             ("sr", "b"): (0.0, 0.0, 5), ("dyna", "a"): (0.5, 0.1, 5), ("dyna", "b"): (0.3, 0.1, 5)}
    figure = bars_figure(table, "P")
    bars = [p for p in figure.axes[0].patches if (p.get_gid() or "").startswith("bar:")]
    assert len(bars) == 6
    zero = [b for b in bars if b.get_height() == 0]
    assert len(zero) == 2 and all(b.get_linewidth() > 0 and b.get_edgecolor()[3] > 0 for b in zero)
    assert [t.get_text() for t in figure.axes[0].texts if t.get_gid() == "zero-label"] == ["0", "0"]
    assert len({b.get_hatch() for b in bars}) == 3  # three agents: hatching tells them apart in grey too


def test_run_plot_shows_every_episode_on_an_axis_from_zero() -> None:
    from graphtasks.commands.run_cmd import run_figure

    rewards = [1.0] * 3 + [0.0] + [1.0] * 46
    figure = run_figure(rewards, {"task": "t", "agent": "q"})
    ax = figure.axes[0]
    (mean,) = [line for line in ax.lines if line.get_gid() == "mean"]
    assert list(mean.get_xdata()) == list(range(1, 51))  # the first episodes are not dropped
    assert mean.get_ydata()[0] == 1.0 and ax.get_ylim()[0] <= 0 and ax.get_ylim()[1] >= 1
    assert ax.get_xlim() == (0.5, 50.5)


def test_fitting_figure_has_no_empty_panels(tmp_path: Path) -> None:
    from graphtasks.fitting.figures import plot_fits

    def fits(names):
        return [{"model": "hybrid", "method": "mle", "label": f"w={w}", "run": run,
                 "params": {n: 0.1 * run for n in names}, "stderr": {n: 0.01 for n in names}}
                for run, w in enumerate([0.0, 0.5, 1.0])]

    def axes_in(path: Path) -> list[str]:
        return re.findall(r'<g id="(axes_\d+)">', path.read_text())

    four = tmp_path / "four.svg"
    plot_fits(fits(["beta", "lr", "perseveration", "w"]), str(four), "x")
    assert len(axes_in(four)) == 4  # 2 x 2, not 3 + 1 and two blanks
    five = tmp_path / "five.svg"
    plot_fits(fits(["a", "b", "c", "d", "e"]), str(five), "x")
    text = five.read_text()
    assert len(axes_in(five)) == 6 and 'id="legend_1"' in text.split('<g id="axes_6">')[1]  # the spare holds the legend


@pytest.mark.slow
def test_test_phase_choice_figure(tmp_path: Path, capsys) -> None:
    from graphstore import open_store
    from graphtasks.cli import main
    from graphtasks.experiments.figures import choices_in_test_phases

    spec = tmp_path / "spec.toml"
    spec.write_text("""
[experiment]
name = "choices"
tasks = ["rewardgym/two-armed-bandit"]
seeds = [1, 2]

[[agents]]
name = "q"

[[phases]]
name = "learning"
episodes = 30

[[phases]]
name = "test"
episodes = 10
learn = false
""")
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress"]) == 0
    with open_store(store, "r") as opened:
        choices = choices_in_test_phases(opened, "choices")
    bandit = "rewardgym/two-armed-bandit"
    assert set(choices) == {(bandit, "q", "test: action 0"), (bandit, "q", "test: action 1")}
    assert np.allclose(np.add(choices[(bandit, "q", "test: action 0")], choices[(bandit, "q", "test: action 1")]), 1.0)
    picture = tmp_path / "choices.png"
    assert main(["--store", store, "experiment", "plot", "choices", "--kind", "choices", "-o", str(picture)]) == 0
    assert picture.stat().st_size > 0
    capsys.readouterr()
