"""Hierarchical fits: expectation-maximisation with Laplace approximations (Huys et al. 2011).

Fitting each participant alone lets 200 noisy choices decide each setting; a hierarchical fit
lets the group inform each participant's estimate. Every free setting is mapped to the whole
real line by a scaled logistic (`x = logit((value - low) / (high - low))`, its bounds are
the model's), where the participants' settings are taken to be drawn from a Gaussian group
prior N(mean, diag(variance)). The fit alternates two steps until the prior stops moving:

- E-step: each participant's maximum a posteriori (MAP) settings under the current prior
  (BFGS in the transformed space, warm-started from the last MAP), and the curvature there
  (a finite-difference Hessian H of the negative log posterior), so that the posterior is
  approximated by N(MAP, H^-1) (Laplace).
- M-step: mean = average MAP; variance = average of (MAP - mean)^2 + the posterior variance,
  which is the maximum of the approximate marginal likelihood over the group prior.

Each participant's log model evidence, log p(choices | group prior), is the Laplace
approximation log L(MAP) + log N(MAP; mean, variance) + d/2 log 2 pi - 1/2 log det H; their
sum is the group's, and the integrated BIC (Huys et al. 2011) is -2 times it plus
2d ln(choices), the group prior's 2d parameters paying for themselves. The per-participant
evidences are what random-effects model selection (`graphtasks.fitting.bms`) compares.

The first E-step starts from `starts` seeded draws of each participant's settings from the
model's prior (as `fit` does) under a broad prior (mean 0, the middle of the bounds; variance
6.25); later ones start from the last MAP. Participants are fitted on `workers` processes;
every draw is made before, so any number of workers gives the same result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .behaviour import BehaviourError, Choices
from .likelihood import TaskShape, log_likelihood, task_shape
from .lockstep import BFGS_STEP, value_and_gradient
from .mle import FitResult, finite_hessian, require_scipy
from .models import FitModel
from .pool import bar, process_pool

START_VARIANCE = 6.25  # the first E-step's prior: sd 2.5 in the transformed space, any setting of the bounds plausible
MIN_VARIANCE = 1e-6  # a group variance never shrinks below this (a setting every participant shares)
MAX_ITERATIONS = 1000
# Steps of the finite differences the Laplace curvature is read with (transformed space, relative beyond 1). The
# likelihoods have kinks (each max over next values bends them where two values cross), and a step of 1e-4 can
# straddle one: a participant's curvature then came out 8 times too large and its evidence 1.2 nats off. A step of
# 1e-2, a tenth of a typical posterior standard deviation here, reads the curvature the posterior has.
LAPLACE_STEP = 1e-2


def _span(model: FitModel) -> tuple[np.ndarray, np.ndarray]:
    low = np.array([model.bounds[n][0] for n in model.free], dtype=float)
    high = np.array([model.bounds[n][1] for n in model.free], dtype=float)
    return low, high


def to_natural(model: FitModel, x: Any) -> np.ndarray:
    """Transformed values (the real line, one column per free setting) -> settings within the bounds.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS
    >>> from graphtasks.fitting.hierarchical import to_natural, to_transformed
    >>> [round(float(v), 6) for v in to_natural(MODELS["q"], to_transformed(MODELS["q"], [0.3, 4.0]))]
    [0.3, 4.0]
    """
    from scipy.special import expit

    low, high = _span(model)
    return low + (high - low) * expit(np.asarray(x, dtype=float))


def to_transformed(model: FitModel, values: Any) -> np.ndarray:
    """Settings within the bounds -> the real line (the inverse of `to_natural`)."""
    from scipy.special import logit

    low, high = _span(model)
    return np.asarray(logit((np.asarray(values, dtype=float) - low) / (high - low)), dtype=float)


def _slope(model: FitModel, x: np.ndarray) -> np.ndarray:
    """d value / d x: turns a transformed standard error into one of the setting (delta method)."""
    from scipy.special import expit

    low, high = _span(model)
    p = expit(x)
    return (high - low) * p * (1 - p)


@dataclass(frozen=True)
class Estimate:
    """One participant's E-step: the MAP (transformed), its Laplace covariance, and what it scores."""

    x: np.ndarray
    covariance: np.ndarray
    log_likelihood: float
    log_evidence: float


def estimate(
    model: FitModel,
    choices: Choices,
    shape: TaskShape,
    mean: np.ndarray,
    variance: np.ndarray,
    starts: Sequence[np.ndarray],
    many: Callable[[Sequence[np.ndarray]], np.ndarray] | None = None,
) -> Estimate:
    """The MAP settings of one participant under the prior N(mean, diag(variance)) in the
    transformed space, from each of `starts` (the best kept), with the Laplace approximation
    of the posterior and of the log evidence. `many`, if given, computes the negative
    log-likelihoods of several transformed points at once (a lockstep round, one batched pass):
    BFGS then gets its value and finite-difference gradient from one call, the same numbers
    scipy's own differences give."""
    optimize = require_scipy()

    def negative(x: np.ndarray) -> float:
        return -log_likelihood(model.agent, model.settings(to_natural(model, x)), choices, shape)

    def objective(x: np.ndarray) -> float:
        return negative(x) + 0.5 * float(np.sum((x - mean) ** 2 / variance))

    def objectives(points: Sequence[np.ndarray]) -> np.ndarray:
        assert many is not None
        prior = np.array([0.5 * float(np.sum((x - mean) ** 2 / variance)) for x in points])
        return np.asarray(many(points), dtype=float) + prior

    best: Any = None
    for x0 in starts:
        if many is None:
            found = optimize.minimize(objective, np.asarray(x0, dtype=float), method="BFGS")
        else:
            found = optimize.minimize(lambda x: value_and_gradient(objectives, x, None, BFGS_STEP),
                                      np.asarray(x0, dtype=float), method="BFGS", jac=True)
        if best is None or found.fun < best.fun:
            best = found
    x = np.asarray(best.x, dtype=float)
    centre = negative(x) if many is None else float(many([x])[0])
    curvature = finite_hessian(negative, x, centre=centre, step=LAPLACE_STEP, many=many)
    # Finite differences on a flat likelihood can give a slightly negative curvature: count it as flat,
    # so that the posterior's precision is at least the prior's.
    eigen, vectors = np.linalg.eigh((curvature + curvature.T) / 2)
    curvature = (vectors * np.clip(eigen, 0.0, None)) @ vectors.T
    precision = curvature + np.diag(1.0 / variance)
    _, log_det = np.linalg.slogdet(precision)
    log_prior = -0.5 * float(np.sum((x - mean) ** 2 / variance + np.log(2 * math.pi * variance)))
    evidence = -centre + log_prior + 0.5 * len(x) * math.log(2 * math.pi) - 0.5 * float(log_det)
    return Estimate(x, np.linalg.inv(precision), -centre, evidence)


def estimates_in_lockstep(
    model: FitModel,
    participants: Sequence[int],
    mean: np.ndarray,
    variance: np.ndarray,
    starts: Sequence[Sequence[np.ndarray]],
    evaluate: Callable[[list[tuple[int, dict[str, Any]]]], np.ndarray],
) -> list[Estimate]:
    """`estimate` of each of `participants` (their `starts`), all climbing at once: every round
    of their likelihood requests is one call of `evaluate` (a batched pass)."""
    from .lockstep import run_lockstep

    def job(participant: int, own: Sequence[np.ndarray]) -> Callable[[Any], Estimate]:
        def run(ask: Any) -> Estimate:
            def many(points: Sequence[np.ndarray]) -> np.ndarray:
                return -ask(participant, [model.settings(to_natural(model, x)) for x in points])

            assert _WORK is not None
            return estimate(model, _WORK[1][participant], _WORK[2][participant], mean, variance, own, many)

        return run

    return run_lockstep([job(p, own) for p, own in zip(participants, starts)], evaluate)


@dataclass(frozen=True)
class GroupFit:
    """A hierarchical fit of a model to a group of participants (one `FitResult` each, method "em").

    `mean` and `variance` are the group prior in the transformed space (per free setting);
    `median` is `mean` mapped back to the settings (the group's median participant);
    `mean_stderr` the standard error of each mean, sqrt(variance / participants).
    """

    model: str
    agent: str
    bounds: dict[str, tuple[float, float]]
    fixed: dict[str, Any]
    mean: dict[str, float]
    variance: dict[str, float]
    fits: tuple[FitResult, ...]
    iterations: int
    converged: bool
    starts: int
    seed: int
    history: tuple[float, ...] = field(default_factory=tuple)  # the summed log evidence after each E-step
    method: str = "em"  # or "nuts": sampled (graphtasks.fitting.bayes); mean and variance are posterior means
    diagnostics: dict[str, Any] = field(default_factory=dict)  # nuts: r-hat, effective sample sizes, divergences

    @property
    def participants(self) -> int:
        return len(self.fits)

    @property
    def choices(self) -> int:
        return sum(f.choices for f in self.fits)

    @property
    def log_evidence(self) -> float:
        return float(sum(f.log_evidence or 0.0 for f in self.fits))

    @property
    def integrated_bic(self) -> float:
        """-2 log p(all choices | group prior) + 2d ln(choices): d means and d variances."""
        return -2 * self.log_evidence + 2 * len(self.mean) * math.log(self.choices)

    @property
    def evidence_cost(self) -> float:
        """Each participant's share of what the group prior's 2d fitted parameters cost,
        d ln(choices) / participants: the integrated BIC's penalty, in log evidence, shared out.

        A participant's Laplace evidence is under the group prior fitted to everyone's choices,
        which it does not pay for: a model whose extra setting the group pins down (the hybrid's
        w near 1 for a model-based group) then costs nothing per participant. Random-effects
        selection subtracts this share from each evidence (`charged_evidences`), so that a
        participant's evidences sum to -integrated_bic / 2 over the group."""
        return len(self.mean) * math.log(self.choices) / self.participants

    def charged_evidences(self) -> list[float]:
        """Each participant's Laplace log evidence less `evidence_cost`: what random-effects selection compares."""
        return [float(f.log_evidence or 0.0) - self.evidence_cost for f in self.fits]

    @property
    def mean_stderr(self) -> dict[str, float]:
        return {n: math.sqrt(v / self.participants) for n, v in self.variance.items()}

    @property
    def median(self) -> dict[str, float]:
        model = FitModel.of(self.agent, self.bounds, self.fixed, self.model)
        values = to_natural(model, [self.mean[n] for n in model.free])
        return {n: float(v) for n, v in zip(model.free, values)}

    @property
    def sd(self) -> dict[str, float]:
        return {n: math.sqrt(v) for n, v in self.variance.items()}

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "agent": self.agent, "method": self.method, "bounds": self.bounds, "fixed": self.fixed,
            "mean": self.mean, "variance": self.variance, "mean_stderr": self.mean_stderr, "median": self.median,
            "participants": self.participants, "choices": self.choices, "log_evidence": self.log_evidence,
            "integrated_bic": self.integrated_bic, "iterations": self.iterations, "converged": self.converged,
            "starts": self.starts, "seed": self.seed, **({"diagnostics": self.diagnostics} if self.diagnostics else {}),
        }


# -- the E-step on processes -----------------------------------------------------------------------
_WORK: tuple[FitModel, Sequence[Choices], Sequence[TaskShape], Any] | None = None


def _hold(model: FitModel, choices: Sequence[Choices], shapes: Sequence[TaskShape], batched: bool = False) -> None:
    """A worker keeps the choices for the whole fit (their plans, or the batched passes'
    arrays, are made once), so each E-step sends only the prior and the starting points."""
    from .batched import evaluator

    global _WORK
    evaluate = evaluator(model.agent, choices, shapes, batched=True) if batched else None
    _WORK = (model, choices, shapes, evaluate)


def _lockstep_job(job: tuple[list[int], np.ndarray, np.ndarray, list[list[np.ndarray]]]) -> list[Estimate]:
    assert _WORK is not None
    participants, mean, variance, starts = job
    return estimates_in_lockstep(_WORK[0], participants, mean, variance, starts, _WORK[3])


def _estimate_job(job: tuple[int, np.ndarray, np.ndarray, list[np.ndarray]]) -> Estimate:
    assert _WORK is not None
    model, choices, shapes, _ = _WORK
    i, mean, variance, starts = job
    return estimate(model, choices[i], shapes[i], mean, variance, starts)


def fit_group(
    model: FitModel,
    choices: Sequence[Choices],
    starts: int = 5,
    seed: int = 0,
    workers: int | None = 1,
    max_iterations: int = 200,
    tolerance: float = 1e-3,
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
    batched: bool | None = None,
) -> GroupFit:
    """Fit `model` to every sequence of `choices` at once, by EM with Laplace approximations.

    Iterates until no group mean or standard deviation (transformed space) moves by more than
    `tolerance` in an iteration, or `max_iterations`. Why use it: with a few hundred choices a
    participant's maximum-likelihood settings scatter widely (a weight `w` often lands on a
    bound); the group prior pulls each estimate towards what the others say, in proportion to
    how little its own choices say, and gives each participant a model evidence that pays for
    the model's flexibility (for random-effects model selection).

    Parameters
    ----------
    model
        The model (`MODELS[name]` or `FitModel.of(...)`); every free setting must have bounds.
    choices
        One sequence of choices per participant (at least two participants).
    starts
        Seeded starting points of each participant's first E-step, drawn from the model's prior.
    seed
        Seed of those draws.
    workers
        Processes running the E-step (the same result for any number).
    max_iterations, tolerance
        When to stop (see above); `converged` says which stopped it.
    shapes
        Each sequence's task shape (default: read from each task).
    batched
        Whether every participant's E-step climbs at once, each round of their likelihood
        requests one pass of a batched agent (None: where it pays,
        `graphtasks.fitting.batched.batched_pays`; the same result for any `workers`).

    Returns
    -------
    GroupFit
        The group prior (mean, variance in the transformed space; `median` in the settings'
        own units) and a `FitResult` per participant (method "em": the MAP settings, their
        posterior standard errors, the log-likelihood at the MAP and the Laplace log evidence).

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.hierarchical import fit_group
    >>> group = [simulate("rewardgym/two-step", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, trials=60, seed=s)
    ...          for s, lr in enumerate((0.3, 0.5, 0.7))]
    >>> result = fit_group(MODELS["q"], group, starts=1, seed=0)
    >>> result.participants, sorted(result.median), result.converged
    (3, ['beta', 'lr'], True)
    >>> result.integrated_bic > -2 * result.log_evidence
    True
    """
    if starts < 1 or isinstance(starts, bool):
        raise BehaviourError(f"starts: expected a positive number, got {starts!r}")
    if len(choices) < 2:
        raise BehaviourError(f"a hierarchical fit needs two or more participants, got {len(choices)}")
    if not (isinstance(max_iterations, int) and 1 <= max_iterations <= MAX_ITERATIONS):
        raise BehaviourError(
            f"max_iterations: expected a whole number from 1 to {MAX_ITERATIONS}, got {max_iterations!r}"
        )
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < math.inf):
        raise BehaviourError(f"tolerance: expected a positive number, got {tolerance!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise BehaviourError(f"workers: expected a positive whole number or None, got {workers!r}")
    require_scipy()
    shapes = list(shapes) if shapes is not None else [task_shape(c.task_id, store) for c in choices]
    for c, s in zip(choices, shapes):
        s.check(c)
    d = len(model.free)
    rng = np.random.default_rng(seed)
    first = [
        [to_transformed(model, [rng.uniform(*model.prior_of(n)) for n in model.free]) for _ in range(starts)]
        for _ in choices
    ]
    mean, variance = np.zeros(d), np.full(d, START_VARIANCE)
    from .batched import lanes_to_pay, parts_for

    lanes = len(choices) * (d + 1)
    needed = lanes_to_pay(model.agent, model.settings(to_natural(model, first[0][0])), choices, shapes)
    if batched is None:
        batched = needed is not None and lanes >= needed
    pool = None
    if workers != 1 and len(choices) > 1:
        pool = process_pool(workers, initializer=_hold, initargs=(model, list(choices), shapes, batched))
    else:
        _hold(model, list(choices), shapes, batched)
    # lockstep: the participants in one chunk per process (each chunk's rounds are batched passes)
    count = len(choices)
    from .lockstep import MAX_OPTIMISERS

    parts = parts_for(lanes, workers, needed or 1) if pool else 1
    parts = min(count, max(parts, -(-count // MAX_OPTIMISERS)))
    chunks = [list(range(count))[k * count // parts:(k + 1) * count // parts] for k in range(parts)]
    history: list[float] = []
    # no total: EM runs until its prior stops moving; the bar counts iterations and shows the move
    shown = bar(None, f"EM of {model.name}", "iteration")
    try:
        previous: list[Estimate] = []
        used = (mean, variance)
        converged = False
        iteration = 0
        while iteration < max_iterations:
            iteration += 1
            used = (mean, variance)  # the prior of this E-step: what its fits and evidences are under
            begin = [first[i] if not previous else [previous[i].x] for i in range(len(choices))]
            if batched:
                work = [(chunk, mean, variance, [begin[i] for i in chunk]) for chunk in chunks]
                done = list(pool.map(_lockstep_job, work)) if pool else [_lockstep_job(w) for w in work]
                found = [e for part in done for e in part]
            else:
                jobs = [(i, mean, variance, begin[i]) for i in range(len(choices))]
                found = list(pool.map(_estimate_job, jobs)) if pool else [_estimate_job(job) for job in jobs]
            previous = found
            history.append(float(sum(e.log_evidence for e in found)))
            xs = np.array([e.x for e in found])
            posterior = np.array([np.diag(e.covariance) for e in found])
            new_mean = xs.mean(axis=0)
            new_variance = np.maximum(((xs - new_mean) ** 2 + posterior).mean(axis=0), MIN_VARIANCE)
            moved = max(np.abs(new_mean - mean).max(), np.abs(np.sqrt(new_variance) - np.sqrt(variance)).max())
            mean, variance = new_mean, new_variance
            shown.set_postfix_str(f"prior moved {moved:.2g} (converged below {tolerance:g})", refresh=False)
            shown.update(1)
            if moved < tolerance:
                converged = True
                break
    finally:
        shown.close()
        if pool is not None:
            pool.shutdown()
    fits = []
    for c, e in zip(choices, previous):
        params = {n: float(v) for n, v in zip(model.free, to_natural(model, e.x))}
        errors = _slope(model, e.x) * np.sqrt(np.diag(e.covariance))
        fits.append(FitResult(
            model.name, model.agent, params, dict(model.fixed), dict(model.bounds), e.log_likelihood, len(c),
            starts, seed, c.source, dict(c.truth), {n: float(v) for n, v in zip(model.free, errors)},
            method="em", log_evidence=e.log_evidence,
        ))
    # the prior the last E-step used: at convergence the fixed point, and what the evidences are under
    mean, variance = used
    return GroupFit(
        model.name, model.agent, dict(model.bounds), dict(model.fixed),
        {n: float(v) for n, v in zip(model.free, mean)}, {n: float(v) for n, v in zip(model.free, variance)},
        tuple(fits), iteration, converged, starts, seed, tuple(history),
    )
