"""Model-based value iteration (MBV): learn a transition and reward model, plan by sweeps.

Why: with a learnt model the agent re-plans its whole value function after every step,
the upper bound of what replay can do. Acts on the state index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..params import check_positive_int
from .base import LearningAgent, TableAgent


@dataclass(eq=False, kw_only=True)
class MBVAgent(TableAgent, LearningAgent):
    """Value iteration on a learnt transition and reward model.

    After each step (s, a, r, s')::

        T(s, a, .) <- T(s, a, .) + model_lr * (onehot(s') - T(s, a, .))   (first visit: onehot(s'))
        R(s, a)    <- R(s, a) + lr * (r - R(s, a))
        Q(s, a)    <- R(s, a) + gamma * sum_s'' T(s, a, s'') V(s''),   `sweeps` times over tried pairs

    with V(s'') = 0 where arriving ended an episode, else optimism * max_a Q(s'', a) +
    (1 - optimism) * min_a Q(s'', a): `optimism = 1` plans for the best next choice, lower values
    for the worst (Zorowitz et al. 2020's anxious agent, neuro-nav's `w_value`).

    Parameters
    ----------
    model_lr : float or None
        Learning rate of the transition model. 1 keeps the last outcome of each (s, a), as
        neuro-nav's MBV does, so a wall that appears is in the model at once; in (0, 1) recent
        outcomes weigh more (the recency of rewardGym's hybrid); None averages every outcome
        seen (a count model, right for a stationary stochastic task, slow to notice a change).
    sweeps : int
        Value-iteration sweeps after each step.
    optimism : float
        Weight of the best next action against the worst; 1 plans for the best.
    """

    model_lr: float | None = 1.0
    sweeps: int = 10
    optimism: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("sweeps", self.sweeps)
        if self.model_lr is not None and not 0 < self.model_lr <= 1:
            raise ValueError(f"model_lr: expected a number in (0, 1] or None (average), got {self.model_lr!r}")
        n_states, n_actions = self.n_states, self.n_actions
        self.counts = np.zeros((n_states, n_actions, n_states))  # outcomes seen (the average model)
        self.transitions = np.zeros((n_states, n_actions, n_states))
        self.rewards = np.zeros((n_states, n_actions))
        self.tried = np.zeros((n_states, n_actions), dtype=bool)
        self.ends = np.zeros(n_states, dtype=bool)  # arriving here ended an episode
        self.q = np.zeros((n_states, n_actions))

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        outcome = np.zeros(self.transitions.shape[2])
        outcome[next_state] = 1.0
        if self.model_lr is None:
            self.counts[state, action, next_state] += 1
            row = self.counts[state, action]
            self.transitions[state, action] = row / row.sum()
        elif not self.tried[state, action]:
            self.transitions[state, action] = outcome
        else:
            self.transitions[state, action] += self.model_lr * (outcome - self.transitions[state, action])
        self.tried[state, action] = True
        self.rewards[state, action] += self.lr * (reward - self.rewards[state, action])
        if terminated:
            self.ends[next_state] = True
        self.plan()

    def plan(self) -> None:
        """Value-iteration sweeps over the (state, action) pairs tried so far."""
        for _ in range(self.sweeps):
            best = self.q.max(axis=1)
            if self.optimism != 1.0:
                best = self.optimism * best + (1 - self.optimism) * self.q.min(axis=1)
            v = np.where(self.ends, 0.0, best)
            self.q = np.where(self.tried, self.rewards + self.gamma * (self.transitions @ v), self.q)
