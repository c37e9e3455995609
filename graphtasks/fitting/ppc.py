"""Posterior predictive checks of a NUTS fit: the fitted posterior played through the task again.

Settings are drawn from the posterior (`draws` of the chains' pooled draws, seeded), each
participant's task is played by the model's agent with that draw's settings of that
participant, for as many trials as the participant played, through the batched simulators
(`graphtasks.experiments.batched_runs.play_batch`: every (draw, participant) a lane; an agent
without a batched form is played run by run), and the same statistic is computed of the
simulated choices and of the data:

- two-step tasks (two choices a trial, the first one's transition common or rare by the
  task graph's probabilities): the probability of repeating the first-stage choice after a
  rewarded or unrewarded, common or rare trial (Daw et al. 2011), per participant;
- tasks of one choice a trial (bandits, reversal learning, selection): the rate of each
  action in `bins` consecutive bins of each participant's trials (a learning curve).

The check compares the group's mean of the data with the spread of the group's mean over the
posterior draws (`PredictiveCheck.interval`). Each simulated participant learns on every
trial: data with a test phase (learning off) are refused in one line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError, Choices

STAY_ORDER = ("rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare")
MAX_DRAWS = 10_000


@dataclass(frozen=True, eq=False)
class PredictiveCheck:
    """A statistic of the data and of simulations from the posterior, per participant.

    `observed` is (participants, *shape) and `simulated` (draws, participants, *shape), NaN
    where a participant has no trial to compute it on (no rare rewarded trial, ...); `shape`
    is (4,) for "stay" (`STAY_ORDER`) and (bins, actions) for "choice-rate".
    """

    kind: str  # "stay" | "choice-rate"
    task_id: str
    model: str
    agent: str
    labels: tuple[str, ...]  # stay: STAY_ORDER; choice-rate: each bin's trials
    actions: tuple[int, ...]  # choice-rate: the actions of the first state (stay: its first-stage actions)
    observed: np.ndarray
    simulated: np.ndarray
    seed: int

    @property
    def draws(self) -> int:
        return int(self.simulated.shape[0])

    @property
    def participants(self) -> int:
        return int(self.observed.shape[0])

    def group_observed(self) -> np.ndarray:
        """The group's mean of the data (over the participants that have each value)."""
        return _nanmean(self.observed, axis=0)

    def group_simulated(self) -> np.ndarray:
        """The group's mean of each draw's simulations: (draws, *shape)."""
        return _nanmean(self.simulated, axis=1)

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """The central `level` interval of the group's mean over the posterior draws."""
        group = self.group_simulated()
        tail = (1 - level) / 2
        return _nanquantile(group, tail), _nanquantile(group, 1 - tail)

    def outside(self, level: float = 0.95) -> int:
        """How many values of the group's data mean fall outside the simulated interval."""
        low, high = self.interval(level)
        data = self.group_observed()
        known = np.isfinite(data) & np.isfinite(low)
        return int(((data < low) | (data > high))[known].sum())

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval()
        return {"kind": self.kind, "task_id": self.task_id, "model": self.model, "labels": list(self.labels),
                "actions": list(self.actions), "draws": self.draws, "participants": self.participants,
                "seed": self.seed, "observed": _listed(self.group_observed()),
                "simulated_median": _listed(_nanquantile(self.group_simulated(), 0.5)),
                "low": _listed(low), "high": _listed(high), "outside": self.outside()}


def _listed(values: np.ndarray) -> Any:
    return [None if v is None else v for v in np.where(np.isfinite(values), values, np.nan).tolist()]


def _nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    known = np.isfinite(values)
    count = known.sum(axis=axis)
    total = np.where(known, values, 0.0).sum(axis=axis)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _nanquantile(values: np.ndarray, q: float) -> np.ndarray:
    known = np.isfinite(values).any(axis=0)
    out = np.full(values.shape[1:], np.nan)
    if known.any():
        out[known] = np.nanquantile(values[:, known], q, axis=0)
    return out


def transitions(task_id: str, store: Any = None) -> dict[tuple[int, int, int], float]:
    """P(next state | state, action) of the task's graph: {(state, action, next): p}."""
    import tasks

    graph = store.get(task_id) if store is not None and store.content_hash(task_id) is not None else tasks.build(
        task_id)
    out: dict[tuple[int, int, int], float] = {}
    for source, target, data in graph.graph.edges(data=True):
        if data["rel"] == "MOVE":
            s, t = graph.graph.nodes[source]["props"].get("index"), graph.graph.nodes[target]["props"].get("index")
            if s is not None and t is not None:
                key = (int(s), int(data["props"]["action"]), int(t))
                out[key] = out.get(key, 0.0) + float(data["props"]["p"])
    return out


def _trials(choices: Choices) -> tuple[np.ndarray, np.ndarray]:
    """The first choice of each trial and the number of choices in it."""
    ends = np.flatnonzero(choices.ends)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else np.zeros(0, dtype=int)
    return starts, ends - starts + 1


def statistic_kind(choices: Sequence[Choices], moves: dict[tuple[int, int, int], float]) -> str:
    """"stay" for two choices a trial whose first transition is sometimes rare, "choice-rate"
    for one choice a trial; BehaviourError naming the task otherwise."""
    task = choices[0].task_id
    lengths = {int(n) for c in choices for n in _trials(c)[1]}
    if lengths == {2}:
        firsts = {(int(c.states[i]), int(c.actions[i])) for c in choices for i in _trials(c)[0]}
        rare = any(0 < p < 0.5 for (s, a, _), p in moves.items() if (s, a) in firsts)
        if rare:
            return "stay"
        raise BehaviourError(f"posterior predictive check: {task}: its first choices do not lead on by chance (no "
                             "common and rare transitions), so there are no stay probabilities to check")
    if lengths == {1}:
        return "choice-rate"
    raise BehaviourError(f"posterior predictive check: {task}: trials of {sorted(lengths)} choices; the checks are "
                         "two-step stay probabilities (two choices a trial) and choice rates (one choice a trial)")


def stay_probabilities(choices: Choices, moves: dict[tuple[int, int, int], float]) -> np.ndarray:
    """P(the same first-stage choice next trial) after each of `STAY_ORDER` (NaN: no such trial).

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.ppc import stay_probabilities, transitions
    >>> model_based = {"lr": 0.5, "beta": 5.0, "w": 1.0, "perseveration": 0.0}
    >>> run = simulate("rewardgym/two-step", "hybrid", model_based, trials=200, seed=0)
    >>> stay = stay_probabilities(run, transitions("rewardgym/two-step"))
    >>> bool(stay[0] > stay[1])  # a reward after a rare transition credits the other first choice
    True
    """
    starts, _ = _trials(choices)
    first = choices.actions[starts]
    paid = np.add.reduceat(choices.rewards, starts) if len(starts) else np.zeros(0)
    common = np.array([moves.get((int(choices.states[i]), int(choices.actions[i]), int(choices.next_states[i])),
                                 0.0) >= 0.5 for i in starts], dtype=bool)
    stayed = first[1:] == first[:-1]
    before_paid, before_common = paid[:-1] > 0, common[:-1]
    out = np.full(4, np.nan)
    for k, (rewarded, is_common) in enumerate(((True, True), (True, False), (False, True), (False, False))):
        taken = (before_paid == rewarded) & (before_common == is_common)
        if taken.any():
            out[k] = stayed[taken].mean()
    return out


def choice_rates(choices: Choices, actions: Sequence[int], bins: int) -> np.ndarray:
    """The rate of each of `actions` among the trials' first choices in `bins` consecutive bins: (bins, actions)."""
    starts, _ = _trials(choices)
    chosen = choices.actions[starts]
    out = np.full((bins, len(actions)), np.nan)
    for b, part in enumerate(np.array_split(chosen, bins)):
        if len(part):
            out[b] = [(part == a).mean() for a in actions]
    return out


def simulate_runs(task_id: str, agent: str, settings: Sequence[dict[str, Any]], trials: Sequence[int],
                  seeds: Sequence[int], store: Any = None) -> list[Choices]:
    """Runs of `agent` on `task_id`, one per (settings, trials, seed), every step recorded.

    Runs of the same length are played as the lanes of one batched agent where the agent has
    a batched form (`batched_runs.play_batch`), else one by one (`runs.play_run`).

    Examples
    --------
    >>> from graphtasks.fitting.ppc import simulate_runs
    >>> runs = simulate_runs("rewardgym/two-step", "q", [{"lr": 0.2, "beta": 3.0}, {"lr": 0.8, "beta": 3.0}],
    ...                      [10, 20], [1, 2])
    >>> [r.trials for r in runs]
    [10, 20]
    """
    from graphtasks.experiments.batched_runs import batch_key, play_batch
    from graphtasks.experiments.runs import Cell, cells, play_run
    from graphtasks.experiments.spec import AgentSpec, single_run_spec
    from graphtasks.experiments.versions import prepare_versions

    out: list[Choices | None] = [None] * len(settings)
    for length in sorted(set(trials)):
        members = [i for i, t in enumerate(trials) if t == length]
        spec = dataclasses.replace(single_run_spec(task_id, agent, 0, length, settings[members[0]], store=store),
                                   record="steps")
        versions = prepare_versions(spec, store)
        (first,) = cells(spec)
        lanes = [Cell(k, first.task, AgentSpec(agent, agent, dict(settings[i])), int(seeds[i]))
                 for k, i in enumerate(members)]
        keys = {batch_key(spec, cell, versions) for cell in lanes}
        if None not in keys and len(keys) == 1:
            played = play_batch(spec, lanes, versions)
            episodes = [[p.episode for p in played[cell.index]] for cell in lanes]
        else:
            episodes = [[p.episode for p in play_run(spec, cell, versions)] for cell in lanes]
        for i, runs in zip(members, episodes):
            steps = [(s, a, r, n, j == e.length - 1) for e in runs for j, (s, a, r, n, _) in enumerate(e.steps or ())]
            out[i] = Choices.from_steps(task_id, steps, f"posterior predictive {agent} seed {seeds[i]}",
                                        truth={"agent": agent, **settings[i]})
    return [c for c in out if c is not None]


def posterior_predictive(posterior: Any, draws: int = 100, seed: int = 0, bins: int = 10,
                         store: Any = None) -> PredictiveCheck:
    """Simulate every participant's task from `draws` posterior draws and compare with the data.

    Parameters
    ----------
    posterior
        A NUTS fit with its draws (`graphtasks.fitting.bayes.sample_group`).
    draws
        Posterior draws to simulate (drawn without replacement from the chains' pooled draws,
        with replacement when there are fewer), 1 to 10000.
    seed
        Seed of the choice of draws and of the simulations: the same check for the same seed.
    bins
        Choice rates: consecutive bins of each participant's trials.
    store
        Where the task is read (default: built in).

    Returns
    -------
    PredictiveCheck
        The statistic of the data and of every simulation, per participant.

    Examples
    --------
    >>> import warnings
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.bayes import sample_group
    >>> from graphtasks.fitting.ppc import posterior_predictive
    >>> group = [simulate("rewardgym/two-step", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, trials=40, seed=s)
    ...          for s, lr in enumerate((0.3, 0.6))]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # too few draws for the checks of convergence
    ...     posterior = sample_group(MODELS["q"], group, samples=30, warmup=30, seed=0, chains=2)
    >>> check = posterior_predictive(posterior, draws=20, seed=1)
    >>> check.kind, check.simulated.shape
    ('stay', (20, 2, 4))
    """
    for name, value, most in (("draws", draws, MAX_DRAWS), ("bins", bins, 1000)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise BehaviourError(f"posterior predictive check: {name}: expected a whole number from 1 to {most}, got "
                                 f"{value!r}")
    choices: tuple[Choices, ...] = posterior.choices
    model = posterior.model
    task = choices[0].task_id
    tested = [i for i, c in enumerate(choices) if not np.all(c.learn)]
    if tested:
        raise BehaviourError(f"posterior predictive check: participant(s) {tested} have trials without learning (a "
                             "test phase); the simulations learn on every trial: fit and check the learning phase "
                             "(--phase)")
    moves = transitions(task, store)
    kind = statistic_kind(choices, moves)
    shape = posterior.shapes[0]
    first_state = int(choices[0].states[0])
    actions = tuple(int(a) for a in shape.available[first_state]) or tuple(range(shape.n_actions))
    settings = posterior.settings()  # (chains, samples, participants, d)
    pooled = settings.reshape(-1, *settings.shape[2:])
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(pooled), size=draws, replace=draws > len(pooled))
    seeds = rng.integers(0, 2**31 - 1, size=(draws, len(choices)))
    rows, lengths, run_seeds = [], [], []
    for k, index in enumerate(picked):
        for i, c in enumerate(choices):
            rows.append(model.settings([float(v) for v in pooled[index, i]]))
            lengths.append(c.trials)
            run_seeds.append(int(seeds[k, i]))
    simulated = simulate_runs(task, model.agent, rows, lengths, run_seeds, store)

    def statistic(run: Choices) -> np.ndarray:
        return stay_probabilities(run, moves) if kind == "stay" else choice_rates(run, actions, bins)

    observed = np.stack([statistic(c) for c in choices])
    drawn = np.stack([statistic(c) for c in simulated]).reshape(draws, len(choices), *observed.shape[1:])
    labels: tuple[str, ...]
    if kind == "stay":
        labels = STAY_ORDER
    else:
        trials = {c.trials for c in choices}
        if len(trials) == 1:
            edges = np.array_split(np.arange(next(iter(trials))), bins)
            labels = tuple(f"{e[0] + 1}-{e[-1] + 1}" if len(e) else "" for e in edges)
        else:
            labels = tuple(f"{b + 1}/{bins}" for b in range(bins))
    return PredictiveCheck(kind, task, model.name, model.agent, tuple(labels), actions, observed, drawn, seed)
