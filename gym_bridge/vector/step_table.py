"""A vector env's step as a fixed table, for the compiled lane loop (`gym_bridge.compiled_lanes`).

Why: when a task's step depends on nothing but the state and the action (no keys to carry,
no doors to open, no rewards that stay after they are taken), it is a handful of table
look-ups, and a compiled loop can play a lane's whole phase without a Python call per step.
An env that can describe its step this way returns a `StepTable` from `step_table()`; one
that cannot returns None and is stepped by numpy in lockstep (`gym_bridge.batched_episodes`).

The table also says how the env draws its random numbers (slips and random starts), in the
order the vector env draws them from a lane's stream, so the compiled loop and the numpy loop
give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class StepTable:
    """One step of a fixed-table env, per lane.

    A step from `state` by `action`: with `slip` > 0 the env draws two uniforms u1, u2 and
    replaces the action by `floor(u2 * n_actions)` when u1 < slip; then `target =
    move[action, state]`; the reward is `step_reward`, plus `gain[target]` if `gains[target]`
    and (`collect` < 0 or the action is `collect`), which also ends the episode
    (terminated); then the agent lands on `warp[target]`. A reset draws one uniform u and
    starts on `starts[floor(u * len(starts))]` when `random_start`, else on `start`. An
    episode is cut (truncated) after `episode_length` steps (0: never).
    """

    move: np.ndarray  # int64 (n_actions, n_states)
    gains: np.ndarray  # bool (n_states,): a reward that ends the episode is here
    gain: np.ndarray  # float64 (n_states,)
    warp: np.ndarray  # int64 (n_states,)
    step_reward: float
    collect: int
    slip: float
    random_start: bool
    starts: np.ndarray  # int64: the cells a random start draws from
    start: int
    episode_length: int

    @property
    def n_actions(self) -> int:
        return int(self.move.shape[0])
