"""Tabular Q-learning with a softmax (inverse temperature `beta`) or epsilon-greedy policy."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import TableAgent, agent_rng


class QAgent(TableAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = 5.0,
        epsilon: float = 0.1,
        q_init: float = 0.0,
        seed: int | None = None,
    ) -> None:
        """`beta` set: softmax with that inverse temperature; `beta=None`: epsilon-greedy."""
        self.q = np.full((n_states, n_actions), q_init, dtype=np.float64)
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, epsilon
        self.rng = agent_rng(seed)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        future = 0.0 if terminated or not len(next_available) else self.q[next_state, list(next_available)].max()
        self.q[state, action] += self.lr * (reward + self.gamma * future - self.q[state, action])
