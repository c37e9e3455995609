"""A whole Bayesian workflow around NUTS (issue 38): several chains seeded from one seed,
ArviZ's rank-normalised R-hat, bulk and tail ESS and PSIS-LOO, a one-line warning when a
check fails, non-centred or centred group priors, posterior predictive checks through the
batched simulators drawn beside the data, and every chain's draws stored as a `Posterior`
node beside the GroupFit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from graphstore import open_store
from graphtasks.cli import main
from graphtasks.fitting import MODELS, BehaviourError, simulate
from graphtasks.fitting.behaviour import Choices, events_text
from graphtasks.fitting.diagnostics import ConvergenceWarning, chain_diagnostics, psis_loo
from graphtasks.fitting.ppc import choice_rates, simulate_runs, statistic_kind, stay_probabilities, transitions

TWO_STEP = "rewardgym/two-step"


def _two_step_trials(trials: list[tuple[int, int, float]]) -> Choices:
    """Two-step choices from (first action, second state, reward) per trial."""
    steps = []
    for action, second, reward in trials:
        steps.append((0, action, 0.0, second, False))
        steps.append((second, 0, reward, second + 2, True))
    return Choices.from_steps(TWO_STEP, steps, "hand-made")


def test_stay_probabilities_count_each_kind_of_trial() -> None:
    """State 0's action 0 leads to 1 with p 0.7 (common), to 2 with 0.3 (rare)."""
    moves = transitions(TWO_STEP)
    assert moves[(0, 0, 1)] == pytest.approx(0.7) and moves[(0, 1, 2)] == pytest.approx(0.7)
    choices = _two_step_trials([(0, 1, 1.0), (0, 2, 1.0), (1, 1, 0.0), (1, 2, 0.0), (1, 2, 1.0), (0, 1, 0.0)])
    # after: rewarded common -> stay; rewarded rare -> switch; unrewarded rare (1 -> 1) -> stay;
    # unrewarded common (1 -> 2) -> stay; rewarded common (1 -> 2) -> switch
    stay = stay_probabilities(choices, moves)
    assert stay.tolist() == [0.5, 0.0, 1.0, 1.0]
    assert statistic_kind([choices], moves) == "stay"
    rates = choice_rates(choices, (0, 1), bins=2)
    assert rates.tolist() == [[2 / 3, 1 / 3], [1 / 3, 2 / 3]]
    one_choice = Choices.from_steps("decision/reversal-learning", [(0, 1, 1.0, 1, True)] * 4, "hand-made")
    assert statistic_kind([one_choice], transitions("decision/reversal-learning")) == "choice-rate"
    with pytest.raises(BehaviourError, match="trials of \\[1, 2\\] choices"):
        statistic_kind([choices, one_choice], moves)


def test_the_batched_simulations_follow_each_lanes_settings() -> None:
    """Lanes of one batch with different learning rates and lengths: each plays its own."""
    runs = simulate_runs("decision/reversal-learning", "q", [{"lr": 0.0, "beta": 0.0}, {"lr": 0.9, "beta": 20.0}],
                         [300, 300], [1, 2])
    assert [r.trials for r in runs] == [300, 300]
    random, greedy = (np.abs(np.diff(r.actions)).mean() for r in runs)
    assert random > 0.4 and greedy < 0.2  # beta 0 switches half the time; beta 20 sticks with what pays


@pytest.mark.slow  # importing ArviZ (xarray, pandas) takes most of 10 s on a busy machine
def test_chain_diagnostics_flag_chains_that_disagree() -> None:
    rng = np.random.default_rng(1)
    draws = {"mu": rng.normal(size=(4, 500, 2)), "sigma": rng.gamma(4.0, size=(4, 500, 2)),
             "x": rng.normal(size=(4, 500, 3, 2))}
    healthy = chain_diagnostics(draws, ["lr", "beta"], [0, 0, 0, 0])
    assert healthy["problems"] == [] and healthy["max_r_hat"] < 1.01 and healthy["min_ess"] > 400
    assert set(healthy["settings"]["lr"]) == {"mu", "sigma", "participants"}
    draws["mu"][0, :, 1] += 3.0  # one chain stuck elsewhere
    stuck = chain_diagnostics(draws, ["lr", "beta"], [0, 2, 0, 0])
    assert stuck["settings"]["beta"]["mu"]["r_hat"] > 1.3
    assert stuck["problems"][0].startswith("R-hat above 1.01 for 1 of 6 (largest")
    assert "beta group mean" in stuck["problems"][0]
    assert stuck["problems"][-1] == "2 divergent transitions (per chain [0, 2, 0, 0])"
    found = psis_loo(rng.normal(-50.0, 0.5, size=(2, 300, 5)))
    assert len(found["pareto_k"]) == 5 and found["looic"] == pytest.approx(-2 * found["elpd"])


@pytest.mark.slow  # about 20 s of CPU, most of it JAX compiling the sampler
def test_chains_diagnostics_records_and_the_predictive_figure(tmp_path, capsys) -> None:
    """4 Q participants x 60 trials, 2 chains of 100 + 100, by the command line: the chains are
    reported and stored with their draws, the warning is one line, the figure shows the data's
    stay probabilities beside the simulated intervals."""
    from graphtasks.experiments.export import records_rdf
    from graphtasks.fitting.records import import_behaviour, recorded_group_fits, recorded_posteriors

    files = []
    for i, lr in enumerate((0.2, 0.4, 0.6, 0.8)):
        path = tmp_path / f"sub-{i:02d}_events.tsv"
        path.write_text(events_text(simulate(TWO_STEP, "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, 60, seed=20 + i),
                                    f"{i:02d}"))
        files.append(path)
    store = str(tmp_path / "store.lbug")
    with open_store(store, "w") as opened:
        import_behaviour(opened, "lab", files)
    figure = tmp_path / "ppc.png"
    assert main(["--store", store, "fit", "run", "lab", "--method", "nuts", "--samples", "100", "--warmup", "100",
                 "--chains", "2", "--ppc", str(figure), "--ppc-draws", "30"]) == 0
    said = capsys.readouterr()
    assert "nuts: 2 chains" in said.out and "PSIS-LOO over participants: elpd" in said.out
    assert "lr       participants" in said.out  # the table of R-hat and ESS per setting
    (line,) = [w for w in said.err.splitlines() if w.startswith("warning:")]  # 2 x 100 draws: ESS below 400
    assert "NUTS fit of q: " in line and "ESS below 400" in line
    assert figure.stat().st_size > 10_000
    with open_store(store, "r") as opened:
        (group,) = recorded_group_fits(opened, "lab")
        (posterior,) = recorded_posteriors(opened, "lab", "q")
        rdf = records_rdf(opened, "lab")
    assert posterior["group"] == group["uid"] and posterior["chains"] == 2 and posterior["runs"] == [0, 1, 2, 3]
    assert posterior["x"].shape == (2, 100, 4, 2) and posterior["log_lik"].shape == (2, 100, 4)
    assert posterior["parameterisation"] == "non-centred" and len(posterior["loo"]["pareto_k"]) == 4
    diagnostics = group["diagnostics"]
    assert diagnostics["chains"] == 2 and diagnostics["problems"] and group["converged"] is False
    assert set(diagnostics["settings"]) == {"lr", "beta"} and diagnostics["ess_tail"]["lr"] > 0
    assert "Posterior" in rdf.serialize(format="nt")  # exported with the experiment's records
    # refused in one line where it does not apply
    assert main(["--store", store, "fit", "run", "lab", "--method", "em", "--ppc", str(figure)]) == 2
    assert "--ppc goes with --method nuts" in capsys.readouterr().err


@pytest.mark.slow  # about 20 s of CPU: JAX compiles the sampler twice
def test_the_api_seeds_every_chain_from_one_seed_and_checks_predictions(tmp_path) -> None:
    """The same seed gives the same draws in every chain (here of the centred form, which
    samples each participant's x itself); the predictive check of a bandit task draws a
    learning curve band per action."""
    from graphtasks.fitting.bayes import sample_group
    from graphtasks.fitting.figures import plot_predictive_check
    from graphtasks.fitting.ppc import posterior_predictive

    group = [simulate("decision/reversal-learning", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, 40, seed=s)
             for s, lr in enumerate((0.3, 0.7))]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        one, two = (sample_group(MODELS["q"], group, samples=30, warmup=30, seed=5, chains=2,
                                 parameterisation="centred") for _ in range(2))
    assert sum(issubclass(w.category, ConvergenceWarning) for w in said) == 2
    assert np.array_equal(one.x, two.x) and not np.array_equal(one.x[0], one.x[1])  # chains differ
    assert one.group.diagnostics["parameterisation"] == "centred"
    with pytest.raises(BehaviourError, match="chains: expected a whole number from 1 to 64"):
        sample_group(MODELS["q"], group, chains=0)
    check = posterior_predictive(one, draws=25, seed=3, bins=4)
    assert check.kind == "choice-rate" and check.simulated.shape == (25, 2, 4, 2)
    assert check.labels == ("1-10", "11-20", "21-30", "31-40")
    again = posterior_predictive(one, draws=25, seed=3, bins=4)
    assert np.array_equal(check.simulated, again.simulated, equal_nan=True)
    low, high = check.interval()
    assert np.all(low <= high)
    fig = plot_predictive_check(check, str(tmp_path / "rates.png"))
    ax = fig.axes[0]
    bands = [c for c in ax.collections if c.get_label().endswith("(dashed: median)")]
    assert len(bands) == 2  # a band per action
    data = [line for line in ax.get_lines() if line.get_label().endswith(": data")]
    assert [line.get_label() for line in data] == ["action 0: data", "action 1: data"]
    assert np.allclose(data[0].get_ydata(), check.group_observed()[:, 0])


@pytest.mark.slow  # the predictive check's example samples (JAX compiles the sampler)
@pytest.mark.parametrize("name", ["graphtasks.fitting.diagnostics", "graphtasks.fitting.ppc"])
def test_the_docstring_examples_run(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0
