"""Dyna: a learner plus replay of remembered transitions (Sutton 1990), for any agent's rule.

Why: replaying a model of past experience spreads a newly found reward back along the
path many times per real step, so fewer episodes are needed than for the plain learner.
The model keeps, for each (state, action) tried, its `successors` most recent outcomes (by
default 1: the last outcome, Sutton's tabular Dyna-Q, exact for a deterministic task). After
every real step, `replays` pairs are drawn uniformly from the pairs tried, from the agent's own
seeded stream, and learnt again with the agent's own rule, as if they had just happened:

    real step (s, a, r, s')          -> learn(s, a, r, s'); model[s, a] gets (r, s')
    replays x: (s, a) ~ U(tried)     -> learn(s, a, model[s, a][k])

k is the rank of the outcome among the pair's (0 the most recent): always 0 with one
outcome kept; with more, k = min(floor(X), kept - 1) with X exponential of mean 5 (`RECENCY`),
so recent outcomes are replayed more often, with P(k) = e^(-k/5) (1 - e^(-1/5)) below the
oldest. `successors=25` is neuro-nav's DynaModule (its "exponential" recency over the last 25
outcomes), which on a stochastic task replays outcomes in about their observed proportions
where the last-outcome model replays one of them until it happens to be seen again.

A Dyna agent is `Dyna` put before the agent it replays for: Dyna-Q is `Dyna` + `QAgent`,
Dyna-AC `Dyna` + `ActorCriticAgent` (neuro-nav's DynaQ and DynaAC), Dyna-SR `Dyna` + `SRAgent`.
Acts on the state index (info["state"]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .base import AgentBase
from .batched import BatchedAgent, Mask
from .q_learning import BatchedQ, QAgent
from .td import ActorCriticAgent, BatchedActorCritic

Outcome = tuple[float, int, bool, tuple[int, ...]]  # reward, next state, ended, offered actions
Step = tuple[int, int, float, int, bool, tuple[int, ...]]  # state, action and its outcome: what `learn` takes
RECENCY = 5.0  # mean of the exponential draw of an outcome's rank (neuro-nav's scale)


def check_replays(replays: int) -> int:
    if isinstance(replays, bool) or not isinstance(replays, int) or replays < 0:
        raise ValueError(f"replays: expected a non-negative integer, got {replays!r}")
    return replays


def check_successors(successors: int) -> int:
    if isinstance(successors, bool) or not isinstance(successors, int) or successors < 1:
        raise ValueError(f"successors: expected a positive integer, got {successors!r}")
    return successors


class ReplayModel:
    """The `keep` most recent outcomes of every (state, action) tried, and draws of them.

    Examples
    --------
    >>> model = ReplayModel(keep=2)
    >>> for s1 in (1, 2, 3):
    ...     model.remember(0, 0, 0.0, s1, False, [0, 1])
    >>> [model.recall(0, 0, rank)[3] for rank in (0, 1, 5)]  # most recent first; ranks past the oldest give it
    [3, 2, 2]
    """

    def __init__(self, keep: int = 1) -> None:
        self.keep = check_successors(keep)
        self.outcomes: dict[tuple[int, int], list[Outcome]] = {}  # oldest first
        self._tried: list[tuple[int, int]] = []

    def remember(self, s: int, a: int, r: float, s1: int, done: bool, available: Sequence[int]) -> None:
        outcome = (r, s1, done, tuple(int(x) for x in available))
        kept = self.outcomes.get((s, a))
        if kept is None:
            self._tried.append((s, a))
            self.outcomes[(s, a)] = [outcome]
            return
        kept.append(outcome)
        if len(kept) > self.keep:
            del kept[0]

    def recall(self, s: int, a: int, rank: int = 0) -> Step:
        """The remembered step of (s, a) whose outcome is the `rank`-th most recent (0 the last;
        a rank past the oldest kept gives the oldest)."""
        kept = self.outcomes[(s, a)]
        return (s, a, *kept[-1 - min(rank, len(kept) - 1)])

    def draws(self, rng: np.random.Generator, n: int) -> Iterator[Step]:
        """`n` remembered steps: pairs drawn uniformly with replacement, then an outcome of each
        by its rank (exponential, mean `RECENCY`) when more than one is kept."""
        pairs = rng.integers(len(self._tried), size=n)
        ranks = np.floor(rng.exponential(RECENCY, size=n)).astype(np.int64) if self.keep > 1 else np.zeros(n, int)
        for i, rank in zip(pairs, ranks):
            s, a = self._tried[i]
            yield self.recall(s, a, int(rank))


def rank_probabilities(kept: int) -> np.ndarray:
    """P(rank k) of a drawn outcome when `kept` are kept: e^(-k/RECENCY) (1 - e^(-1/RECENCY)) for
    k below the oldest, the rest of the mass on the oldest (what `ReplayModel.draws` gives)."""
    k = np.arange(kept)
    p = np.exp(-k / RECENCY) * (1 - math.exp(-1 / RECENCY))
    p[-1] = math.exp(-(kept - 1) / RECENCY)
    return p


@dataclass(eq=False, kw_only=True)
class Dyna(AgentBase):
    """Replay of a model of recent outcomes, learnt by the rule of the agent class that follows it.

    `class DynaXAgent(Dyna, XAgent)`: after every real step, learnt by `XAgent.learn`, the
    step is remembered and `replays` remembered steps are learnt again by `XAgent.learn`.

    Parameters
    ----------
    replays : int
        How many remembered steps are replayed after each real step (0: the plain learner).
    successors : int
        How many recent outcomes the model keeps per (state, action): 1, the last outcome
        (Sutton 1990); more, a replay draws among them by recency (the module docstring;
        25 is neuro-nav's model). Read when the agent is made.
    """

    replays: int = 10
    successors: int = 1
    model: ReplayModel = field(init=False, repr=False)
    fixed: ClassVar[frozenset[str]] = frozenset({"successors"})

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A Dyna agent's settings read only when made: the model's and its base agent's."""
        super().__init_subclass__(**kwargs)
        cls.fixed = frozenset().union(*(getattr(base, "fixed", frozenset()) for base in cls.__mro__[1:]))

    def __post_init__(self) -> None:
        super().__post_init__()
        check_replays(self.replays)
        self.model = ReplayModel(check_successors(self.successors))

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        super().learn(state, action, reward, next_state, terminated, next_available)
        self.model.remember(state, action, reward, next_state, terminated, next_available)
        self.replay(self.model.draws(self.rng, self.replays))

    def replay(self, steps: Iterable[Step]) -> None:
        """Learn `steps` (remembered ones: `model.draws`, `model.recall`) by the base agent's rule."""
        for step in steps:
            super().learn(*step)


@dataclass(eq=False, kw_only=True)
class DynaQAgent(Dyna, QAgent):
    """Dyna-Q: Q-learning (`QAgent`'s rule, its optimism included) on each real step and on
    the `replays` steps replayed from the model of recent outcomes after it (`Dyna`).

    For a real or a replayed step (s, a, r, s')::

        Q(s, a) <- Q(s, a) + lr * (r + gamma * V(s') - Q(s, a))      (QAgent's V; 0 if s' ended)

    Parameters
    ----------
    replays : int
        How many remembered steps follow each real one.
    successors : int
        Outcomes kept per (state, action): 1 the last (Sutton 1990), 25 neuro-nav's model.

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
    `replays` steps replayed from the model of recent outcomes after it (`Dyna`).

    For a real or a replayed step (s, a, r, s')::

        delta = r + gamma * V(s') - V(s);  V(s) <- V(s) + lr * delta;  H(s, a) <- H(s, a) + lr * delta

    Parameters
    ----------
    replays : int
        Replayed steps per real step.
    successors : int
        Outcomes kept per (state, action): 1 the last (Sutton 1990), 25 neuro-nav's model.
    """


class BatchedDyna(BatchedAgent):
    """Dyna (`gym_bridge.agents.dyna.Dyna`) for B lanes, before the batched agent whose rule it
    replays for: after each real step, learnt by that rule, the step is remembered as its pair's
    last outcome and `replays` remembered steps, pairs drawn uniformly among the pairs the lane
    has tried, are learnt again by the same rule. The batched form keeps the last outcome only
    (`successors = 1`, Sutton 1990); a spec with more outcomes runs per agent."""

    replays: int

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        n, a, b = self.n_states, self.n_actions, self.size
        self.replays = int(self.replays)
        self.model_reward = np.zeros((b, n, a))
        self.model_next = np.zeros((b, n, a), dtype=np.int64)
        self.model_ended = np.zeros((b, n, a), dtype=bool)
        self.model_offered: np.ndarray | None = None  # (B, S, A, A) once a task masks its actions
        self.tried = np.zeros((b, n * a), dtype=bool)
        self.tried_pairs = np.zeros((b, n * a), dtype=np.int64)  # each lane's tried pairs, in order
        self.tried_count = np.zeros(b, dtype=np.int64)

    @classmethod
    def supports(cls, settings: Mapping[str, Any]) -> bool:
        return int(settings.get("successors", 1)) == 1

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        super().update(lanes, states, actions, rewards, next_states, ended, next_mask)
        self.remember(lanes, states, actions, rewards, next_states, ended, next_mask)
        if not self.replays:
            return
        u = self.streams.uniform(lanes, self.replays)
        count = self.tried_count[lanes]
        n_actions = self.n_actions
        for k in range(self.replays):
            pick = np.minimum((u[:, k] * count).astype(np.int64), count - 1)
            pairs = self.tried_pairs[lanes, pick]
            s, a = pairs // n_actions, pairs % n_actions
            offered = None if self.model_offered is None else self.model_offered[lanes, s, a]
            super().update(lanes, s, a, self.model_reward[lanes, s, a], self.model_next[lanes, s, a],
                           self.model_ended[lanes, s, a], offered)

    def remember(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        """Each lane's step as its pair's last outcome; a pair tried for the first time joins the lane's list."""
        self.model_reward[lanes, states, actions] = rewards
        self.model_next[lanes, states, actions] = next_states
        self.model_ended[lanes, states, actions] = ended
        if next_mask is not None:
            if self.model_offered is None:
                self.model_offered = np.ones((self.size, self.n_states, self.n_actions, self.n_actions), dtype=bool)
            self.model_offered[lanes, states, actions] = next_mask
        flat = states * self.n_actions + actions
        new = ~self.tried[lanes, flat]
        if new.any():
            fresh = lanes[new]
            self.tried[fresh, flat[new]] = True
            self.tried_pairs[fresh, self.tried_count[fresh]] = flat[new]
            self.tried_count[fresh] += 1


class BatchedDynaQ(BatchedDyna, BatchedQ):
    """Dyna-Q (`gym_bridge.agents.dyna.DynaQAgent`) for B lanes."""

    name = "dyna"
    per_agent = DynaQAgent


class BatchedDynaAC(BatchedDyna, BatchedActorCritic):
    """Dyna-AC (`gym_bridge.agents.dyna.DynaACAgent`) for B lanes."""

    name = "dynaac"
    per_agent = DynaACAgent
