"""More temporal-difference agents of neuro-nav's set: SARSA, Q(lambda) and TD actor-critic.
Each class writes its update rule out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .base import LearningAgent, TableAgent, ValuePolicy, choose


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
