"""Parameter and model recovery: simulate agents whose settings are known, fit them back.

Parameter recovery draws each simulated participant's free settings from the model's prior,
simulates `trials` trials, fits the same model and reports, per setting, the correlation of
true and fitted values. Model recovery simulates from each model and fits every model to each
simulation; the confusion matrix counts which model the BIC picks. Simulation seeds come from
one `SeedSequence`, so the result is the same for any number of workers.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError
from .mle import FitResult, fit
from .models import FitModel, fit_model
from .simulate import simulate


@dataclass(frozen=True)
class ParameterRecovery:
    model: str
    task_id: str
    trials: int
    truth: dict[str, list[float]]
    fitted: dict[str, list[float]]

    def correlation(self, name: str) -> float:
        return float(np.corrcoef(self.truth[name], self.fitted[name])[0, 1])

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "task": self.task_id,
            "trials": self.trials,
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


def _draw(model: FitModel, rng: np.random.Generator) -> dict[str, float]:
    return {name: float(rng.uniform(*model.prior_of(name))) for name in model.free}


Job = tuple[FitModel, dict[str, float], Sequence[FitModel], str, int, int, int]


def _simulate_and_fit(job: Job) -> list[FitResult]:
    model, drawn, fitted_models, task_id, trials, seed, starts = job
    choices = simulate(task_id, model.agent, model.settings([drawn[n] for n in model.free]), trials, seed)
    return [fit(m, choices, starts=starts, seed=seed) for m in fitted_models]


def _run(jobs: list[Any], workers: int | None) -> list[list[FitResult]]:
    if workers == 1 or len(jobs) < 2:
        return [_simulate_and_fit(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_simulate_and_fit, jobs))


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
    chosen = [fit_model(m) for m in models]
    if len(chosen) < 2 or len({m.name for m in chosen}) != len(chosen):
        raise BehaviourError(f"models: expected two or more different models, got {list(models)}")
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
