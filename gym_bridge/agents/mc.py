"""Agents that learn from whole episodes: Monte Carlo Q-learning and episodic control.

Why: neither bootstraps from its own estimates, so a value is never built on a wrong one;
the price is waiting for the episode to end. Both keep the steps of the current episode and,
when it ends (terminated), compute each step's discounted return

    G_t = r_t + gamma * r_{t+1} + gamma^2 * r_{t+2} + ...   (to the end of the episode)

and then, for every step t in order (every-visit):

    Monte Carlo Q (Sutton & Barto 2018, 5.3):   Q(s_t, a_t) <- Q(s_t, a_t) + lr * (G_t - Q(s_t, a_t))
    episodic control (Lengyel & Dayan 2007):    Q(s_t, a_t) <- max(Q(s_t, a_t), G_t)

Episodic control remembers the best return ever seen after a state and action, which is
right for a deterministic task and learns it in one episode. An episode cut by truncation
has no return, so it is not learnt (as neuro-nav's QMC and QEC).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import TableAgent, agent_rng, check_sizes


def discounted_returns(rewards: Sequence[float], gamma: float) -> np.ndarray:
    """G_t for every step of an episode, from its last step backwards."""
    returns = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        returns[t] = running
    return returns


class EpisodeAgent(TableAgent):
    """A table agent that learns once per finished episode (`backup`)."""

    def __init__(
        self, n_states: int, n_actions: int, lr: float, gamma: float, beta: float | None, epsilon: float,
        seed: int | None,
    ) -> None:
        check_sizes(n_states, n_actions)
        self.q = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, epsilon
        self.rng = agent_rng(seed)
        self.steps: list[tuple[int, int, float]] = []

    def begin_episode(self) -> None:
        self.steps = []

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.steps.append((state, action, reward))
        if terminated:
            returns = discounted_returns([r for _, _, r in self.steps], self.gamma)
            for (s, a, _), g in zip(self.steps, returns):
                self.backup(s, a, float(g))
            self.steps = []

    def backup(self, state: int, action: int, episode_return: float) -> None:
        raise NotImplementedError


class MonteCarloQAgent(EpisodeAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_states, n_actions, lr, gamma, beta, epsilon, seed)

    def backup(self, state: int, action: int, episode_return: float) -> None:
        self.q[state, action] += self.lr * (episode_return - self.q[state, action])


class EpisodicControlAgent(EpisodeAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_states, n_actions, 1.0, gamma, beta, epsilon, seed)

    def backup(self, state: int, action: int, episode_return: float) -> None:
        self.q[state, action] = max(self.q[state, action], episode_return)
