"""Dyna-Q: Q-learning plus replay of remembered transitions between real steps.

Why: replaying a model of past experience spreads a newly found reward back along the
path many times per real step, so fewer episodes are needed than for plain Q-learning.
The model keeps the last outcome of each (state, action); replayed pairs are drawn from
the agent's own seeded generator. Acts on the state index (info["state"]).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import TableAgent, agent_rng, check_sizes


class DynaQAgent(TableAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        replays: int = 10,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        if isinstance(replays, bool) or not isinstance(replays, int) or replays < 0:
            raise ValueError(f"replays: expected a non-negative integer, got {replays!r}")
        self.q = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.beta, self.epsilon, self.replays = lr, gamma, beta, epsilon, replays
        self.model: dict[tuple[int, int], tuple[float, int, bool, tuple[int, ...]]] = {}
        self._seen: list[tuple[int, int]] = []
        self.rng = agent_rng(seed)

    def _update(self, s: int, a: int, r: float, s1: int, done: bool, avail: tuple[int, ...]) -> None:
        future = 0.0 if done or not avail else self.q[s1, list(avail)].max()
        self.q[s, a] += self.lr * (r + self.gamma * future - self.q[s, a])

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        avail = tuple(int(a) for a in next_available)
        self._update(state, action, reward, next_state, terminated, avail)
        if (state, action) not in self.model:
            self._seen.append((state, action))
        self.model[(state, action)] = (reward, next_state, terminated, avail)
        for i in self.rng.integers(len(self._seen), size=self.replays):
            s, a = self._seen[i]
            self._update(s, a, *self.model[(s, a)])
