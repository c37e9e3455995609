"""The agent protocol used by the runner, the bases the agents are built on, and choice rules
shared by the agents."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from typing import Any, ClassVar, Protocol, Sequence

import numpy as np

from ..params import check_positive_int


class Agent(Protocol):
    def begin_episode(self) -> None: ...
    def act(self, state: int, available: Sequence[int]) -> int: ...
    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray: ...
    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None: ...


AGENT_STREAM = 0x6167656E74  # "agent"
FIXED = ("n_states", "n_actions", "seed")  # given by whoever runs the agent, not settings


def settings_of(cls: type) -> dict[str, Any]:
    """An agent class's settings and their defaults, in the constructor's order: the fields its
    constructor takes, but the sizes and the seed (`registry.agent_settings` by name)."""
    return {f.name: f.default for f in fields(cls) if f.init and f.name not in FIXED}


def agent_rng(seed: int | None) -> np.random.Generator:
    """The agent's generator: a stream of its own, even when given the same seed as the env.

    `np.random.default_rng(s)` and gymnasium's `reset(seed=s)` build the same PCG64 stream;
    an agent drawing from it would see the very numbers that decide its rewards.
    """
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(AGENT_STREAM,)))


def softmax_choice(rng: np.random.Generator, values: np.ndarray, beta: float) -> int:
    """Index drawn with probability proportional to exp(beta * value); beta is an inverse temperature."""
    z = beta * (values - values.max())
    p = np.exp(z)
    return int(rng.choice(len(values), p=p / p.sum()))


def choose(
    rng: np.random.Generator, values: np.ndarray, available: Sequence[int], beta: float | None, epsilon: float
) -> int:
    """One of the offered actions by their values: `beta` set, softmax with that inverse temperature;
    else epsilon-greedy with ties broken at random."""
    actions = np.asarray(available)
    v = values[actions]
    if beta is not None:
        return int(actions[softmax_choice(rng, v, beta)])
    if rng.random() < epsilon:
        return int(actions[rng.integers(len(actions))])
    best = np.flatnonzero(v == v.max())
    return int(actions[best[rng.integers(len(best))]])


def policy(values: np.ndarray, available: Sequence[int], beta: float | None, epsilon: float) -> np.ndarray:
    """The probability `choose` gives each action (zero for actions not offered): what a
    record of behaviour needs to say how likely the agent's choice was."""
    actions = np.asarray(available)
    p = np.zeros(len(values))
    v = values[actions]
    if beta is not None:
        z = np.exp(beta * (v - v.max()))
        p[actions] = z / z.sum()
        return p
    best = v == v.max()
    p[actions] = epsilon / len(actions) + (1.0 - epsilon) * best / best.sum()
    return p


def greedy_choice(agent: "ValuePolicy", state: int, available: Sequence[int]) -> tuple[int, float]:
    """The agent's greedy action in `state`: the offered action of highest value
    (`agent.values(state)`, the values its own choice rule chooses by), ties broken by a draw
    from the agent's own stream (only when there is a tie); and that action's probability
    under the greedy policy (1 over the number of tied actions).

    Examples
    --------
    >>> from gym_bridge.agents import make_agent
    >>> agent = make_agent("hybrid", 3, 2, seed=0, w=0.0, perseveration=0.0)
    >>> agent.q_mf[0] = [0.2, 0.7]
    >>> greedy_choice(agent, 0, [0, 1])
    (1, 1.0)
    """
    actions = np.asarray(available)
    v = np.asarray(agent.values(state))[actions]
    best = np.flatnonzero(v == v.max())
    pick = best[0] if best.size == 1 else best[int(agent.rng.integers(best.size))]
    return int(actions[pick]), 1.0 / best.size


def can_act_greedily(cls: type) -> bool:
    """Whether agents of class `cls` have values to act greedily by (`greedy_choice`)."""
    return getattr(cls, "observation", "index") == "index" and callable(getattr(cls, "values", None))


def check_sizes(n_states: int, n_actions: int) -> None:
    check_positive_int("n_states", n_states)
    check_positive_int("n_actions", n_actions)


@dataclass(eq=False)
class AgentBase:
    """What every tabular agent has: the size of its task, a random stream of its own and a
    switch that stops learning (`learning = False`: `learn` changes nothing, a test phase).

    An agent is a dataclass on this base (or on `LearningAgent`) that adds its own settings as
    keyword-only fields, makes its tables in `__post_init__` and writes its rule in `learn`.
    `observation` says what the agent acts on: "index", the state index in `info["state"]`.
    `fixed` names the settings the agent reads only when it is made (an initial table, rates
    derived from them): an experiment phase cannot change those.

    Parameters
    ----------
    n_states, n_actions : int
        The task's number of states and of actions: the shape of the agent's tables.
    seed : int or None
        Seed of the agent's own stream (`agent_rng`); None draws a fresh one.
    """

    n_states: int
    n_actions: int
    _: KW_ONLY
    seed: int | None = None
    rng: np.random.Generator = field(init=False, repr=False)

    observation: ClassVar[str] = "index"
    fixed: ClassVar[frozenset[str]] = frozenset()  # settings read only when the agent is made
    learning = True  # False: `learn` changes nothing (a test phase)

    def __post_init__(self) -> None:
        check_sizes(self.n_states, self.n_actions)
        self.rng = agent_rng(self.seed)

    def begin_episode(self) -> None:
        """Called before each episode's first step; nothing to do unless the rule keeps a trace."""

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        raise NotImplementedError


@dataclass(eq=False, kw_only=True)
class LearningAgent(AgentBase):
    """The settings most agents share: a learning rate, a discount and how they choose.

    A base class: an agent that learns from rewards subclasses it (with `TableAgent` for a
    states x actions table) so its settings have the same names, defaults and checks as every
    other agent's, and a spec or the command line sets them alike.

    Parameters
    ----------
    n_states, n_actions : int
        The task's number of states and of actions: the shape of the agent's tables.
    seed : int or None
        Seed of the agent's own stream (`agent_rng`); None draws a fresh one.
    lr : float
        Learning rate: the fraction of each prediction error added to the estimate.
    gamma : float
        Discount of the next state's value (per step).
    beta : float or None
        Inverse temperature of a softmax choice over the values; None chooses epsilon-greedily.
    epsilon : float
        With `beta` None, the probability of an action drawn uniformly from the offered ones.

    Examples
    --------
    A bandit rule on a table: the value moves towards each reward by `lr`.

    >>> from dataclasses import dataclass
    >>> import numpy as np
    >>> from gym_bridge.agents.base import LearningAgent, TableAgent
    >>> @dataclass
    ... class Bandit(TableAgent, LearningAgent):
    ...     def __post_init__(self):
    ...         super().__post_init__()
    ...         self.q = np.zeros((self.n_states, self.n_actions))
    ...     def learn(self, state, action, reward, next_state, terminated, next_available):
    ...         self.q[state, action] += self.lr * (reward - self.q[state, action])
    >>> agent = Bandit(1, 2, seed=0, lr=0.5, epsilon=0.0)
    >>> agent.learn(0, 1, 1.0, 0, True, [0, 1])
    >>> agent.q.tolist(), agent.act(0, [0, 1])
    ([[0.0, 0.5]], 1)
    """

    lr: float = 0.1
    gamma: float = 0.95
    beta: float | None = None
    epsilon: float = 0.1


class ValuePolicy(AgentBase):
    """Agents that choose by `choose` over `values(state)`: their policy follows from those values."""

    beta: float | None
    epsilon: float

    def values(self, state: int | None = None) -> np.ndarray:
        """The state-action values the agent chooses by: of `state`, or the whole table (states x actions)."""
        raise NotImplementedError

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        """The probability of each action in `state`, as `act` would choose now."""
        return policy(self.values(state), available, self.beta, self.epsilon)


class TableAgent(ValuePolicy):
    """Agents that keep a states x actions table `q` and choose by its row (Q-learning, SARSA,
    Q(lambda), Dyna-Q, MBV): one home for what they share."""

    q: np.ndarray

    def values(self, state: int | None = None) -> np.ndarray:
        return self.q if state is None else self.q[state]

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.q[state], available, self.beta, self.epsilon)


class RandomAgent(AgentBase):
    """Uniform over the offered actions; learns nothing (a baseline).

    Examples
    --------
    >>> agent = RandomAgent(3, 4, seed=0)
    >>> agent.action_probabilities(0, [1, 3]).tolist()
    [0.0, 0.5, 0.0, 0.5]
    """

    def act(self, state: int, available: Sequence[int]) -> int:
        return int(available[int(self.rng.integers(len(available)))])

    def values(self, state: int | None = None) -> np.ndarray:
        return np.zeros(self.n_actions) if state is not None else np.zeros((self.n_states, self.n_actions))

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        p = np.zeros(self.n_actions)
        p[np.asarray(available)] = 1.0 / len(available)
        return p

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        pass
