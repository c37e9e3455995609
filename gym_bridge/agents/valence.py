"""Agents whose learning depends on the sign of the prediction error, or on a running mood.

Why: people and animals weigh better- and worse-than-expected outcomes differently
(e.g. Lefebvre et al. 2017). These agents have a rate for each sign instead of one learning
rate, so they are not `LearningAgent`s: each declares its discount and choice settings itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .base import TableAgent, ValuePolicy, choose, settings_of
from .batched import BatchedAgent, Mask, masked_max
from .q_learning import BatchedQ, check_bootstrap, next_value


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


class BatchedValence(BatchedAgent):
    """Valence Q (`gym_bridge.agents.valence.ValenceQAgent`'s rule: a rate per sign of the
    prediction error, accumulating traces) for B lanes: `q` and `traces` are B x S x A. While
    every lane's `lam` is 0 the traces stay zero and only the pair learnt changes."""

    name = "valence"
    per_agent = ValenceQAgent
    numbers = ("lr_pos", "lr_neg", "gamma", "epsilon", "lam")
    lr_pos: np.ndarray
    lr_neg: np.ndarray
    lam: np.ndarray
    reset_traces: bool

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.traces = np.zeros_like(self.q)
        self.traced = False  # whether a lane may hold a trace (a step learnt with lam > 0)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        if self.reset_traces:
            self.traces[lanes] = 0.0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        with np.errstate(invalid="ignore"):
            future = masked_max(self.q[lanes, next_states], next_mask)
        future[ended] = 0.0
        gamma = self.gamma[lanes]
        delta = rewards + gamma * future - self.q[lanes, states, actions]
        step = np.where(delta > 0, self.lr_pos[lanes], self.lr_neg[lanes]) * delta
        lam = self.lam[lanes]
        if not self.traced and not lam.any():  # no trace: e is 1 at (s, a), 0 elsewhere
            self.q[lanes, states, actions] += step
            return
        self.traced = True
        self.traces[lanes, states, actions] += 1.0
        traces = self.traces[lanes]
        self.q[lanes] += step[:, None, None] * traces
        self.traces[lanes] = traces * (gamma * lam)[:, None, None]


class BatchedMood(BatchedQ):
    """Mood (`gym_bridge.agents.valence.MoodAgent`'s rule: valence Q-learning biased by a running
    mood, `bootstrap` included) for B lanes: `q` is B x S x A, `mood` B."""

    name = "mood"
    per_agent = MoodAgent
    numbers = ("lr_pos", "lr_neg", "gamma", "epsilon", "mood_lr", "mood_factor")
    lr_pos: np.ndarray
    lr_neg: np.ndarray
    mood_lr: np.ndarray
    mood_factor: np.ndarray
    mood_reset: bool

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        BatchedAgent.__init__(self, n_states, n_actions, seeds, settings)
        check_bootstrap(self.bootstrap)
        self.optimism = np.ones(self.size)  # MoodAgent bootstraps with optimism 1
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.mood = np.zeros(self.size)

    def begin_episode(self, lanes: np.ndarray) -> None:
        if self.mood_reset:
            self.mood[lanes] = 0.0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = self.next_values(lanes, self.q[lanes, next_states], next_mask)
        future[ended] = 0.0
        old = self.q[lanes, states, actions]
        delta = rewards + self.gamma[lanes] * future - old
        rate = np.where(delta > 0, self.lr_pos[lanes], self.lr_neg[lanes])
        mood = self.mood[lanes]
        self.q[lanes, states, actions] = old + rate * (delta + self.mood_factor[lanes] * mood)
        self.mood[lanes] = mood + self.mood_lr[lanes] * (delta - mood)


class BatchedValenceHybrid(BatchedAgent):
    """The valence hybrid (`gym_bridge.agents.valence.ValenceHybridAgent`'s rule: valence Q with
    traces as the model-free learner, a transition model learnt by a delta rule, model-based
    values of the pair just tried) for B lanes: `model_free` is a `BatchedValence`,
    `transitions` B x S x A x S, `q_mb` B x S x A."""

    name = "vhybrid"
    per_agent = ValenceHybridAgent
    numbers = ("lr_mb", "w", "lr_pos", "lr_neg", "gamma", "lam")
    lr_mb: np.ndarray
    w: np.ndarray
    passed_on = ("lr_pos", "lr_neg", "gamma", "lam", "reset_traces", "beta")  # the model-free learner's

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.epsilon = np.zeros(self.size)  # always a softmax
        defaults = settings_of(self.per_agent)
        inner = [{**{k: {**defaults, **dict(s)}[k] for k in self.passed_on}, "epsilon": 0.0} for s in settings]
        self.model_free = BatchedValence(n_states, n_actions, seeds, inner)
        self.transitions = np.zeros((self.size, self.n_states, self.n_actions, self.n_states))
        self.q_mb = np.zeros((self.size, self.n_states, self.n_actions))
        self.best = np.zeros((self.size, self.n_states))  # max_a Q_MF(x, a), kept as Q_MF changes

    def set_setting(self, key: str, values: np.ndarray | float | bool) -> None:
        super().set_setting(key, values)
        if key == "learning" or key in self.passed_on:
            self.model_free.set_setting(key, values)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        w = self.w[lanes, None]
        return w * self.q_mb[lanes, states] + (1 - w) * self.model_free.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.model_free.begin_episode(lanes)

    def learn(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, terminated: np.ndarray, next_mask: Mask,
    ) -> None:
        """The model-free learner takes an episode's end where s' offers nothing too; the
        model-based value only where s' terminated it (`ValenceHybridAgent.learn`)."""
        lanes, states, actions, rewards, next_states, terminated, next_mask = self.learning_lanes(
            lanes, states, actions, rewards, next_states, terminated, next_mask)
        if not lanes.size:
            return
        self.model_free.learn(lanes, states, actions, rewards, next_states, terminated, next_mask)
        q = self.model_free.q
        if self.model_free.traced:  # traces move every pair they hold: every state's best again
            self.best[lanes] = q[lanes].max(axis=2)
        else:  # only the pair learnt moved
            self.best[lanes, states] = q[lanes, states].max(axis=1)
        lr_mb = self.lr_mb[lanes]
        rows = self.transitions[lanes, states, actions] * (1 - lr_mb)[:, None]
        rows[np.arange(lanes.size), next_states] += lr_mb
        self.transitions[lanes, states, actions] = rows
        gamma = self.model_free.gamma[lanes]
        target = rewards[:, None] + gamma[:, None] * self.best[lanes]
        model_based = np.einsum("ns,ns->n", rows, target)
        self.q_mb[lanes, states, actions] = np.where(terminated, q[lanes, states, actions], model_based)
