"""Dyna: a learner plus replay of remembered transitions (Sutton 1990), for any agent's rule.

Why: replaying a model of past experience spreads a newly found reward back along the
path many times per real step, so fewer episodes are needed than for the plain learner.
The model keeps the last outcome of each (state, action) tried; after every real step,
`replays` pairs are drawn uniformly from the agent's own seeded stream and learnt again with
the agent's own rule, as if they had just happened:

    real step (s, a, r, s')          -> learn(s, a, r, s'); model[s, a] <- (r, s')
    replays x: (s, a) ~ U(tried)     -> learn(s, a, model[s, a])

A Dyna agent is `Dyna` put before the agent it replays for: Dyna-Q is `Dyna` + `QAgent`,
Dyna-AC `Dyna` + `ActorCriticAgent` (neuro-nav's DynaQ and DynaAC), Dyna-SR `Dyna` + `SRAgent`.
Acts on the state index (info["state"]).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from .base import AgentBase
from .q_learning import QAgent
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


@dataclass(eq=False, kw_only=True)
class Dyna(AgentBase):
    """Replay of a last-outcome model, learnt by the rule of the agent class that follows it.

    `class DynaXAgent(Dyna, XAgent)`: after every real step, learnt by `XAgent.learn`, the
    step is remembered and `replays` remembered steps are learnt again by `XAgent.learn`.

    Parameters
    ----------
    replays : int
        How many remembered steps are replayed after each real step (0: the plain learner).
    """

    replays: int = 10
    model: ReplayModel = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_replays(self.replays)
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


@dataclass(eq=False, kw_only=True)
class DynaQAgent(Dyna, QAgent):
    """Dyna-Q: Q-learning (`QAgent`'s rule, its optimism included) on each real step and on
    the `replays` steps replayed from the last-outcome model after it (`Dyna`).

    For a real or a replayed step (s, a, r, s')::

        Q(s, a) <- Q(s, a) + lr * (r + gamma * V(s') - Q(s, a))      (QAgent's V; 0 if s' ended)

    Parameters
    ----------
    replays : int
        How many remembered steps follow each real one.

    Examples
    --------
    >>> agent = DynaQAgent(3, 2, seed=0, lr=0.5, replays=2)
    >>> agent.learn(0, 1, 1.0, 2, True, [0, 1])  # learnt once, replayed twice
    >>> float(agent.q[0, 1])
    0.875
    """


@dataclass(eq=False, kw_only=True)
class DynaACAgent(Dyna, ActorCriticAgent):
    """Dyna-AC: the TD actor-critic (`ActorCriticAgent`'s rule) on each real step and on the
    `replays` steps replayed from the last-outcome model after it (`Dyna`).

    For a real or a replayed step (s, a, r, s')::

        delta = r + gamma * V(s') - V(s);  V(s) <- V(s) + lr * delta;  H(s, a) <- H(s, a) + lr * delta

    Parameters
    ----------
    replays : int
        Replayed steps per real step.
    """
