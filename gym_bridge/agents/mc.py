"""Agents that learn from whole episodes: Monte Carlo Q-learning and episodic control.

Why: neither bootstraps from its own estimates, so a value is never built on a wrong one;
the price is waiting for the episode to end. Both keep the steps of the current episode and,
when it ends (terminated), compute each step's discounted return

    G_t = r_t + gamma * r_{t+1} + gamma^2 * r_{t+2} + ...   (to the end of the episode)

and then back up every step t in order (every-visit), each by its own rule. An episode cut
by truncation has no return, so it is not learnt (as neuro-nav's QMC and QEC).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import LearningAgent, TableAgent


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

    gamma: float

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = np.zeros((self.n_states, self.n_actions))
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


@dataclass(eq=False, kw_only=True)
class MonteCarloQAgent(EpisodeAgent, LearningAgent):
    """Every-visit Monte Carlo Q (Sutton & Barto 2018, 5.3).

    When an episode ends, for every step t in order::

        Q(s_t, a_t) <- Q(s_t, a_t) + lr * (G_t - Q(s_t, a_t))

    No settings beyond the shared ones.

    Examples
    --------
    >>> agent = MonteCarloQAgent(2, 2, seed=0, lr=0.5, gamma=0.5)
    >>> agent.learn(0, 1, 0.0, 1, False, [0, 1])
    >>> agent.learn(1, 0, 1.0, 0, True, [0, 1])
    >>> agent.values().tolist()
    [[0.0, 0.25], [0.5, 0.0]]
    """

    def backup(self, state: int, action: int, episode_return: float) -> None:
        self.q[state, action] += self.lr * (episode_return - self.q[state, action])


@dataclass(eq=False, kw_only=True)
class EpisodicControlAgent(EpisodeAgent):
    """Episodic control (Lengyel & Dayan 2007): the best return ever seen after a state and action.

    When an episode ends, for every step t in order::

        Q(s_t, a_t) <- max(Q(s_t, a_t), G_t)

    which is right for a deterministic task and learns it in one episode. It has no learning rate.

    Parameters
    ----------
    gamma : float
        Discount of later rewards in the return G_t.
    beta, epsilon
        How it chooses, as `LearningAgent`'s.
    """

    gamma: float = 0.95
    beta: float | None = None
    epsilon: float = 0.1

    def backup(self, state: int, action: int, episode_return: float) -> None:
        self.q[state, action] = max(self.q[state, action], episode_return)
