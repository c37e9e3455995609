"""Fits choose their data and say what they took (issue 41, finding 5), and their figures
are fit for a paper (finding 6): read back from the Figure's artists.

One small study store serves the command-line tests: a two-step study with a practice and a
main phase, whose spec's agent ran two runs (`graphtasks experiment run`: their trials in the
store's record chunks), played through the study server (in this process, no HTTP) by two
people and two pilots (the spec's agent playing through the server, as `graphtasks serve
--pilot` does; their trials Trial nodes): two runs of people and four of agents in one
experiment, as the issue's study had four simulated runs beside nine sessions.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure  # noqa: E402

from graphstore import open_store  # noqa: E402
from graphtasks.cli import main  # noqa: E402
from graphtasks.fitting import selection as selection_module  # noqa: E402
from graphtasks.fitting.bms import random_effects  # noqa: E402
from graphtasks.fitting.figures import bounded_interval, interval_in_bounds, plot_fits, plot_model_selection  # noqa: E402
from graphtasks.fitting.records import recorded_fits  # noqa: E402
from graphtasks.fitting.selection import Selection, select_runs  # noqa: E402

STUDY = """
[experiment]
name = "mixed"
tasks = ["rewardgym/two-step"]
seeds = [3, 4]
record = "steps"

[[agents]]
name = "hybrid"
label = "model-based"
params = { lr = 0.5, beta = 5.0, w = 1.0 }

[[phases]]
name = "practice"
episodes = 3

[[phases]]
name = "main"
episodes = 12

[study]
title = "A two-step task"
keys = ["f", "j"]
practice = ["practice"]
"""
PRACTICE, MAIN = 3, 12  # trials of each phase; two choices a trial


def cli(store: Path, *args: str) -> tuple[int, str, str]:
    """`graphtasks --store STORE ARGS` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--store", str(store), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """The store of the study described above (built once for the module)."""
    from graphtasks.serve.app import StudyServer
    from graphtasks.serve.study import parse_study

    folder = tmp_path_factory.mktemp("study")
    store, path = folder / "store.lbug", folder / "study.toml"
    path.write_text(STUDY)
    assert cli(store, "experiment", "run", str(path), "--no-progress")[0] == 0
    server = StudyServer(parse_study(STUDY, str(path)), str(store))
    try:
        rng = np.random.default_rng(0)
        for pilot in (None, None, "model-based", "model-based"):
            token = server.start_session({}, pilot)["token"]
            position = server.view(token)["position"]
            while not position["done"]:
                action = int(rng.choice(position["available"]))
                position = server.post_trial(token, {"index": position["trial"], "action": action})["position"]
    finally:
        server.close()
    return store


def rows_of(out: str) -> list[dict[str, Any]]:
    """The first JSON list a command printed."""
    return json.loads(out[: out.index("\n]\n") + 3])


@pytest.mark.slow
def test_the_study_has_people_agents_and_a_pilot(study) -> None:
    with open_store(study, "r") as store:
        runs = select_runs(store, "mixed", Selection())
        people = select_runs(store, "mixed", Selection(source="people"))
        agents = select_runs(store, "mixed", Selection(source="agents"))
    assert [r.source for r in runs] == ["agents", "agents", "people", "people", "agents", "agents"]
    assert [r.run for r in people] == [2, 3] and [r.run for r in agents] == [0, 1, 4, 5]
    assert [r.key for r in agents[:2]] == ["model-based (run 0)", "model-based (run 1)"]  # no Participant
    assert all(r.key.startswith("p-") for r in people) and all(r.key.startswith("pilot-") for r in agents[2:])
    assert {r.group for r in people} == {"people"}
    assert [r.group for r in agents] == ["model-based", "model-based", "pilot: model-based", "pilot: model-based"]
    assert all(r.phases == ("practice", "main") for r in runs)


@pytest.mark.slow
def test_fit_run_takes_the_phases_runs_and_source_chosen_and_names_participants(study) -> None:
    code, out, err = cli(study, "fit", "run", "mixed", "--phase", "main", "--source", "people", "--starts", "1",
                         "--no-record", "--format", "json")
    assert code == 0, err
    fits = rows_of(out)
    assert [f["choices"] for f in fits] == [2 * MAIN, 2 * MAIN]  # the practice trials are left out
    assert [f["run"] for f in fits] == [2, 3] and all(f["participant"].startswith("p-") for f in fits)
    assert {f["source"] for f in fits} == {"people"} and {f["phases"] for f in fits} == {"main"}
    with open_store(study, "r") as store:
        pilots = [r.label for r in select_runs(store, "mixed", Selection(source="agents"))][2:]
    code, out, err = cli(study, "fit", "run", "mixed", "--label", pilots[1], "--label", "model-based", "--label",
                         pilots[0], "--starts", "1", "--no-record")
    assert code == 0, err
    table = out.splitlines()
    assert table[0].split()[:5] == ["participant", "source", "model", "method", "phases"]
    assert [line.split("  ")[0] for line in table[2:6]] == ["model-based (run 0)", "model-based (run 1)", *pilots]
    assert all(line.split()[-2:] == [str(2 * (PRACTICE + MAIN)), run] and " agents " in line
               for line, run in zip(table[2:6], "0145"))  # every phase: 30 choices
    code, out, err = cli(study, "fit", "run", "mixed", "--label", "model-based", "--phase", "main", "--starts", "1",
                         "--no-record", "--format", "json")
    assert code == 0, err  # the spec agent's runs are read from the chunks, a phase of them too
    assert [(f["participant"], f["choices"], f["phases"]) for f in rows_of(out)] == [
        ("model-based (run 0)", 2 * MAIN, "main"), ("model-based (run 1)", 2 * MAIN, "main")]


def test_a_selection_that_names_nothing_is_refused_in_one_line(study) -> None:
    with open_store(study, "r") as store:
        person = select_runs(store, "mixed", Selection(source="people"))[0].label
    for args, message in (
        (["--phase", "mian"], "--phase 'mian': experiment 'mixed' has no phase of that name (phases: practice, "
                              "main); did you mean 'main'?"),
        (["--label", "model-free"], "--label 'model-free': experiment 'mixed' has no label of that name"),
        (["--condition", "devalued"], "--condition 'devalued': experiment 'mixed' has no condition of that name "
                                      "(conditions: none)"),
        (["--label", "model-based", "--source", "people"],
         "experiment 'mixed': no run with trials matches --label model-based --source people (runs with trials: "
         "2 of people, 4 of agents)"),
        (["--phase", "practice", "--source", "agents", "--label", "{person}"],
         "experiment 'mixed': no run with trials matches --phase practice --label {person} --source agents (runs "
         "with trials: 2 of people, 4 of agents)"),
        (["--source", "people", "--runs", "4"], "--runs: run(s) [4] not taken by --source people (runs taken: "
                                                "[2, 3])"),
    ):
        args = [a.replace("{person}", person) for a in args]
        message = message.replace("{person}", person)
        code, out, err = cli(study, "fit", "run", "mixed", *args, "--no-record")
        assert code == 2 and out == "", (args, out)
        assert len(err.strip().splitlines()) == 1 and message in err, (args, err)


@pytest.fixture(scope="module")
def fitted(study) -> Path:
    """The study with every run fitted by q and model-based (once for the module)."""
    for model in ("q", "model-based"):
        assert cli(study, "fit", "run", "mixed", "--model", model, "--starts", "1")[0] == 0
    return study


@pytest.mark.slow
def test_pooling_people_with_agents_is_refused_unless_chosen(fitted) -> None:
    """`fit compare --random-effects` pooled 4 simulated runs with 9 sessions as '13
    participants'; now it refuses, names both, and takes what `--source` chooses."""
    study = fitted
    for args in (["--random-effects"], []):
        code, out, err = cli(study, "fit", "compare", "mixed", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert "would pool 2 people's runs with 4 agents' runs" in err and "--source people" in err
    code, out, err = cli(study, "fit", "run", "mixed", "--method", "em", "--starts", "1", "--no-record")
    assert code == 2 and "--method em would pool 2 people's runs with 4 agents' runs" in err
    code, out, err = cli(study, "fit", "compare", "mixed", "--random-effects", "--source", "people", "--format",
                         "json")
    assert code == 0, err
    people = json.loads(out)
    assert people["runs"] == [2, 3] and people["participants"] == 2
    assert all(k.startswith("p-") for k in people["participant_keys"])
    code, out, err = cli(study, "fit", "compare", "mixed", "--random-effects", "--source", "all", "--format", "json")
    assert code == 0 and json.loads(out)["runs"] == [0, 1, 2, 3, 4, 5]
    code, out, err = cli(study, "fit", "compare", "mixed", "--source", "agents")
    assert code == 0 and "4 runs (4 of agents); phases: all" in out


def test_the_bms_table_says_its_participants_are_expected_not_counted(fitted) -> None:
    study = fitted
    code, out, err = cli(study, "fit", "compare", "mixed", "--random-effects", "--source", "agents")
    assert code == 0, err
    header = out.splitlines()[0].split()
    assert header[:2] == ["model", "expected_participants"] and "participants" not in header
    assert "expected_participants: the sum of each participant's posterior probability" in out
    assert "not a count of best fits (fit compare's best_by_bic counts those)" in out
    expected = [float(line.split()[1]) for line in out.splitlines()[2:4]]
    assert sum(expected) == pytest.approx(4.0, abs=1e-6)  # a posterior share of each of 4 runs


@pytest.mark.slow
def test_fits_of_different_phases_are_not_compared(study) -> None:
    assert cli(study, "fit", "run", "mixed", "--model", "q", "--phase", "main", "--starts", "1")[0] == 0
    assert cli(study, "fit", "run", "mixed", "--model", "model-based", "--starts", "1")[0] == 0
    code, out, err = cli(study, "fit", "compare", "mixed", "--source", "people")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "the mle fits are of different phases (all: model-based; main: q)" in err
    code, out, err = cli(study, "fit", "show", "mixed", "--phase", "main", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    assert {r["model"] for r in shown} == {"q"} and {r["phases"] for r in shown} == {"main"}
    assert [r["choices"] for r in shown] == [2 * MAIN] * 6
    code, out, err = cli(study, "fit", "show", "mixed", "--phase", "practice")
    assert code == 2 and "no stored fit matches --phase practice (the stored fits are of phases all, main" in err
    # every phase named is every phase: the fits of all of them
    code, out, err = cli(study, "fit", "compare", "mixed", "--phase", "practice", "--phase", "main", "--source",
                         "people", "--format", "json")
    assert code == 0 and [r["model"] for r in json.loads(out)] == ["model-based"]


# -- figures, read back -------------------------------------------------------------------------------


def renderer_of(figure: Figure) -> Any:
    """A renderer of the (closed) figure, to measure its artists' extents as they were drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = figure.canvas if hasattr(figure.canvas, "get_renderer") else FigureCanvasAgg(figure)
    return canvas.get_renderer()


def inside(figure: Figure, artist: Any) -> bool:
    """Whether the artist's drawn extent lies within the figure's (to the pixel)."""
    renderer = renderer_of(figure)
    box, whole = artist.get_window_extent(renderer), figure.bbox
    return box.x0 >= whole.x0 - 1 and box.y0 >= whole.y0 - 1 and box.x1 <= whole.x1 + 1 and box.y1 <= whole.y1 + 1


def overlaps(figure: Figure, a: Any, b: Any) -> bool:
    renderer = renderer_of(figure)
    return bool(a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer)))


def fit_row(run: int, key: str, source: str, group: str, params: dict[str, float], stderr: dict[str, Any],
            bounds: dict[str, tuple[float, float]], model: str = "hybrid") -> dict[str, Any]:
    return {"run": run, "label": group, "key": key, "participant": key if source == "people" else None,
            "source": source, "group": group, "model": model, "method": "mle", "params": params, "stderr": stderr,
            "bounds": bounds, "phases": None, "log_likelihood": -100.0, "aic": 0.0, "bic": 0.0, "choices": 100}


HYBRID_BOUNDS = {"lr": (0.01, 1.0), "beta": (0.1, 20.0), "w": (0.0, 1.0)}


def test_the_fits_figure_keeps_intervals_in_bounds_and_names_participants(tmp_path) -> None:
    """The issue's figure: w 0.36 +- 1.11 drawn from -0.75 to 1.47 on a [0, 1] setting, the x
    axis the run index, the title cut on both sides and over the panel titles, the legend cut."""
    people = [f"sub-{i:02d}" for i in range(9)]
    fits = [fit_row(i, key, "people", "people", {"lr": 0.3 + 0.05 * i, "beta": 4.0 + i, "w": 0.36},
                    {"lr": 0.05, "beta": 0.8, "w": 1.11 if i == 0 else 0.2}, HYBRID_BOUNDS)
            for i, key in enumerate(people)]
    fits += [fit_row(9 + i, f"model-based (run {9 + i})", "agents", "model-based", {"lr": 0.5, "beta": 5.0, "w": 1.0},
                     {"lr": 0.04, "beta": 0.5, "w": None}, HYBRID_BOUNDS) for i in range(4)]
    experiment = "a study whose name is long enough to have been cut at both sides of the old figure " * 2
    figure = plot_fits(fits, str(tmp_path / "fits.png"), experiment)
    assert (tmp_path / "fits.png").read_bytes()[:4] == b"\x89PNG"
    panels = [ax for ax in figure.axes if ax.get_visible() and ax.axison]
    assert [ax.get_title() for ax in panels] == ["hybrid: beta", "hybrid: lr", "hybrid: w"]
    for ax in panels:
        name = ax.get_title().split(": ")[1]
        low, high = HYBRID_BOUNDS[name]
        assert low - 0.05 * (high - low) <= ax.get_ylim()[0] <= low and high <= ax.get_ylim()[1] <= high + 0.05 * (
            high - low)
        assert [t.get_text() for t in ax.get_xticklabels()] == people + [f"model-based (run {9 + i})"
                                                                         for i in range(4)]
        assert ax.get_xlabel().startswith("participant")
        for container in ax.containers:  # every error bar within the setting's bounds
            for segments in container.lines[2]:
                for (_, y0), (_, y1) in segments.get_segments():
                    assert low <= y0 <= y1 <= high, (name, y0, y1)
        assert inside(figure, ax.title) and not overlaps(figure, figure._suptitle, ax.title)
    w = panels[2]
    span = w.containers[0].lines[2][0].get_segments()[0]  # sub-00's: w 0.36 +- 1.11, cut at the bounds
    assert (span[0][1], span[1][1]) == (0.0, 1.0)
    assert "cut at the bounds" in figure._suptitle.get_text().replace("\n", " ")
    assert inside(figure, figure._suptitle) and "\n" in figure._suptitle.get_text()  # wrapped, not cut
    legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()] + figure.legends
    assert len(legends) == 1 and inside(figure, legends[0])
    assert [t.get_text() for t in legends[0].get_texts()] == ["people", "model-based"]
    assert figure.get_layout_engine() is not None  # constrained layout


def test_an_em_fit_s_intervals_are_its_logistic_scale_mapped_back(tmp_path) -> None:
    rows = [fit_row(i, f"sub-{i}", "people", "people", {"w": w}, {"w": 0.45}, {"w": (0.0, 1.0)})
            for i, w in enumerate((0.05, 0.5, 0.97))]
    for row in rows:
        row["method"] = "em"
    figure = plot_fits(rows, str(tmp_path / "em.png"), "em")
    (ax,) = [a for a in figure.axes if a.axison]
    assert ax.get_title() == "hybrid (EM): w"
    ends = [tuple(y for _, y in segment) for segment in ax.containers[0].lines[2][0].get_segments()]
    assert ends == [pytest.approx(bounded_interval(w, 0.45, 0.0, 1.0)) for w in (0.05, 0.5, 0.97)]
    assert all(0.0 < low < w < high < 1.0 for (low, high), w in zip(ends, (0.05, 0.5, 0.97)))
    assert ends[0][1] - 0.05 > 0.05 - ends[0][0]  # asymmetric near a bound, as on the logistic scale
    assert "on the logistic scale EM fits on, mapped back" in figure._suptitle.get_text().replace("\n", " ")
    assert interval_in_bounds(0.5, 0.45, 0.0, 1.0) == pytest.approx((0.05, 0.95))  # maximum likelihood: its own scale


def test_the_fits_figure_of_many_participants_wraps_nothing_off(tmp_path) -> None:
    fits = [fit_row(i, f"participant-{i:03d}", "people", "people", {"lr": 0.5, "beta": 3.0}, {"lr": 0.4, "beta": 9.0},
                    {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, model="q") for i in range(40)]
    figure = plot_fits(fits, str(tmp_path / "many.png"), "forty")
    renderer = renderer_of(figure)
    for ax in figure.axes:
        if ax.axison:
            assert len(ax.get_xticklabels()) == 40
            for label in ax.get_xticklabels():
                assert inside(figure, label), label.get_text()
            assert ax.get_window_extent(renderer).width > 0
    assert inside(figure, figure._suptitle)


def test_the_model_selection_figure_keeps_its_title_and_legend(tmp_path) -> None:
    selection = random_effects([[-10.0, -12.0, -11.0], [-10.0, -12.0, -30.0], [-20.0, -10.0, -11.0]],
                               ["q", "model-based", "hybrid"])
    title = "a study with a long name: random-effects model selection (Laplace evidence of em fits) " * 2
    figure = plot_model_selection(selection, str(tmp_path / "bms.png"), title)
    assert inside(figure, figure._suptitle) and figure._suptitle.get_text().count("\n") >= 1
    (legend,) = figure.legends
    assert inside(figure, legend)
    assert [t.get_text() for t in legend.get_texts()] == ["expected frequency", "exceedance probability",
                                                          "protected exceedance", "chance (1/3)"]
    ax = figure.axes[0]
    assert not overlaps(figure, legend, ax) and ax.get_ylim() == (0, 1.05)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["q", "model-based", "hybrid"]


@pytest.mark.slow
def test_the_study_fits_figure_from_the_store(study, tmp_path) -> None:
    """`fit show --plot`'s figure of the study: the participants by their ids, the agents' runs
    by label and index; with --phase, only the fits of those phases."""
    for model in ("q", "hybrid"):
        assert cli(study, "fit", "run", "mixed", "--model", model, "--starts", "1", "--phase", "main")[0] == 0
    with open_store(study, "r") as store:
        pilots = [r.label for r in select_runs(store, "mixed", Selection(source="agents"))][2:]
        fits = recorded_fits(store, "mixed", selection=Selection(phases=("main",), labels=tuple(pilots)))
    figure = plot_fits(fits, str(tmp_path / "study.png"), "mixed")
    panels = [ax for ax in figure.axes if ax.axison]
    assert {ax.get_title() for ax in panels} >= {"hybrid: w", "q: lr"}
    for ax in panels:
        assert [t.get_text() for t in ax.get_xticklabels()] == pilots
    assert "(phases main)" in figure._suptitle.get_text().replace("\n", " ")
    code, out, err = cli(study, "fit", "show", "mixed", "--phase", "main", "--plot", str(tmp_path / "show.png"))
    assert code == 0 and (tmp_path / "show.png").read_bytes()[:4] == b"\x89PNG"


def test_the_docstring_examples_run() -> None:
    from graphtasks.fitting import behaviour, bms, figures

    for module in (selection_module, behaviour, bms, figures):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_intervals_on_the_fitting_scale_are_em_s_own() -> None:
    """An EM fit's stderr is its transformed error times the slope; mapped back it is the
    interval of the transformed estimate +- its error, exactly."""
    from scipy.special import expit

    low, high, x, sd = 0.1, 20.0, 0.7, 0.9
    value = low + (high - low) * float(expit(x))
    stderr = (high - low) * float(expit(x)) * (1 - float(expit(x))) * sd
    assert bounded_interval(value, stderr, low, high) == pytest.approx(
        (low + (high - low) * float(expit(x - sd)), low + (high - low) * float(expit(x + sd))))


def test_the_command_line_offers_the_sources_there_are() -> None:
    """fit_cmd names the sources itself, so that building the parser imports no fitting code."""
    from graphtasks.commands import fit_cmd

    assert fit_cmd.SOURCES == selection_module.SOURCES
