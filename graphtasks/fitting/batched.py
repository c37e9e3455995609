"""Log-likelihoods of many (settings, choices) pairs in one lockstep replay of a batched agent.

`replay_log_likelihood` replays one agent step by step: a few hundred Python agent steps per
likelihood, for every participant, every starting point and every point an optimiser tries.
Here the pairs are the lanes of one batched agent (`gym_bridge.agents.batched`): lane `l`
holds the settings `settings_list[l]` and replays `choices_list[l]`, and every step of the
replay is one `action_probabilities` and one `learn` call for all lanes at once. Lanes whose
choices are shorter than the longest are left out of the steps past their end (a finished
lane neither chooses nor learns), so participants with different numbers of trials share a
pass. Each lane's number equals `replay_log_likelihood` of its pair to rounding (1e-10,
`tests/test_fitting_batched.py`).

Every agent with a batched form (`BATCHED`) is replayed this way, except where its learning
draws random numbers (Dyna's replays of remembered steps): the batched lanes draw from other
streams than the per-agent agent, so those lanes are replayed per agent instead
(`deterministic` says so beforehand; a lane whose stream moved during a pass is replayed
again per agent, so an agent added later cannot give other numbers).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from gym_bridge.agents import BATCHED, make_batched

from .behaviour import Choices
from .likelihood import FLOOR, TaskShape, replay_log_likelihood


def has_batched_form(agent: str, settings: Mapping[str, Any] | None = None) -> bool:
    """Whether `agent` (with `settings`) has a batched form whose rule these settings select."""
    cls = BATCHED.get(agent)
    return cls is not None and (settings is None or cls.supports(dict(settings)))


def deterministic(agent: str, settings: Mapping[str, Any]) -> bool:
    """Whether the agent's learning draws no random number with these settings: only then does
    a batched lane replay exactly what the per-agent agent does. Dyna-style agents replay
    remembered steps drawn at random (`replays` > 0)."""
    from gym_bridge.agents import agent_settings

    merged = {**agent_settings(agent), **dict(settings)}
    return int(merged.get("replays", 0) or 0) == 0


def offered_mask(shape: TaskShape) -> np.ndarray | None:
    """(S, A) bool: the actions each state offers; None when every state offers every action."""
    mask = np.zeros((max(shape.n_states, 1), max(shape.n_actions, 1)), dtype=bool)
    for state, acts in enumerate(shape.available):
        mask[state, list(acts)] = True
    return None if mask.all() else mask


def _group_key(agent: str, settings: Mapping[str, Any]) -> tuple[Any, ...]:
    """Lanes that can share one batched agent: the same settings outside its per-lane numbers."""
    cls = BATCHED[agent]
    per_lane = set(cls.numbers) | {"beta", "q_init"}
    return (
        settings.get("beta") is None,
        tuple(sorted((k, repr(v)) for k, v in settings.items() if k not in per_lane)),
    )


def batched_log_likelihood(
    agent: str,
    settings_list: Sequence[Mapping[str, Any]],
    choices_list: Sequence[Choices],
    shape: TaskShape,
) -> np.ndarray:
    """The log-likelihood of each (settings, choices) pair, all replayed at once.

    Parameters
    ----------
    agent : str
        An agent with a batched form (`gym_bridge.agents.BATCHED`: its registry row's `batched`).
    settings_list : sequence of mappings
        One agent's settings per lane (the agent's defaults fill the rest).
    choices_list : sequence of Choices
        One sequence of choices per lane (the same object may serve many lanes), all of the task `shape`.
    shape : TaskShape
        The task's shape (sizes and offered actions).

    Returns
    -------
    numpy.ndarray
        L log-likelihoods, lane by lane: sum over the lane's choices of log max(P(choice), FLOOR).

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting import simulate, task_shape
    >>> from graphtasks.fitting.batched import batched_log_likelihood
    >>> from graphtasks.fitting.likelihood import replay_log_likelihood
    >>> choices = simulate("rewardgym/two-step", "sarsa", {"lr": 0.3, "beta": 4.0}, trials=30, seed=1)
    >>> shape = task_shape("rewardgym/two-step")
    >>> grid = [{"lr": lr, "beta": 4.0} for lr in (0.1, 0.3, 0.5)]
    >>> values = batched_log_likelihood("sarsa", grid, [choices] * 3, shape)
    >>> replayed = [replay_log_likelihood("sarsa", s, choices, shape) for s in grid]
    >>> bool(np.allclose(values, replayed, rtol=0, atol=1e-10))
    True
    """
    if len(settings_list) != len(choices_list):
        raise ValueError(f"batched likelihood: {len(settings_list)} settings for {len(choices_list)} sequences")
    if agent not in BATCHED:
        raise ValueError(f"agent {agent!r} has no batched form (those that do: {', '.join(BATCHED)})")
    unique: dict[int, int] = {}
    for c in choices_list:
        unique.setdefault(id(c), len(unique))
    panel = Panel(list({id(c): c for c in choices_list}.values()))
    columns = np.array([unique[id(c)] for c in choices_list], dtype=np.int64)
    return lanes_log_likelihood(agent, settings_list, panel, columns, shape)


def lanes_log_likelihood(
    agent: str, settings_list: Sequence[Mapping[str, Any]], panel: Panel, columns: np.ndarray, shape: TaskShape,
) -> np.ndarray:
    """`batched_log_likelihood` of lanes given as columns of a panel: lanes whose settings
    differ in a setting the batched agent holds once share no batch (one pass per group), and
    lanes whose learning draws random numbers are replayed per agent."""
    out = np.zeros(len(settings_list))
    groups: dict[tuple[Any, ...], list[int]] = {}
    for lane, settings in enumerate(settings_list):
        if not (BATCHED[agent].supports(dict(settings)) and deterministic(agent, settings)):
            out[lane] = replay_log_likelihood(agent, dict(settings), panel.choices[int(columns[lane])], shape)
            continue
        groups.setdefault(_group_key(agent, settings), []).append(lane)
    for lanes in groups.values():
        values, drew = _replay_lanes(agent, [settings_list[i] for i in lanes], panel, columns[lanes], shape)
        out[lanes] = values
        for i in np.flatnonzero(drew).tolist():  # learning drew random numbers: not the per-agent agent's
            lane = lanes[i]
            choices = panel.choices[int(columns[lane])]
            out[lane] = replay_log_likelihood(agent, dict(settings_list[lane]), choices, shape)
    return out


# Lanes (likelihoods a round of the optimisers asks for) from which lockstep fits through a batched agent beat
# fits one likelihood at a time, measured on the two-step task (2 cores): a batched pass costs about 100 us a step
# whatever its lanes, plus about 1 us a lane-step; the per-agent replay about 15 us a step of one lane, the
# vectorised form about 1 us. Against the vectorised form (Q, the hybrid) the batched path is 0.8x at 900-1200 lanes
# with one BLAS thread, and 1.8-2.2x with OpenBLAS's default threads (docs/fitting.md).
LANES_OVER_VECTORISED = 512
LANES_OVER_REPLAY = 12


def lanes_to_pay(
    agent: str, settings: Mapping[str, Any], choices_list: Sequence[Choices], shapes: Sequence[TaskShape],
    vectorised: bool = True,
) -> int | None:
    """The lanes a round needs for batched passes to pay (`LANES_OVER_VECTORISED` where every
    sequence has the vectorised form and `vectorised`, else `LANES_OVER_REPLAY`); None where
    the agent has no deterministic batched form for these settings (nor for response times)."""
    if "rt" in settings:
        return None
    if not (has_batched_form(agent, settings) and deterministic(agent, settings)):
        return None
    if vectorised:
        from .vectorised import vectorised_log_likelihood

        pairs = zip(choices_list, shapes)
        if all(vectorised_log_likelihood(agent, dict(settings), c, s) is not None for c, s in pairs):
            return LANES_OVER_VECTORISED
    return LANES_OVER_REPLAY


def batched_pays(
    agent: str, settings: Mapping[str, Any], choices_list: Sequence[Choices], shapes: Sequence[TaskShape],
    lanes: int, vectorised: bool = True,
) -> bool:
    """Whether a fit whose rounds evaluate about `lanes` likelihoods should evaluate them in
    batched passes (`lanes_to_pay`)."""
    needed = lanes_to_pay(agent, settings, choices_list, shapes, vectorised)
    return needed is not None and lanes >= needed


def parts_for(lanes: int, workers: int | None, needed: int) -> int:
    """How many processes share a batched fit whose rounds have `lanes` lanes: at most
    `workers` (None: one per core), each keeping at least `needed` lanes a round. (The parts
    change no number: a lane's likelihood does not depend on the lanes beside it.)"""
    import os

    return max(1, min(workers or os.cpu_count() or 1, lanes // max(needed, 1)))


def evaluator(
    agent: str, choices_list: Sequence[Choices], shapes: Sequence[TaskShape], batched: bool, vectorised: bool = True,
) -> Any:
    """A function of [(participant, settings), ...] -> their log-likelihoods: by batched passes
    (one per task), or one by one (`log_likelihood`, or the replay when not `vectorised`)."""
    from .likelihood import log_likelihood

    if not batched:
        one = log_likelihood if vectorised else replay_log_likelihood

        def each(requests: list[tuple[int, dict[str, Any]]]) -> np.ndarray:
            return np.array([one(agent, settings, choices_list[p], shapes[p]) for p, settings in requests])

        return each
    by_shape: dict[TaskShape, list[int]] = {}
    for participant, shape in enumerate(shapes):
        by_shape.setdefault(shape, []).append(participant)
    panels = {shape: Panel([choices_list[p] for p in members]) for shape, members in by_shape.items()}
    column = np.zeros(len(choices_list), dtype=np.int64)
    for members in by_shape.values():
        column[members] = np.arange(len(members))

    def passes(requests: list[tuple[int, dict[str, Any]]]) -> np.ndarray:
        out = np.zeros(len(requests))
        wanted: dict[TaskShape, list[int]] = {}
        for i, (participant, _) in enumerate(requests):
            wanted.setdefault(shapes[participant], []).append(i)
        for shape, rows in wanted.items():
            columns = column[[requests[i][0] for i in rows]]
            out[rows] = lanes_log_likelihood(agent, [requests[i][1] for i in rows], panels[shape], columns, shape)
        return out

    return passes


class Panel:
    """Sequences of choices of one task as (T, P) arrays (time first: a step's row is
    contiguous), padded past each sequence's end; made once per fit, read by every pass."""

    def __init__(self, choices_list: Sequence[Choices]) -> None:
        self.lengths = np.array([len(c) for c in choices_list], dtype=np.int64)
        steps, count = int(self.lengths.max()), len(choices_list)
        self.states = np.zeros((steps, count), dtype=np.int64)
        self.actions = np.zeros((steps, count), dtype=np.int64)
        self.rewards = np.zeros((steps, count))
        self.nexts = np.zeros((steps, count), dtype=np.int64)
        self.ends = np.ones((steps, count), dtype=bool)
        self.learn = np.zeros((steps, count), dtype=bool)
        self.choices = list(choices_list)
        for column, c in enumerate(choices_list):
            n = len(c)
            self.states[:n, column] = c.states
            self.actions[:n, column] = c.actions
            self.rewards[:n, column] = c.rewards
            self.nexts[:n, column] = c.next_states
            self.ends[:n, column] = c.ends
            self.learn[:n, column] = c.learn


def _replay_lanes(
    agent: str, settings_list: Sequence[Mapping[str, Any]], panel: Panel, columns: np.ndarray, shape: TaskShape
) -> tuple[np.ndarray, np.ndarray]:
    """One batched agent, lane l with `settings_list[l]` replaying the panel's column
    `columns[l]`, all in lockstep (`replay_log_likelihood`'s loop, a step of every lane at once).
    Returns the log-likelihoods and which lanes drew random numbers (their values are not the
    per-agent agent's, whose stream differs)."""
    count = len(settings_list)
    batch = make_batched(agent, shape.n_states, shape.n_actions, [0] * count, [dict(s) for s in settings_list])
    lengths = panel.lengths[columns]
    steps = int(lengths.max())
    states, actions = panel.states[:steps, columns], panel.actions[:steps, columns]
    rewards, nexts = panel.rewards[:steps, columns], panel.nexts[:steps, columns]
    ends, learn = panel.ends[:steps, columns], panel.learn[:steps, columns]
    mask = offered_mask(shape)
    total = np.zeros(count)
    everyone = np.arange(count)
    uniform = bool((lengths == steps).all())
    all_learn = np.asarray(learn.all(axis=1))
    starts = np.ones(count, dtype=bool)  # the lane's next step begins a trial
    rows = everyone
    for t in range(steps):
        if not uniform:
            rows = everyone[t < lengths]  # lanes past their last choice sit out
            s, a, r, n, end = states[t, rows], actions[t, rows], rewards[t, rows], nexts[t, rows], ends[t, rows]
        else:
            s, a, r, n, end = states[t], actions[t], rewards[t], nexts[t], ends[t]
        new = starts[rows]
        if new.all():
            batch.begin_episode(rows)
        elif new.any():
            batch.begin_episode(rows[new])
        p = batch.action_probabilities(rows, s, None if mask is None else mask[s])
        total[rows] += np.log(np.maximum(p[np.arange(rows.size), a], FLOOR))
        batch.learning[rows] = True if all_learn[t] else learn[t, rows]
        batch.learn(rows, s, a, r, n, end, None if mask is None else mask[n])
        starts[rows] = end
    streams = getattr(batch, "streams", None)
    drew = np.asarray(streams.counters != 0) if streams is not None else np.zeros(count, dtype=bool)
    return total, drew
