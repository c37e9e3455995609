"""Behaviour and fits in the store.

An imported events file becomes a `Run` of a `Participant` in an experiment of its own, with
an `Episode` per trial and a `Trial` per choice, so human and simulated behaviour are read,
queried and fitted the same way. A fit is a `Fit` node linked to the run it explains and to
its model (`(:Run)<-[:FITS]-(:Fit)-[:OF_MODEL]->(:Model)`: the agent, the free settings with
their bounds, the fixed ones), carrying the fitted settings, the log-likelihood, AIC and BIC;
fits and models belong to the run's experiment and are deleted with it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from graphstore import GraphStore
from graphtasks.experiments.observers import COMPLETED
from graphtasks.experiments.records import ExperimentExists, _key, _now, _version, experiment_uid, phase_uid

from .behaviour import BehaviourError, Choices, load_run, read_events
from .mle import FitResult

PHASE = "behaviour"


def participant_of(path: Path, read: bool = True) -> str:
    """The participant id: the file's `participant_id` column (when `read`), else BIDS
    `sub-<id>` in the file name, else the file name."""
    if read:
        with path.open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                value = (row.get("participant_id") or "").strip()
                if value and value != "n/a":
                    return value
                break
    found = re.match(r"sub-([A-Za-z0-9]+)", path.name)
    return found.group(1) if found else path.stem


def _ensure_task(store: GraphStore, task_id: str) -> str:
    """The stored task's content hash, putting the built-in task first if it is missing."""
    digest = store.content_hash(task_id)
    if digest is None:
        import tasks

        store.put(tasks.build(task_id))
        digest = store.content_hash(task_id)
    return str(digest)


def import_behaviour(
    store: GraphStore, name: str, paths: Sequence[str | Path], task_id: str | None = None, drop_reminded: bool = True
) -> list[dict[str, Any]]:
    """Import events files (one participant each) as the runs of experiment `name`; every file
    is read and checked before anything is written. Importing the same files again changes
    nothing; other files under a recorded name are refused."""
    from .likelihood import task_shape

    files = [Path(p) for p in paths]
    if not files:
        raise BehaviourError("import: no files given")
    read = [(participant_of(p), read_events(p, task_id, drop_reminded)) for p in files]
    for _, choices in read:
        task_shape(choices.task_id, store).check(choices)
    participants = [p for p, _ in read]
    if len(set(participants)) != len(participants):
        raise BehaviourError(f"import: a participant appears twice: {sorted(participants)}")
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:16]
    uid = experiment_uid(name)
    known = store.cypher("MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.spec_hash", {"uid": uid}).rows
    if known and known[0][0] != digest:
        raise ExperimentExists(
            f"experiment {name!r} is recorded in {store.location!r} with other data; import under another name"
        )
    hashes = {c.task_id: _ensure_task(store, c.task_id) for _, c in read}
    nodes: dict[str, list[dict[str, Any]]] = {"Experiment": [], "Phase": [], "Participant": [], "Run": [],
                                              "Episode": [], "Trial": []}
    edges: dict[tuple[str, str, str], list[dict[str, str]]] = {}

    def edge(kind: str, a: str, b: str, s: str, t: str) -> None:
        edges.setdefault((kind, a, b), []).append(_key(s, t))

    phase = phase_uid(uid, "", 0)
    nodes["Experiment"].append({
        "uid": uid, "task": uid, "name": name, "spec_hash": digest, "created_at": _now(),
        "description": f"behaviour imported from {', '.join(p.name for p in files)}",
    })
    nodes["Phase"].append({"uid": phase, "task": uid, "name": PHASE, "index": 0, "learn": True,
                           "episodes": max(c.trials for _, c in read)})
    edge("HAS_PHASE", "Experiment", "Phase", uid, phase)
    summary = []
    for index, ((participant, choices), path) in enumerate(zip(read, files)):
        run = f"{uid}/run/{index}"
        person = f"{uid}/participant/{participant}"
        nodes["Participant"].append({"uid": person, "task": uid, "participant_id": participant, "source": path.name})
        nodes["Run"].append({
            "uid": run, "task": uid, "index": index, "status": COMPLETED, "task_id": choices.task_id,
            "agent": "participant", "label": participant, "params": {}, "seed": 0, "version": _version(),
        })
        edge("HAS_RUN", "Experiment", "Run", uid, run)
        edge("PERFORMED", "Participant", "Run", person, run)
        for trial, steps in enumerate(_trials(choices)):
            episode = f"{run}/0/{trial}"
            nodes["Episode"].append({
                "uid": episode, "task": uid, "experiment": name, "run": index, "phase": PHASE, "phase_index": 0,
                "index": trial, "reward": float(sum(choices.rewards[i] for i in steps)), "length": len(steps),
                "start_state": int(choices.states[steps[0]]), "task_version": choices.task_id,
                "task_hash": hashes[choices.task_id],
            })
            edge("HAS_EPISODE", "Run", "Episode", run, episode)
            edge("IN_PHASE", "Episode", "Phase", episode, phase)
            for step, i in enumerate(steps):
                uid_t = f"{episode}/{step}"
                nodes["Trial"].append({
                    "uid": uid_t, "task": uid, "experiment": name, "run": index, "phase_index": 0, "episode": trial,
                    "step": step, "state": int(choices.states[i]), "action": int(choices.actions[i]),
                    "reward": float(choices.rewards[i]), "next_state": int(choices.next_states[i]),
                })
                edge("HAS_TRIAL", "Episode", "Trial", episode, uid_t)
        summary.append({"participant": participant, "run": index, "trials": choices.trials, "choices": len(choices)})
    store.merge_shared(list(nodes.items()), [(k, a, b, rows) for (k, a, b), rows in edges.items()])
    return summary


def _trials(choices: Choices) -> Iterable[list[int]]:
    steps: list[int] = []
    for i, end in enumerate(choices.ends.tolist()):
        steps.append(i)
        if end:
            yield steps
            steps = []
    if steps:
        yield steps


def model_uid(experiment: str, result: FitResult) -> str:
    """One Model node per experiment, name, agent, bounds and fixed settings."""
    settings = json.dumps({"agent": result.agent, "bounds": result.bounds, "fixed": result.fixed}, sort_keys=True)
    return f"{experiment_uid(experiment)}/model/{result.model}/{hashlib.sha256(settings.encode()).hexdigest()[:8]}"


def record_fits(store: GraphStore, experiment: str, fits: Sequence[FitResult]) -> None:
    """Write fits of runs of `experiment` (each result's `source` is its run's uid), each linked
    to its run and its model; a fit of the same model to the same run replaces the old one."""
    uid = experiment_uid(experiment)
    models, rows, runs, of_model = {}, [], [], []
    for f in fits:
        model = model_uid(experiment, f)
        models[model] = {"uid": model, "task": uid, "name": f.model, "agent": f.agent, "bounds": f.bounds,
                         "fixed": f.fixed}
        fit_id = f"{f.source}/fit/{model.rsplit('/model/', 1)[1]}"
        rows.append({
            "uid": fit_id, "task": uid, "model": f.model, "agent": f.agent, "params": f.params, "stderr": f.stderr,
            "fixed": f.fixed, "log_likelihood": f.log_likelihood, "aic": f.aic, "bic": f.bic, "choices": f.choices,
            "starts": f.starts, "seed": f.seed, "created_at": _now(), "version": _version(),
        })
        runs.append(_key(fit_id, f.source))
        of_model.append(_key(fit_id, model))
    store.merge_shared(
        [("Model", list(models.values())), ("Fit", rows)],
        [("FITS", "Fit", "Run", runs), ("OF_MODEL", "Fit", "Model", of_model)],
    )


def fit_runs(
    store: GraphStore,
    experiment: str,
    runs: Sequence[int],
    model: Any,
    starts: int = 5,
    seed: int = 0,
    workers: int | None = 1,
) -> list[FitResult]:
    """Fit `model` to each of the runs (their recorded trials), in order; the runs are read
    here and fitted on `workers` processes (the same fits for any number of them)."""
    from .likelihood import task_shape

    jobs = []
    for run in runs:
        choices = load_run(store, experiment, run)
        jobs.append((model, choices, starts, seed, task_shape(choices.task_id, store)))
    if workers == 1 or len(jobs) < 2:
        return [_fit_job(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_fit_job, jobs))


def _fit_job(job: tuple[Any, Choices, int, int, Any]) -> FitResult:
    from .mle import fit

    model, choices, starts, seed, shape = job
    return fit(model, choices, starts=starts, seed=seed, shape=shape)


FITS_QUERY = (
    "MATCH (f:Fit)-[:FITS]->(r:Run) WHERE f.task = $uid "
    "RETURN r.index, r.label, f.model, f.params, f.stderr, f.log_likelihood, f.aic, f.bic, f.choices "
    "ORDER BY r.index, f.bic"
)


def compare_models(fits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model, over the runs fitted by every model: summed log-likelihood, AIC and BIC, and
    how many runs it fits best by BIC; best model (lowest summed BIC) first."""
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


def recorded_fits(store: GraphStore, experiment: str) -> list[dict[str, Any]]:
    """Every fit of the experiment's runs: run, label, model, params, stderr, log-likelihood, AIC, BIC, choices."""
    columns = ("run", "label", "model", "params", "stderr", "log_likelihood", "aic", "bic", "choices")
    out = []
    for row in store.cypher(FITS_QUERY, {"uid": experiment_uid(experiment)}).rows:
        record = dict(zip(columns, row))
        for key in ("params", "stderr"):
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        record["stderr"] = record["stderr"] or {}
        out.append(record)
    return out
