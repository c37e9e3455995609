"""Action choice shared by the grid-era agents (softmax or epsilon-greedy over offered actions).

Kept apart from the agents so each agent file stays about its learning rule.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def choose(rng: np.random.Generator, values: np.ndarray, available: Sequence[int], beta: float | None, epsilon: float) -> int:
    """`beta` set: softmax with inverse temperature beta; else epsilon-greedy with random tie-breaking."""
    actions = np.asarray(available)
    v = values[actions]
    if beta is not None:
        z = beta * (v - v.max())
        p = np.exp(z)
        return int(actions[rng.choice(len(actions), p=p / p.sum())])
    if rng.random() < epsilon:
        return int(actions[rng.integers(len(actions))])
    best = np.flatnonzero(v == v.max())
    return int(actions[best[rng.integers(len(best))]])


def check_sizes(n_states: int, n_actions: int) -> None:
    for name, value in (("n_states", n_states), ("n_actions", n_actions)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}: expected a positive integer, got {value!r}")
