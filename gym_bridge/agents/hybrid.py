"""Model-based / model-free hybrid (Daw et al., 2011) for two-step-like tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .base import AgentBase, policy, softmax_choice
from .batched import BatchedAgent, Mask, masked_max
from .forms import Carry, JaxForm, Step


@dataclass(eq=False, kw_only=True)
class HybridAgent(AgentBase):
    """Model-based / model-free mixture with TD(lambda) and perseveration.

    Model-free values learn by TD(lambda) towards the best next value, without discount; after
    each step (s, a, r, s') of an episode whose pairs so far are (s_1, a_1) ... (s_k, a_k) = (s, a)::

        delta            = r + max_a' Q_MF(s', a') - Q_MF(s, a)     (r - Q_MF(s, a) if s' ended the episode)
        Q_MF(s_j, a_j)  <- Q_MF(s_j, a_j) + lr * lam^(k - j) * delta   for every j

    Model-based values of a state's actions are the learnt transition probabilities (counts
    with a weak prior) times the best model-free value of each successor. The first choice of
    an episode is a softmax over::

        w * Q_MB(s, .) + (1 - w) * Q_MF(s, .) + perseveration * [a = previous first choice]

    (w = 1 purely model-based); later choices are a softmax over Q_MF.

    Parameters
    ----------
    lr : float
        Learning rate of the model-free values.
    lam : float
        Eligibility decay: the share of the error passed to each earlier pair of the episode.
    beta : float
        Inverse temperature of the softmax.
    w : float
        Weight of the model-based values in the first choice.
    perseveration : float
        Bonus for repeating the previous episode's first choice.
    """

    lr: float = 0.5
    lam: float = 0.6
    beta: float = 5.0
    w: float = 0.7
    perseveration: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        self.q_mf = np.zeros((self.n_states, self.n_actions))
        self.counts = np.ones((self.n_states, self.n_actions, self.n_states)) * 1e-3  # transition counts (weak prior)
        self.previous_first: int | None = None
        self._trace: list[tuple[int, int]] = []

    def begin_episode(self) -> None:
        self._trace = []

    def model_based(self, state: int) -> np.ndarray:
        transition = self.counts[state] / self.counts[state].sum(axis=1, keepdims=True)
        best_next = self.q_mf.max(axis=1)
        return transition @ best_next

    def values(self, state: int | None = None) -> np.ndarray:
        """The values the next choice in `state` is made by: at the first step the mix of
        model-based and model-free values plus the perseveration bonus, later model-free.
        Without a state, the mix for every state (no perseveration): the table of values."""
        if state is None:
            transition = self.counts / self.counts.sum(axis=2, keepdims=True)
            return self.w * (transition @ self.q_mf.max(axis=1)) + (1 - self.w) * self.q_mf
        if self._trace:
            return self.q_mf[state]
        values = self.w * self.model_based(state) + (1 - self.w) * self.q_mf[state]
        if self.previous_first is not None:
            values = values + self.perseveration * (np.arange(len(values)) == self.previous_first)
        return values

    def act(self, state: int, available: Sequence[int]) -> int:
        actions = np.asarray(available)
        return int(actions[softmax_choice(self.rng, self.values(state)[actions], self.beta)])

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        return policy(self.values(state), available, self.beta, 0.0)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        if not self._trace:
            self.previous_first = action
        self.counts[state, action, next_state] += 1.0
        self._trace.append((state, action))
        future = 0.0 if terminated or not len(next_available) else self.q_mf[next_state, list(next_available)].max()
        delta = reward + future - self.q_mf[state, action]
        # TD(lambda): the newest pair gets the full error, earlier pairs lambda^k of it
        decay = 1.0
        for s, a in reversed(self._trace):
            self.q_mf[s, a] += self.lr * decay * delta
            decay *= self.lam


class BatchedHybrid(BatchedAgent):
    """The model-based / model-free hybrid (`gym_bridge.agents.hybrid.HybridAgent`'s rule: TD(lambda)
    model-free values, learnt transition counts, perseveration) for B lanes: `q_mf` is B x S x A,
    `counts` B x S x A x S, and each lane's pairs of the episode so far are a row of `trace_*`."""

    name = "hybrid"
    per_agent = HybridAgent
    numbers = ("lr", "lam", "w", "perseveration")
    lam: np.ndarray
    w: np.ndarray
    perseveration: np.ndarray

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        return 8 * (n_states * n_actions * n_states + 2 * n_states * n_actions)  # counts, q_mf, traces

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.epsilon = np.zeros(self.size)  # a softmax at `beta` always
        n, a = self.n_states, self.n_actions
        self.q_mf = np.zeros((self.size, n, a))
        self.counts = np.full((self.size, n, a, n), 1e-3)  # transition counts (weak prior)
        self.previous_first = np.full(self.size, -1, dtype=np.int64)  # -1: none yet
        self.trace_state = np.zeros((self.size, 4), dtype=np.int64)
        self.trace_action = np.zeros((self.size, 4), dtype=np.int64)
        self.trace_length = np.zeros(self.size, dtype=np.int64)

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.trace_length[lanes] = 0

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        """At a lane's first step the mix of model-based and model-free values plus the
        perseveration bonus; later the model-free values (`HybridAgent.values`)."""
        values = self.q_mf[lanes, states].copy()
        first = self.trace_length[lanes] == 0
        if first.any():
            fl, fs = lanes[first], states[first]
            counts = self.counts[fl, fs]  # (f, A, S)
            transition = counts / counts.sum(axis=2, keepdims=True)
            model_based = np.einsum("fas,fs->fa", transition, self.q_mf[fl].max(axis=2))
            w = self.w[fl][:, None]
            mixed = w * model_based + (1 - w) * values[first]
            previous = self.previous_first[fl]
            repeat = (np.arange(self.n_actions)[None, :] == previous[:, None]) & (previous >= 0)[:, None]
            values[first] = mixed + self.perseveration[fl][:, None] * repeat
        return values

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        first = self.trace_length[lanes] == 0
        self.previous_first[lanes[first]] = actions[first]
        self.counts[lanes, states, actions, next_states] += 1.0
        length = self.trace_length[lanes]
        if length.max() >= self.trace_state.shape[1]:  # longer episodes: room for twice as many pairs
            grow = np.zeros((self.size, self.trace_state.shape[1]), dtype=np.int64)
            self.trace_state = np.concatenate([self.trace_state, grow], axis=1)
            self.trace_action = np.concatenate([self.trace_action, grow.copy()], axis=1)
        self.trace_state[lanes, length] = states
        self.trace_action[lanes, length] = actions
        length = self.trace_length[lanes] = length + 1
        with np.errstate(invalid="ignore"):
            future = masked_max(self.q_mf[lanes, next_states], next_mask)
        future[ended] = 0.0
        delta = rewards + future - self.q_mf[lanes, states, actions]
        step = self.lr[lanes] * delta
        lam = self.lam[lanes]
        # TD(lambda): the newest pair gets the full error, the pair k before it lam^k of it
        for j in range(int(length.max())):
            back = length - 1 - j  # position of the pair j steps back
            has = back >= 0
            if not has.any():
                break
            hl = lanes[has]
            s, a = self.trace_state[hl, back[has]], self.trace_action[hl, back[has]]
            self.q_mf[hl, s, a] += step[has] * lam[has] ** j


# -- likelihood forms for fitting (graphtasks.fitting hands them the plan or the scan) -------------
def vectorised(settings: dict[str, Any], plan: Any) -> float | None:
    """The hybrid's log-likelihood over all trials at once, on trials of at most two steps (its
    eligibility trace reaches one step back; `graphtasks.fitting.vectorised`); None on longer ones."""
    lr, lam, beta, w, bonus = (settings[k] for k in ("lr", "lam", "beta", "w", "perseveration"))
    if plan.positions.max() > 1:
        return None
    series = plan.series(0.0)
    delta = np.zeros(plan.n)  # each learnt step's prediction error
    for level in plan.levels:
        own = level.rewards + level.future(series)
        follows = plan.follows[level.steps]
        trace = np.where(follows, lam * delta[np.minimum(level.steps + 1, plan.n - 1)], 0.0)
        for (pair, rows), values in zip(level.pairs, plan.filter_level(lr, level, own + trace, 0.0)):
            series.set(pair, level.steps[rows], values)
            delta[level.steps[rows]] = own[rows] - np.concatenate(([0.0], values[:-1]))
    values = plan.choice_values(series, plan.n_actions)
    first = plan.first_steps
    if len(first):
        best = np.stack([np.max([series.before(p, first) for p in pairs], axis=0) for pairs in plan.mb_pairs], axis=1)
        model_based = np.einsum("tan,tn->ta", plan.transitions, best)
        shown = values[first]
        offered = np.isfinite(shown)
        values[first] = np.where(offered, w * model_based + (1 - w) * np.where(offered, shown, 0.0), -np.inf)
        values[plan.repeat_rows, plan.repeat_actions] += bonus
    return plan.log_softmax_sum(values, beta)


def _jax_q_init(p: dict[str, Any]) -> Any:
    return 0.0


def _jax_values(p: dict[str, Any], s: Any, row: Any, carry: Carry) -> Any:
    """At a trial's first learnt choice the mix of model-based and model-free values plus the
    perseveration bonus; later the model-free values (`HybridAgent.values`)."""
    import jax.numpy as jnp

    transition = jnp.einsum("ps,psat->pat", s, carry.counts)
    transition = transition / transition.sum(axis=2, keepdims=True)
    model_based = jnp.einsum("pat,pt->pa", transition, carry.q.max(axis=2))
    mixed = p["w"] * model_based + (1 - p["w"]) * row + p["perseveration"] * carry.previous
    return jnp.where(carry.begun[:, None], row, mixed)


def _jax_learn(p: dict[str, Any], step: Step, carry: Carry) -> Carry:
    import jax.numpy as jnp

    do, pair, step_on = step.do, step.pair, step.do[:, None, None]
    previous = jnp.where((do & ~carry.begun)[:, None], step.a, carry.previous)
    counts = carry.counts + jnp.where(do[:, None, None, None], pair[:, :, :, None] * step.n[:, None, None, :], 0.0)
    delta = step.r + step.future - step.current
    trace = jnp.where(step_on, p["lam"][:, :, None] * carry.trace + pair, carry.trace)
    q = carry.q + jnp.where(step_on, (p["lr"] * delta[:, None])[:, :, None] * trace, 0.0)
    return Carry(q, counts, trace, carry.begun | do, previous)


# the hybrid in the JAX scan (Daw et al. 2011: TD(lambda) model-free values, transition counts
# with their weak prior, w, perseveration): its settings and defaults
JAX = JaxForm(
    settings={"lr": 0.5, "lam": 0.6, "beta": 5.0, "w": 0.7, "perseveration": 0.1}, q_init=_jax_q_init,
    values=_jax_values, learn=_jax_learn,
)
