"""Held-out (cross-validated) log-likelihood: how well a model, fitted to some of the choices,
predicts the choices it was not fitted to.

AIC and BIC charge a model for its free settings by formula; a held-out likelihood measures
what the extra flexibility buys on choices the fit never saw, and it compares models of any
kind on one scale: the reinforcement-learning agents of `graphtasks.fitting.models` and the
small recurrent networks of `graphtasks.fitting.neural` alike.

Folds (`make_folds`, seeded) split the data three ways:

- **block**: each participant's choices are cut into `folds` contiguous blocks of whole
  trials; fold f holds out one block of every participant (which block: a seeded permutation
  per participant and session). The model is fitted (maximum likelihood) to the participant's
  other blocks and scored on the held-out one. The agent still replays the whole sequence,
  learning from every trial it saw, held out or not: only the choices the likelihood counts
  differ. A block's log-likelihood is the difference of the log-likelihoods of two prefixes of
  the sequence (a choice's probability depends only on the steps before it), so every
  likelihood of the fits is the vectorised or batched one the full fits use.
- **session**: a participant's sessions (in the store: the runs a participant performed) are
  dealt to the folds; the model is fitted to the sessions kept and scored on the held-out
  ones, each session starting afresh as a fit of a run does.
- **participant**: whole participants are held out. The model is fitted to the others
  hierarchically (EM, `graphtasks.fitting.hierarchical`), and each held-out participant is
  scored by the group prior: by default its marginal likelihood, log of the integral of
  p(choices | settings) over the prior (the Laplace approximation EM itself uses), which is the
  probability the fitted population gives a new participant's choices; or (`score="mean"`)
  the likelihood at the group's median settings, which ignores that participants differ and so
  penalises a model by the spread of its population.

Each fold's fits start from seeded draws of the model's prior; the same seed gives the same
folds and the same numbers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence, Union

import numpy as np

from .behaviour import BehaviourError, Choices
from .likelihood import TaskShape, log_likelihood, task_shape
from .models import MODELS, FitModel, refuse_mixed_likelihoods

BY = ("block", "session", "participant")
SCORES = ("marginal", "mean")
MAX_FOLDS = 100

Piece = tuple[int, int, int, int]  # (session, first choice, end choice, fold)
Participant = Union[Choices, Sequence[Choices]]


@dataclass(frozen=True)
class Folds:
    """Which choices each fold holds out: per participant, its pieces `(session, first choice,
    end choice, fold)`: a block of a session, a whole session, or (participant folds) every
    session of the participant with the participant's fold.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.cv import make_folds
    >>> people = [simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=10, seed=s) for s in (1, 2)]
    >>> folds = make_folds(people, "block", 2, seed=0)
    >>> folds.pieces[0]
    ((0, 0, 10, 0), (0, 10, 20, 1))
    """

    by: str
    folds: int
    seed: int
    pieces: tuple[tuple[Piece, ...], ...]

    def held_out(self, participant: int, fold: int) -> list[Piece]:
        """The pieces of `participant` that fold `fold` holds out."""
        return [p for p in self.pieces[participant] if p[3] == fold]

    def choices(self) -> list[int]:
        """Held-out choices per fold."""
        out = [0] * self.folds
        for pieces in self.pieces:
            for _, first, end, fold in pieces:
                out[fold] += end - first
        return out

    @property
    def digest(self) -> str:
        """Eight hex digits naming the folds (how they were made and what they hold out)."""
        text = json.dumps({"by": self.by, "folds": self.folds, "seed": self.seed, "pieces": self.pieces})
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def as_dict(self) -> dict[str, Any]:
        return {"by": self.by, "folds": self.folds, "seed": self.seed,
                "pieces": [[list(p) for p in pieces] for pieces in self.pieces]}


def sessions_of(data: Sequence[Participant]) -> list[list[Choices]]:
    """Each participant's sessions: a `Choices` is one session, a sequence of them several."""
    out = []
    for i, one in enumerate(data):
        sessions = [one] if isinstance(one, Choices) else list(one)
        if not sessions or not all(isinstance(s, Choices) for s in sessions):
            raise BehaviourError(f"participant {i}: expected Choices or a non-empty sequence of Choices")
        out.append(sessions)
    return out


def _trial_cuts(choices: Choices, blocks: int, who: str) -> list[int]:
    """The first choice of each of `blocks` contiguous blocks of whole trials, and the end."""
    starts = np.flatnonzero(np.concatenate(([True], choices.ends[:-1])))
    trials = len(starts)
    if trials < blocks:
        raise BehaviourError(f"{who}: {trials} trial(s), fewer than the {blocks} blocks of --by block")
    first = [int(starts[b * trials // blocks]) for b in range(blocks)]
    return [*first, len(choices)]


def make_folds(data: Sequence[Participant], by: str = "block", folds: int = 5, seed: int = 0) -> Folds:
    """Seeded folds of participants' choices (see the module's description of each kind).

    Parameters
    ----------
    data : sequence of Choices, or of sequences of Choices
        One entry per participant: its choices, or its sessions' choices in order.
    by : {"block", "session", "participant"}
        What a fold holds out.
    folds : int
        How many folds (2 to 100).
    seed : int
        Seeds which block, session or participant goes to which fold.

    Returns
    -------
    Folds
        Every participant's pieces with their fold.

    Raises
    ------
    BehaviourError
        A kind not in `BY`, too few folds, or data that cannot give every fold something to
        hold out and something to fit (too few trials, sessions or participants), naming it.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.cv import make_folds
    >>> people = [simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=10, seed=s) for s in range(4)]
    >>> [pieces[0][3] for pieces in make_folds(people, "participant", 2, seed=1).pieces]
    [0, 1, 0, 1]
    """
    if by not in BY:
        raise BehaviourError(f"--by: expected one of {', '.join(BY)}, got {by!r}")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or not 2 <= folds <= MAX_FOLDS:
        raise BehaviourError(f"--folds: expected a whole number from 2 to {MAX_FOLDS}, got {folds!r}")
    folds = int(folds)
    people = sessions_of(data)
    rng = np.random.default_rng(seed)
    pieces: list[tuple[Piece, ...]] = []
    if by == "block":
        for p, sessions in enumerate(people):
            own: list[Piece] = []
            for s, c in enumerate(sessions):
                cuts = _trial_cuts(c, folds, c.source or f"participant {p}")
                order = rng.permutation(folds)
                own += [(s, cuts[b], cuts[b + 1], int(order[b])) for b in range(folds)]
            pieces.append(tuple(own))
    elif by == "session":
        for p, sessions in enumerate(people):
            if len(sessions) < folds:
                raise BehaviourError(
                    f"--by session with {folds} folds needs {folds} or more sessions per participant; participant "
                    f"{p} ({sessions[0].source or 'unnamed'}) has {len(sessions)} (--folds {max(len(sessions), 2)}, "
                    "or --by block)")
            order = rng.permutation(len(sessions))
            fold_of = {int(s): i % folds for i, s in enumerate(order)}
            pieces.append(tuple((s, 0, len(c), fold_of[s]) for s, c in enumerate(sessions)))
    else:
        many = [p for p, sessions in enumerate(people) if len(sessions) > 1]
        if many:
            raise BehaviourError(f"--by participant: participant {many[0]} has {len(people[many[0]])} sessions; "
                                 "participant folds take one sequence of choices per participant")
        count = len(people)
        if count - -(-count // folds) < 2:
            raise BehaviourError(f"--by participant with {folds} folds: {count} participants leave fewer than 2 to "
                                 "fit a group to in some fold (the hierarchical fit needs 2 or more)")
        order = rng.permutation(count)
        fold_of = {int(p): i % folds for i, p in enumerate(order)}
        pieces = [((0, 0, len(sessions[0]), fold_of[p]),) for p, sessions in enumerate(people)]
    return Folds(by, folds, int(seed), tuple(pieces))


# -- what is scored -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelScore:
    """One model's held-out log-likelihood: per fold, and per participant (summed over the folds)."""

    model: str
    kind: str  # "rl": an agent fitted by maximum likelihood or EM; "gru": a recurrent network
    heldout: tuple[float, ...]
    participants: tuple[float, ...]
    seconds: float
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return float(sum(self.heldout))


@dataclass(frozen=True)
class CrossValidation:
    """Cross-validated log-likelihoods of several models on the same folds.

    `rows()` gives the table: per model the summed held-out log-likelihood, per choice, its
    geometric mean probability, the spread over folds and how many participants it predicts best.
    """

    folds: Folds
    keys: tuple[str, ...]  # each participant's name (a run's uid, or a Choices' source)
    scores: tuple[ModelScore, ...]
    score: str | None = None  # participant folds: how a held-out participant is scored (SCORES)
    starts: int = 1

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(s.model for s in self.scores)

    def of(self, model: str) -> ModelScore:
        for s in self.scores:
            if s.model == model:
                return s
        raise KeyError(model)

    def rows(self) -> list[dict[str, Any]]:
        """Per model, best (highest held-out log-likelihood) first: heldout_log_likelihood,
        per_choice, p_choice (exp of per_choice), fold_sd (of the per-choice value over folds)
        and best_by_cv (participants it predicts best)."""
        return cv_rows([s.model for s in self.scores], [list(s.heldout) for s in self.scores],
                       [list(s.participants) for s in self.scores], self.folds.choices())

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.folds.as_dict(), "keys": list(self.keys), "score": self.score, "starts": self.starts,
            "choices": self.folds.choices(), "rows": self.rows(),
            "models": {s.model: {"kind": s.kind, "heldout": list(s.heldout), "participants": list(s.participants),
                                 "seconds": s.seconds, "settings": s.settings} for s in self.scores},
        }


def cv_rows(models: Sequence[str], heldout: Sequence[Sequence[float]], participants: Sequence[Sequence[float]],
            choices: Sequence[int]) -> list[dict[str, Any]]:
    """The table of `CrossValidation.rows` from its numbers (also of stored results)."""
    per_participant = np.array(participants, dtype=float).reshape(len(models), -1)
    best = np.argmax(per_participant, axis=0) if per_participant.size else np.zeros(0, dtype=int)
    total_choices = max(sum(choices), 1)
    out = []
    for m, (model, folds) in enumerate(zip(models, heldout)):
        total = float(sum(folds))
        per_fold = [v / max(n, 1) for v, n in zip(folds, choices)]
        out.append({
            "model": model, "heldout_log_likelihood": total, "per_choice": total / total_choices,
            "p_choice": math.exp(total / total_choices), "fold_sd": float(np.std(per_fold, ddof=1)) if len(folds) > 1
            else 0.0, "best_by_cv": int(np.sum(best == m)), "choices": int(sum(choices)),
        })
    return sorted(out, key=lambda r: -r["heldout_log_likelihood"])


# -- reinforcement-learning models: fitted to the choices kept, scored on the rest ---------------
def _prefix(choices: Choices, end: int) -> Choices:
    """The first `end` choices (a choice's probability depends only on those before it)."""
    if end == len(choices):
        return choices
    return dataclasses.replace(
        choices, states=choices.states[:end], actions=choices.actions[:end], rewards=choices.rewards[:end],
        next_states=choices.next_states[:end], ends=choices.ends[:end], learn=choices.learn[:end],
    )


class _Split:
    """One participant's sessions for one fold: the log-likelihood of the choices kept and of
    those held out, from whole sessions and from prefixes at the held-out pieces' edges."""

    def __init__(self, sessions: list[Choices], shapes: list[TaskShape], held: list[Piece]) -> None:
        self.sessions, self.shapes = sessions, shapes
        self.prefixes: dict[tuple[int, int], Choices] = {}
        for s, first, end, _ in held:
            for cut in (first, end):
                if 0 < cut < len(sessions[s]):
                    self.prefixes[(s, cut)] = _prefix(sessions[s], cut)
        self.held = [(s, first, end) for s, first, end, _ in held]

    def kept_and_held(self, agent: str, settings: dict[str, Any]) -> tuple[float, float]:
        whole = [log_likelihood(agent, settings, c, shape) for c, shape in zip(self.sessions, self.shapes)]
        at = {key: log_likelihood(agent, settings, c, self.shapes[key[0]]) for key, c in self.prefixes.items()}

        def upto(s: int, cut: int) -> float:
            return 0.0 if cut == 0 else whole[s] if cut == len(self.sessions[s]) else at[(s, cut)]

        held = sum(upto(s, end) - upto(s, first) for s, first, end in self.held)
        return float(sum(whole) - held), float(held)


def _fit_split(model: FitModel, split: _Split, starts: int, rng: np.random.Generator) -> tuple[float, dict[str, float]]:
    """Fit `model` to the kept choices of `split` (L-BFGS-B from seeded starts); its held-out
    log-likelihood at the best end point, and that point."""
    from .mle import require_scipy

    optimize = require_scipy()
    bounds = [model.bounds[n] for n in model.free]

    def negative(x: np.ndarray) -> float:
        return -split.kept_and_held(model.agent, model.settings(x))[0]

    best: Any = None
    for _ in range(starts):
        x0 = np.array([rng.uniform(*model.prior_of(n)) for n in model.free])
        found = optimize.minimize(negative, x0, method="L-BFGS-B", bounds=bounds)
        if best is None or found.fun < best.fun:
            best = found
    params = model.settings(best.x)
    return split.kept_and_held(model.agent, params)[1], {n: float(v) for n, v in zip(model.free, best.x)}


def _participant_job(job: tuple[FitModel, list[Choices], list[TaskShape], Folds, int, int, int]) -> list[float]:
    """One participant's held-out log-likelihood in every fold (zero where nothing is held out)."""
    model, sessions, shapes, folds, p, starts, seed = job
    out = []
    for f in range(folds.folds):
        held = folds.held_out(p, f)
        if not held:
            out.append(0.0)
            continue
        rng = np.random.default_rng([seed, p, f])
        out.append(_fit_split(model, _Split(sessions, shapes, held), starts, rng)[0])
    return out


def _rl_within(model: FitModel, people: list[list[Choices]], shapes: list[list[TaskShape]], folds: Folds,
               starts: int, seed: int, workers: int | None) -> np.ndarray:
    """[participant, fold] held-out log-likelihoods of block or session folds."""
    from .pool import map_jobs

    jobs = [(model, sessions, own, folds, p, starts, seed) for p, (sessions, own) in enumerate(zip(people, shapes))]
    done = map_jobs(_participant_job, jobs, workers, f"cross-validation of {model.name}", [folds.folds] * len(jobs),
                    "fit")
    return np.array(done, dtype=float).reshape(len(people), folds.folds)


def _rl_participants(model: FitModel, people: list[list[Choices]], shapes: list[list[TaskShape]], folds: Folds,
                     starts: int, seed: int, workers: int | None, score: str) -> np.ndarray:
    """[participant, fold] held-out log-likelihoods of participant folds: EM on the others,
    the held-out participant scored by the group prior (`score`)."""
    from .hierarchical import estimate, fit_group, to_natural, to_transformed

    out = np.zeros((len(people), folds.folds))
    for f in range(folds.folds):
        kept = [p for p in range(len(people)) if not folds.held_out(p, f)]
        group = fit_group(model, [people[p][0] for p in kept], starts, seed, workers,
                          shapes=[shapes[p][0] for p in kept])
        mean = np.array([group.mean[n] for n in model.free])
        variance = np.array([group.variance[n] for n in model.free])
        for p in range(len(people)):
            if not folds.held_out(p, f):
                continue
            choices, shape = people[p][0], shapes[p][0]
            if score == "mean":
                out[p, f] = log_likelihood(model.agent, model.settings(to_natural(model, mean)), choices, shape)
                continue
            rng = np.random.default_rng([seed, p, f])
            begin = [mean, *(to_transformed(model, [rng.uniform(*model.prior_of(n)) for n in model.free])
                             for _ in range(max(starts - 1, 0)))]
            out[p, f] = estimate(model, choices, shape, mean, variance, begin).log_evidence
    return out


# -- the entry point --------------------------------------------------------------------------------
def resolve_model(model: Any) -> Any:
    """A model to cross-validate: a `FitModel`, a `graphtasks.fitting.neural.GRUModel`, or a
    name (a shipped model, or `gru-N` / `gru-N-shared`)."""
    from .neural import GRUModel, parse_gru

    if isinstance(model, (FitModel, GRUModel)):
        return model
    if not isinstance(model, str):
        raise BehaviourError(f"--models: expected a model name, got {model!r}")
    gru = parse_gru(model)
    if gru is not None:
        return gru
    if model not in MODELS:
        from graphstore import did_you_mean

        raise BehaviourError(f"--models: no model {model!r}{did_you_mean(model, MODELS)} (models: "
                             f"{', '.join(MODELS)}, and gru-N or gru-N-shared for N from 2 to 16)")
    return MODELS[model]


def cross_validate(
    models: Sequence[Any],
    data: Sequence[Participant],
    by: str = "block",
    folds: int = 5,
    seed: int = 0,
    starts: int = 2,
    score: str = "marginal",
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
    workers: int | None = 1,
    keys: Sequence[str] | None = None,
) -> CrossValidation:
    """The cross-validated (held-out) log-likelihood of each model on the same seeded folds.

    Parameters
    ----------
    models : sequence
        `FitModel`s, `graphtasks.fitting.neural.GRUModel`s, or names: a shipped model (`MODELS`),
        `gru-N` (a GRU of N units per participant) or `gru-N-shared` (one GRU for everyone).
    data : sequence of Choices, or of sequences of Choices
        One entry per participant: its choices, or its sessions' choices in order.
    by : {"block", "session", "participant"}
        What a fold holds out (`make_folds`).
    folds : int
        How many folds.
    seed : int
        Seeds the folds, every fit's starting points and the networks' initial weights.
    starts : int
        Optimiser starts per fit (participant folds: of the EM's first E-step and of each
        held-out participant's MAP).
    score : {"marginal", "mean"}
        Participant folds: a held-out participant's score under the group prior fitted to the
        others: its marginal likelihood (Laplace) or the likelihood at the group's median.
    shapes : sequence of TaskShape, optional
        Each participant's task shape (default: read from each task).
    store : optional
        Where tasks are read from for their shapes.
    workers : int or None
        Processes fitting participants at once (block and session folds; the same numbers for
        any number of them).
    keys : sequence of str, optional
        Each participant's name in the result (default: its first session's source).

    Returns
    -------
    CrossValidation
        The folds and, per model, the held-out log-likelihood of each fold and participant.

    Raises
    ------
    BehaviourError
        An unknown model, kind of fold or score, or folds the data cannot fill, in one line.

    Examples
    --------
    >>> from graphtasks.fitting import cross_validate, simulate
    >>> people = [simulate("rewardgym/two-step", "hybrid", {"lr": 0.5, "beta": 5.0, "w": 0.8}, trials=40, seed=s)
    ...           for s in range(3)]
    >>> result = cross_validate(["q", "hybrid"], people, by="block", folds=2, seed=0, starts=1)
    >>> [row["model"] for row in result.rows()], result.folds.choices()
    (['hybrid', 'q'], [120, 120])
    """
    if score not in SCORES:
        raise BehaviourError(f"--score: expected one of {', '.join(SCORES)}, got {score!r}")
    if isinstance(starts, bool) or not isinstance(starts, (int, np.integer)) or starts < 1:
        raise BehaviourError(f"starts: expected a positive whole number, got {starts!r}")
    chosen = [resolve_model(m) for m in models]
    if not chosen:
        raise BehaviourError("cross-validation: no model given")
    names = [m.name for m in chosen]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BehaviourError(f"--models: {', '.join(twice)} given twice")
    refuse_mixed_likelihoods({m.name: getattr(m, "fixed", None) for m in chosen})  # a GRU predicts choices only
    people = sessions_of(data)
    if not people:
        raise BehaviourError("cross-validation: no participant given")
    plan = make_folds(people, by, folds, seed)
    if shapes is not None:
        if len(shapes) != len(people):
            raise BehaviourError(f"shapes: {len(shapes)} for {len(people)} participants")
        own = [[shapes[p]] * len(s) for p, s in enumerate(people)]
    else:
        own = [[task_shape(c.task_id, store) for c in sessions] for sessions in people]
    for sessions, session_shapes in zip(people, own):
        for c, s in zip(sessions, session_shapes):
            s.check(c)
    from .neural import GRUModel, gru_heldout

    scores = []
    for model in chosen:
        began = time.perf_counter()
        if isinstance(model, GRUModel):
            values = gru_heldout(model, people, own, plan, seed)
            settings: dict[str, Any] = model.settings()
        elif by == "participant":
            values = _rl_participants(model, people, own, plan, starts, seed, workers, score)
            settings = {"agent": model.agent, "bounds": model.bounds, "fixed": model.fixed, "method": "em",
                        "score": score, "starts": starts}
        else:
            values = _rl_within(model, people, own, plan, starts, seed, workers)
            settings = {"agent": model.agent, "bounds": model.bounds, "fixed": model.fixed, "method": "mle",
                        "starts": starts}
        scores.append(ModelScore(model.name, "gru" if isinstance(model, GRUModel) else "rl",
                                 tuple(float(v) for v in values.sum(axis=0)),
                                 tuple(float(v) for v in values.sum(axis=1)), time.perf_counter() - began, settings))
    names_of = list(keys) if keys is not None else [s[0].source or f"participant {i}" for i, s in enumerate(people)]
    return CrossValidation(plan, tuple(names_of), tuple(scores), score if by == "participant" else None, int(starts))


def cross_validate_runs(
    store: Any,
    experiment: str,
    runs: Sequence[Any],
    models: Sequence[Any],
    by: str = "block",
    folds: int = 5,
    seed: int = 0,
    starts: int = 2,
    score: str = "marginal",
    workers: int | None = 1,
    phases: Sequence[str] | None = None,
) -> tuple[CrossValidation, list[int]]:
    """`cross_validate` of recorded runs (`graphtasks.fitting.selection.RunInfo`s, or run
    indices): each run one participant, except for session folds, where a participant's runs
    (those of one participant id) are its sessions. Returns the result (each participant named
    by its first run's index) and every run taken, in the order read (a participant's sessions
    together), as `graphtasks.fitting.records.record_cross_validation` takes them.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.cv import cross_validate_runs
    >>> with open_store(":memory:") as store:
    ...     cross_validate_runs(store, "lab", [], ["q"])
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: experiment 'lab': no run to cross-validate
    """
    from .behaviour import load_runs

    indices = [int(getattr(r, "run", r)) for r in runs]
    if not indices:
        raise BehaviourError(f"experiment {experiment!r}: no run to cross-validate")
    for m in models:  # refused before anything is read
        resolve_model(m)
    choices = load_runs(store, experiment, indices, phases)
    if by == "session":
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(runs):
            who = getattr(r, "participant", None)
            groups.setdefault(who if who is not None else f"run {indices[i]}", []).append(i)
        data: list[Participant] = [[choices[i] for i in members] for members in groups.values()]
        firsts = [indices[members[0]] for members in groups.values()]
        taken = [indices[i] for members in groups.values() for i in members]
    else:
        data, firsts, taken = list(choices), indices, indices
    shapes = [task_shape(c.task_id if isinstance(c, Choices) else c[0].task_id, store) for c in data]
    keys = [str(r) for r in firsts]
    result = cross_validate(models, data, by, folds, seed, starts, score, shapes, store, workers, keys)
    return result, taken


def chance_per_choice(data: Sequence[Participant], shapes: Sequence[TaskShape]) -> float:
    """The log-likelihood per choice of choosing uniformly among the offered actions: the floor a
    model of the choices should rise above.

    Examples
    --------
    >>> from graphtasks.fitting import simulate, task_shape
    >>> from graphtasks.fitting.cv import chance_per_choice
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=5, seed=1)
    >>> round(chance_per_choice([choices], [task_shape("rewardgym/two-step")]), 4)
    -0.6931
    """
    total, count = 0.0, 0
    for one, shape in zip(sessions_of(data), shapes):
        offered = np.array([max(len(a), 1) for a in shape.available], dtype=float)
        for c in one:
            total -= float(np.log(offered[c.states]).sum())
            count += len(c)
    return total / max(count, 1)
