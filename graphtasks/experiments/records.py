"""Experiment records in the store: written by the driver only, one transaction per finished run.

A run is written whole (its Run node, episodes and edges) when it finishes, so a sweep that
is interrupted leaves finished runs and nothing half-written; running the same spec again
skips the runs recorded as done and redoes the rest. Rows are merged by uid: writing a run
twice changes nothing.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
import socket
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, Mapping, Sequence

from graphstore import GraphStore, TaskGraph
from graphstore.errors import GraphtasksError

from .ids import episode_uid, experiment_uid, phase_uid, probe_uid, run_uid, trial_uid
from .observers import FINISHED, RUNNING, RunObserver, RunOutcome
from .runs import Cell
from .spec import ExperimentSpec
from .sweep import COLUMNS, split_probes, split_steps

QUERY_EPISODES = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.task = $experiment "
    "RETURN e.run, r.task_id, e.task_version, e.task_hash, r.agent, r.label, r.params, r.seed, r.condition, e.phase, "
    "e.phase_index, e.index, e.reward, e.length, e.start_state ORDER BY e.run, e.phase_index, e.index"
)


class ExperimentExists(GraphtasksError, ValueError):
    """A different spec was recorded under the same experiment name."""


class ExperimentGone(GraphtasksError, LookupError):
    """The experiment was deleted while its sweep ran: what ends after that is not recorded."""


def require_experiment(store: GraphStore, spec: ExperimentSpec) -> str:
    """The experiment's uid; ExperimentGone if it is no longer recorded (deleted meanwhile).

    Records are never written for an experiment that is not there: they would be orphans, and
    LadybugDB crashes on a bulk load whose relationships name deleted nodes (see
    `scripts/ladybug_copy_after_delete.py`).
    """
    uid = experiment_uid(spec.name)
    if not store.cypher("MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.uid", {"uid": uid}).rows:
        raise ExperimentGone(
            f"experiment {spec.name!r} was deleted from {store.location!r} while it ran; "
            "the runs that ended since are not recorded"
        )
    return uid


def spec_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@functools.cache
def _version() -> str:
    try:
        return version("graphtasks")
    except PackageNotFoundError:
        return "unknown"


def _key(a: str, b: str) -> dict[str, str]:
    return {"s": a, "t": b, "key": f"{a}|{b}"}


def record_experiment(store: GraphStore, spec: ExperimentSpec, text: str) -> None:
    """Write the Experiment and its Phases (once); refuse a different spec under the same name."""
    from .migrate import require_current

    require_current(store, spec.name)
    uid = experiment_uid(spec.name)
    digest = spec_hash(text)
    rows = store.cypher("MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.spec_hash", {"uid": uid}).rows
    if rows:
        if rows[0][0] != digest:
            raise ExperimentExists(
                f"experiment {spec.name!r} is recorded in {store.location!r} with another spec; "
                "rename it in [experiment] name, or delete the old records"
            )
        return
    experiment = {
        "uid": uid,
        "task": uid,
        "name": spec.name,
        "spec_hash": digest,
        "spec": text,
        "description": spec.description,
        "reference": spec.reference,
        "created_at": _now(),
    }
    phases: list[dict[str, Any]] = [
        {
            "uid": phase_uid(uid, condition, i),
            "task": uid,
            "name": p.name,
            "condition": condition or None,
            "index": i,
            "episodes": p.episodes,
            "max_steps": p.max_steps if not isinstance(p.max_steps, dict) else None,
            "max_steps_by_task": p.max_steps if isinstance(p.max_steps, dict) else None,
            "agent_settings": p.agent or None,
            "env_settings": p.env or None,
            "learn": p.learn,
            "changes": p.changes or None,
        }
        for condition in spec.condition_names()
        for i, p in enumerate(spec.phases_of(condition))
    ]
    store.merge_shared(
        [("Experiment", [experiment]), ("Phase", phases)],
        [("HAS_PHASE", "Experiment", "Phase", [_key(uid, str(p["uid"])) for p in phases])],
    )


def record_tasks(store: GraphStore, graphs: Mapping[str, TaskGraph]) -> None:
    """Put every task version the experiment runs (a version already stored is left as it is),
    so records can be joined with the tasks' states and edges by id and content hash."""
    for graph in graphs.values():
        if store.content_hash(graph.task_id) != graph.content_hash():
            store.put(graph)


STAY_QUERY = """
MATCH (e1:Episode)-[:HAS_TRIAL]->(a:Trial) WHERE e1.experiment = $experiment AND a.step = 0
MATCH (e2:Episode)-[:HAS_TRIAL]->(b:Trial)
WHERE e2.experiment = e1.experiment AND e2.run = e1.run AND e2.phase_index = e1.phase_index
  AND e2.index = e1.index + 1 AND b.step = 0
MATCH (s:State)-[m:MOVE]->(n:State)
WHERE s.task = e1.task_version AND n.task = s.task AND s.index = a.state AND m.action = a.action
  AND n.index = a.next_state
MATCH (r:Run)-[:HAS_EPISODE]->(e1)
RETURN r.label AS agent,
       (CASE WHEN e1.reward > 0 THEN 'rewarded' ELSE 'unrewarded' END)
       + (CASE WHEN m.p >= 0.5 THEN '_common' ELSE '_rare' END) AS after,
       avg(CASE WHEN b.action = a.action THEN 1.0 ELSE 0.0 END) AS stay
ORDER BY agent, after
"""


STAY_BY_RUN_QUERY = STAY_QUERY.replace("RETURN r.label AS agent,", "RETURN r.label AS agent, r.index AS run,").replace(
    "ORDER BY agent, after", "ORDER BY agent, run, after"
)


def stay_by_run(store: GraphStore, name: str) -> dict[tuple[str, str], list[float]]:
    """Each agent's stay probability per run, by what happened on the trial before."""
    out: dict[tuple[str, str], list[float]] = {}
    for agent, _, after, stay in store.cypher(STAY_BY_RUN_QUERY, {"experiment": name}).rows:
        out.setdefault((agent, after), []).append(float(stay))
    return out


def revaluation_by_run(store: GraphStore, name: str) -> dict[tuple[str, str], list[float]]:
    """Each run's revaluation score: how far its preference moved from the first probed phase
    to the last, by agent and condition."""
    rows = store.cypher(
        "MATCH (r:Run)-[:HAS_PROBE]->(p:Probe) WHERE r.task = $uid "
        "RETURN r.index, r.label, r.condition, p.phase_index, p.preference ORDER BY r.index, p.phase_index",
        {"uid": experiment_uid(name)},
    ).rows
    runs: dict[int, tuple[str, str, list[float]]] = {}
    for run, label, condition, _, preference in rows:
        runs.setdefault(run, (label, condition or "", []))[2].append(float(preference))
    out: dict[tuple[str, str], list[float]] = {}
    for label, condition, preferences in runs.values():
        if len(preferences) > 1:
            out.setdefault((label, condition), []).append(abs(preferences[-1] - preferences[0]))
    return out


REVALUATION_QUERY = """
MATCH (x:Experiment)-[:HAS_RUN]->(r:Run)-[:HAS_PROBE]->(before:Probe), (r)-[:HAS_PROBE]->(after:Probe)
WHERE x.name = $experiment AND before.phase = $before AND after.phase = $after
RETURN r.label AS agent, r.condition AS condition,
       avg(abs(after.preference - before.preference)) AS revaluation, count(r) AS runs
ORDER BY agent, condition
"""


def finished_runs(store: GraphStore, spec: ExperimentSpec) -> set[int]:
    """Indices of the runs recorded as completed (a re-run skips them)."""
    query = "MATCH (r:Run) WHERE r.task = $uid AND r.status IN $finished RETURN r.index"
    return {row[0] for row in store.cypher(query, {"uid": experiment_uid(spec.name), "finished": list(FINISHED)}).rows}


Records = tuple[list[tuple[str, list[dict[str, Any]]]], list[tuple[str, str, str, list[dict[str, Any]]]]]


def run_node(spec: ExperimentSpec, cell: Cell, status: str, error: str | None, started_at: str, ended_at: str | None
             ) -> dict[str, Any]:
    """The Run node of one run, in the status it is in."""
    uid = experiment_uid(spec.name)
    return {
        "uid": run_uid(uid, cell.index),
        "task": uid,
        "index": cell.index,
        "status": status,
        "task_id": cell.task,
        "agent": cell.agent.name,
        "label": cell.agent.label,
        "params": cell.agent.params,
        "seed": cell.seed,
        "condition": cell.condition or None,
        "error": error,
        "version": _version(),
        "host": socket.gethostname(),
        "driver": os.getpid(),
        "started_at": started_at,
        "ended_at": ended_at,
    }


def run_records(spec: ExperimentSpec, outcome: RunOutcome) -> tuple[Records, Records]:
    """What records one run: (its Run node and HAS_RUN edge, its episodes, trials, probes and their edges)."""
    cell = outcome.cell
    uid = experiment_uid(spec.name)
    run = run_node(spec, cell, outcome.status, outcome.error, outcome.started_at, outcome.ended_at)
    run_id = run["uid"]
    probes = [
        {"uid": probe_uid(run_id, p["phase_index"]), "task": uid, "experiment": spec.name, **p}
        for p in split_probes(outcome.rows or [])
    ]
    rows, trial_rows = split_steps(outcome.rows or [])
    trials = [
        {
            "uid": trial_uid(episode_uid(run_id, t["phase_index"], t["episode"]), t["step"]),
            "task": uid,
            "experiment": spec.name,
            **{k: v for k, v in t.items() if k != "condition" or v is not None},
        }
        for t in trial_rows
    ]
    episodes = [
        {
            "uid": episode_uid(run_id, row["phase_index"], row["episode"]),
            "task": uid,
            "experiment": spec.name,
            "run": cell.index,
            "phase": row["phase"],
            "phase_index": row["phase_index"],
            "index": row["episode"],
            "reward": row["return"],
            "length": row["length"],
            "start_state": row["start_state"],
            "task_version": row["phase_task"],
            "task_hash": row["task_hash"],
        }
        for row in rows or []
    ]
    head: Records = ([("Run", [run])], [("HAS_RUN", "Experiment", "Run", [_key(uid, run_id)])])
    body: Records = (
        [("Episode", episodes), ("Trial", trials), ("Probe", probes)],
        [
            ("HAS_EPISODE", "Run", "Episode", [_key(run_id, e["uid"]) for e in episodes]),
            (
                "IN_PHASE",
                "Episode",
                "Phase",
                [_key(e["uid"], phase_uid(uid, cell.condition, e["phase_index"])) for e in episodes],
            ),
            ("HAS_TRIAL", "Episode", "Trial", [_key(t["uid"].rsplit("/", 1)[0], t["uid"]) for t in trials]),
            ("HAS_PROBE", "Run", "Probe", [_key(run_id, p["uid"]) for p in probes]),
        ],
    )
    return head, body


def record_runs(
    store: GraphStore,
    spec: ExperimentSpec,
    finished: list[RunOutcome],
    running: Sequence[tuple[Cell, str]] = (),
) -> None:
    """Runs that started (`running`: a Run node in status running) and runs that ended.

    A run recorded for the first time is bulk-created whole in one transaction (COPY FROM on
    the embedded store). A run recorded before (a running marker, a failed or interrupted
    attempt) gets its episodes, trials and probes first and its Run node's final status last,
    so a driver that dies between the two leaves a run that is not completed and is run again
    (its records are then merged over, which changes nothing).
    """
    uid = require_experiment(store, spec)
    ending = {o.cell.index for o in finished}
    markers = [run_node(spec, cell, RUNNING, None, at, None) for cell, at in running if cell.index not in ending]
    if markers:
        keys = [_key(uid, str(m["uid"])) for m in markers]
        store.merge_shared([("Run", markers)], [("HAS_RUN", "Experiment", "Run", keys)])
    known = {
        row[0]
        for row in store.cypher(
            "MATCH (r:Run) WHERE r.task = $uid AND r.index IN $runs RETURN r.index",
            {"uid": uid, "runs": sorted(ending)},
        ).rows
    }
    records = {o.cell.index: run_records(spec, o) for o in finished}
    new = [records[i] for i in sorted(ending - known)]
    if new:
        whole = _joined([head for head, _ in new] + [body for _, body in new])
        try:
            store.create_shared(*whole)
        except GraphtasksError:  # e.g. another driver recorded them meanwhile: merge instead
            store.merge_shared(*whole)
    again = [records[i] for i in sorted(ending & known)]
    if again:
        bodies = _joined([body for _, body in again])
        try:
            store.create_shared(*bodies)
        except GraphtasksError:
            store.merge_shared(*bodies)
        store.merge_shared(*_joined([head for head, _ in again]))


def _joined(batch: list[Records]) -> Records:
    """Several runs' records as one write: rows of the same label (edge type) together."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    edges: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for run_nodes, run_edges in batch:
        for label, rows in run_nodes:
            nodes.setdefault(label, []).extend(rows)
        for rel, a, b, rows in run_edges:
            edges.setdefault((rel, a, b), []).extend(rows)
    return list(nodes.items()), [(rel, a, b, rows) for (rel, a, b), rows in edges.items()]


def recorded_episodes(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """Every recorded episode of an experiment, as the rows `run_experiment` returns."""
    result = store.cypher(QUERY_EPISODES, {"experiment": experiment_uid(name)})
    keys = COLUMNS[1:]  # the query returns every column but the experiment's name, in order
    out = []
    canonical: dict[str, str] = {}  # a run's params, once per run rather than once per episode
    for row in result.rows:
        record = dict(zip(keys, row))
        params = record["params"]
        key = params if isinstance(params, str) else json.dumps(params, sort_keys=True)
        if key not in canonical:
            canonical[key] = json.dumps(json.loads(key), sort_keys=True)
        record["params"] = canonical[key]
        record["condition"] = record["condition"] or ""
        out.append({"experiment": name, **record})
    return out


def recorded_experiments(store: GraphStore) -> list[dict[str, Any]]:
    """Each recorded experiment with its runs done and failed."""
    rows = store.cypher(
        "MATCH (x:Experiment) OPTIONAL MATCH (x)-[:HAS_RUN]->(r:Run) "
        "RETURN x.name, x.created_at, count(r), sum(CASE WHEN r.status IN $finished THEN 1 ELSE 0 END) "
        "ORDER BY x.name",
        {"finished": list(FINISHED)},
    ).rows
    return [{"experiment": n, "created_at": c, "runs": runs, "completed": done or 0} for n, c, runs, done in rows]


class StoreRecorder(RunObserver):
    """The store as an observer: records runs as they start and end, in batches, opening the
    store for writing only while it writes.

    An embedded store admits one writer and no reader while it is open for writing; holding it
    for a whole sweep would lock out everyone who wants to look at the results so far. So a
    batch (the runs started and finished in the last `seconds`, or `most` of them) is written
    in one opening, and the store is free in between. Opening costs a tenth of a second or so,
    so a batch is due no sooner than ten times the last write took: writing stays near a tenth
    of the sweep's time however fast its runs are.
    """

    def __init__(
        self,
        location: str | None,
        spec: ExperimentSpec,
        seconds: float = 1.0,
        most: int = 64,
        on_wait: Callable[[Any], None] | None = None,
    ) -> None:
        self.location, self.spec, self.on_wait = location, spec, on_wait
        self.seconds, self.most = seconds, most
        self.started: list[tuple[Cell, str]] = []
        self.pending: list[RunOutcome] = []
        self.last = time.monotonic()
        self.wrote = 0.0  # seconds the last write took
        self.gone: ExperimentGone | None = None  # the experiment was deleted: nothing more is written

    def run_started(self, cell: Cell, started_at: str) -> None:
        self.started.append((cell, started_at))
        self._maybe_flush()

    def run_finished(self, outcome: RunOutcome) -> None:
        self.pending.append(outcome)
        self._maybe_flush()

    def runs_finished(self, outcomes: Sequence[RunOutcome]) -> None:
        self.pending.extend(outcomes)  # a batch's runs: one write, however many
        self._maybe_flush()

    def experiment_finished(self, status: str) -> None:
        if self.gone is None:
            self.flush()

    def _maybe_flush(self) -> None:
        due = max(self.seconds, 10 * self.wrote)
        if len(self.pending) >= self.most or time.monotonic() - self.last >= due:
            self.flush()

    def flush(self) -> None:
        if self.gone is not None:
            raise self.gone
        start = time.monotonic()
        if self.pending or self.started:
            from graphstore import open_store
            from graphstore.interrupts import interrupts_held

            # a Ctrl-C waits for the write to finish (and the close, in `close`), never for the
            # turn at the store: a driver waiting for another writer can still be stopped
            with open_store(self.location, "w", on_wait=self.on_wait) as store, interrupts_held():
                try:
                    record_runs(store, self.spec, self.pending, self.started)
                except ExperimentGone as gone:
                    self.gone = gone
                    raise
                self.pending, self.started = [], []
            self.wrote = time.monotonic() - start
        self.last = time.monotonic()
