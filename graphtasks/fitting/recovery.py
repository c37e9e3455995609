"""Parameter and model recovery: simulate agents whose settings are known, fit them back.

Parameter recovery draws each simulated participant's free settings from the model's prior,
simulates `trials` trials, fits the same model and reports, per setting, the correlation of
true and fitted values. Model recovery simulates from each model and fits every model to each
simulation; the confusion matrix counts which model the BIC picks. Simulation seeds come from
one `SeedSequence`, so the result is the same for any number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError
from .mle import FitResult, fit, fit_many
from .models import FitModel, fit_model
from .pool import map_jobs, progress  # noqa: F401 (re-export: the commands use recovery.progress)
from .simulate import simulate


@dataclass(frozen=True)
class Simulated:
    """What every recovery names: the model simulated, the task, the trials per participant."""

    model: str
    task_id: str
    trials: int

    def head(self) -> dict[str, Any]:
        return {"model": self.model, "task": self.task_id, "trials": self.trials}


@dataclass(frozen=True)
class ParameterRecovery(Simulated):
    truth: dict[str, list[float]]
    fitted: dict[str, list[float]]

    def correlation(self, name: str) -> float:
        return float(np.corrcoef(self.truth[name], self.fitted[name])[0, 1])

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.head(),
            "participants": len(next(iter(self.truth.values()))),
            "correlation": {name: round(self.correlation(name), 3) for name in self.truth},
            "truth": self.truth,
            "fitted": self.fitted,
        }


@dataclass(frozen=True)
class ModelRecovery:
    models: tuple[str, ...]
    task_id: str
    trials: int
    confusion: np.ndarray  # [generating model, model picked by BIC] counts

    def as_dict(self) -> dict[str, Any]:
        return {
            "models": list(self.models),
            "task": self.task_id,
            "trials": self.trials,
            "confusion": {
                gen: dict(zip(self.models, map(int, row))) for gen, row in zip(self.models, self.confusion)
            },
            "recovered": round(float(np.trace(self.confusion) / self.confusion.sum()), 3),
        }


MAX_PARTICIPANTS = 100_000  # simulated participants of one recovery
MAX_TRIALS = 10_000_000  # trials of one simulated participant
MAX_STARTS = 1000  # optimiser starts per fit


def _check_sizes(participants: int, least: int, trials: int, starts: int) -> None:
    for name, value, low, high in (("participants", participants, least, MAX_PARTICIPANTS),
                                   ("trials", trials, 1, MAX_TRIALS), ("starts", starts, 1, MAX_STARTS)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise BehaviourError(f"{name}: expected a whole number of at least {low}, got {value!r}")
        if value > high:
            raise BehaviourError(f"{name}: expected a whole number of at most {high:,}, got {value!r}")


def _check_workers(workers: int | None) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise BehaviourError(f"workers: expected a positive whole number or None, got {workers!r}")


def _candidates(models: Sequence[str]) -> list[FitModel]:
    """The shipped models a model recovery compares: two or more, different."""
    chosen = [fit_model(m) for m in models]
    if len(chosen) < 2 or len({m.name for m in chosen}) != len(chosen):
        raise BehaviourError(f"models: expected two or more different models, got {list(models)}")
    return chosen


def _draw(model: FitModel, rng: np.random.Generator) -> dict[str, float]:
    return {name: float(rng.uniform(*model.prior_of(name))) for name in model.free}


Job = tuple[FitModel, dict[str, float], Sequence[FitModel], str, int, int, int]


def _simulate_and_fit(job: Job) -> list[FitResult]:
    model, drawn, fitted_models, task_id, trials, seed, starts = job
    choices = simulate(task_id, model.agent, model.settings([drawn[n] for n in model.free]), trials, seed)
    return [fit(m, choices, starts=starts, seed=seed) for m in fitted_models]


def _run(jobs: Sequence[Job], workers: int | None) -> list[list[FitResult]]:
    """Each job's simulation fitted by each of its models: one job at a time (simulated and
    fitted together), or, where fits of many participants at once through a batched agent pay
    (`graphtasks.fitting.mle.fit_many`), every simulation first, then each model's fits of all of
    them at once. The same fits either way, for any `workers`."""
    if not jobs or not _batches_pay(jobs):
        return map_jobs(_simulate_and_fit, list(jobs), workers, "simulated and fitted")
    from .likelihood import task_shape

    simulated = map_jobs(_simulate_job, [(m, [d[n] for n in m.free], task, trials, seed)
                                         for m, d, _, task, trials, seed, _ in jobs], workers, "simulated")
    shapes = [task_shape(job[3]) for job in jobs]
    seeds = [job[5] for job in jobs]
    models = jobs[0][2]
    per_model = [fit_many(m, simulated, jobs[0][6], seeds, shapes, workers=workers) for m in models]
    return [[fits[i] for fits in per_model] for i in range(len(jobs))]


def _batches_pay(jobs: Sequence[Job]) -> bool:
    """Whether some model of the jobs (all fitting the same models with the same starts) has
    enough fits for the batched path (`graphtasks.fitting.batched.batched_pays`'s thresholds; Q
    and the hybrid counted as vectorised)."""
    from .batched import LANES_OVER_REPLAY, LANES_OVER_VECTORISED, has_batched_form
    from .vectorised import vectorised_form

    models, starts = jobs[0][2], jobs[0][6]
    if any(job[2] != models or job[6] != starts for job in jobs):
        return False
    for m in models:
        lanes = len(jobs) * starts * (len(m.free) + 1)
        over = LANES_OVER_VECTORISED if vectorised_form(m.agent) else LANES_OVER_REPLAY
        if has_batched_form(m.agent) and lanes >= over:
            return True
    return False


def parameter_recovery(
    model: str | FitModel = "q",
    participants: int = 30,
    trials: int = 200,
    task_id: str = "rewardgym/two-step",
    seed: int = 0,
    starts: int = 3,
    workers: int | None = 1,
) -> ParameterRecovery:
    """Simulate `participants` agents with settings from the prior, fit them back."""
    _check_sizes(participants, 3, trials, starts)  # a correlation needs three points
    _check_workers(workers)
    chosen = fit_model(model) if isinstance(model, str) else model
    root = np.random.SeedSequence(seed)
    rng = np.random.default_rng(root.spawn(1)[0])
    draws = [_draw(chosen, rng) for _ in range(participants)]
    seeds = [int(s.generate_state(1)[0]) for s in root.spawn(participants + 1)[1:]]
    jobs = [(chosen, d, [chosen], task_id, trials, s, starts) for d, s in zip(draws, seeds)]
    results = [r[0] for r in _run(jobs, workers)]
    truth = {name: [d[name] for d in draws] for name in chosen.free}
    fitted = {name: [r.params[name] for r in results] for name in chosen.free}
    return ParameterRecovery(chosen.name, task_id, trials, truth, fitted)


def model_recovery(
    models: Sequence[str] = ("q", "model-based", "hybrid"),
    participants: int = 10,
    trials: int = 200,
    task_id: str = "rewardgym/two-step",
    seed: int = 0,
    starts: int = 2,
    workers: int | None = 1,
) -> ModelRecovery:
    """Simulate `participants` agents of each model and count which model's fit has the lowest BIC."""
    _check_sizes(participants, 1, trials, starts)
    _check_workers(workers)
    chosen = _candidates(models)
    root = np.random.SeedSequence(seed)
    rng = np.random.default_rng(root.spawn(1)[0])
    jobs = []
    for generator in chosen:
        for child in root.spawn(participants):
            jobs.append((generator, _draw(generator, rng), chosen, task_id, trials,
                         int(child.generate_state(1)[0]), starts))
    confusion = np.zeros((len(chosen), len(chosen)), dtype=int)
    for job, fits in zip(jobs, _run(jobs, workers)):
        confusion[chosen.index(job[0]), int(np.argmin([f.bic for f in fits]))] += 1
    return ModelRecovery(tuple(m.name for m in chosen), task_id, trials, confusion)


# -- group level: simulated groups, fitted by maximum likelihood and by EM ------------------------------------
def group_distribution(model: FitModel) -> tuple[np.ndarray, np.ndarray]:
    """The default group distribution to simulate from, in the transformed space of the
    hierarchical fit: mean the middle of the model's prior interval, sd a quarter of its width,
    so that 95% of the simulated participants fall within the prior interval."""
    from .hierarchical import to_transformed

    low = to_transformed(model, [model.prior_of(n)[0] for n in model.free])
    high = to_transformed(model, [model.prior_of(n)[1] for n in model.free])
    return (low + high) / 2, (high - low) / 4


def _simulate_job(job: tuple[FitModel, list[float], str, int, int]) -> Any:
    model, values, task_id, trials, seed = job
    return simulate(task_id, model.agent, model.settings(values), trials, seed)


def _simulate_group(
    model: FitModel, mean: np.ndarray, sd: np.ndarray, participants: int, trials: int, task_id: str,
    root: np.random.SeedSequence, workers: int | None,
) -> tuple[np.ndarray, list[Any]]:
    """Settings drawn from N(mean, sd^2) in the transformed space, and a simulation of each."""
    from .hierarchical import to_natural

    draws_seed, *seeds = root.spawn(participants + 1)
    x = mean + sd * np.random.default_rng(draws_seed).standard_normal((participants, len(mean)))
    values = to_natural(model, x)
    jobs = [(model, row.tolist(), task_id, trials, int(s.generate_state(1)[0])) for row, s in zip(values, seeds)]
    return values, map_jobs(_simulate_job, jobs, workers, "simulated")


@dataclass(frozen=True)
class GroupRecovery(Simulated):
    """Settings of a simulated group, fitted back per participant (MLE) and hierarchically (EM,
    and NUTS when it ran)."""

    truth: dict[str, list[float]]
    mle: dict[str, list[float]]
    em: dict[str, list[float]]
    true_mean: dict[str, float]  # the group distribution simulated from (transformed)
    true_sd: dict[str, float]
    fitted_mean: dict[str, float]  # EM's group prior
    fitted_sd: dict[str, float]
    mean_stderr: dict[str, float]
    seconds: dict[str, float]  # of the MLE fits and of the EM fit (not part of equality)
    nuts: dict[str, list[float]] = field(default_factory=dict)  # posterior means by NUTS, when it ran
    nuts_mean: dict[str, float] = field(default_factory=dict)  # its group mean (posterior mean of mu)
    diagnostics: dict[str, Any] = field(default_factory=dict)  # of the NUTS fit (seconds left out of equality)

    @property
    def methods(self) -> tuple[str, ...]:
        return ("mle", "em", "nuts") if self.nuts else ("mle", "em")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupRecovery):
            return NotImplemented
        return self.as_dict(times=False) == other.as_dict(times=False)

    def correlation(self, method: str, name: str) -> float:
        return float(np.corrcoef(self.truth[name], getattr(self, method)[name])[0, 1])

    def mae(self, method: str, name: str) -> float:
        return float(np.mean(np.abs(np.subtract(getattr(self, method)[name], self.truth[name]))))

    def mean_error(self, name: str) -> float:
        """How many standard errors EM's group mean lies from the simulated one."""
        return (self.fitted_mean[name] - self.true_mean[name]) / self.mean_stderr[name]

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for n in self.truth:
            row = {"setting": n, "r_mle": self.correlation("mle", n), "r_em": self.correlation("em", n),
                   "mae_mle": self.mae("mle", n), "mae_em": self.mae("em", n), "true_mean": self.true_mean[n],
                   "em_mean": self.fitted_mean[n], "em_mean_se": self.mean_stderr[n],
                   "mean_error_se": self.mean_error(n), "true_sd": self.true_sd[n], "em_sd": self.fitted_sd[n]}
            if self.nuts:
                row.update({"r_nuts": self.correlation("nuts", n), "mae_nuts": self.mae("nuts", n),
                            "nuts_mean": self.nuts_mean[n]})
            out.append(row)
        return out

    def as_dict(self, times: bool = True) -> dict[str, Any]:
        out = {**self.head(), "participants": len(next(iter(self.truth.values()))), "rows": self.rows(),
               "truth": self.truth,
               "mle": self.mle, "em": self.em}
        if self.nuts:
            out["nuts"] = self.nuts
            out["diagnostics"] = {k: v for k, v in self.diagnostics.items() if times or k != "seconds"}
        if times:
            out["seconds"] = self.seconds
        return out


def group_parameter_recovery(
    model: str | FitModel = "hybrid",
    participants: int = 30,
    trials: int = 200,
    task_id: str = "rewardgym/two-step",
    seed: int = 0,
    starts: int = 3,
    workers: int | None = 1,
    mean: Sequence[float] | None = None,
    sd: Sequence[float] | None = None,
    nuts: bool | None = None,
    samples: int = 1000,
    warmup: int = 1000,
) -> GroupRecovery:
    """Simulate a group, fit it by maximum likelihood (each participant alone), by EM and, when
    `nuts` (default: when NumPyro is installed), by NUTS (`graphtasks.fitting.bayes`, 4 chains
    of `warmup` + `samples` each).

    Each participant's settings are drawn from a Gaussian in the hierarchical fit's transformed
    space (`mean`, `sd`: one per free setting; default `group_distribution(model)`), so EM's
    group prior has a true value to be compared with. Draws and simulation seeds come from one
    `SeedSequence`, the same for any `workers`.

    Examples
    --------
    >>> from graphtasks.fitting.recovery import group_parameter_recovery
    >>> result = group_parameter_recovery("q", participants=4, trials=40, starts=1, seed=1, nuts=False)
    >>> sorted(result.truth), len(result.em["lr"])
    (['beta', 'lr'], 4)
    """
    import time

    from .hierarchical import fit_group

    _check_sizes(participants, 3, trials, starts)
    _check_workers(workers)
    chosen = fit_model(model) if isinstance(model, str) else model
    default_mean, default_sd = group_distribution(chosen)
    mu = np.asarray(default_mean if mean is None else mean, dtype=float)
    sigma = np.asarray(default_sd if sd is None else sd, dtype=float)
    if mu.shape != default_mean.shape or sigma.shape != default_sd.shape or np.any(sigma < 0):
        raise BehaviourError(f"group distribution: expected a mean and a non-negative sd for each of {chosen.free}")
    values, choices = _simulate_group(chosen, mu, sigma, participants, trials, task_id, np.random.SeedSequence(seed),
                                      workers)
    started = time.perf_counter()
    mle = fit_many(chosen, choices, starts, 0, workers=workers)
    between = time.perf_counter()
    group = fit_group(chosen, choices, starts=starts, seed=seed, workers=workers)
    ended = time.perf_counter()
    names = chosen.free
    seconds = {"mle": between - started, "em": ended - between}
    sampled: Any = None
    if nuts is None:  # NUTS's JAX likelihood is of choices only: response-time models are fitted by MLE and EM
        nuts = nuts_installed() and "rt" not in chosen.fixed
    if nuts:
        from .bayes import fit_group_nuts

        sampled = fit_group_nuts(chosen, choices, samples, warmup, seed)
        seconds["nuts"] = time.perf_counter() - ended
    return GroupRecovery(
        chosen.name, task_id, trials,
        {n: values[:, j].tolist() for j, n in enumerate(names)},
        {n: [f.params[n] for f in mle] for n in names},
        {n: [f.params[n] for f in group.fits] for n in names},
        {n: float(mu[j]) for j, n in enumerate(names)}, {n: float(sigma[j]) for j, n in enumerate(names)},
        dict(group.mean), group.sd, group.mean_stderr, seconds,
        {n: [f.params[n] for f in sampled.fits] for n in names} if sampled else {},
        dict(sampled.mean) if sampled else {}, dict(sampled.diagnostics) if sampled else {},
    )


def nuts_installed() -> bool:
    """Whether the optional NUTS backend (NumPyro and JAX: graphtasks[bayes]) imports."""
    import importlib.util

    return importlib.util.find_spec("numpyro") is not None and importlib.util.find_spec("jax") is not None


@dataclass(frozen=True)
class GroupModelRecovery:
    """For each generating model, a simulated group fitted by EM with every model, and what
    random-effects model selection says: [generating, candidate] matrices."""

    models: tuple[str, ...]
    task_id: str
    trials: int
    participants: int
    protected_exceedance: np.ndarray
    exceedance: np.ndarray
    frequencies: np.ndarray
    bor: np.ndarray  # per generating model
    best: np.ndarray  # [generating, candidate]: participants whose highest Laplace evidence is the candidate's

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupModelRecovery):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def as_dict(self) -> dict[str, Any]:
        def table(matrix: np.ndarray) -> dict[str, dict[str, float]]:
            return {g: {c: float(v) for c, v in zip(self.models, row)} for g, row in zip(self.models, matrix)}

        return {
            "models": list(self.models), "task": self.task_id, "trials": self.trials,
            "participants": self.participants, "protected_exceedance": table(self.protected_exceedance),
            "exceedance": table(self.exceedance), "frequencies": table(self.frequencies),
            "bor": dict(zip(self.models, map(float, self.bor))),
            "best_by_evidence": {g: {c: int(v) for c, v in zip(self.models, row)} for g, row in
                                 zip(self.models, self.best)},
        }


def group_model_recovery(
    models: Sequence[str] = ("q", "model-based", "hybrid"),
    participants: int = 30,
    trials: int = 200,
    task_id: str = "rewardgym/two-step",
    seed: int = 0,
    starts: int = 2,
    workers: int | None = 1,
) -> GroupModelRecovery:
    """Simulate a group from each model (its `group_distribution`), fit every model to each
    group by EM and select among them by random-effects BMS on the Laplace evidences."""
    from .bms import random_effects
    from .hierarchical import fit_group

    _check_sizes(participants, 2, trials, starts)
    _check_workers(workers)
    chosen = _candidates(models)
    k = len(chosen)
    pxp, xp, freq, bor = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k)), np.zeros(k)
    best = np.zeros((k, k), dtype=int)
    for g, (generator, child) in enumerate(zip(chosen, np.random.SeedSequence(seed).spawn(k))):
        mean, sd = group_distribution(generator)
        _, choices = _simulate_group(generator, mean, sd, participants, trials, task_id, child, workers)
        fits = [fit_group(candidate, choices, starts=starts, seed=seed, workers=workers) for candidate in chosen]
        matrix = np.array([group.charged_evidences() for group in fits]).T
        selection = random_effects(matrix, [m.name for m in chosen])
        pxp[g], xp[g], freq[g], bor[g] = (selection.protected_exceedance, selection.exceedance,
                                          selection.frequencies, selection.bor)
        best[g] = np.bincount(matrix.argmax(axis=1), minlength=k)
    return GroupModelRecovery(tuple(m.name for m in chosen), task_id, trials, participants, pxp, xp, freq, bor, best)
