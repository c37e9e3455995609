"""The lane base of the batched agents: B agents of one kind as arrays, choosing and learning
in one call.

Each agent's batched form lives in its agent's module, next to its per-agent rule
(`q_learning.BatchedQ`, `td.BatchedSarsa`, `sr.BatchedSR`, `hybrid.BatchedHybrid`, ...), and
its registry row names it (`AGENT_INFO[name].batched`); `make_batched` makes one by name. This
module holds what they share: `BatchedAgent` (per-lane settings and streams, choosing, the
learning switch), `LaneAgent` (one lane seen as a per-agent agent) and the lane choice rules.
A setting a batched form lacks (`supports`: Dyna's `successors` above 1, neuro-nav's in-place
`planning = "on_change"` of MBV and SRMB) sends the runs per agent, as do the Room agents
(they read observations, not states).

Why: a sweep of a thousand runs of a tabular agent spends its time in one Python agent step
after another. Here the tables of B agents are one array (B x S x A for Q, B x A x S x S for
the SR), a step of all B is a handful of array operations, and the runs step a native vector
env in lockstep (`gym_bridge.batched_episodes`), so B runs cost about what one did.

Each lane has its own settings (a parameter grid is lanes too: `lr`, `gamma`, `epsilon`,
`beta`, ... are arrays of B) and its own counter-based random stream
(`gym_bridge.vector.lanes`), so a lane's numbers depend on its seed and settings alone, never
on which lanes share its batch. The update rules are the per-agent classes' (the same
hand-computed examples hold, `tests/test_batched_agents.py`); the random numbers are drawn
from other streams, so a batched run and a per-agent run of one seed agree in distribution,
not number for number.

Every method takes `lanes`, the indices of the lanes that take part (the others are left as
they are and draw nothing), and per-lane arrays in that order.

Examples
--------
>>> import numpy as np
>>> from gym_bridge.agents import make_batched
>>> agents = make_batched("q", 2, 2, seeds=[0, 1], settings=[{"lr": 0.5}, {"lr": 0.1}])
>>> lanes = np.array([0, 1])
>>> agents.learn(lanes, np.array([0, 0]), np.array([1, 1]), np.array([1.0, 1.0]), np.array([1, 1]),
...              np.array([True, True]), np.ones((2, 2), bool))
>>> agents.q[:, 0, 1].tolist()
[0.5, 0.1]
"""

from __future__ import annotations

import functools
from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from ..vector.lanes import LaneStreams
from .base import AGENT_STREAM, settings_of

NEG = -np.inf


Mask = np.ndarray | None  # (n, A) bool: the actions each row's state offers; None: every action


@functools.cache
def compile_kernel(function: Callable[..., Any]) -> Any:
    """`function`, an agent's compiled kernel written as plain Python in its module (such as
    `mbv.plan_sweeps`), compiled by numba (the `fast` extra: call only where
    `gym_bridge.fast.available()`). numba is imported here, at the first call, never when an
    agent module is; the compiled code is cached on disk, so later processes load it."""
    import numba

    return numba.njit(cache=True, nogil=True)(function)


def masked_max(values: np.ndarray, mask: Mask) -> np.ndarray:
    """Row maxima over the offered actions (rows with none offered: -inf)."""
    return values.max(axis=1) if mask is None else np.where(mask, values, NEG).max(axis=1)


def offered(mask: Mask, shape: tuple[int, ...]) -> np.ndarray:
    return np.ones(shape, dtype=bool) if mask is None else mask


def lane_policy(values: np.ndarray, mask: Mask, beta: np.ndarray | None, epsilon: np.ndarray) -> np.ndarray:
    """(n, A) probabilities of each action, as `gym_bridge.agents.base.policy` gives them per
    row: softmax at inverse temperature `beta` (per row), or epsilon-greedy with ties shared."""
    top = masked_max(values, mask)[:, None]
    if beta is not None:
        shifted = values - top if mask is None else np.where(mask, values - top, 0.0)  # no overflow off the offer
        z = np.exp(beta[:, None] * shifted)
        if mask is not None:
            z = np.where(mask, z, 0.0)
        return z / z.sum(axis=1, keepdims=True)
    every = offered(mask, values.shape)
    best = every & (values == top)
    count = every.sum(axis=1, keepdims=True)
    return np.where(every, epsilon[:, None] / count, 0.0) + (1.0 - epsilon[:, None]) * best / best.sum(
        axis=1, keepdims=True
    )


def lane_choice(
    streams: LaneStreams, lanes: np.ndarray, values: np.ndarray, mask: Mask,
    beta: np.ndarray | None, epsilon: np.ndarray,
) -> np.ndarray:
    """One action per lane by `lane_policy`'s rule, from the lanes' own streams (1 + A uniforms
    a lane: whether to explore, then a key per action that breaks ties and picks at random)."""
    n_actions = values.shape[1]
    u = streams.uniform(lanes, 1 + n_actions)
    first, keys = u[:, 0], u[:, 1:]
    if beta is not None:
        p = lane_policy(values, mask, beta, epsilon)
        cumulative = np.cumsum(p, axis=1)
        return np.argmax(cumulative > (first * cumulative[:, -1])[:, None], axis=1)
    top = masked_max(values, mask)[:, None]
    pick = values == top
    if mask is not None:
        pick &= mask
    explore = first < epsilon
    if explore.any():
        pick[explore] = True if mask is None else mask[explore]
    return np.argmax(np.where(pick, keys, -1.0), axis=1)


class BatchedAgent:
    """What every batched agent has: B lanes of one agent kind, per-lane settings and streams.

    Parameters
    ----------
    n_states, n_actions : int
        The task's sizes (the same for every lane).
    seeds : sequence of int
        One seed per lane: the lane's stream is keyed by it (as a per-agent agent's is).
    settings : sequence of mappings
        One mapping of settings per lane (the agent's defaults fill the rest). Settings named
        by a word (`bootstrap`) and whether `beta` is set must be the same in every lane.
    """

    name: ClassVar[str]
    per_agent: ClassVar[type]  # the per-agent class whose rule the lanes follow (and its settings)
    numbers: ClassVar[tuple[str, ...]] = ("lr", "gamma", "epsilon")  # settings held per lane
    # True where the rule ends an episode only where it terminated and ignores what s' offers
    offers_play_no_part: ClassVar[bool] = False
    lr: np.ndarray
    gamma: np.ndarray
    epsilon: np.ndarray

    def __init__(
        self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]
    ) -> None:
        if len(seeds) != len(settings) or not len(seeds):
            raise ValueError(f"batched agent: {len(seeds)} seeds for {len(settings)} settings")
        self.n_states, self.n_actions, self.size = int(n_states), int(n_actions), len(seeds)
        defaults = settings_of(self.per_agent)
        merged = [{**defaults, **dict(s)} for s in settings]
        unknown = {k for s in settings for k in s} - set(defaults)
        if unknown:
            raise ValueError(f"the batched {self.name} agent has no setting {', '.join(sorted(unknown))}")
        for key in defaults:
            if key in self.numbers or key == "beta":
                continue
            values = {repr(m[key]) for m in merged}
            if len(values) > 1:
                raise ValueError(f"batched {self.name}: setting {key!r} differs between lanes ({', '.join(values)})")
            setattr(self, key, merged[0][key])
        if len({m.get("beta") is None for m in merged}) > 1:
            raise ValueError(f"batched {self.name}: 'beta' is set in some lanes and not in others")
        for key in self.numbers:
            setattr(self, key, np.array([float(m[key]) for m in merged]))
        betas = [m.get("beta") for m in merged]  # an agent with no `beta` setting sets its own
        self.beta: np.ndarray | None = None if betas[0] is None else np.array(betas, dtype=float)
        self.streams = LaneStreams.from_seeds(seeds, AGENT_STREAM)
        self.learning = np.ones(self.size, dtype=bool)

    @classmethod
    def supports(cls, settings: Mapping[str, Any]) -> bool:
        """Whether the batched form has these settings' rule (else the runs go per agent)."""
        return True

    def compiles(self) -> bool:
        """Whether the compiled lane loop (`gym_bridge.compiled_lanes`) may play these lanes by the
        rule the agent's registry row names (`AgentInfo.compiled`): it chooses epsilon-greedily."""
        return self.beta is None

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        """Memory of one lane's tables, in bytes (what the batch size is chosen from), with the
        lane's `settings` where they change it; here two tables of S x A numbers."""
        return 8 * n_states * n_actions * 2

    # -- settings ---------------------------------------------------------------------------------
    def set_setting(self, key: str, values: np.ndarray | float | bool) -> None:
        """Change a setting in every lane (a phase's agent settings): a number per lane, or one value."""
        if key == "learning":
            self.learning[:] = values
        elif key in self.numbers or (key == "beta" and self.beta is not None):
            getattr(self, key)[:] = values
        else:
            raise ValueError(f"batched {self.name}: setting {key!r} cannot change between phases")

    # -- choosing ---------------------------------------------------------------------------------
    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        """(n, A): the values lane `lanes[i]` gives the actions of `states[i]`."""
        raise NotImplementedError

    def act(self, lanes: np.ndarray, states: np.ndarray, mask: Mask) -> np.ndarray:
        """One action per lane among the offered ones (`mask`, n x A)."""
        beta = None if self.beta is None else self.beta[lanes]
        return lane_choice(self.streams, lanes, self.lane_values(lanes, states), mask, beta, self.epsilon[lanes])

    def action_probabilities(self, lanes: np.ndarray, states: np.ndarray, mask: Mask) -> np.ndarray:
        """(n, A): the probability `act` gives each action now."""
        beta = None if self.beta is None else self.beta[lanes]
        return lane_policy(self.lane_values(lanes, states), mask, beta, self.epsilon[lanes])

    def begin_episode(self, lanes: np.ndarray) -> None:
        """Called before these lanes' episodes begin; nothing unless the rule keeps a trace."""

    def learning_lanes(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, terminated: np.ndarray, next_mask: Mask,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Mask]:
        """A step's arrays kept to the lanes that learn now (`learning`); the same arrays where all do."""
        keep = self.learning[lanes]
        if keep.all():
            return lanes, states, actions, rewards, next_states, terminated, next_mask
        return (lanes[keep], states[keep], actions[keep], rewards[keep], next_states[keep], terminated[keep],
                None if next_mask is None else next_mask[keep])

    def learn(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, terminated: np.ndarray, next_mask: Mask,
    ) -> None:
        """Learn one step (s, a, r, s', terminated, offers at s') in each of `lanes` that learns
        now (`learning`); the episode ended there if s' terminated it or offers no action."""
        if self.offers_play_no_part:
            next_mask = None
        lanes, states, actions, rewards, next_states, terminated, next_mask = self.learning_lanes(
            lanes, states, actions, rewards, next_states, terminated, next_mask)
        if lanes.size:
            ended = terminated if next_mask is None else terminated | ~next_mask.any(axis=1)
            self.update(lanes, states, actions, rewards, next_states, ended, next_mask)

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        """The agent's rule for these lanes (all of them learning)."""
        raise NotImplementedError

    def lane(self, index: int) -> "LaneAgent":
        """One lane seen as a per-agent agent (its `values`): what a probe reads."""
        return LaneAgent(self, index)


class LaneAgent:
    """A read-only view of one lane with the per-agent `values(state)`."""

    def __init__(self, batch: BatchedAgent, index: int) -> None:
        self.batch, self.index = batch, index

    def values(self, state: int | None = None) -> np.ndarray:
        states = np.arange(self.batch.n_states) if state is None else np.array([state])
        rows = self.batch.lane_values(np.full(states.size, self.index), states)
        return rows if state is None else rows[0]
