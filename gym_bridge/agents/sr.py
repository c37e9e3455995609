"""TD successor representation (SR) agent: Q(s, a) = M[a, s] . w.

Why: the SR separates where the agent expects to go (M, learnt by TD) from what it is
worth (w, the reward of arriving at each state), so a moved reward is relearnt quickly.
Acts on the state index (info["state"]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .base import LearningAgent, ValuePolicy, choose
from .batched import NEG, BatchedAgent, Mask, offered


@dataclass(eq=False, kw_only=True)
class SRAgent(ValuePolicy, LearningAgent):
    """TD successor representation: a map M of expected occupancies and a reward vector w.

    M[a, s] is the discounted expected occupancy of every state from taking a in s on,
    counting s itself (Dayan 1993; Stachenfeld et al. 2017; neuro-nav's TDSR): M starts at the
    identity. w[s'] is the mean reward paid on arriving at s', so Q(s, a) = M[a, s] . w =
    w(s) + gamma * (the expected return of taking a in s). After each step (s, a, r, s')::

        M(a, s) <- M(a, s) + lr * (onehot(s) + gamma * M(a', s') - M(a, s))
                   (onehot(s) + gamma * onehot(s') if s' ended the episode)
        w(s')   <- w(s') + w_lr * (r - w(s'))

    with a' the greedy action in s' by the values before this step's w update (`goal_biased`,
    neuro-nav's default: the map of the policy the agent is heading for) or, with
    `goal_biased=False`, the mean of M(., s') over the offered actions: the map of a uniform
    random walk (Stachenfeld et al. 2017's place fields, Schapiro et al. 2013's communities).

    With `include_current=False`, M counts only the states after s (M starts at 0, onehot(s')
    replaces onehot(s) + gamma * ..., so the map is (M_default - I) / gamma) and Q(s, a) is the
    expected return itself, on the scale of a Q-learner's values. Both choose alike: w(s) is the
    same for every action, so the default at inverse temperature beta chooses as this map at
    gamma * beta.

    Parameters
    ----------
    w_lr : float
        Learning rate of the reward vector w (`lr` is the map's).
    goal_biased : bool
        Bootstrap from the greedy next action (True) or from the mean over the offered ones.
    include_current : bool
        M counts the state the agent is in (True, the published SR) or only the states that
        follow it.

    Examples
    --------
    >>> agent = SRAgent(2, 1, seed=0, lr=0.5, w_lr=0.5)
    >>> agent.learn(0, 0, 1.0, 1, True, [0])
    >>> agent.M[0, 0].tolist(), agent.w.tolist()
    ([1.0, 0.475], [0.0, 0.5])
    """

    w_lr: float = 0.1
    goal_biased: bool = True
    include_current: bool = True
    fixed: ClassVar[frozenset[str]] = frozenset({"include_current"})  # M's first value and its rule

    def __post_init__(self) -> None:
        super().__post_init__()
        start = np.eye(self.n_states) if self.include_current else np.zeros((self.n_states, self.n_states))
        self.M = np.repeat(start[None], self.n_actions, axis=0)
        self.w = np.zeros(self.n_states)

    def q_values(self, state: int) -> np.ndarray:
        return self.M[:, state, :] @ self.w

    def values(self, state: int | None = None) -> np.ndarray:
        return (self.M @ self.w).T if state is None else self.q_values(state)

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.q_values(state), available, self.beta, self.epsilon)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        arrived = np.zeros(self.n_states)
        arrived[next_state] = 1.0
        if not terminated and len(next_available):
            actions = list(next_available)
            if self.goal_biased:
                best = actions[int(np.argmax(self.q_values(next_state)[actions]))]
                after = self.M[best, next_state]
            else:  # the mean as np.mean takes it (the rows' sum over the count), without its wrapper's cost
                after = self.M[actions, next_state].sum(axis=0) / len(actions)
        else:  # nothing follows s': its own row is onehot(s') (or 0 without the current state)
            after = arrived if self.include_current else np.zeros(self.n_states)
        if self.include_current:
            target = self.gamma * after
            target[state] += 1.0
        else:
            target = arrived + self.gamma * after
        self.M[action, state] += self.lr * (target - self.M[action, state])
        self.w[next_state] += self.w_lr * (reward - self.w[next_state])


class BatchedSR(BatchedAgent):
    """The TD successor representation (`gym_bridge.agents.sr.SRAgent`'s rule, `goal_biased` and
    `include_current` included) for B lanes: `M` is B x A x S x S, `w` is B x S."""

    name = "sr"
    per_agent = SRAgent
    numbers = ("lr", "gamma", "epsilon", "w_lr")
    w_lr: np.ndarray
    goal_biased: bool
    include_current: bool

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        return 8 * (n_actions * n_states * n_states + n_states)  # M and w

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        n = self.n_states
        self.M = np.zeros((self.size, self.n_actions, n, n))
        if self.include_current:
            self.M[:, :, np.arange(n), np.arange(n)] = 1.0
        self.w = np.zeros((self.size, n))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        # Q(s, a) = M[a, s] . w, per lane
        return np.einsum("nas,ns->na", self.M[lanes, :, states, :], self.w[lanes])

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        n, count = self.n_states, lanes.size
        rows = np.arange(count)
        going = ~ended
        if self.goal_biased and next_mask is None and going.all():  # the usual step: M of s' by its best action
            best = np.argmax(self.lane_values(lanes, next_states), axis=1)  # first of the best, as np.argmax
            after = self.M[lanes, best, next_states]
        else:
            arrived = np.zeros((count, n))
            arrived[rows, next_states] = 1.0
            after = np.zeros((count, n)) if not self.include_current else arrived
            if going.any():
                g, gl, gs = rows[going], lanes[going], next_states[going]
                gm = offered(None if next_mask is None else next_mask[going], (g.size, self.n_actions))
                if self.goal_biased:
                    values = self.lane_values(gl, gs)
                    best = np.argmax(np.where(gm, values, NEG), axis=1)  # first of the best, as np.argmax
                    after[g] = self.M[gl, best, gs]
                else:
                    maps = self.M[gl, :, gs, :]  # (g, A, S)
                    after[g] = (maps * gm[:, :, None]).sum(axis=1) / gm.sum(axis=1)[:, None]
        gamma = self.gamma[lanes][:, None]
        if self.include_current:
            target = gamma * after
            target[rows, states] += 1.0
        else:
            target = gamma * after
            target[rows, next_states] += 1.0  # onehot(s') + gamma after, as a sum of the same two terms
        old = self.M[lanes, actions, states]
        self.M[lanes, actions, states] = old + self.lr[lanes][:, None] * (target - old)
        w_old = self.w[lanes, next_states]
        self.w[lanes, next_states] = w_old + self.w_lr[lanes] * (rewards - w_old)
