"""More temporal-difference agents of neuro-nav's set: SARSA, Q(lambda) and TD actor-critic.

SARSA (Rummery & Niranjan 1994), on-policy: after (s, a, r, s') and the next action a',

    Q(s, a) <- Q(s, a) + lr * (r + gamma * Q(s', a') - Q(s, a))      (r alone if s' ended the episode)

The next action is known only at the next step, so the update of a step is made when the
next step is learnt (after the agent chose a', as the rule needs); a step cut by truncation
is not learnt.

Q(lambda) with accumulating traces (Watkins 1989; neuro-nav's QET), after each step:

    e(s, a) <- e(s, a) + 1
    delta    = r + gamma * max_a' Q(s', a') - Q(s, a)     (r - Q(s, a) if s' ended the episode)
    Q       <- Q + lr * delta * e
    e       <- gamma * lambda * e                          (and e <- 0 when an episode begins)

TD actor-critic (Sutton & Barto 2018, 13.5), a critic V and action preferences H:

    delta    = r + gamma * V(s') - V(s)                    (r - V(s) if s' ended the episode)
    V(s)    <- V(s) + lr * delta
    H(s, a) <- H(s, a) + lr * delta

and the policy is the softmax of H with inverse temperature beta.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import TableAgent, ValuePolicy, agent_rng, check_sizes, choose


class SarsaAgent(TableAgent):
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
        check_sizes(n_states, n_actions)
        self.q = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, epsilon
        self.rng = agent_rng(seed)
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


class QLambdaAgent(TableAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        lam: float = 0.9,
        beta: float | None = None,
        epsilon: float = 0.1,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        self.q = np.zeros((n_states, n_actions))
        self.traces = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.lam, self.beta, self.epsilon = lr, gamma, lam, beta, epsilon
        self.rng = agent_rng(seed)

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


class ActorCriticAgent(ValuePolicy):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float = 5.0,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        self.v = np.zeros(n_states)
        self.preferences = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, 0.0
        self.rng = agent_rng(seed)

    def values(self, state: int | None = None) -> np.ndarray:
        """The actor's action preferences (what the policy is the softmax of)."""
        return self.preferences if state is None else self.preferences[state]

    def begin_episode(self) -> None:
        pass

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
