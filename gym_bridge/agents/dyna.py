"""Dyna-Q and Dyna actor-critic: a TD learner plus replay of remembered transitions.

Why: replaying a model of past experience spreads a newly found reward back along the
path many times per real step, so fewer episodes are needed than for the plain learner
(Sutton 1990). The model keeps the last outcome of each (state, action) tried; after every
real step, `replays` pairs are drawn uniformly from the agent's own seeded stream and
learnt again with the agent's own rule, as if they had just happened:

    real step (s, a, r, s')          -> learn(s, a, r, s'); model[s, a] <- (r, s')
    replays x: (s, a) ~ U(tried)     -> learn(s, a, model[s, a])

Dyna-Q learns by Q-learning's rule, Dyna-AC by the TD actor-critic's (neuro-nav's DynaQ and
DynaAC). Acts on the state index (info["state"]).
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from .base import TableAgent, agent_rng, check_sizes
from .td import ActorCriticAgent

Outcome = tuple[float, int, bool, tuple[int, ...]]  # reward, next state, ended, offered actions


def check_replays(replays: int) -> int:
    if isinstance(replays, bool) or not isinstance(replays, int) or replays < 0:
        raise ValueError(f"replays: expected a non-negative integer, got {replays!r}")
    return replays


class ReplayModel:
    """The last outcome of every (state, action) tried, and uniform draws of tried pairs."""

    def __init__(self) -> None:
        self.outcomes: dict[tuple[int, int], Outcome] = {}
        self._tried: list[tuple[int, int]] = []

    def remember(self, s: int, a: int, r: float, s1: int, done: bool, available: Sequence[int]) -> None:
        if (s, a) not in self.outcomes:
            self._tried.append((s, a))
        self.outcomes[(s, a)] = (r, s1, done, tuple(int(x) for x in available))

    def draws(self, rng: np.random.Generator, n: int) -> Iterator[tuple[int, int, float, int, bool, tuple[int, ...]]]:
        """`n` remembered steps, pairs drawn uniformly with replacement."""
        for i in rng.integers(len(self._tried), size=n):
            s, a = self._tried[i]
            yield (s, a, *self.outcomes[(s, a)])


class DynaQAgent(TableAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        replays: int = 10,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        self.q = np.zeros((n_states, n_actions))
        self.lr, self.gamma, self.beta, self.epsilon = lr, gamma, beta, epsilon
        self.replays = check_replays(replays)
        self.model = ReplayModel()
        self.rng = agent_rng(seed)

    def _update(self, s: int, a: int, r: float, s1: int, done: bool, avail: Sequence[int]) -> None:
        future = 0.0 if done or not len(avail) else self.q[s1, list(avail)].max()
        self.q[s, a] += self.lr * (r + self.gamma * future - self.q[s, a])

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self._update(state, action, reward, next_state, terminated, next_available)
        self.model.remember(state, action, reward, next_state, terminated, next_available)
        for step in self.model.draws(self.rng, self.replays):
            self._update(*step)


class DynaACAgent(ActorCriticAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float = 5.0,
        replays: int = 10,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_states, n_actions, lr, gamma, beta, seed)
        self.replays = check_replays(replays)
        self.model = ReplayModel()

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        super().learn(state, action, reward, next_state, terminated, next_available)
        self.model.remember(state, action, reward, next_state, terminated, next_available)
        for step in self.model.draws(self.rng, self.replays):
            super().learn(*step)
