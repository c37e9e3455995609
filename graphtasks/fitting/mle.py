"""Maximum-likelihood fits: bounded L-BFGS-B from several seeded starts, the best one kept."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .behaviour import BehaviourError, Choices
from .likelihood import TaskShape, log_likelihood, replay_log_likelihood, task_shape
from .models import FitModel
from .pool import bar, map_jobs


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
    batched: bool | None = None,
) -> FitResult:
    """The maximum-likelihood settings of `model` for `choices`.

    Each start draws the free settings uniformly from the model's prior (seeded by `seed`),
    then L-BFGS-B climbs the log-likelihood within the bounds; the best end point wins.
    `vectorised=False` replays the agent even where the vectorised form applies (to compare).
    Each fitted setting gets a standard error from the curvature of the log-likelihood at the
    maximum (the inverse of a finite-difference Hessian); None for a setting at its bound.
    `batched` (None: chosen, see `fit_many`) runs the starts in lockstep through a batched agent.

    Parameters
    ----------
    model : FitModel
        The model: an agent, its free settings with their bounds and its fixed ones (a shipped
        one from `MODELS`, or your own).
    choices : Choices
        One sequence of choices (states, actions, rewards), e.g. from `simulate`, `read_events`
        or a recorded run.
    starts : int
        Starting points of the optimiser; the best end point wins.
    seed : int
        Seeds the starting points.
    shape : TaskShape, optional
        The task's size and the actions each state offers; None: read from the task.
    store : optional
        Where the task is read from for its shape (None: the default store).
    vectorised : bool
        False replays the agent step by step even where the vectorised likelihood applies.
    batched : bool, optional
        True runs the starts in lockstep through a batched agent; None chooses.

    Returns
    -------
    FitResult
        The fitted settings with their standard errors, the log-likelihood, AIC and BIC.

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
    shapes = None if shape is None else [shape]
    return fit_many(model, [choices], starts, seed, shapes, store, vectorised, batched)[0]


def fit_many(
    model: FitModel,
    choices_list: Sequence[Choices],
    starts: int = 5,
    seed: int | Sequence[int] = 0,
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
    vectorised: bool = True,
    batched: bool | None = None,
    workers: int | None = 1,
) -> list[FitResult]:
    """`fit` of every sequence of choices (seed `seed`, or `seed[i]` for the i-th), the same
    starting points as each fit alone.

    With `batched` (None: chosen automatically, `graphtasks.fitting.batched.batched_pays`) every
    start of every participant climbs at once: each L-BFGS-B runs in a thread of its own and
    each of its steps asks for its likelihood and finite-difference gradient (free settings + 1
    points), and every round of those requests is one pass of a batched agent
    (`graphtasks.fitting.lockstep`); the standard errors' Hessian points are one more pass.
    Otherwise the fits run one after another, each likelihood alone (`log_likelihood`).
    `workers` processes (None: one per core) share the participants: a contiguous part each
    when batched, one participant per job otherwise; the same fits for any number of them.
    """
    require_scipy()
    if starts < 1:
        raise BehaviourError(f"starts: expected a positive number, got {starts}")
    if not len(choices_list):
        return []
    shapes = list(shapes) if shapes is not None else [task_shape(c.task_id, store) for c in choices_list]
    for c, s in zip(choices_list, shapes):
        s.check(c)
    seeds = [seed] * len(choices_list) if isinstance(seed, (int, np.integer)) else [int(v) for v in seed]
    bounds = [model.bounds[name] for name in model.free]
    firsts = []
    for one_seed in seeds:
        rng = np.random.default_rng(one_seed)
        firsts.append([np.array([rng.uniform(*model.prior_of(name)) for name in model.free]) for _ in range(starts)])
    from .batched import lanes_to_pay, parts_for

    lanes = len(choices_list) * starts * (len(model.free) + 1)
    needed = lanes_to_pay(model.agent, model.settings(firsts[0][0]), choices_list, shapes, vectorised)
    if batched is None:
        batched = vectorised and needed is not None and lanes >= needed
    if workers != 1 and len(choices_list) > 1:
        count = len(choices_list)
        parts = min(count, parts_for(lanes, workers, needed or 1)) if batched else count
        chunks = [list(range(k * count // parts, (k + 1) * count // parts)) for k in range(parts)]
        jobs = [(model, [choices_list[i] for i in chunk], starts, [seeds[i] for i in chunk],
                 [shapes[i] for i in chunk], vectorised, batched) for chunk in chunks]
        return [r for part in map_jobs(_fit_chunk, jobs, workers, f"fits of {model.name}",
                                       [len(chunk) * starts for chunk in chunks], "start") for r in part]
    # the bar counts optimiser starts as each ends. In a lockstep every start climbs at once and
    # most end together near the end: no remaining time from their rate (it would be many times
    # too long), the batched passes made so far instead, which show it moving
    options = {"bar_format": "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"}
    with bar(len(choices_list) * starts, f"fits of {model.name}", "start", quiet=len(choices_list) * starts < 2,
             smoothing=0, **(options if batched else {})) as shown:
        counts = _Counts(shown)
        if batched:
            from .lockstep import MAX_OPTIMISERS

            step = max(1, MAX_OPTIMISERS // starts)  # participants per lockstep: a thread per start
            found = []
            for k in range(0, len(choices_list), step):
                part = slice(k, k + step)
                found += _fit_lockstep(model, choices_list[part], shapes[part], firsts[part], bounds, vectorised,
                                       counts)
        else:
            found = [_fit_one(model, c, s, x0s, bounds, vectorised, counts)
                     for c, s, x0s in zip(choices_list, shapes, firsts)]
    return [
        FitResult(
            model.name, model.agent, {name: float(v) for name, v in zip(model.free, best.x)}, dict(model.fixed),
            dict(model.bounds), float(-best.fun), len(c), starts, one_seed, c.source, dict(c.truth),
            dict(zip(model.free, errors)),
        )
        for c, one_seed, (best, errors) in zip(choices_list, seeds, found)
    ]


class _Counts:
    """What a fit tells its progress bar `shown`, from any thread: each optimiser start as it
    ends (`start_ended`), and each batched pass of a lockstep (`passed`, shown beside the bar,
    redrawn at most twice a second)."""

    def __init__(self, shown: Any) -> None:
        import threading

        self.shown, self.lock, self.passes, self.drawn = shown, threading.Lock(), 0, 0.0

    def start_ended(self) -> None:
        with self.lock:
            self.shown.update(1)

    def passed(self) -> None:
        import time

        with self.lock:
            self.passes += 1
            now = time.monotonic()
            self.shown.set_postfix_str(f"{self.passes} batched passes", refresh=now - self.drawn >= 0.5)
            if now - self.drawn >= 0.5:
                self.drawn = now


def _fit_chunk(job: tuple[FitModel, list[Choices], int, list[int], list[TaskShape], bool, bool]) -> list[FitResult]:
    model, choices_list, starts, seeds, shapes, vectorised, batched = job
    return fit_many(model, choices_list, starts, seeds, shapes, vectorised=vectorised, batched=batched)


def _fit_one(
    model: FitModel, choices: Choices, shape: TaskShape, x0s: list[np.ndarray], bounds: list[tuple[float, float]],
    vectorised: bool, counts: _Counts | None = None,
) -> tuple[Any, list[float | None]]:
    """One participant's fit, each likelihood alone: the best of the starts and its standard
    errors; `counts` is told as each start ends."""
    optimize = require_scipy()
    likelihood = log_likelihood if vectorised else replay_log_likelihood

    def negative(x: np.ndarray) -> float:
        return -likelihood(model.agent, model.settings(x), choices, shape)

    best: Any = None
    for x0 in x0s:
        found = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=bounds)
        if counts is not None:
            counts.start_ended()
        if best is None or found.fun < best.fun:
            best = found
    return best, standard_errors(negative, np.asarray(best.x, dtype=float), bounds)


def _fit_lockstep(
    model: FitModel, choices_list: Sequence[Choices], shapes: Sequence[TaskShape], firsts: list[list[np.ndarray]],
    bounds: list[tuple[float, float]], vectorised: bool, counts: _Counts | None = None,
) -> list[tuple[Any, list[float | None]]]:
    """Every start of every participant climbing at once, each round one batched pass; `counts`
    is told of each pass and as each start's climb ends."""
    from .batched import evaluator
    from .lockstep import run_lockstep, value_and_gradient

    optimize = require_scipy()
    passes = evaluator(model.agent, choices_list, shapes, batched=True, vectorised=vectorised)

    def evaluate(request: Any) -> Any:
        if counts is not None:
            counts.passed()
        return passes(request)

    def climb(participant: int, x0: np.ndarray) -> Callable[[Any], Any]:
        def job(ask: Any) -> Any:
            def negatives(points: Sequence[np.ndarray]) -> np.ndarray:
                return -ask(participant, [model.settings(x) for x in points])

            found = optimize.minimize(
                lambda x: value_and_gradient(negatives, x, bounds), x0, method="L-BFGS-B", jac=True, bounds=bounds
            )
            if counts is not None:
                counts.start_ended()
            return found

        return job

    jobs = [climb(p, x0) for p, x0s in enumerate(firsts) for x0 in x0s]
    ends = run_lockstep(jobs, evaluate)
    bests: list[Any] = []
    for p, x0s in enumerate(firsts):
        best: Any = None
        for found in ends[:len(x0s)]:
            if best is None or found.fun < best.fun:
                best = found
        ends = ends[len(x0s):]
        bests.append(best)

    def errors(participant: int) -> Callable[[Any], Any]:
        def job(ask: Any) -> Any:
            def negatives(points: Sequence[np.ndarray]) -> np.ndarray:
                return -ask(participant, [model.settings(x) for x in points])

            return standard_errors(None, np.asarray(bests[participant].x, dtype=float), bounds, many=negatives)

        return job

    return list(zip(bests, run_lockstep([errors(p) for p in range(len(firsts))], evaluate)))


def standard_errors(
    negative: Callable[[np.ndarray], float] | None, x: np.ndarray, bounds: list[tuple[float, float]],
    many: Callable[[Sequence[np.ndarray]], np.ndarray] | None = None,
) -> list[float | None]:
    """sqrt(diag(H^-1)), H the Hessian of the negative log-likelihood at its minimum `x` by
    central differences, over the settings away from their bounds; None for the others, and
    for all when H is not positive definite there."""
    steps = np.array([1e-4 * max(1.0, abs(v)) for v in x])
    inside = [i for i, (v, h, (low, high)) in enumerate(zip(x, steps, bounds)) if low + 2 * h < v < high - 2 * h]
    out: list[float | None] = [None] * len(x)
    if not inside:
        return out
    hessian = finite_hessian(negative, x, inside, many=many)
    if not np.all(np.isfinite(hessian)) or np.linalg.eigvalsh(hessian).min() <= 0:
        return out
    for a, value in zip(inside, np.sqrt(np.diag(np.linalg.inv(hessian)))):
        out[a] = float(value)
    return out


def finite_hessian(
    f: Callable[[np.ndarray], float] | None, x: np.ndarray, indices: list[int] | None = None,
    centre: float | None = None, step: float = 1e-4, many: Callable[[Sequence[np.ndarray]], np.ndarray] | None = None,
) -> np.ndarray:
    """The Hessian of `f` at `x` over the coordinates `indices` (default: all) by central
    differences, steps of `step` relative (at least `step`): the curvature the standard errors
    and the Laplace approximations read. `centre`, if known, is f(x). `many`, if given, takes
    every point at once and returns their values (one batched pass), instead of `f`."""
    inside = list(range(len(x))) if indices is None else list(indices)
    steps = np.array([step * max(1.0, abs(v)) for v in x])
    points: list[np.ndarray] = []

    def at(shift: dict[int, float]) -> int:
        moved = np.array(x, dtype=float)
        for i, d in shift.items():
            moved[i] += d
        points.append(moved)
        return len(points) - 1

    middle = at({}) if centre is None else -1
    plan: list[tuple[int, int, list[int]]] = []
    for a, i in enumerate(inside):
        hi = steps[i]
        plan.append((a, a, [at({i: hi}), at({i: -hi})]))
        for b in range(a):
            j, hj = inside[b], steps[inside[b]]
            plan.append((a, b, [at({i: hi, j: hj}), at({i: hi, j: -hj}), at({i: -hi, j: hj}), at({i: -hi, j: -hj})]))
    if many is not None:
        values = [float(v) for v in many(points)]
    else:
        assert f is not None
        values = [f(p) for p in points]
    if centre is None:
        centre = values[middle]
    hessian = np.zeros((len(inside), len(inside)))
    for a, b, where in plan:
        v = [values[k] for k in where]
        if a == b:
            hi = steps[inside[a]]
            hessian[a, a] = (v[0] - 2 * centre + v[1]) / hi**2
        else:
            hi, hj = steps[inside[a]], steps[inside[b]]
            hessian[a, b] = hessian[b, a] = (v[0] - v[1] - v[2] + v[3]) / (4 * hi * hj)
    return hessian
