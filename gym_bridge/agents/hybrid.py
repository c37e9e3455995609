"""Model-based / model-free hybrid (Daw et al., 2011) for two-step-like tasks.

Model-free values learn by TD(lambda) towards the best next value; model-based values of a state's actions are the
learned transition probabilities times the best model-free value of each successor. The
first choice mixes them with weight `w` (w=1 purely model-based) and a perseveration bonus
for repeating the previous first choice.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import agent_rng, policy, softmax_choice


class HybridAgent:
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.5,
        lam: float = 0.6,
        beta: float = 5.0,
        w: float = 0.7,
        perseveration: float = 0.1,
        seed: int | None = None,
    ) -> None:
        self.q_mf = np.zeros((n_states, n_actions))
        self.counts = np.ones((n_states, n_actions, n_states)) * 1e-3  # transition counts (weak prior)
        self.lr, self.lam, self.beta, self.w, self.perseveration = lr, lam, beta, w, perseveration
        self.rng = agent_rng(seed)
        self.previous_first: int | None = None
        self._trace: list[tuple[int, int]] = []

    def begin_episode(self) -> None:
        self._trace = []

    def model_based(self, state: int) -> np.ndarray:
        transition = self.counts[state] / self.counts[state].sum(axis=1, keepdims=True)
        best_next = self.q_mf.max(axis=1)
        return transition @ best_next

    learning = True  # False: `learn` changes nothing (a test phase)

    def values(self, state: int | None = None) -> np.ndarray:
        """The values the next choice in `state` is made by: at the first step the mix of
        model-based and model-free values plus the perseveration bonus, later model-free.
        Without a state, the mix for every state (no perseveration): the table of values."""
        if state is None:
            transition = self.counts / self.counts.sum(axis=2, keepdims=True)
            return self.w * (transition @ self.q_mf.max(axis=1)) + (1 - self.w) * self.q_mf
        if self._trace:
            return self.q_mf[state]
        values = self.w * self.model_based(state) + (1 - self.w) * self.q_mf[state]
        if self.previous_first is not None:
            values = values + self.perseveration * (np.arange(len(values)) == self.previous_first)
        return values

    def act(self, state: int, available: Sequence[int]) -> int:
        actions = np.asarray(available)
        return int(actions[softmax_choice(self.rng, self.values(state)[actions], self.beta)])

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        return policy(self.values(state), available, self.beta, 0.0)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        if not self._trace:
            self.previous_first = action
        self.counts[state, action, next_state] += 1.0
        self._trace.append((state, action))
        future = 0.0 if terminated or not len(next_available) else self.q_mf[next_state, list(next_available)].max()
        delta = reward + future - self.q_mf[state, action]
        # TD(lambda): the newest pair gets the full error, earlier pairs lambda^k of it
        decay = 1.0
        for s, a in reversed(self._trace):
            self.q_mf[s, a] += self.lr * decay * delta
            decay *= self.lam
