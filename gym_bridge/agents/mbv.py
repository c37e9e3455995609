"""Model-based value iteration (MBV): learn transition counts and rewards, plan by sweeps.

Why: with a learnt model the agent re-plans its whole value function after every step,
the upper bound of what replay can do. Q(s, a) = R(s, a) + gamma * sum_s' P(s'|s, a) V(s'),
V(s') = 0 where arriving ended the episode, else max_a Q(s', a). Acts on the state index.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..params import check_positive_int
from .base import ValuePolicy, agent_rng, check_sizes, choose


class MBVAgent(ValuePolicy):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        sweeps: int = 10,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        check_positive_int("sweeps", sweeps)
        self.counts = np.zeros((n_states, n_actions, n_states))
        self.reward_sum = np.zeros((n_states, n_actions))
        self.ends = np.zeros(n_states, dtype=bool)  # arriving here ended an episode
        self.q = np.zeros((n_states, n_actions))
        self.gamma, self.beta, self.epsilon, self.sweeps = gamma, beta, epsilon, sweeps
        self.rng = agent_rng(seed)

    def values(self, state: int | None = None) -> np.ndarray:
        return self.q if state is None else self.q[state]

    def begin_episode(self) -> None:
        pass

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.q[state], available, self.beta, self.epsilon)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.counts[state, action, next_state] += 1
        self.reward_sum[state, action] += reward
        if terminated:
            self.ends[next_state] = True
        self.plan()

    def plan(self) -> None:
        """Value-iteration sweeps over the (state, action) pairs tried so far."""
        total = self.counts.sum(axis=2)
        tried = total > 0
        p = np.divide(self.counts, total[..., None], out=np.zeros_like(self.counts), where=tried[..., None])
        r = np.divide(self.reward_sum, total, out=np.zeros_like(self.reward_sum), where=tried)
        for _ in range(self.sweeps):
            v = np.where(self.ends, 0.0, self.q.max(axis=1))
            self.q = np.where(tried, r + self.gamma * (p @ v), self.q)
