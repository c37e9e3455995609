"""Model-based / model-free hybrid (Daw et al., 2011) for two-step-like tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import AgentBase, policy, softmax_choice


@dataclass(eq=False, kw_only=True)
class HybridAgent(AgentBase):
    """Model-based / model-free mixture with TD(lambda) and perseveration.

    Model-free values learn by TD(lambda) towards the best next value, without discount; after
    each step (s, a, r, s') of an episode whose pairs so far are (s_1, a_1) ... (s_k, a_k) = (s, a)::

        delta            = r + max_a' Q_MF(s', a') - Q_MF(s, a)     (r - Q_MF(s, a) if s' ended the episode)
        Q_MF(s_j, a_j)  <- Q_MF(s_j, a_j) + lr * lam^(k - j) * delta   for every j

    Model-based values of a state's actions are the learnt transition probabilities (counts
    with a weak prior) times the best model-free value of each successor. The first choice of
    an episode is a softmax over::

        w * Q_MB(s, .) + (1 - w) * Q_MF(s, .) + perseveration * [a = previous first choice]

    (w = 1 purely model-based); later choices are a softmax over Q_MF.

    Parameters
    ----------
    lr : float
        Learning rate of the model-free values.
    lam : float
        Eligibility decay: the share of the error passed to each earlier pair of the episode.
    beta : float
        Inverse temperature of the softmax.
    w : float
        Weight of the model-based values in the first choice.
    perseveration : float
        Bonus for repeating the previous episode's first choice.
    """

    lr: float = 0.5
    lam: float = 0.6
    beta: float = 5.0
    w: float = 0.7
    perseveration: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q_mf = np.zeros((self.n_states, self.n_actions))
        self.counts = np.ones((self.n_states, self.n_actions, self.n_states)) * 1e-3  # transition counts (weak prior)
        self.previous_first: int | None = None
        self._trace: list[tuple[int, int]] = []

    def begin_episode(self) -> None:
        self._trace = []

    def model_based(self, state: int) -> np.ndarray:
        transition = self.counts[state] / self.counts[state].sum(axis=1, keepdims=True)
        best_next = self.q_mf.max(axis=1)
        return transition @ best_next

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
