"""Model-based value iteration (MBV): learn a transition and reward model, plan by sweeps.

Why: with a learnt model the agent re-plans its whole value function after every step,
the upper bound of what replay can do. Acts on the state index.

The reward is learnt per state arrived at (Russek et al. 2017's R(s'), neuro-nav's MBV), so a
reward seen once from one side is known from every side; `reward_model = "pair"` learns it per
(state, action) instead, for tasks whose reward depends on how a state is reached. Planning
is `sweeps` synchronous value-iteration sweeps after every step (`planning = "every_step"`,
close to planning to convergence), or neuro-nav's cheaper schedule (`planning = "on_change"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from ..fast import available
from ..params import check_positive_int
from .base import LearningAgent, TableAgent
from .batched import BatchedAgent, Mask, compile_kernel

REWARD_MODELS = ("state", "pair")
PLANNING = ("every_step", "on_change")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


@dataclass(eq=False, kw_only=True)
class MBVAgent(TableAgent, LearningAgent):
    """Value iteration on a learnt transition and reward model.

    After each step (s, a, r, s')::

        T(s, a, .) <- T(s, a, .) + model_lr * (onehot(s') - T(s, a, .))   (first visit: onehot(s'))
        end(s')    <- whether arriving at s' ended the episode (the last arrival's)
        w(s')      <- w(s') + lr * (r - w(s'))                           (reward_model "state")
        Q(s, a)    <- sum_s'' T(s, a, s'') (w(s'') + gamma V(s''))        over tried pairs

    or, with `reward_model = "pair"`, R(s, a) <- R(s, a) + lr * (r - R(s, a)) and Q(s, a) <-
    R(s, a) + gamma sum_s'' T(s, a, s'') V(s''). V(s'') = 0 where arriving ended the episode
    last time, else optimism * max_a Q(s'', a) + (1 - optimism) * min_a Q(s'', a): `optimism =
    1` plans for the best next choice, lower values for the worst (Zorowitz et al. 2020's
    anxious agent, neuro-nav's `w_value`). With `ignore_ends` (neuro-nav's MBV, whose model has
    no episode ends) V(s'') is always the second form: a state that ends the episode is worth
    what the actions tried from it before are worth (0 if none was).

    When: `planning = "every_step"` runs `sweeps` synchronous sweeps (every Q from the last
    sweep's values) after every step. `planning = "on_change"` is neuro-nav's MBV schedule,
    with in-place sweeps (pairs in order of state, then action, each using the values already
    updated): when a pair's model row changes, every Q is set to 0 and `sweeps` sweeps re-plan
    from the model alone (before the reward of this step is learnt); when a reward is better
    than predicted, `sweeps` sweeps; then one sweep, every step.

    Parameters
    ----------
    model_lr : float or None
        Learning rate of the transition model. 1 keeps the last outcome of each (s, a), as
        neuro-nav's MBV does, so a wall that appears is in the model at once; in (0, 1) recent
        outcomes weigh more (the recency of rewardGym's hybrid); None averages every outcome
        seen (a count model, right for a stationary stochastic task, slow to notice a change).
    sweeps : int
        Value-iteration sweeps after each step (`every_step`), or on a change (`on_change`).
    optimism : float
        Weight of the best next action against the worst; 1 plans for the best.
    reward_model : {"state", "pair"}
        Learn the reward of arriving at each state (default) or of each (state, action).
    planning : {"every_step", "on_change"}
        `sweeps` synchronous sweeps after every step, or neuro-nav's schedule (see above).
    ignore_ends : bool
        Plan on past a state where the episode ended, as neuro-nav's MBV does (False: its value
        is 0, the episode's end).

    Examples
    --------
    >>> agent = MBVAgent(3, 2, seed=0, lr=0.5, gamma=0.9)
    >>> agent.learn(1, 0, 1.0, 2, True, [0, 1])  # arriving at 2 pays 1 and ends
    >>> agent.learn(0, 1, 0.0, 1, False, [0, 1])
    >>> agent.w.tolist(), agent.values(0).tolist()
    ([0.0, 0.0, 0.5], [0.0, 0.45])
    """

    model_lr: float | None = 1.0
    sweeps: int = 10
    optimism: float = 1.0
    reward_model: str = "state"
    planning: str = "every_step"
    ignore_ends: bool = False
    fixed: ClassVar[frozenset[str]] = frozenset({"reward_model"})  # which table holds the rewards

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int("sweeps", self.sweeps)
        check_choice("reward_model", self.reward_model, REWARD_MODELS)
        check_choice("planning", self.planning, PLANNING)
        if self.model_lr is not None and not 0 < self.model_lr <= 1:
            raise ValueError(f"model_lr: expected a number in (0, 1] or None (average), got {self.model_lr!r}")
        n_states, n_actions = self.n_states, self.n_actions
        self.counts = np.zeros((n_states, n_actions, n_states))  # outcomes seen (the average model)
        self.transitions = np.zeros((n_states, n_actions, n_states))
        self.w = np.zeros(n_states)  # reward of arriving at each state (reward_model "state")
        self.rewards = np.zeros((n_states, n_actions))  # reward of each pair (reward_model "pair")
        self.tried = np.zeros((n_states, n_actions), dtype=bool)
        self.ends = np.zeros(n_states, dtype=bool)  # arriving here ended the episode, last time
        self.q = np.zeros((n_states, n_actions))
        self._outcomes: list[tuple[int, int, list[int], list[float]]] | None = None  # plan_in_place's pairs

    def learn(
        self, state: int, action: int, reward: float, next_state: int, terminated: bool, next_available: Sequence[int]
    ) -> None:
        if not self.learning:
            return
        before = self.transitions[state, action].copy()
        outcome = np.zeros(self.transitions.shape[2])
        outcome[next_state] = 1.0
        if self.model_lr is None:
            self.counts[state, action, next_state] += 1
            row = self.counts[state, action]
            self.transitions[state, action] = row / row.sum()
        elif not self.tried[state, action]:
            self.transitions[state, action] = outcome
        else:
            self.transitions[state, action] += self.model_lr * (outcome - self.transitions[state, action])
        self.tried[state, action] = True
        self.ends[next_state] = terminated
        on_change, changed = self.planning == "on_change", not np.array_equal(before, self.transitions[state, action])
        if changed:
            self._outcomes = None
        if on_change and changed:
            self.q[:] = 0.0  # values planned on the old model are forgotten
            self.plan_in_place(self.sweeps)
        if self.reward_model == "state":
            error = reward - self.w[next_state]
            self.w[next_state] += self.lr * error
        else:
            error = reward - self.rewards[state, action]
            self.rewards[state, action] += self.lr * error
        if not on_change:
            self.plan()
            return
        if error > 0:
            self.plan_in_place(self.sweeps)
        self.plan_in_place(1)

    def _next_values(self) -> np.ndarray:
        """V(s) for every s: 0 where arriving ended the episode, else the optimism-weighted
        best (and worst) of Q(s, .)."""
        best = self.q.max(axis=1)
        if self.optimism != 1.0:
            best = self.optimism * best + (1 - self.optimism) * self.q.min(axis=1)
        return best if self.ignore_ends else np.where(self.ends, 0.0, best)

    def _arrival(self) -> np.ndarray:
        """The reward of arriving at each state, as the plan counts it (0 with pair rewards)."""
        return self.w if self.reward_model == "state" else np.zeros(self.n_states)

    def plan(self) -> None:
        """`sweeps` synchronous value-iteration sweeps over the (state, action) pairs tried so far."""
        arrival = self._arrival()
        for _ in range(self.sweeps):
            q = self.rewards + self.transitions @ (arrival + self.gamma * self._next_values())
            self.q = np.where(self.tried, q, self.q)

    def plan_in_place(self, sweeps: int) -> None:
        """`sweeps` in-place sweeps over the tried pairs, in order of state, then action: each
        Q(s, a) is planned from the values of the pairs updated before it in the sweep.

        Pair by pair, so in Python floats over each pair's possible outcomes (one, with the
        last-outcome model): numpy's per-call cost would dominate."""
        if self._outcomes is None:  # the model changed since the last plan
            self._outcomes = []
            for s, a in np.argwhere(self.tried).tolist():
                nonzero = np.flatnonzero(self.transitions[s, a])
                self._outcomes.append((s, a, nonzero.tolist(), self.transitions[s, a, nonzero].tolist()))
        arrival = self._arrival().tolist()
        ends = [False] * self.n_states if self.ignore_ends else self.ends.tolist()
        rewards, gamma, optimism = self.rewards.tolist(), self.gamma, self.optimism
        q = self.q.tolist()
        v = self._next_values().tolist()
        for _ in range(sweeps):
            for s, a, support, probs in self._outcomes:
                if len(support) == 1:  # one outcome (the last-outcome model): the same sum, quicker
                    j = support[0]
                    q[s][a] = rewards[s][a] + probs[0] * (arrival[j] + gamma * v[j])
                else:
                    q[s][a] = rewards[s][a] + sum(p * (arrival[j] + gamma * v[j]) for j, p in zip(support, probs))
                if not ends[s]:
                    best = max(q[s])
                    v[s] = best if optimism == 1.0 else optimism * best + (1 - optimism) * min(q[s])
        self.q = np.array(q)


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
    per_agent = MBVAgent
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

    @classmethod
    def lane_bytes(cls, n_states: int, n_actions: int, settings: Mapping[str, Any]) -> int:
        """The model and `q`; a dense transition table unless `model_lr` is 1, else the incremental
        plan's V, worth, arrival lists and places in them."""
        pairs = n_states * n_actions
        dense = settings.get("model_lr", 1.0) != 1.0
        model = 8 * (4 * pairs + 2 * n_states) + (16 * pairs * n_states if dense else 0)
        return model if dense else model + 8 * (pairs + 9 * n_states)

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
            buffer = np.empty(self.size * n, dtype=np.int64)
            buffer[:frontier.size] = frontier
            kernel: Any = compile_kernel(plan_sweeps)  # the same sweeps, compiled (a numba dispatcher)
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


def plan_sweeps(  # plain Python: `compiled` makes it machine code, typed by the arrays it gets
    frontier, size, count, q, worth, v, w, ends, gamma, optimism, state_lane, model_next, arrivals, arrival_count,
    pair_rewards, pair, ignore_ends, n_states, n_actions, mark, dirty,
):
    """`BatchedMBV.plan`'s sweeps as one loop, compiled by numba where the `fast` extra is installed
    (`compile_kernel(plan_sweeps)`: numba is imported at the first compiled plan, never with this module).
    Both do the same floating-point operations in the same order on the same pairs, so their
    tables are equal bit for bit (`tests/test_batched_mbv_planning.py`).

    Sweep `count` times from the flat states `frontier` (their worth moved): recompute the
    pairs arriving there, then V and the worth of the states whose row of Q moved; the states
    whose V moved are the next sweep's frontier. What is left when the sweeps run out is
    marked in `dirty`. `frontier` (its first `size` entries the states to start from) and
    `mark` (all False) are scratch, one entry a flat state."""
    pairs_per_lane = n_states * n_actions
    rows = np.empty(mark.size, dtype=np.int64)
    for _ in range(count):
        if size == 0:
            break
        moved_rows = 0
        for i in range(size):
            state = frontier[i]
            for j in range(arrival_count[state]):
                p = arrivals[state, j]
                new = worth[model_next[p] + (p // pairs_per_lane) * n_states]
                if pair:
                    new = new + pair_rewards[p]
                if new != q[p]:
                    q[p] = new
                    row = p // n_actions
                    if not mark[row]:
                        mark[row] = True
                        rows[moved_rows] = row
                        moved_rows += 1
        size = 0
        for i in range(moved_rows):
            row = rows[i]
            mark[row] = False
            start = row * n_actions
            best = q[start]
            for k in range(1, n_actions):
                best = max(best, q[start + k])
            lane = state_lane[row]
            o = optimism[lane]
            if o != 1.0:
                worst = q[start]
                for k in range(1, n_actions):
                    worst = min(worst, q[start + k])
                best = o * best + (1 - o) * worst
            if not ignore_ends and ends[row]:
                best = 0.0
            if best != v[row]:
                frontier[size] = row
                size += 1
            v[row] = best
            if pair:
                worth[row] = gamma[lane] * best
            else:
                worth[row] = w[row] + gamma[lane] * best
    for i in range(size):
        dirty[frontier[i]] = True
