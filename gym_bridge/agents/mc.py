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
from typing import Any, Mapping, Sequence

import numpy as np

from .base import LearningAgent, TableAgent
from .batched import BatchedAgent, Mask


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


class BatchedEpisodes(BatchedAgent):
    """Agents that learn once per finished episode (`gym_bridge.agents.mc.EpisodeAgent`) for B
    lanes: each lane's steps of the episode so far are a row of `trace_*`; when a lane's
    episode terminates its returns are computed and its steps backed up in order."""

    # the per-agent forms back up when the episode *terminated* (a state that offers nothing
    # without ending it is learnt on): the offers play no part
    offers_play_no_part = True

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.trace_state = np.zeros((self.size, 8), dtype=np.int64)
        self.trace_action = np.zeros((self.size, 8), dtype=np.int64)
        self.trace_reward = np.zeros((self.size, 8))
        self.trace_length = np.zeros(self.size, dtype=np.int64)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.trace_length[lanes] = 0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        length = self.trace_length[lanes]
        if length.max() >= self.trace_state.shape[1]:  # longer episodes: room for twice as many steps
            width = self.trace_state.shape[1]
            self.trace_state = np.concatenate([self.trace_state, np.zeros((self.size, width), np.int64)], axis=1)
            self.trace_action = np.concatenate([self.trace_action, np.zeros((self.size, width), np.int64)], axis=1)
            self.trace_reward = np.concatenate([self.trace_reward, np.zeros((self.size, width))], axis=1)
        self.trace_state[lanes, length] = states
        self.trace_action[lanes, length] = actions
        self.trace_reward[lanes, length] = rewards
        self.trace_length[lanes] = length + 1
        if not ended.any():
            return
        done = lanes[ended]
        length = self.trace_length[done]
        longest = int(length.max())
        steps_s, steps_a = self.trace_state[done, :longest], self.trace_action[done, :longest]
        steps_r = self.trace_reward[done, :longest]
        returns = np.zeros((done.size, longest))
        running = np.zeros(done.size)
        gamma = self.gamma[done]
        for t in range(longest - 1, -1, -1):  # G_t = r_t + gamma G_{t+1}, from each lane's last step back
            inside = t < length
            running = np.where(inside, steps_r[:, t] + gamma * running, 0.0)
            returns[:, t] = running
        self.backup(done, length, steps_s, steps_a, returns)
        self.trace_length[done] = 0

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        """Back up each lane's steps t < length[i] (rows of `states`, `actions`, `returns`)."""
        raise NotImplementedError


class BatchedMonteCarlo(BatchedEpisodes):
    """Every-visit Monte Carlo Q (`gym_bridge.agents.mc.MonteCarloQAgent`) for B lanes: at a
    lane's episode end, Q(s_t, a_t) += lr (G_t - Q(s_t, a_t)) for every step t in order.

    The K backups of a pair in one episode, in order, are one sum (to rounding):

        Q <- (1 - lr)^K Q + sum_k lr (1 - lr)^(K - 1 - k) G_k       (k = 0 the earliest visit)

    so the steps of every lane whose episode ended are backed up in a few array calls."""

    name = "mc"
    per_agent = MonteCarloQAgent

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        inside = np.arange(states.shape[1])[None, :] < length[:, None]
        pairs = self.n_states * self.n_actions
        flat = (lanes[:, None] * pairs + states * self.n_actions + actions)[inside]  # rows in order of t
        order = np.argsort(flat, kind="stable")  # a pair's visits together, still in order of t
        flat, g = flat[order], returns[inside][order]
        lr = np.broadcast_to(self.lr[lanes][:, None], states.shape)[inside][order]
        first = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
        visits = np.diff(np.r_[first, flat.size])
        later = np.repeat(first + visits, visits) - 1 - np.arange(flat.size)  # the pair's visits after this one
        total = np.add.reduceat(lr * (1 - lr) ** later * g, first)
        where = np.unravel_index(flat[first], self.q.shape)
        rate = lr[first]
        self.q[where] = (1 - rate) ** visits * self.q[where] + total


class BatchedEpisodicControl(BatchedEpisodes):
    """Episodic control (`gym_bridge.agents.mc.EpisodicControlAgent`) for B lanes: at a lane's
    episode end, Q(s_t, a_t) = max(Q(s_t, a_t), G_t) (the order does not matter)."""

    name = "ec"
    per_agent = EpisodicControlAgent
    numbers = ("gamma", "epsilon")

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        inside = np.arange(states.shape[1])[None, :] < length[:, None]
        rows = np.broadcast_to(lanes[:, None], states.shape)
        np.maximum.at(self.q, (rows[inside], states[inside], actions[inside]), returns[inside])
