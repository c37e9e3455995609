"""Successor-representation variants of neuro-nav's set: Dyna-SR and SR + model-based (SRMB).

Why: replay lets the SR's map catch up with a changed transition without walking it
(Russek et al. 2017); a model-based learner beside the SR covers what the SR's map cannot
relearn quickly (Momennejad et al. 2017).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .base import LearningAgent, ValuePolicy, choose
from .batched import BatchedAgent, Mask
from .dyna import BatchedDyna, Dyna
from .mbv import BatchedMBV, MBVAgent
from .sr import BatchedSR, SRAgent


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


class BatchedDynaSR(BatchedDyna, BatchedSR):
    """Dyna-SR (`gym_bridge.agents.sr_variants.DynaSRAgent`, Russek et al. 2017) for B lanes."""

    name = "dynasr"
    per_agent = DynaSRAgent

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        return 8 * (n_actions * n_states * n_states + n_states + 6 * n_states * n_actions)  # the SR and the model


class BatchedSRMB(BatchedAgent):
    """SR + model-based (`gym_bridge.agents.sr_variants.SRMBAgent`) for B lanes: a batched SR
    (`sr`, w learnt at `lr`) and a batched MBV (`mb`, last-outcome model) learn from the same
    steps, and each lane chooses by mix * Q_MB + (1 - mix) * Q_SR."""

    name = "srmb"
    per_agent = SRMBAgent
    numbers = ("lr", "gamma", "epsilon", "mix")
    mix: np.ndarray
    planning: str
    ignore_ends: bool

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        """The model-based half's model (no incremental plan) and the SR half's tables."""
        return 8 * (4 * n_states * n_actions + 2 * n_states) + BatchedSR.lane_bytes(n_states, n_actions, {})

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        if not np.all((0 <= self.mix) & (self.mix <= 1)):
            raise ValueError(f"mix: expected a number in [0, 1], got {self.mix.tolist()!r}")
        self.sr = BatchedSR(n_states, n_actions, seeds,
                            [{"lr": lr, "w_lr": lr, "gamma": g} for lr, g in zip(self.lr, self.gamma)])
        self.mb = BatchedMBV(n_states, n_actions, seeds,
                             [{"lr": lr, "gamma": g, "planning": self.planning, "ignore_ends": self.ignore_ends}
                              for lr, g in zip(self.lr, self.gamma)])

    @classmethod
    def supports(cls, settings: Mapping[str, Any]) -> bool:
        return settings.get("planning", "every_step") == "every_step"

    def set_setting(self, key: str, values: np.ndarray | float | bool) -> None:
        if key in ("lr", "gamma"):  # given to its learners when it is made (SRMBAgent.fixed)
            raise ValueError(f"batched srmb: setting {key!r} cannot change between phases")
        super().set_setting(key, values)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        mix = self.mix[lanes][:, None]
        return mix * self.mb.lane_values(lanes, states) + (1 - mix) * self.sr.lane_values(lanes, states)

    def learn(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, terminated: np.ndarray, next_mask: Mask,
    ) -> None:
        lanes, states, actions, rewards, next_states, terminated, next_mask = self.learning_lanes(
            lanes, states, actions, rewards, next_states, terminated, next_mask)
        if lanes.size:
            self.sr.learn(lanes, states, actions, rewards, next_states, terminated, next_mask)
            self.mb.learn(lanes, states, actions, rewards, next_states, terminated, next_mask)
