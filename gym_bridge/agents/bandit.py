"""A bandit learner with an information bonus (directed exploration, Wilson et al. 2014).

Each episode is one game of a bandit whose arms (the actions) are new in every game, as in the
horizon task (`decision/horizon`): the agent tracks each arm's mean payoff within the game with
a Kalman filter (Bayesian mean tracking of a Gaussian arm) and adds to it a bonus for what it
does not know yet, the arm's posterior sd, scaled by how much the information is still worth:
the log of the number of choices left in the game. A free choice with nothing after it (the
only free choice of a horizon-1 game) gets no bonus, so the agent explores the less-known arm
more when more choices follow (Wilson et al.'s directed exploration, as in UCB's log term,
Auer et al. 2002).

How many choices are left is learnt from the states: the mean number of choices made from a
state to the end of its episode, over the episodes that reached it (the task's states say the
horizon and the trial; the agent is not told the horizon).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .base import AgentBase, ValuePolicy, choose
from .batched import BatchedAgent, Mask


@dataclass(eq=False, kw_only=True)
class InfoBonusAgent(ValuePolicy, AgentBase):
    """Kalman means of the arms within a game plus an information bonus; softmax choice.

    At the start of every episode each arm's belief is N(`prior_mean`, `prior_sd`^2); a payoff r
    of arm a (the reward of choosing it) updates it::

        k = v_a / (v_a + noise^2);  m_a <- m_a + k (r - m_a);  v_a <- (1 - k) v_a

    and an action's value in state s is::

        V(s, a) = m_a + info_bonus * log(left(s)) * sqrt(v_a)

    where left(s) is the mean number of choices made from s to the end of the episodes that
    reached s (1 until one has: no bonus). With `learning` off nothing changes, as for every
    agent: the arms are not tracked either.

    Parameters
    ----------
    beta : float or None
        Inverse temperature of the softmax over V; None chooses epsilon-greedily.
    epsilon : float
        With `beta` None, the probability of a uniformly random offered action.
    info_bonus : float
        Weight of the information bonus (0: a softmax over the arms' means, no directed exploration).
    prior_mean, prior_sd : float
        The belief about every arm when a game starts.
    noise : float
        The sd of a payoff around its arm's mean, as the agent assumes it.

    Examples
    --------
    >>> agent = InfoBonusAgent(3, 2, seed=0, info_bonus=1.0, prior_sd=10.0, noise=10.0)
    >>> agent.learn(0, 0, 60.0, 1, False, [0, 1])  # arm 0 paid 60: its mean halfway there
    >>> agent.means.tolist(), agent.variances.tolist()
    ([55.0, 50.0], [50.0, 100.0])
    >>> agent.learn(1, 1, 50.0, 2, True, [])  # the episode ended: 2 choices were left at state 0
    >>> agent.choices_left(0), agent.choices_left(1)
    (2.0, 1.0)
    """

    beta: float | None = 0.2
    epsilon: float = 0.1
    info_bonus: float = 1.0
    prior_mean: float = 50.0
    prior_sd: float = 20.0
    noise: float = 8.0

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("prior_sd", "noise"):
            value = getattr(self, name)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name}: expected a positive number, got {value!r}")
        self._left_sum = np.zeros(self.n_states)
        self._left_count = np.zeros(self.n_states)
        self._visited: list[int] = []
        self.begin_episode()

    def begin_episode(self) -> None:
        """A new game: every arm back to the prior."""
        self.means = np.full(self.n_actions, float(self.prior_mean))
        self.variances = np.full(self.n_actions, float(self.prior_sd) ** 2)
        self._visited = []

    def choices_left(self, state: int) -> float:
        """The mean number of choices made from `state` to the end of an episode (1 before any)."""
        n = self._left_count[state]
        return float(self._left_sum[state] / n) if n else 1.0

    def values(self, state: int | None = None) -> np.ndarray:
        if state is None:
            return np.stack([self.values(s) for s in range(self.n_states)])
        weight = self.info_bonus * math.log(max(self.choices_left(state), 1.0))
        return self.means + weight * np.sqrt(self.variances)

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.values(state), available, self.beta, self.epsilon)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        v = self.variances[action]
        k = v / (v + self.noise**2)
        self.means[action] += k * (reward - self.means[action])
        self.variances[action] = (1 - k) * v
        self._visited.append(state)
        if terminated or not len(next_available):
            n = len(self._visited)
            for i, s in enumerate(self._visited):
                self._left_sum[s] += n - i
                self._left_count[s] += 1


class BatchedInfoBonus(BatchedAgent):
    """The information-bonus bandit learner (`gym_bridge.agents.bandit.InfoBonusAgent`'s rule:
    Kalman means of the arms within a game, a bonus growing with the choices left) for B lanes:
    `means` and `variances` are B x A, the choices-left tallies B x S, and each lane's states of
    the episode so far a row of `visited`."""

    name = "infobonus"
    per_agent = InfoBonusAgent
    numbers = ("epsilon", "info_bonus", "prior_mean", "prior_sd", "noise")
    info_bonus: np.ndarray
    prior_mean: np.ndarray
    prior_sd: np.ndarray
    noise: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        for name in ("prior_sd", "noise"):
            values = getattr(self, name)
            if not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{name}: expected a positive number, got {values.tolist()!r}")
        self.means = np.empty((self.size, self.n_actions))
        self.variances = np.empty((self.size, self.n_actions))
        self.left_sum = np.zeros((self.size, self.n_states))
        self.left_count = np.zeros((self.size, self.n_states))
        self.visited = np.zeros((self.size, 8), dtype=np.int64)
        self.visited_length = np.zeros(self.size, dtype=np.int64)
        self.begin_episode(np.arange(self.size))

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.means[lanes] = self.prior_mean[lanes, None]
        self.variances[lanes] = (self.prior_sd[lanes] ** 2)[:, None]
        self.visited_length[lanes] = 0

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        count = self.left_count[lanes, states]
        left = np.divide(self.left_sum[lanes, states], count, out=np.ones(lanes.size), where=count > 0)
        weight = self.info_bonus[lanes] * np.log(np.maximum(left, 1.0))
        return self.means[lanes] + weight[:, None] * np.sqrt(self.variances[lanes])

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        v = self.variances[lanes, actions]
        k = v / (v + self.noise[lanes] ** 2)
        means = self.means[lanes, actions]
        self.means[lanes, actions] = means + k * (rewards - means)
        self.variances[lanes, actions] = (1 - k) * v
        length = self.visited_length[lanes]
        if length.max() >= self.visited.shape[1]:  # longer games: room for twice as many states
            self.visited = np.concatenate([self.visited, np.zeros_like(self.visited)], axis=1)
        self.visited[lanes, length] = states
        length = self.visited_length[lanes] = length + 1
        if ended.any():  # each state of the game gets the number of choices made from it on
            done, n = lanes[ended], length[ended]
            positions = np.arange(self.visited.shape[1])
            made = positions[None, :] < n[:, None]
            rows = np.broadcast_to(done[:, None], made.shape)[made]
            cells = self.visited[done][made]
            np.add.at(self.left_sum, (rows, cells), (n[:, None] - positions[None, :])[made].astype(float))
            np.add.at(self.left_count, (rows, cells), 1.0)
