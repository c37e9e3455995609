"""More temporal-difference agents of neuro-nav's set: SARSA, Q(lambda) and TD actor-critic.
Each class writes its update rule out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .base import LearningAgent, TableAgent, ValuePolicy, choose
from .batched import BatchedAgent, Mask, masked_max


@dataclass(eq=False, kw_only=True)
class SarsaAgent(TableAgent, LearningAgent):
    """SARSA (Rummery & Niranjan 1994), on-policy TD control.

    After (s, a, r, s') and the next action a'::

        Q(s, a) <- Q(s, a) + lr * (r + gamma * Q(s', a') - Q(s, a))      (r alone if s' ended the episode)

    The next action is known only at the next step, so the update of a step is made when the
    next step is learnt (after the agent chose a', as the rule needs); a step cut by truncation
    is not learnt. No settings beyond the shared ones.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = np.zeros((self.n_states, self.n_actions))
        self._pending: tuple[int, int, float, int] | None = None  # the step waiting for its next action

    def begin_episode(self) -> None:
        self._pending = None

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        if self._pending is not None:
            s, a, r, s1 = self._pending
            if s1 == state:  # this step's action is the next action of the pending one
                self.q[s, a] += self.lr * (r + self.gamma * self.q[state, action] - self.q[s, a])
        self._pending = None
        if terminated or not len(next_available):
            self.q[state, action] += self.lr * (reward - self.q[state, action])
        else:
            self._pending = (state, action, reward, next_state)


@dataclass(eq=False, kw_only=True)
class QLambdaAgent(TableAgent, LearningAgent):
    """Q(lambda) with accumulating traces (Watkins 1989; neuro-nav's QET).

    After each step (s, a, r, s')::

        e(s, a) <- e(s, a) + 1
        delta    = r + gamma * max_a' Q(s', a') - Q(s, a)     (r - Q(s, a) if s' ended the episode)
        Q       <- Q + lr * delta * e
        e       <- gamma * lambda * e                          (and e <- 0 when an episode begins)

    Parameters
    ----------
    lam : float
        Decay of the traces per step (with gamma); 0 is one-step Q-learning.
    """

    lam: float = 0.9

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = np.zeros((self.n_states, self.n_actions))
        self.traces = np.zeros((self.n_states, self.n_actions))

    def begin_episode(self) -> None:
        self.traces[:] = 0.0

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.traces[state, action] += 1.0
        future = 0.0 if terminated or not len(next_available) else self.q[next_state, list(next_available)].max()
        delta = reward + self.gamma * future - self.q[state, action]
        self.q += self.lr * delta * self.traces
        self.traces *= self.gamma * self.lam


@dataclass(eq=False, kw_only=True)
class ActorCriticAgent(ValuePolicy, LearningAgent):
    """TD actor-critic (Sutton & Barto 2018, 13.5): a critic V and action preferences H.

    After each step (s, a, r, s')::

        delta    = r + gamma * V(s') - V(s)                    (r - V(s) if s' ended the episode)
        V(s)    <- V(s) + lr * delta
        H(s, a) <- H(s, a) + lr * delta

    and the policy is the softmax of H with inverse temperature beta (no epsilon: preferences
    mean nothing outside a softmax).

    Parameters
    ----------
    beta : float
        Inverse temperature of the softmax over the preferences.
    """

    beta: float = 5.0
    epsilon: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.v = np.zeros(self.n_states)
        self.preferences = np.zeros((self.n_states, self.n_actions))

    def values(self, state: int | None = None) -> np.ndarray:
        """The actor's action preferences (what the policy is the softmax of)."""
        return self.preferences if state is None else self.preferences[state]

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.preferences[state], available, self.beta, 0.0)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        future = 0.0 if terminated or not len(next_available) else self.v[next_state]
        delta = reward + self.gamma * future - self.v[state]
        self.v[state] += self.lr * delta
        self.preferences[state, action] += self.lr * delta


class BatchedSarsa(BatchedAgent):
    """SARSA (`gym_bridge.agents.td.SarsaAgent`'s rule) for B lanes: the update of a step is made
    when the lane's next step is learnt; a step cut by truncation is not learnt."""

    name = "sarsa"
    per_agent = SarsaAgent

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        # the step waiting for its next action, per lane: state, action, reward, next state (-1: none)
        self.pending_state = np.full(self.size, -1, dtype=np.int64)
        self.pending_action = np.zeros(self.size, dtype=np.int64)
        self.pending_reward = np.zeros(self.size)
        self.pending_next = np.full(self.size, -1, dtype=np.int64)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.pending_state[lanes] = -1

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        lr, gamma = self.lr[lanes], self.gamma[lanes]
        waiting = (self.pending_state[lanes] >= 0) & (self.pending_next[lanes] == states)
        if waiting.any():
            w = lanes[waiting]
            s, a, r = self.pending_state[w], self.pending_action[w], self.pending_reward[w]
            old = self.q[w, s, a]
            target = r + gamma[waiting] * self.q[w, states[waiting], actions[waiting]]
            self.q[w, s, a] = old + lr[waiting] * (target - old)
        self.pending_state[lanes] = -1
        if ended.any():
            e = lanes[ended]
            old = self.q[e, states[ended], actions[ended]]
            self.q[e, states[ended], actions[ended]] = old + lr[ended] * (rewards[ended] - old)
        going = ~ended
        g = lanes[going]
        self.pending_state[g], self.pending_action[g] = states[going], actions[going]
        self.pending_reward[g], self.pending_next[g] = rewards[going], next_states[going]


class BatchedQLambda(BatchedAgent):
    """Q(lambda) with accumulating traces (`gym_bridge.agents.td.QLambdaAgent`'s rule) for B
    lanes: `q` and `traces` are B x S x A."""

    name = "qlambda"
    per_agent = QLambdaAgent
    numbers = ("lr", "gamma", "epsilon", "lam")
    lam: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.traces = np.zeros_like(self.q)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.traces[lanes] = 0.0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        self.traces[lanes, states, actions] += 1.0
        with np.errstate(invalid="ignore"):
            future = masked_max(self.q[lanes, next_states], next_mask)
        future[ended] = 0.0
        gamma = self.gamma[lanes]
        delta = rewards + gamma * future - self.q[lanes, states, actions]
        traces = self.traces[lanes]
        self.q[lanes] += (self.lr[lanes] * delta)[:, None, None] * traces
        self.traces[lanes] = traces * (gamma * self.lam[lanes])[:, None, None]


class BatchedActorCritic(BatchedAgent):
    """TD actor-critic (`gym_bridge.agents.td.ActorCriticAgent`'s rule) for B lanes: the critic
    `v` is B x S, the actor's `preferences` B x S x A, chosen by a softmax at `beta`."""

    name = "ac"
    per_agent = ActorCriticAgent
    numbers = ("lr", "gamma")

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.epsilon = np.zeros(self.size)  # preferences mean nothing outside a softmax
        self.v = np.zeros((self.size, self.n_states))
        self.preferences = np.zeros((self.size, self.n_states, self.n_actions))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.preferences[lanes, states]

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = np.where(ended, 0.0, self.v[lanes, next_states])
        delta = rewards + self.gamma[lanes] * future - self.v[lanes, states]
        step = self.lr[lanes] * delta
        self.v[lanes, states] += step
        self.preferences[lanes, states, actions] += step
