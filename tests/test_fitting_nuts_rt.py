"""NUTS samples the response-time models (issue 38): the JAX Wiener density equals the numpy one,
the JAX likelihood of q-ddm, hybrid-ddm and q-lba equals `rt.rt_log_likelihood` (RTs below t0
included), and a short NUTS run of q-ddm finds the simulating settings."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

pytest.importorskip("numpyro")
pytest.importorskip("jax")

from graphtasks.fitting import MODELS, BehaviourError, simulate, task_shape  # noqa: E402
from graphtasks.fitting.bayes import Packed, check_model, fit_group_nuts, log_likelihoods, require_numpyro  # noqa: E402
from graphtasks.fitting.hierarchical import to_natural  # noqa: E402
from graphtasks.fitting.rt import rt_log_likelihood  # noqa: E402
from graphtasks.fitting.wiener import wiener_log_density  # noqa: E402

TWO_STEP = "rewardgym/two-step"


@pytest.mark.slow
def test_the_jax_wiener_density_equals_the_numpy_one_on_a_grid() -> None:
    require_numpyro()
    import jax
    import jax.numpy as jnp

    from graphtasks.fitting import wiener_jax

    # through t0, the switch of series (u near 0.167) and the long tail; every combination in one call
    grid = np.array(list(itertools.product(
        np.linspace(0.0, 6.0, 121), (0.3, 1.0, 2.5, 5.0), (-20.0, -1.0, 0.0, 0.7, 40.0),
        ((0.0, 0.5), (0.2, 0.2), (1.0, 0.8)), (True, False))), dtype=object)
    rt, a, v = (grid[:, i].astype(float) for i in range(3))
    t0, z = np.array(grid[:, 3].tolist()).T
    upper = grid[:, 4].astype(bool)
    want = wiener_log_density(rt, upper, v, a, t0, z)
    got = np.asarray(wiener_jax.wiener_log_density(rt, upper, v, a, t0, z))
    worst = float(np.max(np.abs(got - want)))
    assert worst < 1e-6
    gradient = jax.grad(lambda x: wiener_jax.wiener_log_density(jnp.asarray(rt), True, x[0], x[1], x[2]).sum())(
        jnp.array([1.0, 1.5, 0.2]))
    assert np.isfinite(np.asarray(gradient)).all()  # the branches not taken feed no NaN


@pytest.mark.parametrize(("name", "values"), [
    ("q-ddm", [0.5, 3.0, 1.5, 0.3]),
    ("hybrid-ddm", [0.4, 0.6, 3.0, 1.5, 0.3]),
    ("q-lba", [0.5, 2.0, 0.5, 0.3]),
])
@pytest.mark.slow
def test_the_jax_likelihood_of_an_rt_model_equals_rt_log_likelihood(name, values) -> None:
    model = MODELS[name]
    shape = task_shape(TWO_STEP, ":memory:")
    runs = [simulate(TWO_STEP, model.agent, model.settings(values), trials=20 + 10 * i, seed=i, store=":memory:")
            for i in range(3)]  # of several lengths: the padding counts for nothing
    packed = Packed(runs, shape)
    late = [*values[:-1], 0.45]  # t0 past some response times: those get rt.py's floor and slope
    assert np.concatenate([np.asarray(c.rts) for c in runs]).min() < 0.45
    for at in (values, late):
        settings = model.settings(at)
        got = np.asarray(log_likelihoods(model.agent, settings, packed))
        want = [rt_log_likelihood(model.agent, settings, c, shape) for c in runs]
        assert np.allclose(got, want, rtol=0, atol=1e-6)
    choice_only = np.asarray(log_likelihoods(model.agent, {k: v for k, v in settings.items() if k != "rt"}, packed))
    assert not np.allclose(choice_only, want)  # the response times are what is fitted


def test_rt_models_pass_the_nuts_check_and_choices_without_rts_are_refused_in_one_line() -> None:
    check_model(MODELS["q-ddm"])
    check_model(MODELS["hybrid-ddm"])
    check_model(MODELS["q-lba"])
    untimed = [simulate(TWO_STEP, "q", {"lr": 0.5, "beta": 3.0}, trials=5, seed=i, store=":memory:") for i in (0, 1)]
    with pytest.raises(BehaviourError, match="some choices have no response time"):
        log_likelihoods("q", MODELS["q-ddm"].settings([0.5, 3.0, 1.5, 0.3]), Packed(untimed, task_shape(TWO_STEP)))


@pytest.mark.slow  # about a minute on a shared two-core machine: two chains of 200 + 100 NUTS steps
def test_a_short_nuts_run_of_q_ddm_finds_the_simulating_settings() -> None:
    """Three q-ddm participants x 60 two-step trials, simulated at one setting: the group means
    (their posterior means, back in the settings' units) land near it."""
    model = MODELS["q-ddm"]
    truth = {"lr": 0.5, "drift_scale": 3.0, "threshold": 1.5, "t0": 0.3}
    group = [simulate(TWO_STEP, "q", model.settings([truth[n] for n in model.free]), trials=60, seed=i,
                      store=":memory:") for i in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 x 100 draws: too few for the ESS check
        result = fit_group_nuts(model, group, samples=100, warmup=200, seed=0, chains=2)
    assert result.method == "nuts" and result.participants == 3
    means = dict(zip(model.free, to_natural(model, [result.mean[n] for n in model.free])))
    assert 1.2 < means["threshold"] < 1.9 and 0.22 < means["t0"] < 0.36 and 1.5 < means["drift_scale"] < 6.0
    for fitted in result.fits:
        assert abs(fitted.params["t0"] - truth["t0"]) < 0.06 and abs(fitted.params["threshold"] - 1.5) < 0.4
