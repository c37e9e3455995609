"""The agent protocol used by the runner, and choice rules shared by the agents."""

from __future__ import annotations

from typing import Protocol, Sequence

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


class ValuePolicy:
    """Agents that choose by `choose` over `values(state)`: their policy follows from those values."""

    beta: float | None
    epsilon: float
    learning: bool = True  # False: `learn` changes nothing (a test phase)

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
    rng: np.random.Generator

    def values(self, state: int | None = None) -> np.ndarray:
        return self.q if state is None else self.q[state]

    def begin_episode(self) -> None:
        pass

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.q[state], available, self.beta, self.epsilon)


def check_sizes(n_states: int, n_actions: int) -> None:
    check_positive_int("n_states", n_states)
    check_positive_int("n_actions", n_actions)


class RandomAgent:
    """Uniform over the offered actions; learns nothing (a baseline)."""

    learning = True

    def __init__(self, n_states: int, n_actions: int, seed: int | None = None) -> None:
        self.n_states, self.n_actions = n_states, n_actions
        self.rng = agent_rng(seed)

    def begin_episode(self) -> None:
        pass

    def act(self, state: int, available: Sequence[int]) -> int:
        return int(available[int(self.rng.integers(len(available)))])

    def values(self, state: int | None = None) -> np.ndarray:
        return np.zeros(self.n_actions) if state is not None else np.zeros((self.n_states, self.n_actions))

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        p = np.zeros(self.n_actions)
        p[np.asarray(available)] = 1.0 / len(available)
        return p

    def learn(self, *args: object) -> None:
        pass
