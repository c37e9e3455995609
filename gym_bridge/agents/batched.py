"""Batched tabular agents: B agents of one kind as arrays, choosing and learning in one call.

The batched forms: Q-learning (`q`), SARSA, Q(lambda), actor-critic (`ac`), the SR, the
two-step hybrid, Dyna-Q, Dyna-AC and Dyna-SR with the last-outcome model, model-based value
iteration (`mbv`) and SR + model-based (`srmb`) planning after every step, every-visit Monte
Carlo Q (`mc`), episodic control (`ec`), valence Q (`valence`), mood (`mood`),
distributional TD (`distq`), OpAL (`opal`), the valence hybrid (`vhybrid`) and the
information-bonus bandit learner (`infobonus`). A setting a batched form lacks (`supports`:
Dyna's `successors` above 1, neuro-nav's in-place `planning = "on_change"` of MBV and SRMB)
sends the runs per agent, as do the Room agents (they read observations, not states).

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
>>> from gym_bridge.agents.batched import make_batched
>>> agents = make_batched("q", 2, 2, seeds=[0, 1], settings=[{"lr": 0.5}, {"lr": 0.1}])
>>> lanes = np.array([0, 1])
>>> agents.learn(lanes, np.array([0, 0]), np.array([1, 1]), np.array([1.0, 1.0]), np.array([1, 1]),
...              np.array([True, True]), np.ones((2, 2), bool))
>>> agents.q[:, 0, 1].tolist()
[0.5, 0.1]
"""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from ..fast import available
from ..params import check_positive_int
from ..vector.lanes import LaneStreams
from .base import AGENT_STREAM
from .mbv import PLANNING, REWARD_MODELS, check_choice
from .q_learning import check_bootstrap
from .registry import agent_settings

NEG = -np.inf


Mask = np.ndarray | None  # (n, A) bool: the actions each row's state offers; None: every action


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
        defaults = agent_settings(self.name)
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

    def learn(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, terminated: np.ndarray, next_mask: Mask,
    ) -> None:
        """Learn one step (s, a, r, s', terminated, offers at s') in each of `lanes` that learns
        now (`learning`); the episode ended there if s' terminated it or offers no action."""
        if self.offers_play_no_part:
            next_mask = None
        keep = self.learning[lanes]
        if not keep.all():
            lanes, states, actions, rewards = lanes[keep], states[keep], actions[keep], rewards[keep]
            next_states, terminated = next_states[keep], terminated[keep]
            next_mask = None if next_mask is None else next_mask[keep]
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


class BatchedQ(BatchedAgent):
    """Q-learning (`gym_bridge.agents.q_learning.QAgent`'s rule, `bootstrap` and `optimism`
    included) for B lanes: `q` is B x S x A."""

    name = "q"
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


class BatchedSarsa(BatchedAgent):
    """SARSA (`gym_bridge.agents.td.SarsaAgent`'s rule) for B lanes: the update of a step is made
    when the lane's next step is learnt; a step cut by truncation is not learnt."""

    name = "sarsa"

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        # the step waiting for its next action, per lane: state, action, reward, next state (-1: none)
        self.pending_state = np.full(self.size, -1, dtype=np.int64)
        self.pending_action = np.zeros(self.size, dtype=np.int64)
        self.pending_reward = np.zeros(self.size)
        self.pending_next = np.full(self.size, -1, dtype=np.int64)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.pending_state[lanes] = -1

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        lr, gamma = self.lr[lanes], self.gamma[lanes]
        waiting = (self.pending_state[lanes] >= 0) & (self.pending_next[lanes] == states)
        if waiting.any():
            w = lanes[waiting]
            s, a, r = self.pending_state[w], self.pending_action[w], self.pending_reward[w]
            old = self.q[w, s, a]
            target = r + gamma[waiting] * self.q[w, states[waiting], actions[waiting]]
            self.q[w, s, a] = old + lr[waiting] * (target - old)
        self.pending_state[lanes] = -1
        if ended.any():
            e = lanes[ended]
            old = self.q[e, states[ended], actions[ended]]
            self.q[e, states[ended], actions[ended]] = old + lr[ended] * (rewards[ended] - old)
        going = ~ended
        g = lanes[going]
        self.pending_state[g], self.pending_action[g] = states[going], actions[going]
        self.pending_reward[g], self.pending_next[g] = rewards[going], next_states[going]


class BatchedSR(BatchedAgent):
    """The TD successor representation (`gym_bridge.agents.sr.SRAgent`'s rule, `goal_biased` and
    `include_current` included) for B lanes: `M` is B x A x S x S, `w` is B x S."""

    name = "sr"
    numbers = ("lr", "gamma", "epsilon", "w_lr")
    w_lr: np.ndarray
    goal_biased: bool
    include_current: bool

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        n = self.n_states
        self.M = np.zeros((self.size, self.n_actions, n, n))
        if self.include_current:
            self.M[:, :, np.arange(n), np.arange(n)] = 1.0
        self.w = np.zeros((self.size, n))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        # Q(s, a) = M[a, s] . w, per lane
        return np.einsum("nas,ns->na", self.M[lanes, :, states, :], self.w[lanes])

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        n, count = self.n_states, lanes.size
        rows = np.arange(count)
        going = ~ended
        if self.goal_biased and next_mask is None and going.all():  # the usual step: M of s' by its best action
            best = np.argmax(self.lane_values(lanes, next_states), axis=1)  # first of the best, as np.argmax
            after = self.M[lanes, best, next_states]
        else:
            arrived = np.zeros((count, n))
            arrived[rows, next_states] = 1.0
            after = np.zeros((count, n)) if not self.include_current else arrived
            if going.any():
                g, gl, gs = rows[going], lanes[going], next_states[going]
                gm = offered(None if next_mask is None else next_mask[going], (g.size, self.n_actions))
                if self.goal_biased:
                    values = self.lane_values(gl, gs)
                    best = np.argmax(np.where(gm, values, NEG), axis=1)  # first of the best, as np.argmax
                    after[g] = self.M[gl, best, gs]
                else:
                    maps = self.M[gl, :, gs, :]  # (g, A, S)
                    after[g] = (maps * gm[:, :, None]).sum(axis=1) / gm.sum(axis=1)[:, None]
        gamma = self.gamma[lanes][:, None]
        if self.include_current:
            target = gamma * after
            target[rows, states] += 1.0
        else:
            target = gamma * after
            target[rows, next_states] += 1.0  # onehot(s') + gamma after, as a sum of the same two terms
        old = self.M[lanes, actions, states]
        self.M[lanes, actions, states] = old + self.lr[lanes][:, None] * (target - old)
        w_old = self.w[lanes, next_states]
        self.w[lanes, next_states] = w_old + self.w_lr[lanes] * (rewards - w_old)


class BatchedHybrid(BatchedAgent):
    """The model-based / model-free hybrid (`gym_bridge.agents.hybrid.HybridAgent`'s rule: TD(lambda)
    model-free values, learnt transition counts, perseveration) for B lanes: `q_mf` is B x S x A,
    `counts` B x S x A x S, and each lane's pairs of the episode so far are a row of `trace_*`."""

    name = "hybrid"
    numbers = ("lr", "lam", "w", "perseveration")
    lam: np.ndarray
    w: np.ndarray
    perseveration: np.ndarray

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


class BatchedQLambda(BatchedAgent):
    """Q(lambda) with accumulating traces (`gym_bridge.agents.td.QLambdaAgent`'s rule) for B
    lanes: `q` and `traces` are B x S x A."""

    name = "qlambda"
    numbers = ("lr", "gamma", "epsilon", "lam")
    lam: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.traces = np.zeros_like(self.q)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.traces[lanes] = 0.0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        self.traces[lanes, states, actions] += 1.0
        with np.errstate(invalid="ignore"):
            future = masked_max(self.q[lanes, next_states], next_mask)
        future[ended] = 0.0
        gamma = self.gamma[lanes]
        delta = rewards + gamma * future - self.q[lanes, states, actions]
        traces = self.traces[lanes]
        self.q[lanes] += (self.lr[lanes] * delta)[:, None, None] * traces
        self.traces[lanes] = traces * (gamma * self.lam[lanes])[:, None, None]


class BatchedActorCritic(BatchedAgent):
    """TD actor-critic (`gym_bridge.agents.td.ActorCriticAgent`'s rule) for B lanes: the critic
    `v` is B x S, the actor's `preferences` B x S x A, chosen by a softmax at `beta`."""

    name = "ac"
    numbers = ("lr", "gamma")

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.epsilon = np.zeros(self.size)  # preferences mean nothing outside a softmax
        self.v = np.zeros((self.size, self.n_states))
        self.preferences = np.zeros((self.size, self.n_states, self.n_actions))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.preferences[lanes, states]

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = np.where(ended, 0.0, self.v[lanes, next_states])
        delta = rewards + self.gamma[lanes] * future - self.v[lanes, states]
        step = self.lr[lanes] * delta
        self.v[lanes, states] += step
        self.preferences[lanes, states, actions] += step


class BatchedDyna(BatchedAgent):
    """Dyna (`gym_bridge.agents.dyna.Dyna`) for B lanes, before the batched agent whose rule it
    replays for: after each real step, learnt by that rule, the step is remembered as its pair's
    last outcome and `replays` remembered steps, pairs drawn uniformly among the pairs the lane
    has tried, are learnt again by the same rule. The batched form keeps the last outcome only
    (`successors = 1`, Sutton 1990); a spec with more outcomes runs per agent."""

    replays: int

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        n, a, b = self.n_states, self.n_actions, self.size
        self.replays = int(self.replays)
        self.model_reward = np.zeros((b, n, a))
        self.model_next = np.zeros((b, n, a), dtype=np.int64)
        self.model_ended = np.zeros((b, n, a), dtype=bool)
        self.model_offered: np.ndarray | None = None  # (B, S, A, A) once a task masks its actions
        self.tried = np.zeros((b, n * a), dtype=bool)
        self.tried_pairs = np.zeros((b, n * a), dtype=np.int64)  # each lane's tried pairs, in order
        self.tried_count = np.zeros(b, dtype=np.int64)

    @classmethod
    def supports(cls, settings: Mapping[str, Any]) -> bool:
        return int(settings.get("successors", 1)) == 1

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        super().update(lanes, states, actions, rewards, next_states, ended, next_mask)
        self.remember(lanes, states, actions, rewards, next_states, ended, next_mask)
        if not self.replays:
            return
        u = self.streams.uniform(lanes, self.replays)
        count = self.tried_count[lanes]
        n_actions = self.n_actions
        for k in range(self.replays):
            pick = np.minimum((u[:, k] * count).astype(np.int64), count - 1)
            pairs = self.tried_pairs[lanes, pick]
            s, a = pairs // n_actions, pairs % n_actions
            offered = None if self.model_offered is None else self.model_offered[lanes, s, a]
            super().update(lanes, s, a, self.model_reward[lanes, s, a], self.model_next[lanes, s, a],
                           self.model_ended[lanes, s, a], offered)

    def remember(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        """Each lane's step as its pair's last outcome; a pair tried for the first time joins the lane's list."""
        self.model_reward[lanes, states, actions] = rewards
        self.model_next[lanes, states, actions] = next_states
        self.model_ended[lanes, states, actions] = ended
        if next_mask is not None:
            if self.model_offered is None:
                self.model_offered = np.ones((self.size, self.n_states, self.n_actions, self.n_actions), dtype=bool)
            self.model_offered[lanes, states, actions] = next_mask
        flat = states * self.n_actions + actions
        new = ~self.tried[lanes, flat]
        if new.any():
            fresh = lanes[new]
            self.tried[fresh, flat[new]] = True
            self.tried_pairs[fresh, self.tried_count[fresh]] = flat[new]
            self.tried_count[fresh] += 1


class BatchedDynaQ(BatchedDyna, BatchedQ):
    """Dyna-Q (`gym_bridge.agents.dyna.DynaQAgent`) for B lanes."""

    name = "dyna"


class BatchedDynaAC(BatchedDyna, BatchedActorCritic):
    """Dyna-AC (`gym_bridge.agents.dyna.DynaACAgent`) for B lanes."""

    name = "dynaac"


class BatchedDynaSR(BatchedDyna, BatchedSR):
    """Dyna-SR (`gym_bridge.agents.sr_variants.DynaSRAgent`, Russek et al. 2017) for B lanes."""

    name = "dynasr"


class BatchedMBV(BatchedAgent):
    """Model-based value iteration (`gym_bridge.agents.mbv.MBVAgent`'s rule, `planning =
    "every_step"`) for B lanes: the model and `q` are B x S x A (the last-outcome model,
    `model_lr = 1`, as the arrival state of each pair, `model_next`; any other `model_lr`, or
    the count model, as B x S x A x S `transitions`), `w` and `ends` B x S. Each step plans
    `sweeps` synchronous sweeps for every lane that learns. neuro-nav's in-place schedule
    (`planning = "on_change"`) runs per agent.

    With the last-outcome model a sweep recomputes only the pairs whose outcome's worth
    changed since the pair was last computed (the others would get the same number again):
    the pairs arriving at a state whose value moved in the sweep before, or whose reward or
    end the step changed (`dirty`, carried to the next step when `sweeps` ran out first), the
    pair just tried among them. Each state's list of the tried pairs that last arrived there
    (`arrivals`) finds them. The numbers are those of every pair swept every time
    (`plan_full`, the rule's plain form), to the bit but the sign of a zero."""

    # MBVAgent keeps whether arriving *terminated* the episode (not whether s' offers nothing)
    # and plans over every action: the offers at s' play no part
    offers_play_no_part = True

    name = "mbv"
    numbers = ("lr", "gamma", "epsilon", "optimism")
    optimism: np.ndarray
    model_lr: float | None
    sweeps: int
    reward_model: str
    planning: str
    ignore_ends: bool
    arrivals_limit: int = 1 << 26  # bytes of arrival lists; past it a sweep finds its pairs by a gather
    # sweep compiled where numba is installed (the `fast` extra), the same numbers: None where the
    # lanes hold `compiled_from` states or more (below, numpy's sweeps cost less than loading numba)
    compiled: bool | None = None
    compiled_from: ClassVar[int] = 2048
    # below this many pairs in all lanes every pair is swept each time (`plan_full`): a few numpy
    # calls on the whole table cost less than the incremental plan's many on a part of it
    incremental_from: ClassVar[int] = 2048

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        check_positive_int("sweeps", self.sweeps)
        check_choice("reward_model", self.reward_model, REWARD_MODELS)
        check_choice("planning", self.planning, PLANNING)
        if self.model_lr is not None and not 0 < self.model_lr <= 1:
            raise ValueError(f"model_lr: expected a number in (0, 1] or None (average), got {self.model_lr!r}")
        if self.planning != "every_step":
            raise ValueError("batched mbv: only planning = 'every_step' has a batched form")
        b, n, a = self.size, self.n_states, self.n_actions
        self.sweeps = int(self.sweeps)
        self.last_outcome = self.model_lr == 1.0
        self.model_next = np.zeros((b, n, a), dtype=np.int64)  # the last outcome of each pair
        self.transitions: np.ndarray | None = None if self.last_outcome else np.zeros((b, n, a, n))
        self.counts: np.ndarray | None = np.zeros((b, n, a, n)) if self.model_lr is None else None
        self.w = np.zeros((b, n))
        self.rewards = np.zeros((b, n, a))
        self.tried = np.zeros((b, n, a), dtype=bool)
        self.ends = np.zeros((b, n), dtype=bool)
        self.q = np.zeros((b, n, a))
        # The incremental plan of the last-outcome model, on flat indices (state lane * S + s,
        # pair lane * S * A + s * A + a): each state's value V as a sweep reads it (0 where
        # arriving ended the episode) and its worth to a pair arriving there (w + gamma V with
        # state rewards, gamma V with pair rewards), the states whose worth moved since their
        # arriving pairs were computed, and each state's tried pairs that last arrived there
        # (`arrivals[state, :arrival_count[state]]`; `slot`: a pair's place in its list, -1
        # untried). `arrivals` None: the lists outgrew `arrivals_limit`.
        self.v = np.zeros(b * n)
        self.worth = np.zeros(b * n)
        self.dirty = np.zeros(b * n, dtype=bool)
        self.arrivals: np.ndarray | None = np.zeros((b * n, 4), dtype=np.int64) if self.last_outcome else None
        self.arrival_count = np.zeros(b * n, dtype=np.int64)
        self.slot = np.full(b * n * a, -1, dtype=np.int64)
        self.state_lane = np.repeat(np.arange(b), n)  # the lane of each flat state
        self.incremental = self.last_outcome and b * n * a >= self.incremental_from  # (set before the first step)

    @classmethod
    def supports(cls, settings: Mapping[str, Any]) -> bool:
        return settings.get("planning", "every_step") == "every_step"

    def set_setting(self, key: str, values: np.ndarray | float | bool) -> None:
        super().set_setting(key, values)
        if key in ("gamma", "optimism") and self.incremental:  # every planned value reads them: sweep every pair
            every = np.arange(self.size * self.n_states)
            self.revalue(every)
            self.dirty[:] = True

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def revalue(self, states: np.ndarray) -> np.ndarray:
        """Set V and the worth of these flat states from Q (`MBVAgent._next_values`: the best of
        Q(s, .), optimism-weighted with the worst, 0 where arriving ended the episode) and
        return whether each V moved."""
        rows = self.q.reshape(-1, self.n_actions)[states]
        best = row_extreme(rows, np.maximum)
        lanes = self.state_lane[states]
        optimism = self.optimism[lanes]
        if not np.all(optimism == 1.0):
            mixed = optimism * best + (1 - optimism) * row_extreme(rows, np.minimum)
            best = np.where(optimism == 1.0, best, mixed)
        if not self.ignore_ends:
            best[self.ends.reshape(-1)[states]] = 0.0
        moved = best != self.v[states]
        self.v[states] = best
        worth = self.gamma[lanes] * best
        self.worth[states] = worth if self.reward_model == "pair" else self.w.reshape(-1)[states] + worth
        return moved

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        if self.last_outcome:
            if self.incremental:
                self.relink(lanes, states * self.n_actions + actions, next_states)
            self.model_next[lanes, states, actions] = next_states
        else:
            assert self.transitions is not None
            outcome = np.zeros((lanes.size, self.n_states))
            outcome[np.arange(lanes.size), next_states] = 1.0
            if self.counts is not None:
                self.counts[lanes, states, actions, next_states] += 1
                row = self.counts[lanes, states, actions]
                self.transitions[lanes, states, actions] = row / row.sum(axis=1, keepdims=True)
            else:
                old = self.transitions[lanes, states, actions]
                first = ~self.tried[lanes, states, actions]
                assert self.model_lr is not None
                new = old + self.model_lr * (outcome - old)
                new[first] = outcome[first]
                self.transitions[lanes, states, actions] = new
        self.tried[lanes, states, actions] = True
        self.ends[lanes, next_states] = ended
        if self.reward_model == "state":
            old_w = self.w[lanes, next_states]
            self.w[lanes, next_states] = old_w + self.lr[lanes] * (rewards - old_w)
        else:
            old_r = self.rewards[lanes, states, actions]
            self.rewards[lanes, states, actions] = old_r + self.lr[lanes] * (rewards - old_r)
        if self.incremental:  # s' may end episodes now, its reward moved, the pair tried arrives there
            arrived = lanes * self.n_states + next_states
            self.revalue(arrived)
            self.dirty[arrived] = True
        self.plan(lanes)

    def relink(self, lanes: np.ndarray, pairs: np.ndarray, next_states: np.ndarray) -> None:
        """Move each lane's pair `pairs[i]` (s * A + a) from the arrival list of its last outcome,
        if it was tried, to that of `next_states[i]` (one pair a lane: each list is one lane's)."""
        if self.arrivals is None:
            return
        n, a = self.n_states, self.n_actions
        flat = lanes * (n * a) + pairs
        place = self.slot[flat]
        was = place >= 0
        if was.any():  # out of its old list: the list's last pair takes its place
            wf, wj = flat[was], place[was]
            old = lanes[was] * n + self.model_next.reshape(-1)[wf]
            last = self.arrival_count[old] - 1
            moved = self.arrivals[old, last]
            self.arrivals[old, wj] = moved
            self.slot[moved] = wj
            self.arrival_count[old] = last
        arrived = lanes * n + next_states
        count = self.arrival_count[arrived]
        width = self.arrivals.shape[1]
        if count.max() >= width:  # a longer list: room for twice as many pairs, or no lists past the limit
            if 2 * self.arrivals.nbytes > self.arrivals_limit:
                self.arrivals = None
                return
            self.arrivals = np.concatenate([self.arrivals, np.zeros_like(self.arrivals)], axis=1)
        self.arrivals[arrived, count] = flat
        self.slot[flat] = count
        self.arrival_count[arrived] = count + 1

    def arriving(self, states: np.ndarray) -> np.ndarray:
        """The flat tried pairs whose last outcome is one of these flat states."""
        if self.arrivals is not None:
            count = self.arrival_count[states]
            width = int(count.max())
            return self.arrivals[states, :width][np.arange(width) < count[:, None]]
        n, pairs = self.n_states, self.n_states * self.n_actions  # the lists outgrew their limit: a gather
        lanes = np.unique(states // n)
        marked = np.zeros((lanes.size, n), dtype=bool)
        marked[np.searchsorted(lanes, states // n), states % n] = True
        nxt = self.model_next.reshape(self.size, pairs)[lanes]
        hit = np.take_along_axis(marked, nxt, axis=1) & self.tried.reshape(self.size, pairs)[lanes]
        at, found = np.nonzero(hit)
        return lanes[at] * pairs + found

    def plan(self, lanes: np.ndarray) -> None:
        """`sweeps` synchronous sweeps over each lane's tried pairs (`MBVAgent.plan`); a sweep
        that changes no value ends the planning (the later ones would change nothing either).
        With the last-outcome model only the pairs whose outcome's worth moved are swept."""
        if not self.incremental:
            self.plan_full(lanes)
            return
        n, a = self.n_states, self.n_actions
        dirty = self.dirty.reshape(self.size, n)[lanes]
        at, fs = np.nonzero(dirty)
        frontier = lanes[at] * n + fs
        self.dirty[frontier] = False
        q = self.q.reshape(-1)
        nxt = self.model_next.reshape(-1)
        pair_rewards = self.rewards.reshape(-1) if self.reward_model == "pair" else None
        mark = np.zeros(self.size * n, dtype=bool)
        compiled = self.size * n >= self.compiled_from if self.compiled is None else self.compiled
        if compiled and self.arrivals is not None and available():
            from . import _mbv_kernel  # the same sweeps, compiled

            buffer = np.empty(self.size * n, dtype=np.int64)
            buffer[:frontier.size] = frontier
            kernel: Any = _mbv_kernel.sweeps  # a numba dispatcher, typed by the arrays it gets
            kernel(buffer, frontier.size, self.sweeps, q, self.worth, self.v, self.w.reshape(-1),
                   self.ends.reshape(-1), self.gamma, self.optimism, self.state_lane, nxt, self.arrivals,
                   self.arrival_count, q if pair_rewards is None else pair_rewards, pair_rewards is not None,
                   self.ignore_ends, n, a, mark, self.dirty)
            return
        for _ in range(self.sweeps):
            if not frontier.size:
                break
            pairs = self.arriving(frontier)
            new = self.worth[nxt[pairs] + pairs // (n * a) * n]
            if pair_rewards is not None:
                new += pair_rewards[pairs]
            moved = new != q[pairs]
            pairs = pairs[moved]
            q[pairs] = new[moved]
            mark[pairs // a] = True  # the states whose row of Q moved, once each
            rows = np.flatnonzero(mark)
            mark[rows] = False
            frontier = rows[self.revalue(rows)]
        self.dirty[frontier] = True  # sweeps ran out: their arriving pairs are swept at the next step

    def plan_full(self, lanes: np.ndarray) -> None:
        """`plan` sweeping every tried pair of the lanes each time (the rule as written; the
        dense models' plan)."""
        q = self.q[lanes]
        count, n, a = q.shape
        tried = self.tried[lanes].astype(float)  # untried pairs keep their 0: planned * 0
        rewards = self.rewards[lanes] if self.reward_model == "pair" else None
        gamma = self.gamma[lanes][:, None]
        optimism = self.optimism[lanes][:, None]
        pessimists = not bool(np.all(optimism == 1.0))
        ends = None if self.ignore_ends else self.ends[lanes]
        arrival = self.w[lanes] if self.reward_model == "state" else None
        if self.last_outcome:  # a one-hot model row: T @ worth is the worth of the pair's last outcome
            where = (self.model_next[lanes] + (np.arange(count) * n)[:, None, None]).ravel()
        else:
            assert self.transitions is not None
            transitions = self.transitions[lanes].reshape(count, n * a, n)
        for _ in range(self.sweeps):
            best = row_extreme(q, np.maximum)
            if pessimists:
                mixed = optimism * best + (1 - optimism) * row_extreme(q, np.minimum)
                best = np.where(optimism == 1.0, best, mixed)
            if ends is not None:
                best[ends] = 0.0
            worth = gamma * best if arrival is None else arrival + gamma * best  # (n, S): arriving at each state
            if self.last_outcome:
                planned = worth.ravel()[where].reshape(count, n, a)
            else:
                planned = (transitions @ worth[:, :, None]).reshape(count, n, a)
            if rewards is not None:
                planned += rewards
            new = np.multiply(planned, tried, out=planned)
            if np.array_equal(new, q):
                break
            q = new
        self.q[lanes] = q


def row_extreme(values: np.ndarray, pick: np.ufunc) -> np.ndarray:
    """`values.max(axis=-1)` (pick `np.maximum`) or `.min(axis=-1)` (`np.minimum`), as a few
    elementwise calls over the action columns: numpy's reduction over a short last axis loops
    row by row (14 times slower on a 40 x 121 x 4 table)."""
    out = values[..., 0].copy()
    for k in range(1, values.shape[-1]):
        pick(out, values[..., k], out=out)
    return out


class BatchedEpisodes(BatchedAgent):
    """Agents that learn once per finished episode (`gym_bridge.agents.mc.EpisodeAgent`) for B
    lanes: each lane's steps of the episode so far are a row of `trace_*`; when a lane's
    episode terminates its returns are computed and its steps backed up in order."""

    # the per-agent forms back up when the episode *terminated* (a state that offers nothing
    # without ending it is learnt on): the offers play no part
    offers_play_no_part = True

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.q = np.zeros((self.size, self.n_states, self.n_actions))
        self.trace_state = np.zeros((self.size, 8), dtype=np.int64)
        self.trace_action = np.zeros((self.size, 8), dtype=np.int64)
        self.trace_reward = np.zeros((self.size, 8))
        self.trace_length = np.zeros(self.size, dtype=np.int64)

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.q[lanes, states]

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.trace_length[lanes] = 0

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        length = self.trace_length[lanes]
        if length.max() >= self.trace_state.shape[1]:  # longer episodes: room for twice as many steps
            width = self.trace_state.shape[1]
            self.trace_state = np.concatenate([self.trace_state, np.zeros((self.size, width), np.int64)], axis=1)
            self.trace_action = np.concatenate([self.trace_action, np.zeros((self.size, width), np.int64)], axis=1)
            self.trace_reward = np.concatenate([self.trace_reward, np.zeros((self.size, width))], axis=1)
        self.trace_state[lanes, length] = states
        self.trace_action[lanes, length] = actions
        self.trace_reward[lanes, length] = rewards
        self.trace_length[lanes] = length + 1
        if not ended.any():
            return
        done = lanes[ended]
        length = self.trace_length[done]
        longest = int(length.max())
        steps_s, steps_a = self.trace_state[done, :longest], self.trace_action[done, :longest]
        steps_r = self.trace_reward[done, :longest]
        returns = np.zeros((done.size, longest))
        running = np.zeros(done.size)
        gamma = self.gamma[done]
        for t in range(longest - 1, -1, -1):  # G_t = r_t + gamma G_{t+1}, from each lane's last step back
            inside = t < length
            running = np.where(inside, steps_r[:, t] + gamma * running, 0.0)
            returns[:, t] = running
        self.backup(done, length, steps_s, steps_a, returns)
        self.trace_length[done] = 0

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        """Back up each lane's steps t < length[i] (rows of `states`, `actions`, `returns`)."""
        raise NotImplementedError


class BatchedMonteCarlo(BatchedEpisodes):
    """Every-visit Monte Carlo Q (`gym_bridge.agents.mc.MonteCarloQAgent`) for B lanes: at a
    lane's episode end, Q(s_t, a_t) += lr (G_t - Q(s_t, a_t)) for every step t in order.

    The K backups of a pair in one episode, in order, are one sum (to rounding):

        Q <- (1 - lr)^K Q + sum_k lr (1 - lr)^(K - 1 - k) G_k       (k = 0 the earliest visit)

    so the steps of every lane whose episode ended are backed up in a few array calls."""

    name = "mc"

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        inside = np.arange(states.shape[1])[None, :] < length[:, None]
        pairs = self.n_states * self.n_actions
        flat = (lanes[:, None] * pairs + states * self.n_actions + actions)[inside]  # rows in order of t
        order = np.argsort(flat, kind="stable")  # a pair's visits together, still in order of t
        flat, g = flat[order], returns[inside][order]
        lr = np.broadcast_to(self.lr[lanes][:, None], states.shape)[inside][order]
        first = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
        visits = np.diff(np.r_[first, flat.size])
        later = np.repeat(first + visits, visits) - 1 - np.arange(flat.size)  # the pair's visits after this one
        total = np.add.reduceat(lr * (1 - lr) ** later * g, first)
        where = np.unravel_index(flat[first], self.q.shape)
        rate = lr[first]
        self.q[where] = (1 - rate) ** visits * self.q[where] + total


class BatchedEpisodicControl(BatchedEpisodes):
    """Episodic control (`gym_bridge.agents.mc.EpisodicControlAgent`) for B lanes: at a lane's
    episode end, Q(s_t, a_t) = max(Q(s_t, a_t), G_t) (the order does not matter)."""

    name = "ec"
    numbers = ("gamma", "epsilon")

    def backup(
        self, lanes: np.ndarray, length: np.ndarray, states: np.ndarray, actions: np.ndarray, returns: np.ndarray
    ) -> None:
        inside = np.arange(states.shape[1])[None, :] < length[:, None]
        rows = np.broadcast_to(lanes[:, None], states.shape)
        np.maximum.at(self.q, (rows[inside], states[inside], actions[inside]), returns[inside])


class BatchedValence(BatchedAgent):
    """Valence Q (`gym_bridge.agents.valence.ValenceQAgent`'s rule: a rate per sign of the
    prediction error, accumulating traces) for B lanes: `q` and `traces` are B x S x A. While
    every lane's `lam` is 0 the traces stay zero and only the pair learnt changes."""

    name = "valence"
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


class BatchedDistributional(BatchedAgent):
    """Distributional TD (`gym_bridge.agents.distributional.DistributionalQAgent`'s rule) for B
    lanes: the cells' values are B x S x A x C (`cells`), their rates `lr_pos`, `lr_neg` and
    optimism `tau` B x C. With `rates = "random"` each lane's rates are drawn from its own
    stream when it is made (uniform in [lr / 20, lr], as the per-agent form draws them from
    its generator), so they are the lane's whatever its batch."""

    name = "distq"
    cells: Any  # a count as a setting; once the agent is made, the cells' values
    mirror: bool
    rates: str

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


class BatchedSRMB(BatchedAgent):
    """SR + model-based (`gym_bridge.agents.sr_variants.SRMBAgent`) for B lanes: a batched SR
    (`sr`, w learnt at `lr`) and a batched MBV (`mb`, last-outcome model) learn from the same
    steps, and each lane chooses by mix * Q_MB + (1 - mix) * Q_SR."""

    name = "srmb"
    numbers = ("lr", "gamma", "epsilon", "mix")
    mix: np.ndarray
    planning: str
    ignore_ends: bool

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
        keep = self.learning[lanes]
        if not keep.all():
            lanes, states, actions, rewards = lanes[keep], states[keep], actions[keep], rewards[keep]
            next_states, terminated = next_states[keep], terminated[keep]
            next_mask = None if next_mask is None else next_mask[keep]
        if lanes.size:
            self.sr.learn(lanes, states, actions, rewards, next_states, terminated, next_mask)
            self.mb.learn(lanes, states, actions, rewards, next_states, terminated, next_mask)


class BatchedOpAL(BatchedAgent):
    """OpAL (`gym_bridge.agents.opal.OpALAgent`'s rule: a critic and Go and NoGo actors learning
    from its error with opposite signs) for B lanes: `v` is B x S, `go` and `nogo` B x S x A. The
    softmax has temperature 1 over beta_g * G - beta_n * N."""

    name = "opal"
    numbers = ("lr", "lr_g", "lr_n", "beta_g", "beta_n", "gamma")
    lr_g: np.ndarray
    lr_n: np.ndarray
    beta_g: np.ndarray
    beta_n: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.beta, self.epsilon = np.ones(self.size), np.zeros(self.size)  # the actors' weights are the temperatures
        self.v = np.zeros((self.size, self.n_states))
        self.go = np.ones((self.size, self.n_states, self.n_actions))
        self.nogo = np.ones((self.size, self.n_states, self.n_actions))

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        return self.beta_g[lanes, None] * self.go[lanes, states] - self.beta_n[lanes, None] * self.nogo[lanes, states]

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        future = np.where(ended, 0.0, self.v[lanes, next_states])
        delta = rewards + self.gamma[lanes] * future - self.v[lanes, states]
        self.v[lanes, states] += self.lr[lanes] * delta
        go, nogo = self.go[lanes, states, actions], self.nogo[lanes, states, actions]
        self.go[lanes, states, actions] = np.maximum(0.0, go * (1.0 + self.lr_g[lanes] * delta))
        self.nogo[lanes, states, actions] = np.maximum(0.0, nogo * (1.0 - self.lr_n[lanes] * delta))


class BatchedValenceHybrid(BatchedAgent):
    """The valence hybrid (`gym_bridge.agents.valence.ValenceHybridAgent`'s rule: valence Q with
    traces as the model-free learner, a transition model learnt by a delta rule, model-based
    values of the pair just tried) for B lanes: `model_free` is a `BatchedValence`,
    `transitions` B x S x A x S, `q_mb` B x S x A."""

    name = "vhybrid"
    numbers = ("lr_mb", "w", "lr_pos", "lr_neg", "gamma", "lam")
    lr_mb: np.ndarray
    w: np.ndarray
    passed_on = ("lr_pos", "lr_neg", "gamma", "lam", "reset_traces", "beta")  # the model-free learner's

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        self.epsilon = np.zeros(self.size)  # always a softmax
        defaults = agent_settings(self.name)
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
        keep = self.learning[lanes]
        if not keep.all():
            lanes, states, actions, rewards = lanes[keep], states[keep], actions[keep], rewards[keep]
            next_states, terminated = next_states[keep], terminated[keep]
            next_mask = None if next_mask is None else next_mask[keep]
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


class BatchedInfoBonus(BatchedAgent):
    """The information-bonus bandit learner (`gym_bridge.agents.bandit.InfoBonusAgent`'s rule:
    Kalman means of the arms within a game, a bonus growing with the choices left) for B lanes:
    `means` and `variances` are B x A, the choices-left tallies B x S, and each lane's states of
    the episode so far a row of `visited`."""

    name = "infobonus"
    numbers = ("epsilon", "info_bonus", "prior_mean", "prior_sd", "noise")
    info_bonus: np.ndarray
    prior_mean: np.ndarray
    prior_sd: np.ndarray
    noise: np.ndarray

    def __init__(self, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]):
        super().__init__(n_states, n_actions, seeds, settings)
        for name in ("prior_sd", "noise"):
            values = getattr(self, name)
            if not np.all(np.isfinite(values) & (values > 0)):
                raise ValueError(f"{name}: expected a positive number, got {values.tolist()!r}")
        self.means = np.empty((self.size, self.n_actions))
        self.variances = np.empty((self.size, self.n_actions))
        self.left_sum = np.zeros((self.size, self.n_states))
        self.left_count = np.zeros((self.size, self.n_states))
        self.visited = np.zeros((self.size, 8), dtype=np.int64)
        self.visited_length = np.zeros(self.size, dtype=np.int64)
        self.begin_episode(np.arange(self.size))

    def begin_episode(self, lanes: np.ndarray) -> None:
        self.means[lanes] = self.prior_mean[lanes, None]
        self.variances[lanes] = (self.prior_sd[lanes] ** 2)[:, None]
        self.visited_length[lanes] = 0

    def lane_values(self, lanes: np.ndarray, states: np.ndarray) -> np.ndarray:
        count = self.left_count[lanes, states]
        left = np.divide(self.left_sum[lanes, states], count, out=np.ones(lanes.size), where=count > 0)
        weight = self.info_bonus[lanes] * np.log(np.maximum(left, 1.0))
        return self.means[lanes] + weight[:, None] * np.sqrt(self.variances[lanes])

    def update(
        self, lanes: np.ndarray, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
        next_states: np.ndarray, ended: np.ndarray, next_mask: Mask,
    ) -> None:
        v = self.variances[lanes, actions]
        k = v / (v + self.noise[lanes] ** 2)
        means = self.means[lanes, actions]
        self.means[lanes, actions] = means + k * (rewards - means)
        self.variances[lanes, actions] = (1 - k) * v
        length = self.visited_length[lanes]
        if length.max() >= self.visited.shape[1]:  # longer games: room for twice as many states
            self.visited = np.concatenate([self.visited, np.zeros_like(self.visited)], axis=1)
        self.visited[lanes, length] = states
        length = self.visited_length[lanes] = length + 1
        if ended.any():  # each state of the game gets the number of choices made from it on
            done, n = lanes[ended], length[ended]
            positions = np.arange(self.visited.shape[1])
            made = positions[None, :] < n[:, None]
            rows = np.broadcast_to(done[:, None], made.shape)[made]
            cells = self.visited[done][made]
            np.add.at(self.left_sum, (rows, cells), (n[:, None] - positions[None, :])[made].astype(float))
            np.add.at(self.left_count, (rows, cells), 1.0)


BATCHED: dict[str, type[BatchedAgent]] = {
    cls.name: cls
    for cls in (BatchedQ, BatchedSarsa, BatchedQLambda, BatchedActorCritic, BatchedSR, BatchedHybrid,
                BatchedDynaQ, BatchedDynaAC, BatchedDynaSR, BatchedMBV,
                BatchedMonteCarlo, BatchedEpisodicControl, BatchedValence, BatchedMood, BatchedDistributional,
                BatchedSRMB, BatchedOpAL, BatchedValenceHybrid, BatchedInfoBonus)
}


def has_batched_form(name: str) -> bool:
    """Whether the agent `name` has a batched form (`make_batched`)."""
    return name in BATCHED


def batched_bytes(name: str, n_states: int, n_actions: int, settings: Mapping[str, Any] | None = None) -> int:
    """Memory of one lane's tables, in bytes (what the batch size is chosen from), with the
    lane's `settings` where they change it (MBV's model, the distributional cells)."""
    settings = {} if settings is None else settings
    pairs = n_states * n_actions
    if name in ("mbv", "srmb"):
        dense = name == "mbv" and settings.get("model_lr", 1.0) != 1.0
        model = 8 * (4 * pairs + 2 * n_states) + (16 * pairs * n_states if dense else 0)
        if name == "mbv" and not dense:  # the incremental plan: V, worth, arrival lists, places in them
            model += 8 * (pairs + 9 * n_states)
        return model + (batched_bytes("sr", n_states, n_actions) if name == "srmb" else 0)
    if name == "distq":
        return 8 * pairs * (int(settings.get("cells", 16)) + 1)
    if name == "sr":
        return 8 * (n_actions * n_states * n_states + n_states)
    if name == "hybrid":
        return 8 * (n_states * n_actions * n_states + 2 * n_states * n_actions)
    if name == "dynasr":
        return 8 * (n_actions * n_states * n_states + n_states + 6 * n_states * n_actions)
    return 8 * n_states * n_actions * 2


def make_batched(
    name: str, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]
) -> BatchedAgent:
    """B agents `name` as one batched agent; one lane per seed, with that lane's settings.

    Parameters
    ----------
    name : str
        An agent with a batched form (`BATCHED`: q, sarsa, qlambda, ac, sr, hybrid, dyna, dynaac,
        dynasr, mbv, mc, ec, valence, mood, distq, srmb, opal, vhybrid, infobonus).
    n_states, n_actions : int
        The task's sizes.
    seeds : sequence of int
        The lanes' seeds.
    settings : sequence of mapping
        The lanes' settings (defaults fill the rest).

    Returns
    -------
    BatchedAgent

    Examples
    --------
    >>> from gym_bridge.agents.batched import make_batched
    >>> make_batched("sarsa", 4, 2, seeds=[0, 1, 2], settings=[{}, {}, {"lr": 0.5}]).lr.tolist()
    [0.1, 0.1, 0.5]
    """
    if name not in BATCHED:
        raise ValueError(f"agent {name!r} has no batched form (those that do: {', '.join(BATCHED)})")
    return BATCHED[name](n_states, n_actions, seeds, settings)
