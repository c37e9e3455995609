"""Successor-representation variants of neuro-nav's set: Dyna-SR and SR + model-based (SRMB).

Why: replay lets the SR's map catch up with a changed transition without walking it
(Russek et al. 2017); a model-based learner beside the SR covers what the SR's map cannot
relearn quickly (Momennejad et al. 2017).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from .base import LearningAgent, ValuePolicy, choose
from .dyna import Dyna
from .mbv import MBVAgent
from .sr import SRAgent


@dataclass(eq=False, kw_only=True)
class DynaSRAgent(Dyna, SRAgent):
    """Dyna-SR (Russek et al. 2017): the TD successor representation (`SRAgent`'s rule) on each
    real step and on the `replays` steps replayed from the model of recent outcomes after it (`Dyna`).

    For a real or a replayed step (s, a, r, s'), SRAgent's update (M counting the current
    state, as neuro-nav's DynaSR's TDSR does; `include_current=False` leaves it out)::

        M(a, s) <- M(a, s) + lr * (onehot(s) + gamma * M(a', s') - M(a, s))
        w(s')   <- w(s') + w_lr * (r - w(s'))

    Parameters
    ----------
    replays : int
        Steps drawn from the model, from the agent's own stream, after each real step.
    successors : int
        Outcomes kept per (state, action): 1 the last (Sutton 1990), 25 neuro-nav's model.
    """


@dataclass(eq=False, kw_only=True)
class SRMBAgent(ValuePolicy, LearningAgent):
    """SR + model-based (Momennejad et al. 2017): a TD-SR agent (`SRAgent`, its map counting
    the current state, w learnt at `lr`) and a value-iteration agent (`MBVAgent`, last-outcome
    model, reward per state arrived at) learn from the same steps, with the same `lr` and
    `gamma`, as neuro-nav's SRMB's TDSR and MBV do.

    The choice is by::

        Q = mix * Q_MB + (1 - mix) * Q_SR

    Parameters
    ----------
    mix : float
        Weight of the model-based values, in [0, 1].
    planning : {"every_step", "on_change"}
        The model-based learner's planning (`MBVAgent`): "on_change" is neuro-nav's schedule.
    ignore_ends : bool
        The model-based learner plans on past the end of an episode, as neuro-nav's MBV does.
    """

    mix: float = 0.5
    planning: str = "every_step"
    ignore_ends: bool = False
    fixed: ClassVar[frozenset[str]] = frozenset({"lr", "gamma", "planning", "ignore_ends"})  # given to its learners

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.mix <= 1:
            raise ValueError(f"mix: expected a number in [0, 1], got {self.mix!r}")
        self.sr = SRAgent(self.n_states, self.n_actions, lr=self.lr, w_lr=self.lr, gamma=self.gamma, seed=self.seed)
        self.mb = MBVAgent(self.n_states, self.n_actions, lr=self.lr, gamma=self.gamma, seed=self.seed,
                           planning=self.planning, ignore_ends=self.ignore_ends)

    def values(self, state: int | None = None) -> np.ndarray:
        return self.mix * self.mb.values(state) + (1 - self.mix) * self.sr.values(state)

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.values(state), available, self.beta, self.epsilon)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.sr.learn(state, action, reward, next_state, terminated, next_available)
        self.mb.learn(state, action, reward, next_state, terminated, next_available)
