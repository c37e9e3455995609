"""Distributional TD learning with asymmetric learning rates per cell (Dabney et al. 2020).

Why: dopamine neurons differ in how strongly they respond to positive and negative reward
prediction errors. If each cell i learns with its own pair of rates, its value settles where
positive and negative errors balance, the tau_i-expectile of the return, with

    tau_i = lr_pos_i / (lr_pos_i + lr_neg_i)                    (the cell's optimism)

so the cells together hold the distribution of returns, not only its mean. By default the
cells' optimism is spread evenly over (0, 1), so every run has the same cells and a plot of
value against optimism has no gaps; `rates = "random"` draws each cell's two rates instead, as
neuro-nav's DistQ does (and as recorded dopamine neurons vary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from ..params import check_positive_int
from .base import LearningAgent, TableAgent
from .batched import NEG, BatchedAgent, Mask


@dataclass(eq=False, kw_only=True)
class DistributionalQAgent(TableAgent, LearningAgent):
    """Distributional TD control: a table Q_i(s, a) per cell, each with its own pair of rates.

    After a step (s, a, r, s')::

        a*        = argmax_a' mean_i Q_i(s', a')                 (greedy on the mean value)
        delta_i   = r + gamma * Q_i(s', a*) - Q_i(s, a)           (r - Q_i(s, a) if s' ended the episode)
        Q_i(s, a) <- Q_i(s, a) + (lr_pos_i if delta_i > 0 else lr_neg_i) * delta_i

    With `rates = "even"` (the default) the cells' optimism is spread evenly, tau_i = (i + 1/2)
    / cells, with rates lr_pos_i = 2 lr tau_i and lr_neg_i = 2 lr (1 - tau_i) (each cell's mean
    rate is `lr`). With `rates = "random"` each cell's lr_pos_i and lr_neg_i are drawn
    uniformly from [lr / 20, lr] by the agent's own stream (lr = 0.02 gives neuro-nav's DistQ,
    which draws them from [0.001, 0.02]), and tau_i = lr_pos_i / (lr_pos_i + lr_neg_i). The
    agent chooses by the mean over cells.

    Parameters
    ----------
    cells : int
        How many cells. Once the agent is made, `cells` holds their values (states x actions x cells).
    mirror : bool
        Give every cell equal rates: the classical TD control whose cells all learn the mean
        (with random rates, lr_neg_i = lr_pos_i, as neuro-nav's `mirror`).
    rates : {"even", "random"}
        How the cells' rates are set: evenly spread optimism at a mean rate `lr`, or drawn.
    """

    cells: Any = 16  # a count as a setting; once the agent is made, the cells' values
    mirror: bool = False
    rates: str = "even"

    fixed: ClassVar[frozenset[str]] = frozenset({"lr", "cells", "mirror", "rates"})  # the cells' rates and table

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("cells", self.cells)
        if self.rates == "random":
            self.lr_pos = self.rng.uniform(self.lr / 20, self.lr, self.cells)
            self.lr_neg = self.lr_pos.copy() if self.mirror else self.rng.uniform(self.lr / 20, self.lr, self.cells)
            with np.errstate(invalid="ignore"):  # lr = 0: no rates, no optimism
                self.tau = np.nan_to_num(self.lr_pos / (self.lr_pos + self.lr_neg), nan=0.5)
        elif self.rates == "even":
            self.tau = np.full(self.cells, 0.5) if self.mirror else (np.arange(self.cells) + 0.5) / self.cells
            self.lr_pos, self.lr_neg = 2 * self.lr * self.tau, 2 * self.lr * (1 - self.tau)
        else:
            raise ValueError(f"rates: expected 'even' or 'random', got {self.rates!r}")
        self.cells = np.zeros((self.n_states, self.n_actions, self.cells))  # Q_i(s, a)

    @property
    def q(self) -> np.ndarray:  # type: ignore[override]
        """The mean over cells: what the agent chooses by."""
        return self.cells.mean(axis=2)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        if terminated or not len(next_available):
            target = np.full(len(self.tau), reward)
        else:
            offered = list(next_available)
            best = offered[int(np.argmax(self.cells[next_state, offered].mean(axis=1)))]
            target = reward + self.gamma * self.cells[next_state, best]
        delta = target - self.cells[state, action]
        self.cells[state, action] += np.where(delta > 0, self.lr_pos, self.lr_neg) * delta


class BatchedDistributional(BatchedAgent):
    """Distributional TD (`gym_bridge.agents.distributional.DistributionalQAgent`'s rule) for B
    lanes: the cells' values are B x S x A x C (`cells`), their rates `lr_pos`, `lr_neg` and
    optimism `tau` B x C. With `rates = "random"` each lane's rates are drawn from its own
    stream when it is made (uniform in [lr / 20, lr], as the per-agent form draws them from
    its generator), so they are the lane's whatever its batch."""

    name = "distq"
    per_agent = DistributionalQAgent
    cells: Any  # a count as a setting; once the agent is made, the cells' values
    mirror: bool
    rates: str

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        return 8 * n_states * n_actions * (int(settings.get("cells", 16)) + 1)

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        count = check_positive_int("cells", self.cells)
        lr = self.lr[:, None]
        if self.rates == "random":
            low = lr / 20
            self.lr_pos = low + (lr - low) * self.streams.uniform(None, count)
            self.lr_neg = self.lr_pos.copy() if self.mirror else low + (lr - low) * self.streams.uniform(None, count)
            with np.errstate(invalid="ignore"):  # lr = 0: no rates, no optimism
                self.tau = np.nan_to_num(self.lr_pos / (self.lr_pos + self.lr_neg), nan=0.5)
        elif self.rates == "even":
            tau = np.full(count, 0.5) if self.mirror else (np.arange(count) + 0.5) / count
            self.tau = np.repeat(tau[None], self.size, axis=0)
            self.lr_pos, self.lr_neg = 2 * lr * self.tau, 2 * lr * (1 - self.tau)
        else:
            raise ValueError(f"rates: expected 'even' or 'random', got {self.rates!r}")
        self.cells = np.zeros((self.size, self.n_states, self.n_actions, count))  # Q_i(s, a) per lane

    def set_setting(self, key: str, values: np.ndarray | float | bool) -> None:
        if key == "lr":  # the cells' rates are made from it once (DistributionalQAgent.fixed)
            raise ValueError("batched distq: setting 'lr' cannot change between phases")
        super().set_setting(key, values)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.cells[lanes, states].mean(axis=2)

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        nxt = self.cells[lanes, next_states]  # (n, A, C)
        means = nxt.mean(axis=2)
        if next_mask is not None:
            means = np.where(next_mask, means, NEG)
        best = np.argmax(means, axis=1)  # the first of the best offered, as np.argmax per agent
        target = rewards[:, None] + self.gamma[lanes][:, None] * nxt[np.arange(lanes.size), best]
        target[ended] = rewards[ended][:, None]
        old = self.cells[lanes, states, actions]
        delta = target - old
        self.cells[lanes, states, actions] = old + np.where(delta > 0, self.lr_pos[lanes], self.lr_neg[lanes]) * delta
