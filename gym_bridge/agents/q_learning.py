"""Tabular Q-learning (Watkins & Dayan 1992), with Zorowitz et al.'s (2020) optimism weight.

`optimism = 1` is Q-learning; lower values expect the worst of the next choices, as an
anxious agent would (pessimism keeps it away from paths that risk a loss). Chooses
epsilon-greedily by default, by softmax with inverse temperature `beta` when it is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from .base import LearningAgent, TableAgent


@dataclass(eq=False, kw_only=True)
class QAgent(TableAgent, LearningAgent):
    """Q-learning towards a mix of the next state's best and worst action.

    After each step (s, a, r, s')::

        V(s')   = optimism * max_a' Q(s', a') + (1 - optimism) * min_a' Q(s', a')   (0 if s' ended the episode)
        Q(s, a) <- Q(s, a) + lr * (r + gamma * V(s') - Q(s, a))

    Parameters
    ----------
    q_init : float
        The value every (state, action) starts with.
    optimism : float
        Weight of the best next action against the worst; 1 is Q-learning.

    Examples
    --------
    >>> agent = QAgent(2, 2, seed=0, lr=0.5)
    >>> agent.learn(0, 1, 1.0, 1, True, [0, 1])
    >>> agent.values(0).tolist()
    [0.0, 0.5]
    """

    q_init: float = 0.0
    fixed: ClassVar[frozenset[str]] = frozenset({"q_init"})
    optimism: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = np.full((self.n_states, self.n_actions), self.q_init, dtype=np.float64)

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
