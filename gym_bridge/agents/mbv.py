"""Model-based value iteration (MBV): learn a transition and reward model, plan by sweeps.

Why: with a learnt model the agent re-plans its whole value function after every step,
the upper bound of what replay can do. Acts on the state index.

The reward is learnt per state arrived at (Russek et al. 2017's R(s'), neuro-nav's MBV), so a
reward seen once from one side is known from every side; `reward_model = "pair"` learns it per
(state, action) instead, for tasks whose reward depends on how a state is reached. Planning
is `sweeps` synchronous value-iteration sweeps after every step (`planning = "every_step"`,
close to planning to convergence), or neuro-nav's cheaper schedule (`planning = "on_change"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from ..params import check_positive_int
from .base import LearningAgent, TableAgent

REWARD_MODELS = ("state", "pair")
PLANNING = ("every_step", "on_change")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


@dataclass(eq=False, kw_only=True)
class MBVAgent(TableAgent, LearningAgent):
    """Value iteration on a learnt transition and reward model.

    After each step (s, a, r, s')::

        T(s, a, .) <- T(s, a, .) + model_lr * (onehot(s') - T(s, a, .))   (first visit: onehot(s'))
        end(s')    <- whether arriving at s' ended the episode (the last arrival's)
        w(s')      <- w(s') + lr * (r - w(s'))                           (reward_model "state")
        Q(s, a)    <- sum_s'' T(s, a, s'') (w(s'') + gamma V(s''))        over tried pairs

    or, with `reward_model = "pair"`, R(s, a) <- R(s, a) + lr * (r - R(s, a)) and Q(s, a) <-
    R(s, a) + gamma sum_s'' T(s, a, s'') V(s''). V(s'') = 0 where arriving ended the episode
    last time, else optimism * max_a Q(s'', a) + (1 - optimism) * min_a Q(s'', a): `optimism =
    1` plans for the best next choice, lower values for the worst (Zorowitz et al. 2020's
    anxious agent, neuro-nav's `w_value`). With `ignore_ends` (neuro-nav's MBV, whose model has
    no episode ends) V(s'') is always the second form: a state that ends the episode is worth
    what the actions tried from it before are worth (0 if none was).

    When: `planning = "every_step"` runs `sweeps` synchronous sweeps (every Q from the last
    sweep's values) after every step. `planning = "on_change"` is neuro-nav's MBV schedule,
    with in-place sweeps (pairs in order of state, then action, each using the values already
    updated): when a pair's model row changes, every Q is set to 0 and `sweeps` sweeps re-plan
    from the model alone (before the reward of this step is learnt); when a reward is better
    than predicted, `sweeps` sweeps; then one sweep, every step.

    Parameters
    ----------
    model_lr : float or None
        Learning rate of the transition model. 1 keeps the last outcome of each (s, a), as
        neuro-nav's MBV does, so a wall that appears is in the model at once; in (0, 1) recent
        outcomes weigh more (the recency of rewardGym's hybrid); None averages every outcome
        seen (a count model, right for a stationary stochastic task, slow to notice a change).
    sweeps : int
        Value-iteration sweeps after each step (`every_step`), or on a change (`on_change`).
    optimism : float
        Weight of the best next action against the worst; 1 plans for the best.
    reward_model : {"state", "pair"}
        Learn the reward of arriving at each state (default) or of each (state, action).
    planning : {"every_step", "on_change"}
        `sweeps` synchronous sweeps after every step, or neuro-nav's schedule (see above).
    ignore_ends : bool
        Plan on past a state where the episode ended, as neuro-nav's MBV does (False: its value
        is 0, the episode's end).

    Examples
    --------
    >>> agent = MBVAgent(3, 2, seed=0, lr=0.5, gamma=0.9)
    >>> agent.learn(1, 0, 1.0, 2, True, [0, 1])  # arriving at 2 pays 1 and ends
    >>> agent.learn(0, 1, 0.0, 1, False, [0, 1])
    >>> agent.w.tolist(), agent.values(0).tolist()
    ([0.0, 0.0, 0.5], [0.0, 0.45])
    """

    model_lr: float | None = 1.0
    sweeps: int = 10
    optimism: float = 1.0
    reward_model: str = "state"
    planning: str = "every_step"
    ignore_ends: bool = False
    fixed: ClassVar[frozenset[str]] = frozenset({"reward_model"})  # which table holds the rewards

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("sweeps", self.sweeps)
        check_choice("reward_model", self.reward_model, REWARD_MODELS)
        check_choice("planning", self.planning, PLANNING)
        if self.model_lr is not None and not 0 < self.model_lr <= 1:
            raise ValueError(f"model_lr: expected a number in (0, 1] or None (average), got {self.model_lr!r}")
        n_states, n_actions = self.n_states, self.n_actions
        self.counts = np.zeros((n_states, n_actions, n_states))  # outcomes seen (the average model)
        self.transitions = np.zeros((n_states, n_actions, n_states))
        self.w = np.zeros(n_states)  # reward of arriving at each state (reward_model "state")
        self.rewards = np.zeros((n_states, n_actions))  # reward of each pair (reward_model "pair")
        self.tried = np.zeros((n_states, n_actions), dtype=bool)
        self.ends = np.zeros(n_states, dtype=bool)  # arriving here ended the episode, last time
        self.q = np.zeros((n_states, n_actions))
        self._outcomes: list[tuple[int, int, list[int], list[float]]] | None = None  # plan_in_place's pairs

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        before = self.transitions[state, action].copy()
        outcome = np.zeros(self.transitions.shape[2])
        outcome[next_state] = 1.0
        if self.model_lr is None:
            self.counts[state, action, next_state] += 1
            row = self.counts[state, action]
            self.transitions[state, action] = row / row.sum()
        elif not self.tried[state, action]:
            self.transitions[state, action] = outcome
        else:
            self.transitions[state, action] += self.model_lr * (outcome - self.transitions[state, action])
        self.tried[state, action] = True
        self.ends[next_state] = terminated
        on_change, changed = self.planning == "on_change", not np.array_equal(before, self.transitions[state, action])
        if changed:
            self._outcomes = None
        if on_change and changed:
            self.q[:] = 0.0  # values planned on the old model are forgotten
            self.plan_in_place(self.sweeps)
        if self.reward_model == "state":
            error = reward - self.w[next_state]
            self.w[next_state] += self.lr * error
        else:
            error = reward - self.rewards[state, action]
            self.rewards[state, action] += self.lr * error
        if not on_change:
            self.plan()
            return
        if error > 0:
            self.plan_in_place(self.sweeps)
        self.plan_in_place(1)

    def _next_values(self) -> np.ndarray:
        """V(s) for every s: 0 where arriving ended the episode, else the optimism-weighted
        best (and worst) of Q(s, .)."""
        best = self.q.max(axis=1)
        if self.optimism != 1.0:
            best = self.optimism * best + (1 - self.optimism) * self.q.min(axis=1)
        return best if self.ignore_ends else np.where(self.ends, 0.0, best)

    def _arrival(self) -> np.ndarray:
        """The reward of arriving at each state, as the plan counts it (0 with pair rewards)."""
        return self.w if self.reward_model == "state" else np.zeros(self.n_states)

    def plan(self) -> None:
        """`sweeps` synchronous value-iteration sweeps over the (state, action) pairs tried so far."""
        arrival = self._arrival()
        for _ in range(self.sweeps):
            q = self.rewards + self.transitions @ (arrival + self.gamma * self._next_values())
            self.q = np.where(self.tried, q, self.q)

    def plan_in_place(self, sweeps: int) -> None:
        """`sweeps` in-place sweeps over the tried pairs, in order of state, then action: each
        Q(s, a) is planned from the values of the pairs updated before it in the sweep.

        Pair by pair, so in Python floats over each pair's possible outcomes (one, with the
        last-outcome model): numpy's per-call cost would dominate."""
        if self._outcomes is None:  # the model changed since the last plan
            self._outcomes = []
            for s, a in np.argwhere(self.tried).tolist():
                nonzero = np.flatnonzero(self.transitions[s, a])
                self._outcomes.append((s, a, nonzero.tolist(), self.transitions[s, a, nonzero].tolist()))
        arrival = self._arrival().tolist()
        ends = [False] * self.n_states if self.ignore_ends else self.ends.tolist()
        rewards, gamma, optimism = self.rewards.tolist(), self.gamma, self.optimism
        q = self.q.tolist()
        v = self._next_values().tolist()
        for _ in range(sweeps):
            for s, a, support, probs in self._outcomes:
                if len(support) == 1:  # one outcome (the last-outcome model): the same sum, quicker
                    j = support[0]
                    q[s][a] = rewards[s][a] + probs[0] * (arrival[j] + gamma * v[j])
                else:
                    q[s][a] = rewards[s][a] + sum(p * (arrival[j] + gamma * v[j]) for j, p in zip(support, probs))
                if not ends[s]:
                    best = max(q[s])
                    v[s] = best if optimism == 1.0 else optimism * best + (1 - optimism) * min(q[s])
        self.q = np.array(q)
