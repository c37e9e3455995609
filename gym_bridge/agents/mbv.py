"""Model-based value iteration (MBV): learn a transition and reward model, plan by sweeps.

Why: with a learnt model the agent re-plans its whole value function after every step,
the upper bound of what replay can do.

Update rule, after each step (s, a, r, s'):

    T(s, a, .) <- T(s, a, .) + model_lr * (onehot(s') - T(s, a, .))   (first visit: onehot(s'))
    R(s, a)    <- R(s, a) + lr * (r - R(s, a))
    Q(s, a)    <- R(s, a) + gamma * sum_s'' T(s, a, s'') V(s''),   `sweeps` times over tried pairs

with V(s'') = 0 where arriving ended an episode, else optimism * max_a Q(s'', a) +
(1 - optimism) * min_a Q(s'', a): `optimism = 1` plans for the best next choice, lower values
for the worst (Zorowitz et al. 2020's anxious agent, neuro-nav's `w_value`). `model_lr = 1` keeps
the last outcome of each (s, a), as neuro-nav's MBV does, so a wall that appears is in the
model at once; `0 < model_lr < 1` weighs recent outcomes more (the recency of rewardGym's
hybrid); `model_lr = None` averages every outcome seen (a count model, right for a
stationary stochastic task, slow to notice a change). Acts on the state index.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..params import check_positive_int
from .base import TableAgent, agent_rng, check_sizes


class MBVAgent(TableAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        model_lr: float | None = 1.0,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        sweeps: int = 10,
        optimism: float = 1.0,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        check_positive_int("sweeps", sweeps)
        if model_lr is not None and not 0 < model_lr <= 1:
            raise ValueError(f"model_lr: expected a number in (0, 1] or None (average), got {model_lr!r}")
        self.counts = np.zeros((n_states, n_actions, n_states))  # outcomes seen (the average model)
        self.transitions = np.zeros((n_states, n_actions, n_states))
        self.rewards = np.zeros((n_states, n_actions))
        self.tried = np.zeros((n_states, n_actions), dtype=bool)
        self.ends = np.zeros(n_states, dtype=bool)  # arriving here ended an episode
        self.q = np.zeros((n_states, n_actions))
        self.lr, self.model_lr, self.gamma = lr, model_lr, gamma
        self.beta, self.epsilon, self.sweeps, self.optimism = beta, epsilon, sweeps, optimism
        self.rng = agent_rng(seed)

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
