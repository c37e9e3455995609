"""Checks of the decision tasks' reproductions (data/decision/, docs/decision-tasks.md): each
reads the recorded trials back from the store with one Cypher query and measures the
task's classic effect (perseveration after a reversal, choose-A / avoid-B, deck preference,
switching)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np

from .figures import mean_and_error, plot_bars
from .ids import experiment_uid

CHOICES_QUERY = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.task = $uid AND t.step = 0 "
    "RETURN r.index, r.label, e.phase_index, e.index, t.action, t.reward, t.condition "
    "ORDER BY r.index, e.phase_index, e.index"
)


class Choices:
    """One run's first-step choices, in trial order: phase, action, reward, condition."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.phase: list[int] = []
        self.action: list[int] = []
        self.reward: list[float] = []
        self.condition: list[str] = []


def recorded_choices(store: Any, name: str) -> list[Choices]:
    """Every run's choices (the first step of each episode), from the recorded Trial nodes."""
    runs: dict[int, Choices] = {}
    for run, label, phase, _, action, reward, condition in store.cypher(
        CHOICES_QUERY, {"uid": experiment_uid(name)}
    ).rows:
        choices = runs.setdefault(int(run), Choices(str(label)))
        choices.phase.append(int(phase))
        choices.action.append(int(action))
        choices.reward.append(float(reward))
        choices.condition.append(condition or "")
    return [runs[k] for k in sorted(runs)]


def by_label(values: list[tuple[str, float]]) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {}
    for label, value in values:
        out.setdefault(label, []).append(value)
    return {label: np.asarray(v) for label, v in out.items()}


def gap_check(
    make: Callable[..., Any], name: str, high: np.ndarray, low: np.ndarray, finding: str, unit: str = ""
) -> Any:
    """`high` larger than `low` by more than two standard errors of the difference (independent runs)."""
    gap = float(high.mean() - low.mean())
    se = float(np.sqrt(high.var(ddof=1) / len(high) + low.var(ddof=1) / len(low)))
    return make(name, gap, f"{finding}: {high.mean():.2f} vs {low.mean():.2f}{unit}, gap > 2 SE = {2 * se:.2f}",
                 gap > 2 * se)


def _bars(per_label: dict[str, np.ndarray], group: str, path: str, ylabel: str, title: str) -> None:
    plot_bars(mean_and_error({(label, group): list(v) for label, v in per_label.items()}), path, ylabel, title)


# -- probabilistic reversal learning ---------------------------------------------------------
def perseverative_errors(choices: Choices, better: Callable[[str], int]) -> float:
    """Mean over reversals of the run of choices of the formerly better option that starts at
    the first trial after the reversal (0: the learner switched at once)."""
    runs = []
    conditions = choices.condition
    for i in range(1, len(conditions)):
        if conditions[i] != conditions[i - 1]:
            old = better(conditions[i - 1])
            n = 0
            while i + n < len(conditions) and conditions[i + n] == conditions[i] and choices.action[i + n] == old:
                n += 1
            runs.append(n)
    return float(np.mean(runs)) if runs else float("nan")


def _reversal_better(condition: str) -> int:
    return 0 if condition == "A-better" else 1


def reversal_errors(store: Any, name: str) -> dict[str, np.ndarray]:
    """Each agent's perseverative errors per run."""
    return by_label([(c.label, perseverative_errors(c, _reversal_better)) for c in recorded_choices(store, name)])


def reversal_checks(store: Any, name: str, make: Callable[..., Any]) -> list[Any]:
    errors = reversal_errors(store, name)
    labels = sorted(errors, key=lambda label: float(label.split("lr=")[1]))
    low, high = errors[labels[0]], errors[labels[-1]]
    means = [float(errors[label].mean()) for label in labels]
    return [
        gap_check(make, f"perseverative errors, {labels[0]} minus {labels[-1]}", low, high,
                  "a slow learner keeps choosing the formerly better option longer", " trials"),
        make("perseverative errors fall as lr rises", means[0] - means[-1],
             "errors: " + ", ".join(f"{label} {m:.2f}" for label, m in zip(labels, means)),
             all(a > b for a, b in pairwise(means))),
    ]


def draw_reversal(store: Any, name: str, path: str) -> None:
    _bars(reversal_errors(store, name), "after a reversal", path,
          "perseverative errors (trials)", f"{name}: choices of the formerly better option")
