"""Tabular Q-learning (Watkins & Dayan 1992), with Zorowitz et al.'s (2020) optimism weight.

After each step (s, a, r, s'):

    V(s')   = optimism * max_a' Q(s', a') + (1 - optimism) * min_a' Q(s', a')   (0 if s' ended the episode)
    Q(s, a) <- Q(s, a) + lr * (r + gamma * V(s') - Q(s, a))

`optimism = 1` is Q-learning; lower values expect the worst of the next choices, as an
anxious agent would (pessimism keeps it away from paths that risk a loss). Chooses
epsilon-greedily by default, by softmax with inverse temperature `beta` when it is set.
"""

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
        beta: float | None = None,
        epsilon: float = 0.1,
        q_init: float = 0.0,
        optimism: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.q = np.full((n_states, n_actions), q_init, dtype=np.float64)
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, epsilon
        self.optimism = optimism
        self.rng = agent_rng(seed)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        ended = terminated or not len(next_available)
        future = 0.0 if ended else self.bootstrap(self.q[next_state, list(next_available)])
        self.q[state, action] += self.lr * (reward + self.gamma * future - self.q[state, action])

    def bootstrap(self, next_values: np.ndarray) -> float:
        """The value of the next state: a mix of its best and worst action."""
        best = float(next_values.max())
        return best if self.optimism == 1.0 else self.optimism * best + (1 - self.optimism) * float(next_values.min())
