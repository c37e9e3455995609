"""Successor-representation variants of neuro-nav's set: Dyna-SR and SR + model-based (SRMB).

Dyna-SR (Russek et al. 2017): the TD successor representation (`SRAgent`'s rule) plus, after
every real step, `replays` steps replayed from a model that keeps the last outcome of each
(state, action) tried, drawn uniformly from the agent's own stream. Replay lets the SR's map
catch up with a changed transition without walking it.

SRMB (Momennejad et al. 2017): a TD-SR agent and a model-based value-iteration agent
(`MBVAgent`, last-outcome model) learn from the same steps; the agent chooses by
Q = mix * Q_MB + (1 - mix) * Q_SR.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import ValuePolicy, agent_rng, check_sizes, choose
from .dyna import ReplayModel, check_replays
from .mbv import MBVAgent
from .sr import SRAgent


class DynaSRAgent(SRAgent):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        lr: float = 0.1,
        w_lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        replays: int = 10,
        seed: int | None = None,
    ) -> None:
        super().__init__(n_states, n_actions, lr, w_lr, gamma, beta, epsilon, seed=seed)
        self.replays = check_replays(replays)
        self.model = ReplayModel()

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        super().learn(state, action, reward, next_state, terminated, next_available)
        self.model.remember(state, action, reward, next_state, terminated, next_available)
        for step in self.model.draws(self.rng, self.replays):
            super().learn(*step)


class SRMBAgent(ValuePolicy):
    def __init__(
        self,
        n_states: int,
        n_actions: int,
        mix: float = 0.5,
        lr: float = 0.1,
        gamma: float = 0.95,
        beta: float | None = None,
        epsilon: float = 0.1,
        seed: int | None = None,
    ) -> None:
        check_sizes(n_states, n_actions)
        if not 0 <= mix <= 1:
            raise ValueError(f"mix: expected a number in [0, 1], got {mix!r}")
        self.sr = SRAgent(n_states, n_actions, lr=lr, w_lr=lr, gamma=gamma, seed=seed)
        self.mb = MBVAgent(n_states, n_actions, lr=lr, gamma=gamma, seed=seed)
        self.mix, self.beta, self.epsilon = mix, beta, epsilon
        self.rng = agent_rng(seed)

    def values(self, state: int | None = None) -> np.ndarray:
        return self.mix * self.mb.values(state) + (1 - self.mix) * self.sr.values(state)

    def begin_episode(self) -> None:
        pass

    def act(self, state: int, available: Sequence[int]) -> int:
        return choose(self.rng, self.values(state), available, self.beta, self.epsilon)

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        self.sr.learn(state, action, reward, next_state, terminated, next_available)
        self.mb.learn(state, action, reward, next_state, terminated, next_available)
