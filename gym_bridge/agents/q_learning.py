"""Tabular Q-learning (Watkins & Dayan 1992), with Zorowitz et al.'s (2020) optimism weight.

`optimism = 1` is Q-learning; lower values expect the worst of the next choices, as an
anxious agent would (pessimism keeps it away from paths that risk a loss). Chooses
epsilon-greedily by default, by softmax with inverse temperature `beta` when it is set.

The next state's value is its best action's (`bootstrap = "max"`, Watkins' rule: the agent
learns the greedy policy's values whatever it does) or the mean of its actions' values under
the agent's own policy (`bootstrap = "policy"`: expected SARSA, van Seijen et al. 2009, which
learns the values of the exploring policy). neuro-nav's TDQ and MoodQ use the second, with
their softmax, by default; "policy" with `beta` set reproduces them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .base import LearningAgent, TableAgent, policy
from .batched import BatchedAgent, Mask, lane_policy, masked_max
from .forms import Carry, JaxForm, Step

BOOTSTRAPS = ("max", "policy")


def check_bootstrap(bootstrap: str) -> str:
    if bootstrap not in BOOTSTRAPS:
        raise ValueError(f"bootstrap: expected one of {', '.join(map(repr, BOOTSTRAPS))}, got {bootstrap!r}")
    return bootstrap


def next_value(
    row: np.ndarray, offered: Sequence[int], bootstrap: str, optimism: float, beta: float | None, epsilon: float
) -> float:
    """The value of a next state whose action values are `row`, of which `offered` are offered:

        best = max_a' Q(s', a')              (bootstrap "max")
             = sum_a' pi(a' | s') Q(s', a')   (bootstrap "policy": pi the softmax with `beta`, or
                                              epsilon-greedy with `beta` None, as the agent chooses)
        V(s') = optimism * best + (1 - optimism) * min_a' Q(s', a')
    """
    values = row[list(offered)]
    if bootstrap == "policy":
        best = float(policy(row, offered, beta, epsilon)[list(offered)] @ values)
    else:
        best = float(values.max())
    return best if optimism == 1.0 else optimism * best + (1 - optimism) * float(values.min())


@dataclass(eq=False, kw_only=True)
class QAgent(TableAgent, LearningAgent):
    """Q-learning towards a mix of the next state's best and worst action.

    After each step (s, a, r, s')::

        V(s')   = optimism * max_a' Q(s', a') + (1 - optimism) * min_a' Q(s', a')   (0 if s' ended the episode)
        Q(s, a) <- Q(s, a) + lr * (r + gamma * V(s') - Q(s, a))

    With `bootstrap = "policy"` the max is replaced by the mean of Q(s', .) under the agent's
    own policy (`next_value`).

    Parameters
    ----------
    q_init : float
        The value every (state, action) starts with.
    optimism : float
        Weight of the best next action against the worst; 1 is Q-learning.
    bootstrap : {"max", "policy"}
        "max" (default): Watkins' Q-learning, which learns the greedy policy's values however the
        agent explores. "policy": expected SARSA under the agent's own softmax or
        epsilon-greedy choice, neuro-nav's TDQ rule (its default bootstrap, with its softmax).

    Examples
    --------
    >>> agent = QAgent(2, 2, seed=0, lr=0.5)
    >>> agent.learn(0, 1, 1.0, 1, True, [0, 1])
    >>> agent.values(0).tolist()
    [0.0, 0.5]
    """

    q_init: float = 0.0
    fixed: ClassVar[frozenset[str]] = frozenset({"q_init"})
    optimism: float = 1.0
    bootstrap: str = "max"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_bootstrap(self.bootstrap)
        self.q = np.full((self.n_states, self.n_actions), self.q_init, dtype=np.float64)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        ended = terminated or not len(next_available)
        future = 0.0 if ended else next_value(
            self.q[next_state], next_available, self.bootstrap, self.optimism, self.beta, self.epsilon
        )
        self.q[state, action] += self.lr * (reward + self.gamma * future - self.q[state, action])


class BatchedQ(BatchedAgent):
    """Q-learning (`gym_bridge.agents.q_learning.QAgent`'s rule, `bootstrap` and `optimism`
    included) for B lanes: `q` is B x S x A."""

    name = "q"
    per_agent: ClassVar[type] = QAgent  # `type`: the mood agent's lanes build on these
    numbers: ClassVar[tuple[str, ...]] = ("lr", "gamma", "epsilon", "optimism")
    optimism: np.ndarray
    bootstrap: str
    q_init: float

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        inits = [float(dict(s).get("q_init", 0.0)) for s in settings]
        super().__init__(n_states, n_actions, seeds, [{k: v for k, v in s.items() if k != "q_init"} for s in settings])
        check_bootstrap(self.bootstrap)
        self.q = np.empty((self.size, self.n_states, self.n_actions))
        self.q[:] = np.array(inits)[:, None, None]

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def next_values(self, lanes: np.ndarray, rows: np.ndarray, mask: Mask) -> np.ndarray:
        """V(s') of each lane (`QAgent`'s `next_value`), given the next states' rows and offers
        (rows that offer nothing give -inf or nan: the caller sets ended lanes to 0)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.bootstrap == "policy":
                beta = None if self.beta is None else self.beta[lanes]
                shown = rows if mask is None else np.where(mask, rows, 0.0)
                best = (lane_policy(rows, mask, beta, self.epsilon[lanes]) * shown).sum(axis=1)
            else:
                best = masked_max(rows, mask)
            optimism = self.optimism[lanes]
            if self.all_optimistic:
                return best
            worst = rows.min(axis=1) if mask is None else np.where(mask, rows, np.inf).min(axis=1)
            return optimism * best + (1 - optimism) * worst

    def compiles(self) -> bool:
        """The compiled loop's Q rule bootstraps from the max, with no pessimism."""
        return super().compiles() and self.bootstrap == "max" and self.all_optimistic

    @property
    def all_optimistic(self) -> bool:
        return bool(np.all(self.optimism == 1.0))

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = self.next_values(lanes, self.q[lanes, next_states], next_mask)
        future[ended] = 0.0
        old = self.q[lanes, states, actions]
        self.q[lanes, states, actions] = old + self.lr[lanes] * (rewards + self.gamma[lanes] * future - old)


# -- likelihood forms for fitting (graphtasks.fitting hands them the plan or the scan) -------------
def vectorised(settings: dict[str, Any], plan: Any) -> float | None:
    """Q's log-likelihood over all trials at once: with a softmax (`beta` set), `optimism = 1` and
    `bootstrap = "max"` each pair's values are a delta-rule filter of its targets, stage by stage
    from the last (`graphtasks.fitting.vectorised`); None for any other rule."""
    lr, gamma, beta, q0 = settings["lr"], settings["gamma"], settings["beta"], settings["q_init"]
    if beta is None or settings["optimism"] != 1.0 or settings["bootstrap"] != "max":
        return None
    series = plan.series(q0)
    for level in plan.levels:
        targets = level.rewards + gamma * level.future(series)
        for (pair, rows), values in zip(level.pairs, plan.filter_level(lr, level, targets, q0)):
            series.set(pair, level.steps[rows], values)
    return plan.log_softmax_sum(plan.choice_values(series, plan.n_actions), beta)


def _jax_q_init(p: dict[str, Any]) -> Any:
    return p["q_init"][:, :, None]


def _jax_values(p: dict[str, Any], s: Any, row: Any, carry: Carry) -> Any:
    return row


def _jax_learn(p: dict[str, Any], step: Step, carry: Carry) -> Carry:
    import jax.numpy as jnp

    delta = step.r + p["gamma"][:, 0] * step.future - step.current
    q = carry.q + jnp.where(step.do[:, None, None], (p["lr"][:, 0] * delta)[:, None, None] * step.pair, 0.0)
    return Carry(q, carry.counts, carry.trace, carry.begun, carry.previous)


# Q in the JAX scan (softmax, Watkins' max bootstrap, optimism 1): its settings and defaults
JAX = JaxForm(
    settings={"lr": 0.1, "beta": 5.0, "gamma": 0.95, "q_init": 0.0}, q_init=_jax_q_init, values=_jax_values,
    learn=_jax_learn, takes={"optimism": 1.0, "bootstrap": "max"}, needs_beta=True,
)
