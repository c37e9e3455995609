"""Maximum-likelihood fits: bounded L-BFGS-B from several seeded starts, the best one kept."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

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
    stderr: dict[str, float | None] = field(default_factory=dict)  # None: at a bound, or the curvature is not
    method: str = "mle"  # "mle": maximum likelihood; "em": a participant's MAP estimate in a hierarchical fit
    log_evidence: float | None = None  # log p(choices | model): the Laplace approximation of an EM fit

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
            "log_likelihood": self.log_likelihood,
            "aic": self.aic,
            "bic": self.bic,
            "choices": self.choices,
            "stderr": self.stderr,
            "starts": self.starts,
            "seed": self.seed,
            "source": self.source,
            "method": self.method,
            "log_evidence": self.log_evidence,
        }


def process_pool(workers: int | None, **options: Any) -> Any:
    """A process pool for fits: forked as usual, but started by a fork server once JAX is
    imported (the NUTS backend), since forking a process whose JAX threads run can deadlock."""
    import sys
    from concurrent.futures import ProcessPoolExecutor

    if "jax" in sys.modules:
        import multiprocessing

        options["mp_context"] = multiprocessing.get_context("forkserver")
    return ProcessPoolExecutor(max_workers=workers, **options)


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
    Each fitted setting gets a standard error from the curvature of the log-likelihood at the
    maximum (the inverse of a finite-difference Hessian); None for a setting at its bound.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, fit, simulate
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0, "gamma": 1.0}, trials=200, seed=1)
    >>> result = fit(MODELS["q"], choices, starts=3, seed=0)
    >>> sorted(result.params), result.choices
    (['beta', 'lr'], 400)
    >>> 0 < result.stderr["lr"] < 0.2
    True
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
    errors = standard_errors(negative, np.asarray(best.x, dtype=float), bounds)
    return FitResult(
        model.name, model.agent, params, dict(model.fixed), dict(model.bounds), float(-best.fun), len(choices),
        starts, seed, choices.source, dict(choices.truth), dict(zip(model.free, errors)),
    )


def standard_errors(
    negative: Callable[[np.ndarray], float], x: np.ndarray, bounds: list[tuple[float, float]]
) -> list[float | None]:
    """sqrt(diag(H^-1)), H the Hessian of the negative log-likelihood at its minimum `x` by
    central differences, over the settings away from their bounds; None for the others, and
    for all when H is not positive definite there."""
    steps = np.array([1e-4 * max(1.0, abs(v)) for v in x])
    inside = [i for i, (v, h, (low, high)) in enumerate(zip(x, steps, bounds)) if low + 2 * h < v < high - 2 * h]
    out: list[float | None] = [None] * len(x)
    if not inside:
        return out
    hessian = finite_hessian(negative, x, inside)
    if not np.all(np.isfinite(hessian)) or np.linalg.eigvalsh(hessian).min() <= 0:
        return out
    for a, value in zip(inside, np.sqrt(np.diag(np.linalg.inv(hessian)))):
        out[a] = float(value)
    return out


def finite_hessian(
    f: Callable[[np.ndarray], float], x: np.ndarray, indices: list[int] | None = None, centre: float | None = None,
    step: float = 1e-4,
) -> np.ndarray:
    """The Hessian of `f` at `x` over the coordinates `indices` (default: all) by central
    differences, steps of `step` relative (at least `step`): the curvature the standard errors
    and the Laplace approximations read. `centre`, if known, is f(x)."""
    inside = list(range(len(x))) if indices is None else list(indices)
    steps = np.array([step * max(1.0, abs(v)) for v in x])

    def at(shift: dict[int, float]) -> float:
        moved = np.array(x, dtype=float)
        for i, d in shift.items():
            moved[i] += d
        return f(moved)

    if centre is None:
        centre = f(np.asarray(x, dtype=float))
    hessian = np.zeros((len(inside), len(inside)))
    for a, i in enumerate(inside):
        hi = steps[i]
        hessian[a, a] = (at({i: hi}) - 2 * centre + at({i: -hi})) / hi**2
        for b in range(a):
            j, hj = inside[b], steps[inside[b]]
            hessian[a, b] = hessian[b, a] = (
                at({i: hi, j: hj}) - at({i: hi, j: -hj}) - at({i: -hi, j: hj}) + at({i: -hi, j: -hj})
            ) / (4 * hi * hj)
    return hessian
