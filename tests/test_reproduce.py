"""`graphtasks reproduce`: each shipped reproduction runs from scratch and shows the paper's result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphtasks.cli import main
from graphtasks.experiments import load_spec
from graphtasks.experiments.reproduce import REPRODUCTIONS, _fewer_steps, reproduce

# The quick run reproduces one of each kind (a spec with a stay analysis, a spec of cells, a
# decision task, a study); the full run every one (the Russek ones take 10-25 s each).
QUICK = {"daw2011-two-step", "dabney2020-distributional", "wilson2014-horizon", "charnov1976-foraging"}


@pytest.mark.parametrize(
    "name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in sorted(REPRODUCTIONS)]
)
@pytest.mark.slow
def test_every_reproduction_passes_its_checks(name: str, tmp_path) -> None:
    outcome = reproduce(name, out_dir=tmp_path, workers=1)
    failed = [c for c in outcome.checks if not c.passed]
    assert outcome.checks and not failed, failed
    assert outcome.figure is not None and outcome.figure.stat().st_size > 10_000  # a drawn PNG


def test_a_reproduction_checks_what_was_measured(tmp_path) -> None:
    """The Daw checks read stay probabilities from the store: a model-free agent's interaction
    is near zero, a model-based agent's is not, and the check values say so."""
    checks = {c.name: c for c in reproduce("daw2011-two-step", seeds=4, figure=False, workers=1).checks}
    assert checks["model-based (w=1): interaction"].measured > checks["model-free (w=0): |interaction|"].measured
    assert all(isinstance(c.measured, float) for c in checks.values())


@pytest.mark.slow
def test_cli_prints_checks_and_json(tmp_path, capsys) -> None:
    assert main(["reproduce", "daw2011-two-step", "--seeds", "3", "-o", str(tmp_path), "--json"]) in (0, 1)
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["name"] == "daw2011-two-step" and outcome["seeds"] == 3
    assert {"name", "measured", "finding", "passed"} <= set(outcome["checks"][0])
    assert (tmp_path / "daw2011-two-step.png").exists()


def test_cli_lists_reproductions_and_refuses_an_unknown_one(capsys) -> None:
    assert main(["reproduce"]) == 0
    assert "momennejad2017-design-a" in capsys.readouterr().out
    assert main(["reproduce", "momennejad2017-design-c"]) == 2
    err = capsys.readouterr().err
    assert "no reproduction 'momennejad2017-design-c'" in err and len(err.strip().splitlines()) == 1


def test_bad_seed_count_is_one_line(capsys) -> None:
    assert main(["reproduce", "daw2011-two-step", "--seeds", "0", "--no-figure"]) == 2
    assert "seeds: expected a positive number" in capsys.readouterr().err


@pytest.mark.slow
def test_a_study_measures_what_its_agents_learnt() -> None:
    """The studies' checks come from the agents: one seed of the community study still separates
    the SR (positive gap) from one-hot states (none), and the Dabney cells' spread is real."""
    checks = {c.name: c for c in reproduce("schapiro2013-communities", seeds=1, figure=False).checks}
    assert checks["SR: within- minus between-community similarity"].measured > 0.5
    assert checks["one-hot: within- minus between-community similarity"].measured == 0.0
    assert reproduce("dabney2020-distributional", seeds=1, figure=False).seeds == 1


def test_studies_are_listed_with_the_specs(capsys) -> None:
    assert main(["reproduce"]) == 0
    listed = capsys.readouterr().out
    for name in ("zorowitz2020-pessimism", "eldar2016-mood", "stachenfeld2017-place-fields", "daw2011-two-step"):
        assert name in listed


@pytest.mark.slow
def test_cli_runs_them_all_in_turn_and_sums_up(capsys, monkeypatch) -> None:
    """--all runs each reproduction in turn and sums up: three cheap ones here, since
    test_every_reproduction_passes_its_checks runs every one whole (one seed: checks may fail)."""
    import graphtasks.experiments.reproduce as reproductions

    chosen = {n: REPRODUCTIONS[n] for n in ("daw2011-two-step", "dabney2020-distributional", "charnov1976-foraging")}
    monkeypatch.setattr(reproductions, "REPRODUCTIONS", chosen)
    code = main(["reproduce", "--all", "--seeds", "1", "--no-figure", "--workers", "1"])
    out = capsys.readouterr().out
    assert "3 reproductions: " in out and all(f"{name}:" in out for name in chosen)
    assert code == (0 if "failed:" not in out else 1)
    assert main(["reproduce", "daw2011-two-step", "--all"]) == 2
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, task, blocked_task, before, after, agents",
    [
        ("russek2017-reward-transfer", "neuronav/grid/t_maze/small", None, 76, 74, ["TD-Q", "TD-SR", "Dyna-SR", "MBV"]),
        (
            "russek2017-structure-transfer",
            "neuronav/grid/detour/small",
            "neuronav/grid/detour_block/small",
            51,
            49,
            ["TD-Q", "Dyna-Q", "Dyna-SR", "MBV", "TD-SR"],
        ),
    ],
)
def test_russek_specs_run_neuronav_notebook_design(name, task, blocked_task, before, after, agents) -> None:
    """neuro-nav's grid_experiments notebook: one continuous run from the task's start, the
    change when the episode index passes half the episodes, 100-step episodes, agents that
    keep learning, lr 0.1 and softmax with beta 1000 (neuro-nav's gamma 0.99, 3 replays)."""
    spec = load_spec(name)
    first, second = spec.phases
    assert spec.tasks == (task,) and (first.episodes, second.episodes) == (before, after)
    assert (before + after) // 2 == before - 1  # the notebook changes the task at index > num_eps // 2
    assert first.max_steps == second.max_steps == 100 and first.learn and second.learn
    assert first.start is None and second.start is None
    if blocked_task:
        assert second.task == blocked_task and not second.changes
    else:
        assert second.task is None and second.changes == {"rewards": [{"cell": [1, 9], "value": 1.0}]}
    assert [a.label for a in spec.agents] == agents
    for agent in spec.agents:
        assert {k: agent.params[k] for k in ("lr", "gamma", "beta")} == {"lr": 0.1, "gamma": 0.99, "beta": 1000.0}
        assert agent.params.get("replays", 3) == 3


def test_fewer_steps_needs_a_gap_of_two_standard_errors() -> None:
    """Worked by hand: means 10 and 20, variances 10 and 40 over 5 runs each, so the standard
    error of the difference is sqrt(10/5 + 40/5) = sqrt(10) = 3.16 and 2 SE = 6.32 < 10."""
    steps = {"MB": np.array([6.0, 8, 10, 12, 14]), "SR": np.array([12.0, 16, 20, 24, 28])}
    check = _fewer_steps(steps, "MB", "SR", "MB first")
    assert (check.name, check.measured, check.passed) == ("MB fewer steps than SR", 10.0, True)
    assert "2 SE = 6.3" in check.finding
    close = {"MB": steps["MB"] + 5, "SR": steps["SR"]}  # gap 5 < 6.32: within noise
    assert not _fewer_steps(close, "MB", "SR", "MB first").passed
    assert not _fewer_steps(steps, "SR", "MB", "SR first").passed  # the wrong order fails


@pytest.mark.slow
def test_reproductions_run_at_once_give_the_same_outcomes_in_order() -> None:
    """--all runs reproductions side by side (one process each, --jobs): the outcomes come in
    the order asked for, equal to those of one after another in this process."""
    from graphtasks.experiments.reproduce import reproduce_all

    names = ["daw2006-restless-bandit", "bechara1994-iowa"]
    apart = list(reproduce_all(names, seeds=2, figure=False, jobs=2, workers=1))
    here = list(reproduce_all(names, seeds=2, figure=False, jobs=1, workers=1))
    assert [o.reproduction.name for o in apart] == names
    assert [(o.seeds, o.checks) for o in apart] == [(o.seeds, o.checks) for o in here]


def test_jobs_is_refused_where_it_cannot_apply(tmp_path, capsys) -> None:
    for argv, said in (
        (["reproduce", "daw2011-two-step", "--jobs", "2", "--no-figure"], "--jobs: give --all too"),
        (["reproduce", "--all", "--jobs", "0", "--no-figure"], "jobs: expected a positive number"),
        (["--store", str(tmp_path / "s"), "reproduce", "--all", "--jobs", "2", "--no-figure"], "one at a time"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
