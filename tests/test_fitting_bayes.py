"""The optional NUTS backend (graphtasks[bayes]: NumPyro and JAX): its JAX likelihood equals the
agents' own, a small hierarchical fit samples, reports r-hat, effective sample sizes and
divergences, and is stored, shown and compared like an EM fit (method "nuts")."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("numpyro")
pytest.importorskip("jax")

from graphstore import open_store  # noqa: E402
from graphtasks.cli import main  # noqa: E402
from graphtasks.fitting import MODELS, BehaviourError, FitModel, simulate, task_shape  # noqa: E402
from graphtasks.fitting.bayes import Packed, check_model, fit_group_nuts, log_likelihoods  # noqa: E402
from graphtasks.fitting.behaviour import Choices, events_text  # noqa: E402
from graphtasks.fitting.likelihood import replay_log_likelihood  # noqa: E402
from graphtasks.fitting.records import import_behaviour, recorded_fits, recorded_group_fits  # noqa: E402

TWO_STEP = "rewardgym/two-step"


def _with_a_test_phase(choices: Choices) -> Choices:
    """The same choices with learning off for the last third (a test phase)."""
    learn = np.ones(len(choices), dtype=bool)
    learn[2 * len(choices) // 3:] = False
    return Choices(choices.task_id, choices.states, choices.actions, choices.rewards, choices.next_states,
                   choices.ends, learn, choices.source)


@pytest.mark.parametrize(
    ("agent", "settings"),
    [
        ("hybrid", {"lr": 0.3, "beta": 3.0, "w": 0.4, "perseveration": 0.3, "lam": 0.6}),
        ("hybrid", {"lr": 0.8, "beta": 7.0, "w": 1.0, "perseveration": 0.0, "lam": 0.2}),
        ("q", {"lr": 0.3, "beta": 3.0, "gamma": 1.0}),
        ("q", {"lr": 0.6, "beta": 2.0, "gamma": 0.9, "q_init": 0.3}),
    ],
)
@pytest.mark.slow
def test_the_jax_likelihood_equals_the_agents_own(agent, settings) -> None:
    """Participants of different lengths (padding), both agents' simulations, a test phase."""
    shape = task_shape(TWO_STEP)
    runs = [simulate(TWO_STEP, "hybrid", {"lr": 0.5, "beta": 4.0, "w": 0.6, "perseveration": 0.2}, 50, seed=1),
            simulate(TWO_STEP, "q", {"lr": 0.5, "beta": 4.0, "gamma": 1.0}, 70, seed=2)]
    runs.append(_with_a_test_phase(runs[0]))
    got = np.asarray(log_likelihoods(agent, settings, Packed(runs, shape)))
    expected = [replay_log_likelihood(agent, settings, c, shape) for c in runs]
    assert np.allclose(got, expected, rtol=0, atol=1e-9)
    assert got[2] != pytest.approx(got[0])  # the test phase changes the likelihood


def test_models_without_a_jax_likelihood_are_refused_in_one_line() -> None:
    with pytest.raises(BehaviourError, match="agent 'sr' has no JAX likelihood"):
        check_model(FitModel.of("sr", {"lr": (0.01, 1.0)}))
    with pytest.raises(BehaviourError, match="settings epsilon are not in the JAX likelihood of 'q'"):
        check_model(FitModel.of("q", {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, {"epsilon": 0.1}))
    check_model(MODELS["model-based"])  # the shipped ones pass


@pytest.mark.slow  # about 15 s of CPU, most of it JAX compiling the sampler
def test_a_small_nuts_fit_samples_reports_and_is_stored(tmp_path, capsys) -> None:
    """Three Q participants x 60 trials, one chain (--chains 1) of 150 + 150: the fit reports its
    diagnostics, orders the participants' learning rates as simulated, and goes through the
    store and the command line as method "nuts"."""
    lrs = (0.2, 0.5, 0.8)
    group = [simulate(TWO_STEP, "q", {"lr": lr, "beta": 6.0, "gamma": 1.0}, 60, seed=20 + i) for i, lr in
             enumerate(lrs)]
    files = []
    for i, choices in enumerate(group):
        path = tmp_path / f"sub-{i:02d}_events.tsv"
        path.write_text(events_text(choices, f"{i:02d}"))
        files.append(path)
    store_path = str(tmp_path / "store.lbug")
    with open_store(store_path, "w") as store:
        import_behaviour(store, "lab", files)
    assert main(["--store", store_path, "fit", "run", "lab", "--method", "nuts", "--samples", "150", "--warmup",
                 "150", "--chains", "1"]) == 0
    out = capsys.readouterr().out
    assert " nuts " in out and "nuts: 1 chain (sequential), 150 warmup + 150 draws each" in out
    assert "divergences" in out
    with open_store(store_path, "r") as store:
        groups = recorded_group_fits(store, "lab")
        fits = recorded_fits(store, "lab", method="nuts")
    (group_fit,) = groups
    assert group_fit["method"] == "nuts" and group_fit["participants"] == 3
    diagnostics = group_fit["diagnostics"]
    assert set(diagnostics["r_hat"]) == {"lr", "beta"} and diagnostics["samples"] == 150
    assert isinstance(diagnostics["divergences"], int) and 0 < diagnostics["min_ess"] <= 300
    assert diagnostics["max_r_hat"] < 1.2
    fitted = [f["params"]["lr"] for f in fits]
    assert fitted == sorted(fitted)  # 0.2 < 0.5 < 0.8, as simulated
    assert all(f["stderr"]["lr"] > 0 and f["log_evidence"] < f["log_likelihood"] for f in fits)
    assert main(["--store", store_path, "fit", "show", "lab"]) == 0
    assert "q nuts: 1 chain" in capsys.readouterr().out
    assert main(["--store", store_path, "fit", "run", "lab", "--method", "em", "--starts", "1"]) == 0
    assert main(["--store", store_path, "fit", "compare", "lab", "--method", "nuts", "--format", "json"]) == 0
    shown = capsys.readouterr().out
    assert json.loads(shown[shown.rindex("[\n"):])[0]["runs"] == 3


@pytest.mark.slow
def test_the_same_seed_gives_the_same_draws() -> None:
    group = [simulate(TWO_STEP, "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, 30, seed=i) for i, lr in
             enumerate((0.3, 0.7))]
    one = fit_group_nuts(MODELS["q"], group, samples=30, warmup=30, seed=3, chains=1)
    two = fit_group_nuts(MODELS["q"], group, samples=30, warmup=30, seed=3, chains=1)
    assert one.mean == two.mean and [f.params for f in one.fits] == [f.params for f in two.fits]
    with pytest.raises(BehaviourError, match="samples: expected a whole number from 10"):
        fit_group_nuts(MODELS["q"], group, samples=5)
    with pytest.raises(BehaviourError, match="two or more participants"):
        fit_group_nuts(MODELS["q"], group[:1])


@pytest.mark.slow
def test_the_backend_docstring_examples_run() -> None:
    import doctest

    import graphtasks.fitting.bayes as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0
