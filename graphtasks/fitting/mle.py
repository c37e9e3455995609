"""Maximum-likelihood fits: bounded L-BFGS-B from several seeded starts, the best one kept."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .behaviour import BehaviourError, Choices
from .likelihood import TaskShape, log_likelihood, replay_log_likelihood, task_shape
from .models import FitModel


@dataclass(frozen=True)
class FitResult:
    """The best fit of a model to one sequence of choices."""

    model: str
    agent: str
    params: dict[str, float]  # the fitted free settings
    fixed: dict[str, Any]
    bounds: dict[str, tuple[float, float]]
    log_likelihood: float
    choices: int  # n in BIC
    starts: int
    seed: int
    source: str = ""
    truth: dict[str, Any] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return len(self.params)

    @property
    def aic(self) -> float:
        return 2 * self.k - 2 * self.log_likelihood

    @property
    def bic(self) -> float:
        return self.k * math.log(self.choices) - 2 * self.log_likelihood

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "agent": self.agent,
            "params": self.params,
            "fixed": self.fixed,
            "log_likelihood": round(self.log_likelihood, 4),
            "aic": round(self.aic, 4),
            "bic": round(self.bic, 4),
            "choices": self.choices,
            "starts": self.starts,
            "seed": self.seed,
            "source": self.source,
        }


def require_scipy() -> Any:
    try:
        import scipy.optimize as optimize
    except ImportError:
        raise BehaviourError("fitting needs scipy: pip install 'graphtasks[fit]'") from None
    return optimize


def fit(
    model: FitModel,
    choices: Choices,
    starts: int = 5,
    seed: int = 0,
    shape: TaskShape | None = None,
    store: Any = None,
    vectorised: bool = True,
) -> FitResult:
    """The maximum-likelihood settings of `model` for `choices`.

    Each start draws the free settings uniformly from the model's prior (seeded by `seed`),
    then L-BFGS-B climbs the log-likelihood within the bounds; the best end point wins.
    `vectorised=False` replays the agent even where the vectorised form applies (to compare).

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, fit, simulate
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0, "gamma": 1.0}, trials=200, seed=1)
    >>> result = fit(MODELS["q"], choices, starts=3, seed=0)
    >>> sorted(result.params), result.choices
    (['beta', 'lr'], 400)
    """
    optimize = require_scipy()
    if starts < 1:
        raise BehaviourError(f"starts: expected a positive number, got {starts}")
    shape = shape or task_shape(choices.task_id, store)
    shape.check(choices)
    bounds = [model.bounds[name] for name in model.free]
    rng = np.random.default_rng(seed)

    likelihood = log_likelihood if vectorised else replay_log_likelihood

    def negative(x: np.ndarray) -> float:
        return -likelihood(model.agent, model.settings(x), choices, shape)

    best: Any = None
    for _ in range(starts):
        x0 = np.array([rng.uniform(*model.prior_of(name)) for name in model.free])
        found = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=bounds)
        if best is None or found.fun < best.fun:
            best = found
    params = {name: float(v) for name, v in zip(model.free, best.x)}
    return FitResult(
        model.name, model.agent, params, dict(model.fixed), dict(model.bounds), float(-best.fun), len(choices),
        starts, seed,
        choices.source, dict(choices.truth),
    )
