"""Behaviour and fits in the store.

An imported events file becomes a `Run` of a `Participant` in an experiment of its own, with
an `Episode` per trial and a `Trial` per choice, so human and simulated behaviour are read,
queried and fitted the same way. A fit is a `Fit` node linked to the run it explains and to
its model (`(:Run)<-[:FITS]-(:Fit)-[:OF_MODEL]->(:Model)`: the agent, the free settings with
their bounds, the fixed ones), carrying the fitted settings, the log-likelihood, AIC and BIC;
fits and models belong to the run's experiment and are deleted with it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from graphstore import GraphStore, GraphtasksError, TaskGraph
from graphtasks.experiments import ids
from graphtasks.experiments.ids import episode_uid, participant_uid, run_uid, trial_uid
from graphtasks.experiments.observers import COMPLETED
from graphtasks.experiments.records import ExperimentExists, _key, _now, _version, experiment_uid, phase_uid

from .behaviour import BehaviourError, Choices, EventsFile, first_participant, load_runs, read_participants
from .hierarchical import GroupFit
from .mle import FitResult
from .models import refuse_mixed_likelihoods

PHASE = "behaviour"


MAX_NAME = 256  # characters of an experiment name or a participant id


def check_name(value: str, what: str) -> str:
    """A name the user gives (an experiment, a participant): non-empty, at most MAX_NAME
    characters, no control characters; BehaviourError naming `what` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise BehaviourError(f"{what}: expected a non-empty name, got {value!r}")
    if len(value) > MAX_NAME:
        raise BehaviourError(f"{what}: {len(value):,} characters; a name has at most {MAX_NAME}")
    bad = next((c for c in value if ord(c) < 32 or 0x7F <= ord(c) < 0xA0), None)
    if bad is not None:
        raise BehaviourError(f"{what}: control character {bad!r} in {value!r:.80}")
    return value


def participant_of(path: Path, read: bool = True) -> str:
    """The participant id: the file's `participant_id` column (when `read`; its first row), else
    BIDS `sub-<id>` in the file name, else the file name."""
    found = first_participant(path) if read else ""
    return found or _participant_of_name(path)


def _participant_of_name(path: Path) -> str:
    found = re.match(r"sub-([A-Za-z0-9]+)", path.name)
    return found.group(1) if found else path.stem


@dataclass(frozen=True, eq=False)
class Behaviour:
    """Events files read and checked for an import, before any store is opened: the experiment
    name, the files, each file's participant and contents, and the digest of their bytes."""

    name: str
    files: list[Path]  # the file of each participant (an hBayesDM file holds several)
    read: list[tuple[str, EventsFile]]
    spec_hash: str
    task_id: str | None  # --task, if given


def read_behaviour(
    name: str, paths: Sequence[str | Path], task_id: str | None = None, drop_reminded: bool = True,
    layout: str | None = None,
) -> Behaviour:
    """Read and check events files for `import_behaviour` without a store: the name, every file
    (once, as a stream: `read_participants`), the participants. A file in one of hBayesDM's
    layouts gives a run per `subjID` (`layout` names the layout where its columns fit two);
    any other file one run. BehaviourError otherwise."""
    check_name(name, "import: experiment name")
    if task_id is not None:
        check_name(task_id, "import: --task")
    files = [Path(p) for p in paths]
    if not files:
        raise BehaviourError("import: no files given")
    digest = hashlib.sha256()  # of the files' bytes in order, fed as they are read
    read: list[tuple[str, EventsFile]] = []
    sources: list[Path] = []  # the file of each participant
    for path in files:
        for participant, events in read_participants(path, task_id, drop_reminded, digest, layout):
            participant = participant or _participant_of_name(path)
            read.append((check_name(participant, f"{path}: participant id"), events))
            sources.append(path)
    participants = [p for p, _ in read]
    if len(set(participants)) != len(participants):
        twice = sorted({p for p in participants if participants.count(p) > 1})
        raise BehaviourError(f"import: participant(s) {', '.join(map(repr, twice))} appear in more than one file")
    return Behaviour(name, sources, read, digest.hexdigest()[:16], task_id)


def import_behaviour(
    store: GraphStore, name: str, paths: Sequence[str | Path], task_id: str | None = None, drop_reminded: bool = True,
    layout: str | None = None,
) -> list[dict[str, Any]]:
    """Import events files (one participant each) as the runs of experiment `name`.

    Everything is read and checked before anything is written: the files (`read_behaviour`),
    then each file's choices against its task (a task not in the store is built in memory, not
    put, for the check) and the name against the store (`record_behaviour`).
    """
    return record_behaviour(store, read_behaviour(name, paths, task_id, drop_reminded, layout))


def record_behaviour(store: GraphStore, behaviour: Behaviour) -> list[dict[str, Any]]:
    """Check read events files against the store, then write them as the runs of an experiment.

    The choices are checked against their tasks (a task not in the store is built in memory,
    not put, for the check) and the name against the experiments recorded. Only then is the
    task put (if missing) and the records written: an import of up to IMPORT_BATCH choices in
    one transaction (its experiment, phase, participants, runs, episodes, trials and every edge),
    so a process killed at any moment leaves all of it or nothing. A larger import is written a
    few whole files per transaction (each file's participant, run, episodes and trials linked
    together) and the experiment, which makes it visible, in the last one: a kill leaves no
    episode or trial without its run, and runs without an experiment, which the next import
    under that name removes first. Importing the same files again changes nothing; other files
    under a recorded name are refused.
    """
    import tasks

    from .likelihood import graph_shape

    name, files, read, spec_hash = behaviour.name, behaviour.files, behaviour.read, behaviour.spec_hash
    graphs: dict[str, TaskGraph | None] = {}  # the tasks to put first (None: stored already)
    shapes: dict[str, Any] = {}
    for (_, events), path in zip(read, files):
        task = events.choices.task_id
        if task not in shapes:
            stored = store.content_hash(task) is not None
            try:
                graph = store.get(task) if stored else tasks.build(task)  # built in memory: nothing is put yet
            except GraphtasksError as exc:
                where = "--task" if behaviour.task_id is not None else f"{path}: task column"
                raise BehaviourError(f"{where}: {exc}") from None
            graphs[task] = None if stored else graph
            shapes[task] = graph_shape(graph)
        shapes[task].check(events.choices, events.lines)
    uid = experiment_uid(name)
    known = store.cypher("MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.spec_hash", {"uid": uid}).rows
    if known and known[0][0] != spec_hash:
        raise ExperimentExists(
            f"experiment {name!r} is recorded in {store.location!r} with other data; import under another name"
        )
    # -- everything is checked: write --------------------------------------------------------------
    for missing in graphs.values():
        if missing is not None:
            store.put(missing)
    summary = [{"participant": p, "run": i, "trials": e.choices.trials, "choices": len(e.choices)}
               for i, (p, e) in enumerate(read)]
    if known:  # the same files again: their records are there, whole (the head is written last)
        return summary
    hashes = {task: str(store.content_hash(task)) for task in graphs}
    # Leftovers of an import that was stopped between its transactions (its head never written) go first.
    store.delete_shared(uid, ("Trial", "Episode", "Run", "Participant"))
    batch: list[Records] = []
    size = 0
    for index, ((participant, events), path) in enumerate(zip(read, files)):
        if batch and size + len(events.choices) > IMPORT_BATCH:
            _write(store, _joined(batch))
            batch, size = [], 0
        task_hash = hashes[events.choices.task_id]
        batch.append(_import_unit(uid, name, index, participant, events, path, task_hash))
        size += len(events.choices)
    _write(store, _joined([*batch, _import_head(uid, name, files, read, spec_hash)]))
    return summary


# Files are written together in one transaction up to this many choices (a file is never
# split): an import of up to IMPORT_BATCH choices is one transaction, all or nothing; a larger
# one is written a few files at a time, each file whole, and the head (which makes it visible)
# in the last transaction, so memory stays a small multiple of the largest file.
IMPORT_BATCH = 50_000

Records = tuple[list[tuple[str, list[dict[str, Any]]]], list[tuple[str, str, str, list[dict[str, Any]]]]]


def _write(store: GraphStore, records: Records) -> None:
    try:
        store.create_shared(*records)
    except GraphtasksError:  # another process wrote some of them meanwhile: merge instead
        store.merge_shared(*records)


def _episodes(choices: Choices) -> tuple[np.ndarray, np.ndarray]:
    """Each choice's episode (trial) index, and the first choice of each episode."""
    ends = choices.ends
    starts = np.flatnonzero(np.concatenate(([True], ends[:-1])))
    return np.concatenate(([0], np.cumsum(ends[:-1], dtype=np.int64))), starts


def _import_unit(
    uid: str, name: str, index: int, participant: str, events: EventsFile, path: Path, task_hash: str
) -> Records:
    """One file's records, written in one transaction: its participant and run, the run's
    episodes and their trials, and the edges between them (every episode and trial linked to
    its run); the run is linked to its experiment by the head."""
    choices = events.choices
    run = run_uid(uid, index)
    person = participant_uid(uid, participant)
    episode_of, starts = _episodes(choices)
    bounds = np.append(starts, len(choices))
    paid = np.add.reduceat(choices.rewards, starts) if len(starts) else np.zeros(0)
    episodes = [
        {"uid": episode_uid(run, 0, e), "owner": uid, "experiment": name, "run": index, "phase": PHASE,
         "phase_index": 0, "index": e, "reward": float(paid[e]), "length": int(bounds[e + 1] - bounds[e]),
         "start_state": int(choices.states[bounds[e]]), "task_version": choices.task_id, "task_hash": task_hash}
        for e in range(len(starts))
    ]
    trials, has_trial = [], []
    columns = (episode_of.tolist(), (np.arange(len(choices)) - starts[episode_of]).tolist(),
               choices.states.tolist(), choices.actions.tolist(), choices.rewards.tolist(),
               choices.next_states.tolist())
    for episode, step, state, action, reward, nxt in zip(*columns):
        owner = episode_uid(run, 0, episode)
        trial = trial_uid(owner, step)
        trials.append({"uid": trial, "owner": uid, "experiment": name, "run": index, "phase_index": 0,
                       "episode": episode, "step": step, "state": state, "action": action, "reward": reward,
                       "next_state": nxt})
        has_trial.append(_key(owner, trial))
    people = [{"uid": person, "owner": uid, "participant_id": participant, "source": path.name}]
    runs = [{
        "uid": run, "owner": uid, "index": index, "status": COMPLETED, "task": choices.task_id,
        "agent": "participant", "label": participant, "params": {}, "seed": 0, "version": _version(),
    }]
    return (
        [("Participant", people), ("Run", runs), ("Episode", episodes), ("Trial", trials)],
        [("PERFORMED", "Participant", "Run", [_key(person, run)]),
         ("HAS_EPISODE", "Run", "Episode", [_key(run, episode_uid(run, 0, e)) for e in range(len(starts))]),
         ("HAS_TRIAL", "Episode", "Trial", has_trial)],
    )


def _joined(parts: Sequence[Records]) -> Records:
    """Several records as one write (rows of one label, or one relationship and endpoints, together)."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    edges: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for part_nodes, part_edges in parts:
        for label, rows in part_nodes:
            nodes.setdefault(label, []).extend(rows)
        for rel, a, b, rows in part_edges:
            edges.setdefault((rel, a, b), []).extend(rows)
    return list(nodes.items()), [(rel, a, b, rows) for (rel, a, b), rows in edges.items()]


def _import_head(
    uid: str, name: str, files: list[Path], read: list[tuple[str, EventsFile]], spec_hash: str
) -> Records:
    """What makes an import visible, written in its last transaction: the experiment, its
    phase, and the edges to the runs and their episodes."""
    phase = phase_uid(uid, "", 0)
    experiment = {
        "uid": uid, "owner": uid, "name": name, "spec_hash": spec_hash, "created_at": _now(),
        "description": f"behaviour imported from {', '.join(dict.fromkeys(p.name for p in files))}",
    }
    phases = [{"uid": phase, "owner": uid, "name": PHASE, "index": 0, "learn": True,
               "episodes": max(e.choices.trials for _, e in read)}]
    has_run, in_phase = [], []
    for index, (_, events) in enumerate(read):
        run = run_uid(uid, index)
        has_run.append(_key(uid, run))
        for e in range(len(_episodes(events.choices)[1])):
            in_phase.append(_key(episode_uid(run, 0, e), phase))
    return (
        [("Experiment", [experiment]), ("Phase", phases)],
        [("HAS_PHASE", "Experiment", "Phase", [_key(uid, phase)]), ("HAS_RUN", "Experiment", "Run", has_run),
         ("IN_PHASE", "Episode", "Phase", in_phase)],
    )


def model_uid(experiment: str, result: FitResult) -> str:
    """One Model node per experiment, name, agent, bounds and fixed settings."""
    return ids.model_uid(experiment_uid(experiment), result.model, _settings_digest(result))


def _settings_digest(result: FitResult) -> str:
    """Eight hex digits naming a model's agent, bounds and fixed settings."""
    settings = json.dumps({"agent": result.agent, "bounds": result.bounds, "fixed": result.fixed}, sort_keys=True)
    return hashlib.sha256(settings.encode()).hexdigest()[:8]


def _fit_records(experiment: str, fits: Sequence[FitResult], group: str = "",
                 phases: Sequence[str] | None = None) -> Records:
    """The Model, Fit nodes and FITS, OF_MODEL edges of `fits`; `group`: the digest of the
    hierarchical fit they belong to (their uids carry it, so fits of other groups stay);
    `phases`: the phases whose trials were fitted (None: every phase)."""
    uid = experiment_uid(experiment)
    models, rows, runs, of_model = {}, [], [], []
    for f in fits:
        model = model_uid(experiment, f)
        models[model] = {"uid": model, "owner": uid, "name": f.model, "agent": f.agent, "bounds": f.bounds,
                         "fixed": f.fixed}
        fit_id = ids.fit_uid(f.source, f.model, group or _settings_digest(f), f.method)
        rows.append({
            "uid": fit_id, "owner": uid, "model": f.model, "agent": f.agent, "params": f.params, "stderr": f.stderr,
            "fixed": f.fixed, "log_likelihood": f.log_likelihood, "aic": f.aic, "bic": f.bic, "choices": f.choices,
            "starts": f.starts, "seed": f.seed, "method": f.method, "log_evidence": f.log_evidence,
            "phases": None if phases is None else list(phases), "created_at": _now(), "version": _version(),
        })
        runs.append(_key(fit_id, f.source))
        of_model.append(_key(fit_id, model))
    return ([("Model", list(models.values())), ("Fit", rows)],
            [("FITS", "Fit", "Run", runs), ("OF_MODEL", "Fit", "Model", of_model)])


def record_fits(store: GraphStore, experiment: str, fits: Sequence[FitResult],
                phases: Sequence[str] | None = None) -> None:
    """Write fits of runs of `experiment` (each result's `source` is its run's uid), each linked
    to its run and its model, with the phases whose trials they fitted (None: every phase); a
    fit of the same model to the same run replaces the old one, whatever its phases."""
    store.merge_shared(*_fit_records(experiment, fits, phases=phases))


def group_digest(group: GroupFit) -> str:
    """Eight hex digits naming a hierarchical fit: its model's agent, bounds and fixed settings
    and the runs fitted together (another set of runs is another group fit)."""
    settings = json.dumps({"agent": group.agent, "bounds": group.bounds, "fixed": group.fixed,
                           "runs": sorted(f.source for f in group.fits)}, sort_keys=True)
    return hashlib.sha256(settings.encode()).hexdigest()[:8]


def record_group_fit(store: GraphStore, experiment: str, group: GroupFit,
                     phases: Sequence[str] | None = None) -> str:
    """Write a hierarchical fit of runs of `experiment`: a `GroupFit` node (the group prior,
    the summed evidence, the integrated BIC) linked to its model and, by HAS_FIT, to a `Fit` of
    each run (method "em"), in one transaction; the same model fitted to the same runs again
    replaces it (whatever its `phases`: the phases whose trials were fitted, None for every
    phase). Returns the GroupFit's uid."""
    digest = group_digest(group)
    nodes, edges = _fit_records(experiment, group.fits, digest, phases)
    uid = experiment_uid(experiment)
    group_id = ids.group_fit_uid(uid, group.model, group.method, digest)
    model = model_uid(experiment, group.fits[0])
    row = {
        "uid": group_id, "owner": uid, "model": group.model, "agent": group.agent, "method": group.method,
        "transform": "logistic: value = low + (high - low) / (1 + exp(-x)), the model's bounds",
        "mean": group.mean, "variance": group.variance, "mean_stderr": group.mean_stderr, "median": group.median,
        "fixed": group.fixed, "participants": group.participants, "choices": group.choices,
        "log_evidence": group.log_evidence, "integrated_bic": group.integrated_bic, "iterations": group.iterations,
        "converged": group.converged, "starts": group.starts, "seed": group.seed, "created_at": _now(),
        "version": _version(), **({"diagnostics": group.diagnostics} if group.diagnostics else {}),
        "phases": None if phases is None else list(phases),
    }
    fits = [r["uid"] for label, rows in nodes if label == "Fit" for r in rows]
    store.merge_shared(
        [*nodes, ("GroupFit", [row])],
        [*edges, ("OF_MODEL", "GroupFit", "Model", [_key(group_id, model)]),
         ("HAS_FIT", "GroupFit", "Fit", [_key(group_id, f) for f in fits])],
    )
    return group_id


def fit_runs(
    store: GraphStore,
    experiment: str,
    runs: Sequence[int],
    model: Any,
    starts: int = 5,
    seed: int = 0,
    workers: int | None = 1,
    phases: Sequence[str] | None = None,
) -> list[FitResult]:
    """Fit `model` to each of the runs (their recorded trials; of `phases` only, if given), in
    order; the runs are read here and fitted on `workers` processes (the same fits for any
    number of them); many runs are fitted at once, through a batched agent, where that pays
    (`graphtasks.fitting.mle.fit_many`)."""
    from .mle import fit_many

    choices, shapes = _read_runs(store, experiment, runs, phases)
    return fit_many(model, choices, starts, seed, shapes, workers=workers)


def _read_runs(store: GraphStore, experiment: str, runs: Sequence[int], phases: Sequence[str] | None = None
               ) -> tuple[list[Choices], list[Any]]:
    """The recorded choices of each run (of `phases` only, if given), and the shape of each one's task."""
    from .likelihood import task_shape

    choices = load_runs(store, experiment, runs, phases)
    return choices, [task_shape(c.task_id, store) for c in choices]


def fit_group_runs(
    store: GraphStore,
    experiment: str,
    runs: Sequence[int],
    model: Any,
    starts: int = 5,
    seed: int = 0,
    workers: int | None = 1,
    max_iterations: int = 200,
    method: str = "em",
    samples: int = 1000,
    warmup: int = 1000,
    phases: Sequence[str] | None = None,
) -> GroupFit:
    """Fit `model` to the runs together (their trials of `phases` only, if given), hierarchically:
    by EM (`graphtasks.fitting.hierarchical`) or, with `method` "nuts", by sampling
    (`graphtasks.fitting.bayes`: `chains` chains, 4 by default)."""
    from .hierarchical import fit_group

    if method == "nuts":
        from .bayes import check_model, require_numpyro

        require_numpyro()  # before the runs are read
        check_model(model)
    choices, shapes = _read_runs(store, experiment, runs, phases)
    if method == "nuts":
        from .bayes import fit_group_nuts

        return fit_group_nuts(model, choices, samples, warmup, seed, shapes=shapes)
    return fit_group(model, choices, starts, seed, workers, max_iterations, shapes=shapes)


FITS_QUERY = (
    "MATCH (f:Fit)-[:FITS]->(r:Run) WHERE f.owner = $uid "
    "OPTIONAL MATCH (f)-[:OF_MODEL]->(m:Model) OPTIONAL MATCH (p:Participant)-[:PERFORMED]->(r) "
    "RETURN r.index, r.label, f.model, coalesce(f.method, 'mle'), f.params, f.stderr, f.log_likelihood, f.aic, "
    "f.bic, f.choices, f.log_evidence, f.uid, f.phases, m.bounds, r.condition, p.participant_id, p.source, f.fixed "
    "ORDER BY r.index, f.bic"
)
GROUP_COSTS = (
    "MATCH (g:GroupFit)-[:HAS_FIT]->(f:Fit) WHERE g.owner = $uid RETURN f.uid, g.mean, g.choices, g.participants"
)


def _refuse_mixed(fits: Sequence[dict[str, Any]]) -> None:
    refuse_mixed_likelihoods({row["model"]: row.get("fixed") for row in fits})


def compare_models(fits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model, over the runs fitted by every model: summed log-likelihood, AIC and BIC, and
    how many runs it fits best by BIC; best model (lowest summed BIC) first. The fits should be
    of one method (`recorded_fits(..., method=)`); response-time and choice models together are
    refused (`refuse_mixed_likelihoods`)."""
    _refuse_mixed(fits)
    by_run: dict[int, dict[str, dict[str, Any]]] = {}
    for row in fits:
        by_run.setdefault(row["run"], {})[row["model"]] = row
    models = sorted({row["model"] for row in fits})
    shared = [run for run, fitted in by_run.items() if set(fitted) == set(models)]
    out = []
    for model in models:
        rows = [by_run[run][model] for run in shared]
        best = sum(1 for run in shared if min(by_run[run].values(), key=lambda r: r["bic"])["model"] == model)
        out.append({
            "model": model, "runs": len(rows),
            "log_likelihood": sum(r["log_likelihood"] for r in rows),
            "aic": sum(r["aic"] for r in rows), "bic": sum(r["bic"] for r in rows), "best_by_bic": best,
        })
    return sorted(out, key=lambda r: r["bic"])


def evidence_matrix(fits: Sequence[dict[str, Any]]) -> tuple[list[str], list[int], np.ndarray]:
    """(models, runs, [run, model] log evidence) over the runs every model was fitted to: a
    hierarchical fit's Laplace evidence less the run's share of its group prior's cost
    (`GroupFit.evidence_cost`), else -BIC/2 (the fits should be of one method; response-time and
    choice models together are refused)."""
    _refuse_mixed(fits)
    by_run: dict[int, dict[str, float]] = {}
    for row in fits:
        if row.get("log_evidence") is not None:
            value = row["log_evidence"] - (row.get("evidence_cost") or 0.0)
        else:
            value = -row["bic"] / 2
        by_run.setdefault(row["run"], {})[row["model"]] = value
    models = sorted({row["model"] for row in fits})
    runs = sorted(run for run, fitted in by_run.items() if set(fitted) == set(models))
    return models, runs, np.array([[by_run[run][m] for m in models] for run in runs], dtype=float).reshape(
        len(runs), len(models))


GROUP_QUERY = (
    "MATCH (m:Model)<-[:OF_MODEL]-(g:GroupFit)-[:HAS_FIT]->(f:Fit)-[:FITS]->(r:Run) WHERE g.owner = $uid "
    "RETURN g.uid, g.model, g.method, g.mean, g.variance, g.mean_stderr, g.median, g.participants, g.choices, "
    "g.log_evidence, g.integrated_bic, g.iterations, g.converged, m.bounds, g.diagnostics, g.phases, "
    "collect(r.index) ORDER BY g.integrated_bic"
)


def recorded_group_fits(store: GraphStore, experiment: str) -> list[dict[str, Any]]:
    """Every hierarchical fit of the experiment: model, method, the group prior (mean, variance,
    mean_stderr, median), participants, choices, log evidence, integrated BIC, iterations,
    converged, the model's bounds and the runs; lowest integrated BIC first."""
    columns = ("uid", "model", "method", "mean", "variance", "mean_stderr", "median", "participants", "choices",
               "log_evidence", "integrated_bic", "iterations", "converged", "bounds", "diagnostics", "phases", "runs")
    out = []
    for row in store.cypher(GROUP_QUERY, {"uid": experiment_uid(experiment)}).rows:
        record = dict(zip(columns, row))
        for key in ("mean", "variance", "mean_stderr", "median", "bounds", "diagnostics", "phases"):
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        record["runs"] = sorted(record["runs"])
        out.append(record)
    return out


def recorded_fits(
    store: GraphStore, experiment: str, method: str | None = None, selection: Any = None
) -> list[dict[str, Any]]:
    """Every fit of the experiment's runs, by run index, best (lowest BIC) first per run.

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.
    method
        Only the fits of this method (mle, em, nuts), if given.
    selection
        A `graphtasks.fitting.selection.Selection`: only the fits of the runs it takes (its
        labels, conditions and source; a name the experiment does not have is refused in one
        line) and, if it names phases, only the fits of exactly those phases.

    Returns
    -------
    list of dict
        run, label, model, method, params, stderr, log_likelihood, aic, bic, choices,
        log_evidence, evidence_cost; phases (None: every phase), bounds (the model's),
        condition, participant (None for an agent's run), source (people or agents), group
        (what a figure colours the run by) and key (the participant's id, or the label with
        the run's index).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.records import recorded_fits
    >>> with open_store(":memory:") as store:
    ...     recorded_fits(store, "lab")
    []
    """
    from .selection import fitted_phases, phase_names, run_key, select_runs, source_of

    columns = ("run", "label", "model", "method", "params", "stderr", "log_likelihood", "aic", "bic", "choices",
               "log_evidence", "uid", "phases", "bounds", "condition", "participant", "participant_source", "fixed")
    uid = experiment_uid(experiment)
    taken: set[int] | None = None
    wanted_phases: tuple[str, ...] | None = None
    if selection is not None:
        taken = {r.run for r in select_runs(store, experiment, selection)}
        wanted_phases = fitted_phases(selection, phase_names(store, experiment))
    costs = {}  # a hierarchical fit's share of its group prior's cost (GroupFit.evidence_cost)
    for fit_id, mean, choices, participants in store.cypher(GROUP_COSTS, {"uid": uid}).rows:
        d = len(json.loads(mean) if isinstance(mean, str) else mean)
        costs[fit_id] = d * math.log(choices) / participants
    out = []
    for row in store.cypher(FITS_QUERY, {"uid": uid}).rows:
        record = dict(zip(columns, row))
        if method is not None and record["method"] != method:
            continue
        if taken is not None and record["run"] not in taken:
            continue
        record["evidence_cost"] = costs.get(record.pop("uid"))
        for key in ("params", "stderr", "phases", "bounds", "fixed"):
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        record["stderr"] = record["stderr"] or {}
        record["phases"] = list(record["phases"]) if record["phases"] else None
        if selection is not None and selection.phases and tuple(record["phases"] or ()) != (wanted_phases or ()):
            continue
        record["bounds"] = {k: tuple(v) for k, v in (record["bounds"] or {}).items()}
        record["condition"] = record["condition"] or ""
        source, group = source_of(record["participant"], record.pop("participant_source"))
        record["source"], record["group"] = source, group or str(record["label"])
        record["key"] = run_key(record["run"], str(record["label"]), record["participant"])
        out.append(record)
    return out


# -- cross-validation ---------------------------------------------------------------------------------
def cross_validation_plan(cv: Any, runs: Sequence[int], phases: Sequence[str] | None = None) -> str:
    """Eight hex digits naming a cross-validation's folds over `runs` (and `phases`): results of
    other models made with the same plan share their folds, and are compared side by side."""
    text = json.dumps({"folds": cv.folds.digest, "score": cv.score, "runs": list(runs),
                       "phases": None if phases is None else list(phases)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def record_cross_validation(store: GraphStore, experiment: str, cv: Any, runs: Sequence[int],
                            phases: Sequence[str] | None = None) -> list[str]:
    """Write a cross-validation of runs of `experiment` (`runs`: the run index of each of its
    participants, in order): a `CrossValidation` node per model with the folds, each fold's and
    each run's held-out log-likelihood, linked by VALIDATES to every run, in one transaction. The
    same model on the same plan (folds, runs, phases) again replaces it. `runs`: every run the
    cross-validation took, in the order they were read (a participant's sessions together).
    Returns the nodes' uids.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting import cross_validate, simulate
    >>> from graphtasks.fitting.records import record_cross_validation, recorded_cross_validations
    >>> people = [simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=20, seed=s) for s in (1, 2)]
    >>> cv = cross_validate(["q"], people, folds=2, starts=1)
    >>> with open_store(":memory:") as store:  # the runs are not there: the nodes are, without edges
    ...     uids = record_cross_validation(store, "lab", cv, [0, 1])
    ...     [(r["model"], r["by"], r["folds"], r["runs"]) for r in recorded_cross_validations(store, "lab")]
    [('q', 'block', 2, [0, 1])]
    """
    uid = experiment_uid(experiment)
    plan = cross_validation_plan(cv, runs, phases)
    rows, edges = [], []
    choices = cv.folds.choices()
    for score in cv.scores:
        node = f"{uid}/cv/{ids.part(score.model)}/{plan}"
        rows.append({
            "uid": node, "owner": uid, "model": score.model, "kind": score.kind, "by": cv.folds.by,
            "folds": cv.folds.folds, "seed": cv.folds.seed, "plan": plan,
            "assignment": [[list(p) for p in pieces] for pieces in cv.folds.pieces], "heldout": list(score.heldout),
            "choices": choices, "runs": [int(r) for r in runs], "participants": list(score.participants),
            "keys": list(cv.keys),
            "heldout_log_likelihood": score.total, "settings": _jsonable(score.settings), "score": cv.score,
            "starts": cv.starts, "seconds": score.seconds, "phases": None if phases is None else list(phases),
            "created_at": _now(), "version": _version(),
        })
        edges += [_key(node, run_uid(uid, int(r))) for r in runs]
    store.merge_shared([("CrossValidation", rows)], [("VALIDATES", "CrossValidation", "Run", edges)])
    return [r["uid"] for r in rows]


def _jsonable(value: Any) -> Any:
    """Tuples as lists, numbers as Python numbers: what a json property holds."""
    return json.loads(json.dumps(value, default=float))


CV_QUERY = (
    "MATCH (c:CrossValidation) WHERE c.owner = $uid RETURN c.uid, c.model, c.kind, c.by, c.folds, c.seed, c.plan, "
    "c.heldout, c.choices, c.runs, c.participants, c.heldout_log_likelihood, c.settings, c.score, c.`starts`, "
    "c.seconds, c.phases, c.created_at, c.assignment, c.keys ORDER BY c.created_at, c.model"
)


def recorded_cross_validations(store: GraphStore, experiment: str) -> list[dict[str, Any]]:
    """Every cross-validation result stored for the experiment, one per model and plan, oldest first.

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.

    Returns
    -------
    list of dict
        uid, model, kind, by, folds, seed, plan, heldout (per fold), choices (per fold), runs,
        participants (per run), heldout_log_likelihood, settings, score, starts, seconds, phases,
        created_at, assignment, keys (each participant's name: its first run's index).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.records import recorded_cross_validations
    >>> with open_store(":memory:") as store:
    ...     recorded_cross_validations(store, "lab")
    []
    """
    columns = ("uid", "model", "kind", "by", "folds", "seed", "plan", "heldout", "choices", "runs", "participants",
               "heldout_log_likelihood", "settings", "score", "starts", "seconds", "phases", "created_at",
               "assignment", "keys")
    out = []
    for row in store.cypher(CV_QUERY, {"uid": experiment_uid(experiment)}).rows:
        record = dict(zip(columns, row))
        for key in ("heldout", "choices", "runs", "participants", "settings", "phases", "assignment", "keys"):
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        out.append(record)
    return out


def _rounded(values: Any) -> Any:
    """Draws as nested lists of floats with 7 significant digits (what JSON stores of them)."""
    return np.vectorize(lambda v: float(f"{v:.7g}"), otypes=[float])(np.asarray(values, dtype=float)).tolist()


def record_posterior(store: GraphStore, experiment: str, posterior: Any, runs: Sequence[int],
                     phases: Sequence[str] | None = None) -> str:
    """Write a NUTS fit with its draws: the `GroupFit` (`record_group_fit`) and a `Posterior`
    node linked to it by HAS_POSTERIOR, holding every chain's draws (group means and sds,
    each participant's settings, each draw's log-likelihood of each participant, 7 significant
    digits), the divergences of each chain, how the chains ran and the PSIS-LOO. A fit of the
    same model to the same runs again replaces both. Returns the GroupFit's uid.

    Parameters
    ----------
    store
        An open store (writable).
    experiment
        The experiment's name.
    posterior
        A `graphtasks.fitting.bayes.Posterior` of the runs' choices.
    runs
        The run index of each participant, in the posterior's order.
    phases
        The phases whose trials were fitted (None: every phase).

    Returns
    -------
    str
        The GroupFit's uid (the Posterior's is it with "/posterior" added).
    """
    group = posterior.group
    if len(runs) != group.participants:
        raise BehaviourError(f"record_posterior: {len(runs)} runs for {group.participants} participants")
    group_id = record_group_fit(store, experiment, group, phases)
    diagnostics = group.diagnostics
    row = {
        "uid": f"{group_id}/posterior", "owner": experiment_uid(experiment), "model": group.model,
        "chains": posterior.chains, "samples": int(diagnostics["samples"]), "warmup": int(diagnostics["warmup"]),
        "seed": group.seed, "chain_method": diagnostics["chain_method"],
        "parameterisation": diagnostics["parameterisation"], "settings": list(posterior.names),
        "runs": [int(r) for r in runs], "divergences": list(diagnostics["divergences_per_chain"]),
        "mu": _rounded(posterior.mu), "sigma": _rounded(posterior.sigma), "x": _rounded(posterior.x),
        "log_lik": _rounded(posterior.log_lik), "loo": diagnostics.get("loo"), "created_at": _now(),
        "version": _version(),
    }
    store.merge_shared([("Posterior", [row])],
                       [("HAS_POSTERIOR", "GroupFit", "Posterior", [_key(group_id, row["uid"])])])
    return group_id


POSTERIOR_QUERY = (
    "MATCH (g:GroupFit)-[:HAS_POSTERIOR]->(p:Posterior) WHERE g.owner = $uid AND g.model = $model "
    "RETURN g.uid, p.chains, p.samples, p.warmup, p.seed, p.chain_method, p.parameterisation, p.settings, p.runs, "
    "p.divergences, p.mu, p.sigma, p.x, p.log_lik, p.loo, g.diagnostics, g.phases ORDER BY g.uid"
)


def recorded_posteriors(store: GraphStore, experiment: str, model: str) -> list[dict[str, Any]]:
    """The stored draws of every NUTS fit of `model` in the experiment (`record_posterior`).

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.
    model
        The model's name.

    Returns
    -------
    list of dict
        One per GroupFit: group (its uid), chains, samples, warmup, seed, chain_method,
        parameterisation, settings, runs, divergences (per chain), loo, diagnostics, phases,
        and the draws as arrays: mu and sigma (chains, draws, settings), x (chains, draws,
        participants, settings), log_lik (chains, draws, participants).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.records import recorded_posteriors
    >>> with open_store(":memory:") as store:
    ...     recorded_posteriors(store, "lab", "q")
    []
    """
    columns = ("group", "chains", "samples", "warmup", "seed", "chain_method", "parameterisation", "settings", "runs",
               "divergences", "mu", "sigma", "x", "log_lik", "loo", "diagnostics", "phases")
    out = []
    for row in store.cypher(POSTERIOR_QUERY, {"uid": experiment_uid(experiment), "model": model}).rows:
        record = dict(zip(columns, row))
        for key in ("settings", "runs", "divergences", "mu", "sigma", "x", "log_lik", "loo", "diagnostics", "phases"):
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        for key in ("mu", "sigma", "x", "log_lik"):
            record[key] = np.asarray(record[key], dtype=float)
        out.append(record)
    return out
