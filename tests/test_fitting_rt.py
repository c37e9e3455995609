"""Choices with response times: the Wiener and LBA densities, the RT models (q-ddm, hybrid-ddm,
q-lba) in the same MLE and EM code as the choice-only models, their simulation, the refusal of
choices without response times, and the browser's response times read from the store."""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import math

import numpy as np
import pytest

from graphtasks.fitting import MODELS, FitModel, fit, simulate
from graphtasks.fitting.behaviour import BehaviourError, load_runs
from graphtasks.fitting.lba import accumulator, choice_probabilities, lba_log_density, sample_lba
from graphtasks.fitting.likelihood import log_likelihood, task_shape
from graphtasks.fitting.rt import option_values, rt_log_likelihood
from graphtasks.fitting.wiener import sample_wiener, upper_probability, wiener_log_density

TWO_STEP = "rewardgym/two-step"


def test_the_wiener_density_equals_pyddm_analytic_series_on_a_grid() -> None:
    """pyddm's analytic solver (Anderson's series for linear bounds, an independent derivation)."""
    from pyddm.analytic import analytic_ddm

    worst = 0.0
    for v in (-2.5, -0.7, 0.0, 1.3, 3.0):
        for a in (0.5, 1.2, 3.5):
            for z in (0.5, 0.3):
                for t0 in (0.0, 0.25):
                    decision = np.array([0.02, 0.08, 0.2, 0.45, 0.9, 1.7, 3.0, 6.0])
                    upper, lower = analytic_ddm(float(v), 1.0, a / 2, decision.copy(), shift=z, force_python=True)
                    rt = decision + t0
                    ours_upper = np.exp(wiener_log_density(rt, True, v, a, t0, z))
                    ours_lower = np.exp(wiener_log_density(rt, False, v, a, t0, z))
                    worst = max(worst, np.abs(ours_upper - upper).max(), np.abs(ours_lower - lower).max())
    assert worst < 1e-6


def test_the_wiener_density_integrates_to_the_boundary_probability_and_draws_follow_it() -> None:
    from scipy.integrate import quad

    for v, a, z in ((1.0, 1.5, 0.5), (-0.4, 2.5, 0.3), (2.0, 0.8, 0.6)):
        mass = quad(lambda t: float(np.exp(wiener_log_density(t, True, v, a, 0.0, z))), 0, 80, limit=400)[0]
        assert mass == pytest.approx(float(upper_probability(v, a, z)), abs=1e-8)
    rng = np.random.default_rng(0)
    draws = [sample_wiener(1.0, 1.5, 0.2, 0.5, rng) for _ in range(1500)]
    uppers, rts = np.array([d[0] for d in draws]), np.array([d[1] for d in draws])
    assert uppers.mean() == pytest.approx(float(upper_probability(1.0, 1.5)), abs=0.04)
    mean_decision = 1.5 / 2 * math.tanh(1.5 / 2)  # (a / 2v) tanh(v a / 2) at z = 0.5, v = 1
    assert rts.mean() - 0.2 == pytest.approx(mean_decision, rel=0.05)


def test_before_t0_the_density_is_below_the_floor_and_slopes_back() -> None:
    early = wiener_log_density([0.1, 0.15], True, 1.0, 1.5, 0.2)
    assert early[0] < early[1] < math.log(1e-300) + 1e-9


def test_the_lba_density_equals_numerical_integration_of_its_definition() -> None:
    """F(t) = P((b - k) / d <= t), k ~ U(0, A), d ~ N(v, s): integrated over k by quadrature."""
    from scipy.integrate import quad
    from scipy.stats import norm

    for t, v, A, b, s in ((0.5, 1.5, 0.5, 1.0, 1.0), (1.3, -0.4, 0.8, 1.7, 0.7), (0.2, 3.0, 0.3, 0.35, 1.2)):
        F = quad(lambda k: norm.sf((b - k) / t, v, s) / A, 0, A)[0]
        f = quad(lambda k: norm.pdf((b - k) / t, v, s) * (b - k) / t**2 / A, 0, A)[0]
        density, distribution = accumulator(t, v, A, b, s)
        assert float(density) == pytest.approx(f, abs=1e-9)
        assert float(distribution) == pytest.approx(F, abs=1e-9)
    # the race's densities over both options integrate to 1 (normalised by P(some rate positive))
    rates = np.array([[0.3, -0.5]])
    total = sum(quad(lambda t: float(np.exp(lba_log_density([t], [c], rates, 0.6, 1.2, 0.0))[0]), 0, np.inf,
                     limit=400)[0] for c in (0, 1))
    assert total == pytest.approx(1.0, abs=1e-7)
    rng = np.random.default_rng(1)
    wins = np.mean([sample_lba([2.0, 1.0], 0.5, 1.0, 0.2, 1.0, rng)[0] == 0 for _ in range(4000)])
    assert wins == pytest.approx(choice_probabilities([2.0, 1.0], 0.5, 1.0)[0], abs=0.03)


def test_the_drift_comes_from_the_agents_own_values_and_its_softmax_is_the_ddm_choice() -> None:
    """At z = 0.5 P(upper) = logistic(v a): the agent's own softmax with beta = drift_scale x threshold,
    replayed through `action_probabilities`, gives the DDM's choice probabilities."""
    from gym_bridge.agents import make_agent

    shape = task_shape(TWO_STEP, ":memory:")
    choices = simulate(TWO_STEP, "hybrid", {"lr": 0.4, "beta": 4.0, "w": 0.6}, trials=30, seed=2, store=":memory:")
    own = {"lr": 0.4, "w": 0.6, "perseveration": 0.2}
    values = option_values("hybrid", own, choices, shape)
    scale, threshold = 2.0, 1.5
    agent = make_agent("hybrid", shape.n_states, shape.n_actions, seed=0, beta=scale * threshold, **own)
    new_trial = True
    for t, (s, a, r, n, end) in enumerate(zip(choices.states, choices.actions, choices.rewards, choices.next_states,
                                              choices.ends)):
        if new_trial:
            agent.begin_episode()
        first, second = shape.available[s]
        p = agent.action_probabilities(int(s), shape.available[s])[second]
        drift = scale * (values[t, second] - values[t, first])
        assert float(upper_probability(drift, threshold)) == pytest.approx(p, abs=1e-12)
        agent.learn(int(s), int(a), float(r), int(n), bool(end), shape.available[int(n)])
        new_trial = bool(end)


def test_rt_models_refuse_a_free_choice_rule_and_an_unknown_response_model() -> None:
    with pytest.raises(BehaviourError, match="beta cannot be free"):
        FitModel("bad", "q", {"beta": (0.1, 5.0)}, {"rt": "ddm"})
    with pytest.raises(BehaviourError, match="rt = 'wald'"):
        FitModel("bad", "q", {"lr": (0.0, 1.0)}, {"rt": "wald"})
    with pytest.raises(BehaviourError, match="drift_scale"):  # a choice-only model has no response settings
        FitModel("bad", "q", {"drift_scale": (0.0, 1.0)})


def test_choices_without_response_times_are_refused_naming_how_many_and_whose() -> None:
    plain = simulate(TWO_STEP, "q", {"lr": 0.5, "beta": 5.0, "gamma": 1.0}, trials=10, seed=1, store=":memory:")
    shape = task_shape(TWO_STEP, ":memory:")
    with pytest.raises(BehaviourError, match=r"^simulated q seed 1: 20 of 20 choices have no response time"):
        fit(MODELS["q-ddm"], plain, starts=1, shape=shape)
    settings = MODELS["q-ddm"].settings([0.5, 3.0, 1.5, 0.3])
    timed = simulate(TWO_STEP, "q", settings, trials=10, seed=1, store=":memory:")
    rts = timed.rts.copy()
    rts[[3, 7]] = np.nan
    import dataclasses

    gappy = dataclasses.replace(timed, rts=rts, source="participant 7")
    with pytest.raises(BehaviourError, match=r"^participant 7: 2 of 20 choices have no response time"):
        log_likelihood("q", settings, gappy, shape)


def test_a_ddm_needs_two_options_and_an_lba_races_four() -> None:
    task = "decision/restless-bandit"
    shape = task_shape(task, ":memory:")
    lba = MODELS["q-lba"].settings([0.4, 2.0, 0.6, 0.25])
    choices = simulate(task, "q", lba, trials=30, seed=0, store=":memory:")
    assert choices.rts is not None and np.all(choices.rts > 0.25)
    assert math.isfinite(rt_log_likelihood("q", lba, choices, shape))
    with pytest.raises(BehaviourError, match="offers 4 actions; a drift-diffusion model decides between two"):
        rt_log_likelihood("q", MODELS["q-ddm"].settings([0.4, 2.0, 1.5, 0.25]), choices, shape)


@pytest.mark.slow
def test_simulated_rt_models_fit_back_by_mle_on_two_step_and_a_bandit() -> None:
    shape = task_shape(TWO_STEP, ":memory:")
    truth = [0.5, 3.0, 1.5, 0.3]
    choices = simulate(TWO_STEP, "q", MODELS["q-ddm"].settings(truth), trials=100, seed=4, store=":memory:")
    assert choices.trials == 100 and len(choices.rts) == 200
    result = fit(MODELS["q-ddm"], choices, starts=1, seed=0, shape=shape)
    assert result.fixed["rt"] == "ddm" and result.choices == 200
    assert result.params["threshold"] == pytest.approx(1.5, abs=0.2)
    assert result.params["t0"] == pytest.approx(0.3, abs=0.05)
    bandit = "rewardgym/two-armed-bandit"
    settings = MODELS["q-lba"].settings([0.3, 2.5, 0.6, 0.25])
    played = simulate(bandit, "q", settings, trials=100, seed=5, store=":memory:")
    lba = fit(MODELS["q-lba"], played, starts=1, seed=0, shape=task_shape(bandit, ":memory:"))
    assert lba.params["t0"] == pytest.approx(0.25, abs=0.08)


@pytest.mark.slow
def test_parameter_recovery_takes_the_rt_models() -> None:
    from graphtasks.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["fit", "parameter-recovery", "--model", "q-ddm", "--participants", "4", "--trials", "60",
                     "--starts", "1", "--json"])
    assert code == 0
    recovered = json.loads(out.getvalue())
    assert recovered["model"] == "q-ddm" and min(recovered["correlation"][n] for n in ("threshold", "t0")) > 0.8


@pytest.mark.slow
def test_em_takes_the_rt_models_through_the_same_code() -> None:
    from graphtasks.fitting import fit_group

    group = [simulate(TWO_STEP, "hybrid", MODELS["hybrid-ddm"].settings([lr, 0.6, 3.0, 1.5, 0.25]), trials=40,
                      seed=s, store=":memory:") for s, lr in enumerate((0.3, 0.7))]
    fitted = fit_group(MODELS["hybrid-ddm"], group, starts=1, seed=0, max_iterations=3,
                       shapes=[task_shape(TWO_STEP, ":memory:")] * 2)
    assert fitted.median["threshold"] == pytest.approx(1.5, abs=0.3)
    assert all(f.method == "em" and f.log_evidence is not None and f.fixed["rt"] == "ddm" for f in fitted.fits)


def test_the_browsers_response_times_are_read_from_the_store_in_seconds() -> None:
    from graphtasks.serve.app import StudyServer
    from graphtasks.serve.study import load_study

    study = load_study(TWO_STEP, episodes=3)
    server = StudyServer(study, ":memory:")
    try:
        sent = []
        for person in range(2):
            token = server.start_session({})["token"]
            position = server.view(token)["position"]
            while not position["done"]:
                body = {"index": position["trial"], "action": int(position["available"][0])}
                if person == 0:
                    body["rt"] = 400.0 + 10 * len(sent)
                    sent.append(body["rt"] / 1000)
                position = server.post_trial(token, body)["position"]
        timed, untimed = load_runs(server.store, study.spec.name, [0, 1])
    finally:
        server.close()
    assert timed.rts is not None and timed.rts.tolist() == pytest.approx(sent)
    assert untimed.rts is None
    with pytest.raises(BehaviourError, match="6 of 6 choices have no response time"):
        rt_log_likelihood("q", MODELS["q-ddm"].settings([0.5, 3.0, 1.5, 0.2]), untimed, task_shape(TWO_STEP))


@pytest.mark.slow
def test_the_modules_examples_run() -> None:
    from graphtasks.fitting import lba, rt, rt_figures, wiener

    for module in (wiener, lba, rt, rt_figures):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0


def test_the_recovery_figure_shows_each_models_truth_against_its_fit() -> None:
    from graphtasks.fitting.recovery import ParameterRecovery
    from graphtasks.fitting.rt_figures import plot_rt_recovery

    ddm = ParameterRecovery("q-ddm", TWO_STEP, 200, {"lr": [0.2, 0.5, 0.8], "threshold": [1.0, 1.5, 2.0]},
                            {"lr": [0.3, 0.5, 0.7], "threshold": [1.1, 1.4, 2.0]})
    lba = ParameterRecovery("q-lba", TWO_STEP, 200, {"t0": [0.2, 0.3, 0.25]}, {"t0": [0.21, 0.28, 0.26]})
    fig = plot_rt_recovery([ddm, lba])
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["lr: r = 1.00, MAE = 0.067", "threshold: r = 0.98, MAE = 0.067",
                                                "t0: r = 0.97, MAE = 0.013"]
    points = shown[1].collections[0].get_offsets()
    assert points.tolist() == [[1.0, 1.1], [1.5, 1.4], [2.0, 2.0]]
    assert shown[0].texts[0].get_text() == "q-ddm" and shown[2].texts[0].get_text() == "q-lba"
    assert shown[0].get_xlabel() == "true lr" and shown[0].get_ylabel() == "fitted lr"


def test_rt_and_choice_models_are_not_ranked_together() -> None:
    """A response-time model's log-likelihood is a density of choices and times, a choice
    model's a probability of choices: summed BIC, evidences and held-out scores across the two
    are refused in one line, naming both sides (and models of one kind still rank)."""
    from graphtasks.fitting.cv import cross_validate
    from graphtasks.fitting.records import compare_models, evidence_matrix

    row = {"run": 0, "log_likelihood": -10.0, "aic": 24.0, "bic": 26.0, "log_evidence": None}
    fits = [{**row, "model": "q", "fixed": {"gamma": 0.0}}, {**row, "model": "q-ddm", "fixed": {"rt": "ddm"}}]
    for rank in (compare_models, evidence_matrix):
        with pytest.raises(BehaviourError, match=r"^models q and q-ddm cannot be ranked together: the likelihood "
                                                 r"of q-ddm is of choices and their response times"):
            rank(fits)
    assert [r["model"] for r in compare_models([fits[0], {**fits[0], "model": "hybrid"}])] == ["hybrid", "q"]
    with pytest.raises(BehaviourError, match=r"^models gru-4, q and q-ddm cannot be ranked together"):
        cross_validate(["q", "q-ddm", "gru-4"], [])
