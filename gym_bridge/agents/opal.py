"""OpAL, opponent actor learning (Collins & Frank 2014): a critic and two actors, Go and NoGo,
that learn from the same prediction error with opposite signs.

Why: Frank et al. (2004) explain choosing what paid (choose A) and avoiding what did not
(avoid B) by two basal-ganglia pathways, one learning from better-than-expected outcomes
(Go, D1) and one from worse-than-expected ones (NoGo, D2). OpAL is that account as a learning
rule: weighting the Go actor (or its rate) above the NoGo one favours choose A, the reverse
favours avoid B.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .base import ValuePolicy, choose
from .batched import BatchedAgent, Mask


@dataclass(eq=False, kw_only=True)
class OpALAgent(ValuePolicy):
    """OpAL (Collins & Frank 2014, Psych Rev 121(3): 337-366): a critic V(s) and Go and NoGo
    weights G(s, a), N(s, a), both starting at 1.

    After each step (s, a, r, s')::

        delta    = r + gamma * V(s') - V(s)        (r - V(s) if s' ended the episode: the paper's rule)
        V(s)    <- V(s) + lr * delta
        G(s, a) <- max(0, G(s, a) + lr_g * G(s, a) * delta)
        N(s, a) <- max(0, N(s, a) - lr_n * N(s, a) * delta)

    and chooses by softmax(beta_g * G(s) - beta_n * N(s)) over the offered actions. The
    updates scale with the weights themselves (Hebbian), so a Go weight grows faster the
    more it has grown and a NoGo weight falls towards 0 for an action that keeps paying.

    Parameters
    ----------
    lr : float
        Learning rate of the critic.
    lr_g, lr_n : float
        Learning rates of the Go and of the NoGo actor.
    beta_g, beta_n : float
        Weights of the Go and of the NoGo actor in the choice (inverse temperatures).
    gamma : float
        Discount of the next state's value (single-step tasks do not use it).
    """

    lr: float = 0.1
    lr_g: float = 0.1
    lr_n: float = 0.1
    beta_g: float = 2.0
    beta_n: float = 2.0
    gamma: float = 0.95
    beta: float = field(default=1.0, init=False, repr=False)  # the actors' weights are the temperatures
    epsilon: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.v = np.zeros(self.n_states)
        self.go = np.ones((self.n_states, self.n_actions))
        self.nogo = np.ones((self.n_states, self.n_actions))

    def values(self, state: int | None = None) -> np.ndarray:
        """beta_g * G - beta_n * N: the actor's net preference, what the softmax chooses by."""
        if state is None:
            return self.beta_g * self.go - self.beta_n * self.nogo
        return self.beta_g * self.go[state] - self.beta_n * self.nogo[state]

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.values(state), available, 1.0, 0.0)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        future = 0.0 if terminated or not len(next_available) else self.v[next_state]
        delta = reward + self.gamma * future - self.v[state]
        self.v[state] += self.lr * delta
        self.go[state, action] = max(0.0, self.go[state, action] * (1.0 + self.lr_g * delta))
        self.nogo[state, action] = max(0.0, self.nogo[state, action] * (1.0 - self.lr_n * delta))


class BatchedOpAL(BatchedAgent):
    """OpAL (`gym_bridge.agents.opal.OpALAgent`'s rule: a critic and Go and NoGo actors learning
    from its error with opposite signs) for B lanes: `v` is B x S, `go` and `nogo` B x S x A. The
    softmax has temperature 1 over beta_g * G - beta_n * N."""

    name = "opal"
    per_agent = OpALAgent
    numbers = ("lr", "lr_g", "lr_n", "beta_g", "beta_n", "gamma")
    lr_g: np.ndarray
    lr_n: np.ndarray
    beta_g: np.ndarray
    beta_n: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.beta, self.epsilon = np.ones(self.size), np.zeros(self.size)  # the actors' weights are the temperatures
        self.v = np.zeros((self.size, self.n_states))
        self.go = np.ones((self.size, self.n_states, self.n_actions))
        self.nogo = np.ones((self.size, self.n_states, self.n_actions))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.beta_g[lanes, None] * self.go[lanes, states] - self.beta_n[lanes, None] * self.nogo[lanes, states]

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = np.where(ended, 0.0, self.v[lanes, next_states])
        delta = rewards + self.gamma[lanes] * future - self.v[lanes, states]
        self.v[lanes, states] += self.lr[lanes] * delta
        go, nogo = self.go[lanes, states, actions], self.nogo[lanes, states, actions]
        self.go[lanes, states, actions] = np.maximum(0.0, go * (1.0 + self.lr_g[lanes] * delta))
        self.nogo[lanes, states, actions] = np.maximum(0.0, nogo * (1.0 - self.lr_n[lanes] * delta))
