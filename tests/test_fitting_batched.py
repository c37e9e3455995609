"""Likelihoods of many (settings, choices) pairs in one batched pass, and fits in lockstep:
equal to the per-agent replay lane by lane, the same maxima as fits one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from graphtasks.fitting import MODELS, Choices, FitModel, fit, replay_log_likelihood, simulate, task_shape
from graphtasks.fitting.batched import batched_log_likelihood, batched_pays, deterministic
from graphtasks.fitting.lockstep import run_lockstep
from graphtasks.fitting.mle import fit_many
from gym_bridge.agents import BATCHED, agent_settings

TWO_STEP = "rewardgym/two-step"


def _with_test_phase(choices: Choices, start: int, stop: int) -> Choices:
    learn = np.ones(len(choices), dtype=bool)
    learn[start:stop] = False
    return Choices(choices.task_id, choices.states, choices.actions, choices.rewards, choices.next_states,
                   choices.ends, learn, choices.source)


def _lane_settings(agent: str) -> list[dict]:
    """Settings that differ per lane in every rate the agent has, by softmax (two inverse
    temperatures) and, where the agent can, epsilon-greedy; Dyna's replays off (they draw)."""
    defaults = agent_settings(agent)
    rates = [k for k in BATCHED[agent].numbers if k == "lr" or k.startswith("lr_") or k.endswith("_lr")]
    out = []
    for k, beta in enumerate((2.0, 5.0, None)):
        if beta is None and (defaults.get("beta") is not None or "beta" not in defaults):
            continue  # an agent that always chooses by a softmax
        settings = {name: min(1.0, float(defaults[name]) * (2.0 + 2 * k)) for name in rates}
        if "beta" not in defaults:  # OpAL: its actors' weights are the temperatures
            settings |= {"beta_g": 2.0 * (k + 1), "beta_n": 1.0 + k}
        else:
            settings["beta"] = beta
        if beta is None:
            settings["epsilon"] = 0.2
        if "replays" in defaults:
            settings["replays"] = 0
        out.append(settings)
    return out


@pytest.fixture(scope="module")
def sequences():
    """Choices of different lengths on two tasks: two-step (states that offer nothing) and a
    T-shaped graph (trials of several steps), one with a test phase in the middle."""
    two_step = [simulate(TWO_STEP, "q", {"lr": 0.4, "beta": 4.0, "gamma": 1.0}, n, seed=n) for n in (25, 40)]
    two_step[1] = _with_test_phase(two_step[1], 20, 50)
    t_graph = [simulate("neuronav/graph/t_graph", "q", {"lr": 0.3, "beta": 3.0}, n, seed=n) for n in (3, 5)]
    return {TWO_STEP: two_step, "neuronav/graph/t_graph": t_graph}


@pytest.mark.parametrize("agent", sorted(BATCHED))
def test_batched_likelihood_equals_the_replay_lane_by_lane(agent, sequences) -> None:
    for task_id, group in sequences.items():
        shape = task_shape(task_id)
        grid = _lane_settings(agent)
        settings = [s for s in grid for _ in group]
        choices = [c for _ in grid for c in group]
        values = batched_log_likelihood(agent, settings, choices, shape)
        expected = [replay_log_likelihood(agent, s, c, shape) for s, c in zip(settings, choices)]
        np.testing.assert_allclose(values, expected, rtol=0, atol=1e-10, err_msg=f"{agent} on {task_id}")


def test_lanes_whose_learning_draws_are_replayed_per_agent(sequences) -> None:
    """Dyna's replays draw random numbers; the batched lanes' streams are not the per-agent
    agent's, so those lanes are replayed one by one and still give the replay's numbers."""
    shape = task_shape(TWO_STEP)
    choices = sequences[TWO_STEP]
    settings = [{"beta": 3.0, "lr": 0.4, "replays": 3}, {"beta": 3.0, "lr": 0.4, "replays": 0}]
    assert not deterministic("dyna", settings[0]) and deterministic("dyna", settings[1])
    values = batched_log_likelihood("dyna", settings, choices, shape)
    assert values.tolist() == pytest.approx([replay_log_likelihood("dyna", s, c, shape)
                                            for s, c in zip(settings, choices)], abs=1e-10)


def test_the_batched_path_is_chosen_where_it_pays(sequences) -> None:
    shape = task_shape(TWO_STEP)
    choices = sequences[TWO_STEP]
    shapes = [shape] * len(choices)
    q = {"lr": 0.3, "beta": 3.0, "gamma": 1.0}
    assert not batched_pays("q", q, choices, shapes, lanes=9)  # the vectorised form, one fit at a time
    assert batched_pays("q", q, choices, shapes, lanes=900)  # 100 participants x 3 starts x 3 points
    assert batched_pays("sarsa", {"lr": 0.3, "beta": 3.0}, choices, shapes, lanes=12)  # no vectorised form
    assert not batched_pays("dyna", {"lr": 0.3, "beta": 3.0, "replays": 5}, choices, shapes, lanes=900)
    assert not batched_pays("mood", {"beta": 3.0}, choices, shapes, lanes=5)


@pytest.fixture(scope="module")
def participants():
    return [simulate(TWO_STEP, "q", {"lr": lr, "beta": 4.0, "gamma": 1.0}, 40, seed=i)
            for i, lr in enumerate((0.2, 0.5, 0.8))]


@pytest.mark.parametrize("model", [
    MODELS["q"],
    FitModel.of("sarsa", {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, {"gamma": 1.0}),
])
@pytest.mark.slow
def test_lockstep_fits_reach_the_same_maxima(model, participants) -> None:
    """Every start of every participant climbing at once (a batched pass per round) ends where
    the fits one at a time end: the same log-likelihoods, settings and standard errors."""
    alone = fit_many(model, participants, starts=2, seed=[0, 1, 2], batched=False)
    together = fit_many(model, participants, starts=2, seed=[0, 1, 2], batched=True)
    for a, b in zip(alone, together):
        assert b.log_likelihood == pytest.approx(a.log_likelihood, abs=1e-6)
        for name in model.free:
            assert b.params[name] == pytest.approx(a.params[name], rel=1e-3, abs=1e-4)
            assert (a.stderr[name] is None) == (b.stderr[name] is None)
            if a.stderr[name] is not None:
                assert b.stderr[name] == pytest.approx(a.stderr[name], rel=1e-2)
    assert fit(model, participants[1], starts=2, seed=1, batched=False).params == alone[1].params


@pytest.mark.slow
def test_a_participant_fits_the_same_alone_and_among_others(participants, monkeypatch) -> None:
    """A lane's numbers do not depend on the lanes beside it: one participant's lockstep fit
    alone equals its fit among the others, and a group cut into parts (at most MAX_OPTIMISERS
    threads each) fits as in one."""
    from graphtasks.fitting import lockstep

    model = FitModel.of("sarsa", {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, {"gamma": 1.0})
    alone = fit_many(model, participants[2:], starts=2, seed=7, batched=True)[0]
    among = fit_many(model, participants, starts=2, seed=7, batched=True)
    assert alone.params == among[2].params and alone.log_likelihood == among[2].log_likelihood
    monkeypatch.setattr(lockstep, "MAX_OPTIMISERS", 3)  # one participant (2 starts) per part
    assert [f.params for f in fit_many(model, participants, starts=2, seed=7, batched=True)] == [
        f.params for f in among]


def test_a_failing_optimiser_stops_the_lockstep() -> None:
    def good(ask):
        return float(ask(0, [{}])[0])

    def bad(ask):
        ask(0, [{}])
        raise ValueError("no")

    assert run_lockstep([good, good], lambda requests: np.ones(len(requests))) == [1.0, 1.0]
    with pytest.raises(ValueError, match="no"):
        run_lockstep([good, bad, good], lambda requests: np.ones(len(requests)))
    def broken(requests):
        raise ZeroDivisionError("evaluation")

    with pytest.raises(ZeroDivisionError, match="evaluation"):
        run_lockstep([good, good], broken)


def test_em_in_lockstep_equals_em_one_participant_at_a_time(participants) -> None:
    """The hierarchical E-step in lockstep (every participant's BFGS at once, a batched pass per
    round) gives the fit of the E-step one participant at a time, for any number of workers."""
    from graphtasks.fitting import fit_group

    alone = fit_group(MODELS["q"], participants, starts=2, seed=3, max_iterations=2, batched=False)
    together = fit_group(MODELS["q"], participants, starts=2, seed=3, max_iterations=2, batched=True)
    two = fit_group(MODELS["q"], participants, starts=2, seed=3, max_iterations=2, batched=True, workers=2)
    assert together.iterations == alone.iterations == 2
    for name in MODELS["q"].free:  # the likelihoods agree to 1e-12; BFGS ends within its tolerance
        assert together.mean[name] == pytest.approx(alone.mean[name], abs=1e-4)
        assert together.variance[name] == pytest.approx(alone.variance[name], rel=1e-4)
    assert [f.log_evidence for f in together.fits] == pytest.approx([f.log_evidence for f in alone.fits], abs=1e-4)
    assert two.mean == together.mean and [f.params for f in two.fits] == [f.params for f in together.fits]


@pytest.mark.slow
def test_parameter_recovery_fits_its_simulations_at_once(monkeypatch) -> None:
    """Recovery of an agent without a vectorised form simulates everyone, then fits them all in
    lockstep: the same fits as simulating and fitting one participant at a time."""
    from graphtasks.fitting import recovery

    model = FitModel.of("sarsa", {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, {"gamma": 1.0})
    assert recovery._batches_pay([(model, {}, [model], TWO_STEP, 30, 0, 1)] * 4)
    together = recovery.parameter_recovery(model, participants=4, trials=30, starts=1, seed=2)
    monkeypatch.setattr(recovery, "_batches_pay", lambda jobs: False)
    alone = recovery.parameter_recovery(model, participants=4, trials=30, starts=1, seed=2)
    assert together.truth == alone.truth
    for name in model.free:
        assert together.fitted[name] == pytest.approx(alone.fitted[name], rel=1e-6, abs=1e-8)
