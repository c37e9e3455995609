"""Agents whose learning depends on the sign of the prediction error, or on a running mood.

Why: people and animals weigh better- and worse-than-expected outcomes differently
(e.g. Lefebvre et al. 2017). These agents have a rate for each sign instead of one learning
rate, so they are not `LearningAgent`s: each declares its discount and choice settings itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from .base import TableAgent, ValuePolicy, choose
from .q_learning import check_bootstrap, next_value


@dataclass(eq=False, kw_only=True)
class ValenceQAgent(TableAgent):
    """Valence Q (rewardGym's ValenceQAgent and its eligibility variant): Q-learning with one rate
    for positive and one for negative prediction errors, and an eligibility trace.

    After each step (s, a, r, s')::

        delta   = r + gamma * max_a' Q(s', a') - Q(s, a)     (r - Q(s, a) if s' ended the episode)
        e(s, a) <- e(s, a) + 1
        Q       <- Q + (lr_pos if delta > 0 else lr_neg) * delta * e
        e       <- gamma * lam * e                            (e <- 0 when an episode begins, if reset_traces)

    lr_pos = lr_neg is plain Q-learning with traces.

    Parameters
    ----------
    lr_pos, lr_neg : float
        Learning rates of positive and of negative prediction errors.
    gamma : float
        Discount of the next state's value.
    lam : float
        Decay of the trace per step (with gamma); 0: no trace.
    reset_traces : bool
        Clear the traces when an episode begins.
    beta, epsilon
        How it chooses, as `LearningAgent`'s, but with a softmax (beta 5) by default.
    """

    lr_pos: float = 0.1
    lr_neg: float = 0.1
    gamma: float = 0.95
    lam: float = 0.0
    reset_traces: bool = True
    beta: float | None = 5.0
    epsilon: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q = np.zeros((self.n_states, self.n_actions))
        self.traces = np.zeros((self.n_states, self.n_actions))

    def begin_episode(self) -> None:
        if self.reset_traces:
            self.traces[:] = 0.0

    def error(
        self, state: int, action: int, reward: float, next_state: int, ended: bool, offered: Sequence[int]
    ) -> float:
        future = 0.0 if ended or not len(offered) else self.q[next_state, list(offered)].max()
        return float(reward + self.gamma * future - self.q[state, action])

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        future = 0.0 if terminated or not len(next_available) else self.q[next_state, list(next_available)].max()
        delta = reward + self.gamma * future - self.q[state, action]
        self.traces[state, action] += 1.0
        self.q += (self.lr_pos if delta > 0 else self.lr_neg) * delta * self.traces
        self.traces *= self.gamma * self.lam


@dataclass(eq=False, kw_only=True)
class MoodAgent(TableAgent):
    """Mood (Eldar et al. 2016; neuro-nav's MoodQ): valence Q-learning whose updates are biased
    by a mood m, a slow running average of the prediction errors that persists across episodes.

    After each step (s, a, r, s')::

        delta   = r + gamma * max_a' Q(s', a') - Q(s, a)     (r - Q(s, a) if s' ended the episode)
        Q(s, a) <- Q(s, a) + (lr_pos if delta > 0 else lr_neg) * (delta + mood_factor * m)
        m       <- m + mood_lr * (delta - m)

    so mood rises while an agent learns a reward (errors mostly positive), returns to zero once
    it is predicted, and falls when the reward is taken away. In Eldar et al.'s model mood is a
    running average of prediction errors across outcomes, a momentum of the environment's
    rewards that carries from one trial to the next, so by default m carries over from episode
    to episode. `mood_reset = True` sets m to 0 when an episode begins, as neuro-nav's MoodQ
    does (its `reset()`, which its episode loop calls); with `bootstrap = "policy"` and `beta`
    set as well, the agent follows MoodQ's rule exactly.

    Parameters
    ----------
    lr_pos, lr_neg, gamma
        As `ValenceQAgent`'s.
    mood_lr : float
        Rate at which the mood follows the prediction errors.
    mood_factor : float
        Weight of the mood in each update (0: valence Q-learning without traces).
    beta, epsilon
        How it chooses, as `LearningAgent`'s (default: epsilon-greedy).
    bootstrap : {"max", "policy"}
        The next state's value: its best action's, or its mean under the agent's policy
        (neuro-nav's default), as `QAgent`'s.
    mood_reset : bool
        Start every episode with a mood of 0 (neuro-nav's MoodQ) instead of carrying it over.
    """

    lr_pos: float = 0.1
    lr_neg: float = 0.1
    gamma: float = 0.95
    mood_lr: float = 0.01
    mood_factor: float = 0.0
    beta: float | None = None
    epsilon: float = 0.1
    bootstrap: str = "max"
    mood_reset: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_bootstrap(self.bootstrap)
        self.q = np.zeros((self.n_states, self.n_actions))
        self.mood = 0.0

    def begin_episode(self) -> None:
        if self.mood_reset:
            self.mood = 0.0

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        future = 0.0 if terminated or not len(next_available) else next_value(
            self.q[next_state], next_available, self.bootstrap, 1.0, self.beta, self.epsilon
        )
        delta = reward + self.gamma * future - self.q[state, action]
        rate = self.lr_pos if delta > 0 else self.lr_neg
        self.q[state, action] += rate * (delta + self.mood_factor * self.mood)
        self.mood += self.mood_lr * (delta - self.mood)


@dataclass(eq=False, kw_only=True)
class ValenceHybridAgent(ValuePolicy):
    """Valence hybrid (rewardGym's ValenceHybridAgent): a valence-Q model-free learner with traces
    (`ValenceQAgent`), plus a transition model learnt by a delta rule and model-based values of
    the pair just tried.

    After each step (s, a, r, s'), besides the model-free update::

        T(s, a, s') <- T(s, a, s') + lr_mb * (1 - T(s, a, s'))     (the outcome seen)
        T(s, a, x)  <- (1 - lr_mb) * T(s, a, x)                    (every other state x)
        Q_MB(s, a)  = sum_x T(s, a, x) * (r + gamma * max_a' Q_MF(x, a'))   (= Q_MF(s, a) if s' ended)

    and chooses by softmax(beta * (w * Q_MB + (1 - w) * Q_MF)). rewardGym's model-based target has
    no discount: gamma = 1 gives its rule.

    Parameters
    ----------
    lr_mb : float
        Learning rate of the transition model.
    lr_pos, lr_neg, gamma, lam, reset_traces
        The model-free learner's settings (`ValenceQAgent`).
    w : float
        Weight of the model-based values in the choice.
    beta : float
        Inverse temperature of the softmax.
    """

    lr_mb: float = 0.1
    lr_pos: float = 0.1
    lr_neg: float = 0.1
    gamma: float = 0.95
    lam: float = 0.0
    reset_traces: bool = True
    w: float = 0.5
    beta: float = 5.0

    epsilon = 0.0  # always a softmax
    # given to its model-free learner when it is made
    fixed: ClassVar[frozenset[str]] = frozenset({"lr_pos", "lr_neg", "gamma", "lam", "reset_traces"})

    def __post_init__(self) -> None:
        super().__post_init__()
        self.model_free = ValenceQAgent(
            self.n_states, self.n_actions, lr_pos=self.lr_pos, lr_neg=self.lr_neg, gamma=self.gamma, lam=self.lam,
            reset_traces=self.reset_traces, beta=self.beta,
        )
        self.transitions = np.zeros((self.n_states, self.n_actions, self.n_states))
        self.q_mb = np.zeros((self.n_states, self.n_actions))

    @property
    def learning(self) -> bool:
        return self.model_free.learning

    @learning.setter
    def learning(self, value: bool) -> None:
        self.model_free.learning = value

    def values(self, state: int | None = None) -> np.ndarray:
        """w * Q_MB + (1 - w) * Q_MF: what the softmax chooses by."""
        mixed = self.w * self.q_mb + (1 - self.w) * self.model_free.q
        return mixed if state is None else mixed[state]

    def begin_episode(self) -> None:
        self.model_free.begin_episode()

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.values(state), available, self.beta, 0.0)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.model_free.learn(state, action, reward, next_state, terminated, next_available)
        row = self.transitions[state, action]
        row *= 1 - self.lr_mb
        row[next_state] += self.lr_mb
        if terminated:
            self.q_mb[state, action] = self.model_free.q[state, action]
        else:
            best = self.model_free.q.max(axis=1)
            self.q_mb[state, action] = row @ (reward + self.gamma * best)
