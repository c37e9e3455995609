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
from graphstore.arrow_columns import arrow_array, numpy_of
from graphstore.errors import GraphtasksError

from .chunks import KINDS, RecordChunkError, chunk_path, concat, read_chunk, records_folder, require_arrow, schema_of
from .ids import chunk_uid, episode_uid, experiment_uid, phase_uid, probe_uid, run_uid, trial_uid
from .observers import FINISHED, RUNNING, RunObserver, RunOutcome
from .runs import Cell
from .spec import ExperimentSpec
from .sweep import COLUMNS, split_probes, split_steps

QUERY_EPISODES = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.owner = $experiment "
    "RETURN e.run, r.task, e.task_version, e.task_hash, r.agent, r.label, r.params, r.seed, r.condition, e.phase, "
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
        "owner": uid,
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
            "owner": uid,
            "name": p.name,
            "condition": condition or None,
            "index": i,
            "episodes": p.episodes,
            "max_steps": p.max_steps if not isinstance(p.max_steps, dict) else None,
            "max_steps_by_task": p.max_steps if isinstance(p.max_steps, dict) else None,
            "agent_settings": p.agent or None,
            "env_settings": p.env or None,
            "learn": p.learn,
            "greedy": p.greedy or None,
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
LOAD FROM $trials WHERE experiment = $experiment AND step = 0
WITH run AS r1, phase_index AS p1, episode AS e1, state AS s1, action AS a1, next_state AS n1, task_version AS v1
LOAD FROM $trials WHERE experiment = $experiment AND step = 0 AND run = r1 AND phase_index = p1 AND episode = e1 + 1
WITH r1, p1, e1, s1, a1, n1, v1, action AS a2
LOAD FROM $episodes WHERE experiment = $experiment AND run = r1 AND phase_index = p1 AND episode = e1
WITH r1, s1, a1, n1, v1, a2, reward AS won
MATCH (s:State)-[m:MOVE]->(n:State)
WHERE s.task = v1 AND n.task = v1 AND s.index = s1 AND m.action = a1 AND n.index = n1
MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) WHERE x.name = $experiment AND r.index = r1
RETURN r.label AS agent,
       (CASE WHEN won > 0 THEN 'rewarded' ELSE 'unrewarded' END)
       + (CASE WHEN m.p >= 0.5 THEN '_common' ELSE '_rare' END) AS after,
       avg(CASE WHEN a2 = a1 THEN 1.0 ELSE 0.0 END) AS stay
ORDER BY agent, after
"""
"""The two-step stay probabilities of an experiment's agents, by what happened on the trial
before, over its trial chunks (`graphtasks cypher` binds $trials and $episodes); the same over
Trial nodes (a Bolt store, a store written before chunks) is `STAY_NODES_QUERY`."""

STAY_NODES_QUERY = """
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


STAY_BY_RUN_QUERY = STAY_NODES_QUERY.replace(
    "RETURN r.label AS agent,", "RETURN r.label AS agent, r.index AS run,"
).replace("ORDER BY agent, after", "ORDER BY agent, run, after")


STEP_QUERY = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid AND t.step IN $steps "
    "RETURN r.index, e.phase_index, e.index, t.step, t.state, t.action, t.reward, t.next_state, t.p_action, "
    "t.condition, e.task_version, e.reward"
)
STEP_COLUMNS = ("run", "phase_index", "episode", "step", "state", "action", "reward", "next_state", "p_action",
                "condition", "task_version", "episode_reward")


def step_rows(store: GraphStore, name: str, steps: Sequence[int] = (0,)) -> list[dict[str, Any]]:
    """The recorded trials of an experiment at these steps of their episodes (0: each
    episode's first choice), from its Trial nodes and its chunks alike, in run, phase, episode
    and step order: `STEP_COLUMNS` plus the run's `label`. What the reproductions' checks and
    figures read, so they measure the same whichever way the records are kept."""
    uid = experiment_uid(name)
    rows = [dict(zip(STEP_COLUMNS, row)) for row in store.cypher(STEP_QUERY, {"uid": uid, "steps": list(steps)}).rows]
    trials = chunk_table(store, name, "trials")
    if trials is not None:
        pa = require_arrow()
        trials = trials.filter(pa.compute.is_in(trials.column("step"), value_set=arrow_array(list(steps), pa.int32())))
        episodes = chunk_table(store, name, "episodes", ["phase_index", "episode", "reward"])
        rewards = {}
        if episodes is not None:
            keys = zip(*(episodes.column(c).to_pylist() for c in ("run", "phase_index", "episode", "reward")))
            rewards = {(run, phase, episode): reward for run, phase, episode, reward in keys}
        for row in trials.select(list(STEP_COLUMNS[:-1])).to_pylist():
            row["episode_reward"] = rewards.get((row["run"], row["phase_index"], row["episode"]))
            rows.append(row)
    labels = {index: label for index, label in store.cypher(RUN_LABELS_QUERY, {"uid": uid}).rows}
    for row in rows:
        row["label"] = labels.get(row["run"], "")
    rows.sort(key=lambda r: (r["run"], r["phase_index"], r["episode"], r["step"]))
    return rows


def trial_count(store: GraphStore, name: str) -> int:
    """How many trials an experiment recorded, as Trial nodes and in chunks."""
    uid = experiment_uid(name)
    nodes = store.cypher("MATCH (t:Trial) WHERE t.owner = $uid RETURN count(t)", {"uid": uid}).rows
    chunked = store.cypher("MATCH (c:Chunk) WHERE c.owner = $uid AND c.kind = 'trials' RETURN sum(c.rows)",
                           {"uid": uid}).rows
    return int(nodes[0][0] if nodes else 0) + int((chunked[0][0] if chunked else 0) or 0)


def stay_rows(store: GraphStore, name: str) -> list[tuple[str, int, str, float]]:
    """(agent label, run, after, stay probability) of a two-step experiment: how often each run
    repeated its first-stage choice after a rewarded or unrewarded, common or rare trial (what
    `STAY_BY_RUN_QUERY` answers over Trial nodes, for chunks too), by label, run and after."""
    firsts = step_rows(store, name, (0,))
    moves: dict[str, dict[tuple[int, int, int], float]] = {}
    for task_version in sorted({str(r["task_version"]) for r in firsts}):
        moves[task_version] = {(s, a, n): p for s, a, n, p in store.cypher(
            "MATCH (s:State)-[m:MOVE]->(n:State) WHERE s.task = $task AND n.task = $task "
            "RETURN s.index, m.action, n.index, m.p", {"task": task_version}).rows}
    by_episode = {(r["run"], r["phase_index"], r["episode"]): r for r in firsts}
    sums: dict[tuple[str, int, str], list[float]] = {}
    for (run, phase, episode), first in by_episode.items():
        following = by_episode.get((run, phase, episode + 1))
        p = moves[str(first["task_version"])].get((first["state"], first["action"], first["next_state"]))
        if following is None or p is None:
            continue
        after = ("rewarded" if (first["episode_reward"] or 0) > 0 else "unrewarded") + (
            "_common" if p >= 0.5 else "_rare")
        sums.setdefault((first["label"], run, after), []).append(1.0 if following["action"] == first["action"] else 0.0)
    return [(label, run, after, sum(v) / len(v)) for (label, run, after), v in sorted(sums.items())]


def stay_by_run(store: GraphStore, name: str) -> dict[tuple[str, str], list[float]]:
    """Each agent's stay probability per run, by what happened on the trial before."""
    out: dict[tuple[str, str], list[float]] = {}
    for agent, _, after, stay in stay_rows(store, name):
        out.setdefault((agent, after), []).append(float(stay))
    return out


def revaluation_by_run(store: GraphStore, name: str) -> dict[tuple[str, str], list[float]]:
    """Each run's revaluation score: how far its preference moved from the first probed phase
    to the last, by agent and condition."""
    rows = store.cypher(
        "MATCH (r:Run)-[:HAS_PROBE]->(p:Probe) WHERE r.owner = $uid "
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
    query = "MATCH (r:Run) WHERE r.owner = $uid AND r.status IN $finished RETURN r.index"
    return {row[0] for row in store.cypher(query, {"uid": experiment_uid(spec.name), "finished": list(FINISHED)}).rows}


Records = tuple[list[tuple[str, list[dict[str, Any]]]], list[tuple[str, str, str, list[dict[str, Any]]]]]


def run_node(spec: ExperimentSpec, cell: Cell, status: str, error: str | None, started_at: str, ended_at: str | None
             ) -> dict[str, Any]:
    """The Run node of one run, in the status it is in."""
    uid = experiment_uid(spec.name)
    return {
        "uid": run_uid(uid, cell.index),
        "owner": uid,
        "index": cell.index,
        "status": status,
        "task": cell.task,
        "agent": cell.agent.name,
        "label": cell.agent.label,
        "params": cell.agent.recorded,
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
    if outcome.chunks:
        return head_of(spec, outcome), chunk_records(spec, outcome)
    cell = outcome.cell
    uid = experiment_uid(spec.name)
    run_id = run_uid(uid, cell.index)
    probes = probe_nodes(spec, run_id, split_probes(outcome.rows or []))
    rows, trial_rows = split_steps(outcome.rows or [])
    trials = [
        {
            "uid": trial_uid(episode_uid(run_id, t["phase_index"], t["episode"]), t["step"]),
            "owner": uid,
            "experiment": spec.name,
            **{k: v for k, v in t.items() if k != "condition" or v is not None},
        }
        for t in trial_rows
    ]
    episodes = [
        {
            "uid": episode_uid(run_id, row["phase_index"], row["episode"]),
            "owner": uid,
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
    head = head_of(spec, outcome)
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


def head_of(spec: ExperimentSpec, outcome: RunOutcome) -> Records:
    """A run's Run node and HAS_RUN edge."""
    uid = experiment_uid(spec.name)
    run = run_node(spec, outcome.cell, outcome.status, outcome.error, outcome.started_at, outcome.ended_at)
    return [("Run", [run])], [("HAS_RUN", "Experiment", "Run", [_key(uid, run["uid"])])]


def probe_nodes(spec: ExperimentSpec, run_id: str, probes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run's Probe nodes, from its probe rows."""
    uid = experiment_uid(spec.name)
    return [{"uid": probe_uid(run_id, p["phase_index"]), "owner": uid, "experiment": spec.name, **p} for p in probes]


def chunk_records(spec: ExperimentSpec, outcome: RunOutcome) -> Records:
    """The catalogue of a run a worker wrote as chunks: its chunks (one node each, however many
    runs share it: `_joined` merges them by uid), HAS_CHUNK and HOLDS_RUN edges, and its probes."""
    uid = experiment_uid(spec.name)
    run_id = run_uid(uid, outcome.cell.index)
    chunks: list[dict[str, Any]] = [
        {
            "uid": chunk_uid(uid, c.sha256), "owner": uid, "experiment": spec.name, "kind": c.kind, "file": c.file,
            "sha256": c.sha256, "rows": c.rows, "runs": list(c.runs), "bytes": c.bytes, "created_at": _now(),
        }
        for c in outcome.chunks
    ]
    probes = probe_nodes(spec, run_id, outcome.probes)
    return (
        [("Chunk", chunks), ("Probe", probes)],
        [
            ("HAS_CHUNK", "Experiment", "Chunk", [_key(uid, str(c["uid"])) for c in chunks]),
            ("HOLDS_RUN", "Chunk", "Run", [_key(str(c["uid"]), run_id) for c in chunks]),
            ("HAS_PROBE", "Run", "Probe", [_key(run_id, p["uid"]) for p in probes]),
        ],
    )


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
            "MATCH (r:Run) WHERE r.owner = $uid AND r.index IN $runs RETURN r.index",
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
    """Several runs' records as one write: rows of the same label (edge type) together, a node
    (a chunk many runs share) and an edge once."""
    nodes: dict[str, dict[str, dict[str, Any]]] = {}
    edges: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
    for run_nodes, run_edges in batch:
        for label, rows in run_nodes:
            kept = nodes.setdefault(label, {})
            for row in rows:
                kept.setdefault(str(row["uid"]), row)
        for rel, a, b, rows in run_edges:
            kept = edges.setdefault((rel, a, b), {})
            for row in rows:
                kept.setdefault(str(row["key"]), row)
    return ([(label, list(rows.values())) for label, rows in nodes.items()],
            [(rel, a, b, list(rows.values())) for (rel, a, b), rows in edges.items()])


CHUNKS_QUERY = "MATCH (c:Chunk) WHERE c.owner = $uid AND c.kind = $kind RETURN c.file, c.rows ORDER BY c.file"
RUN_LABELS_QUERY = "MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.label"


def chunk_table(store: GraphStore, name: str, kind: str, columns: Sequence[str] | None = None) -> Any:
    """The rows of an experiment's catalogued chunks of one kind ('episodes', 'trials') as one
    Arrow table in run order, or None if it has no chunks (its records are nodes, or none).

    A run is read from one chunk only: should two drivers have catalogued the same run in two
    chunks (same seeds, the same rows), the first chunk's rows are kept.
    """
    uid = experiment_uid(name)
    found = store.cypher(CHUNKS_QUERY, {"uid": uid, "kind": kind}).rows
    if not found:
        return None
    folder = records_folder(store.location)
    if folder is None:
        raise RecordChunkError(f"experiment {name!r} names record chunks, but store {store.location!r} has no "
                               "records folder")
    pa = require_arrow()
    pc = pa.compute
    wanted = None if columns is None else list(dict.fromkeys(["run", *columns]))
    tables, seen = [], arrow_array([], pa.int32())
    for file, rows in found:
        table = read_chunk(folder, file, rows, wanted)
        if len(seen):
            table = table.filter(pc.invert(pc.is_in(table.column("run"), value_set=seen)))
        seen = pa.concat_arrays([seen, pc.unique(table.column("run")).cast(pa.int32())])
        tables.append(table)
    table = concat(kind, tables) if wanted is None else pa.concat_tables(tables)
    order = [("run", "ascending"), ("phase_index", "ascending"), ("episode", "ascending")]
    if kind == "trials":
        order.append(("step", "ascending"))
    present = set(table.column_names)
    return table.sort_by([o for o in order if o[0] in present])


def record_sources(store: GraphStore) -> dict[str, Any]:
    """What `LOAD FROM $episodes` and `LOAD FROM $trials` scan in a query on this store: the
    catalogued chunk files of every experiment (an empty table of the kind's columns where
    there are none, so a query over no records returns no rows rather than failing).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.records import record_sources
    >>> with open_store(":memory:") as store:
    ...     store.cypher("LOAD FROM $episodes RETURN count(*)", sources=record_sources(store)).rows
    [[0]]
    """
    folder = records_folder(store.location)
    out: dict[str, Any] = {}
    for kind in KINDS:
        files = store.cypher("MATCH (c:Chunk) WHERE c.kind = $kind RETURN c.file ORDER BY c.file", {"kind": kind}).rows
        if files and folder is not None:
            out[kind] = _uniform([str(chunk_path(folder, file)) for (file,) in files], kind)
        else:
            out[kind] = schema_of(kind).empty_table()
    return out


def _uniform(paths: list[str], kind: str) -> Any:
    """The chunk files themselves where they share their columns; else (some hold an optional
    column such as `rt`, response times, and others not) one Arrow table of them all, nulls
    where a chunk lacks the column: a scan takes files of one set of columns only."""
    pa = require_arrow()
    import pyarrow.parquet as pq

    names = {tuple(pq.read_schema(path).names) for path in paths}
    if len(names) == 1:
        return paths
    columns = list(dict.fromkeys(name for group in sorted(names, key=len) for name in group))
    return pa.concat_tables([read_chunk(os.path.dirname(os.path.dirname(path)),
                                        os.path.join(*path.split(os.sep)[-2:]), None, columns) for path in paths])


def chunks_as_records(store: GraphStore, names: Sequence[str]) -> Records:
    """The Episode and Trial records (with their HAS_EPISODE, IN_PHASE and HAS_TRIAL edges)
    that these experiments' chunks hold, as rows in `merge_shared`'s form: the same uids and
    properties a store of Episode nodes holds, so the RDF view (`graphstore.rdf.add_shared_rows`)
    is the same whichever way the records are kept."""
    nodes: dict[str, list[dict[str, Any]]] = {"Episode": [], "Trial": []}
    edges: dict[str, list[dict[str, str]]] = {"HAS_EPISODE": [], "IN_PHASE": [], "HAS_TRIAL": []}
    for name in names:
        uid = experiment_uid(name)
        episodes = chunk_table(store, name, "episodes")
        if episodes is None:
            continue
        conditions = {index: condition or "" for index, condition in store.cypher(
            "MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.condition", {"uid": uid}).rows}
        for e in episodes.to_pylist():
            run_id = run_uid(uid, e["run"])
            episode_id = episode_uid(run_id, e["phase_index"], e["episode"])
            nodes["Episode"].append({
                "uid": episode_id, "owner": uid, "experiment": name, "run": e["run"], "phase": e["phase"],
                "phase_index": e["phase_index"], "index": e["episode"], "reward": e["reward"], "length": e["length"],
                "start_state": e["start_state"], "task_version": e["task_version"], "task_hash": e["task_hash"],
            })
            edges["HAS_EPISODE"].append(_key(run_id, episode_id))
            edges["IN_PHASE"].append(_key(episode_id, phase_uid(uid, conditions.get(e["run"], ""), e["phase_index"])))
        trials = chunk_table(store, name, "trials")
        for t in trials.to_pylist() if trials is not None else []:
            episode_id = episode_uid(run_uid(uid, t["run"]), t["phase_index"], t["episode"])
            trial_id = trial_uid(episode_id, t["step"])
            row = {k: v for k, v in t.items() if k not in ("task_version", "condition")}
            nodes["Trial"].append({"uid": trial_id, "owner": uid, **row, "experiment": name,
                                   **({"condition": t["condition"]} if t["condition"] is not None else {})})
            edges["HAS_TRIAL"].append(_key(episode_id, trial_id))
    ends = {"HAS_EPISODE": ("Run", "Episode"), "IN_PHASE": ("Episode", "Phase"), "HAS_TRIAL": ("Episode", "Trial")}
    return ([(label, rows) for label, rows in nodes.items() if rows],
            [(rel, *ends[rel], rows) for rel, rows in edges.items() if rows])


def outside_records(store: GraphStore, owners: Sequence[str] | None) -> Records | None:
    """The reader of the entry-point group `graphtasks.outside_records`: the Episode and Trial
    records these owners' (experiment uids'; None: every experiment's) chunks hold, or None
    where the store has no chunks."""
    if not store.cypher("MATCH (c:Chunk) RETURN c.uid LIMIT 1").rows:
        return None
    names = [name for uid, name in store.cypher("MATCH (x:Experiment) RETURN x.uid, x.name ORDER BY x.name").rows
             if owners is None or uid in owners]
    return chunks_as_records(store, names)


def run_columns(store: GraphStore, name: str) -> dict[int, tuple[Any, ...]]:
    """(task_id, agent, label, params as canonical JSON, seed, condition) of each run, by index."""
    out = {}
    for index, task, agent, label, params, seed, condition in store.cypher(
        "MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.task, r.agent, r.label, r.params, r.seed, r.condition",
        {"uid": experiment_uid(name)},
    ).rows:
        loaded = json.loads(params) if isinstance(params, str) else params
        out[index] = (task, agent, label, json.dumps(loaded, sort_keys=True), seed, condition or "")
    return out


def chunk_episodes(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """The episode rows of an experiment's chunks, as `recorded_episodes` returns them."""
    table = chunk_table(store, name, "episodes")
    if table is None:
        return []
    runs = run_columns(store, name)
    out = []
    columns = [table.column(c).to_pylist() for c in
               ("run", "task_version", "task_hash", "phase", "phase_index", "episode", "reward", "length",
                "start_state")]
    for run, task_version, digest, phase, phase_index, episode, reward, length, start in zip(*columns):
        task, agent, label, params, seed, condition = runs[run]
        out.append({"experiment": name, "run": run, "task": task, "phase_task": task_version, "task_hash": digest,
                    "agent": agent, "label": label, "params": params, "seed": seed, "condition": condition,
                    "phase": phase, "phase_index": phase_index, "episode": episode, "return": reward,
                    "length": length, "start_state": start})
    return out


def run_task_versions(store: GraphStore, name: str) -> list[tuple[int, str]]:
    """(run index, task version) of every task version each run's episodes ran, nodes and chunks."""
    pairs = {(int(run), str(version)) for run, version in store.cypher(
        "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.owner = $uid RETURN DISTINCT r.index, e.task_version",
        {"uid": experiment_uid(name)}).rows}
    table = chunk_table(store, name, "episodes", ["task_version"])
    if table is not None:
        distinct = table.group_by(["run", "task_version"]).aggregate([])
        pairs |= set(zip(distinct.column("run").to_pylist(), distinct.column("task_version").to_pylist()))
    return sorted(pairs)


def task_version_counts(store: GraphStore, name: str) -> list[tuple[str, str, int]]:
    """(task version, content hash, episodes) the experiment's recorded episodes ran, nodes and chunks."""
    counts: dict[tuple[str, str], int] = {}
    for version_id, digest, n in store.cypher(
        "MATCH (e:Episode) WHERE e.owner = $uid RETURN e.task_version, e.task_hash, count(e)",
        {"uid": experiment_uid(name)},
    ).rows:
        counts[(version_id, digest)] = counts.get((version_id, digest), 0) + n
    table = chunk_table(store, name, "episodes", ["task_version", "task_hash"])
    if table is not None:
        grouped = table.group_by(["task_version", "task_hash"]).aggregate([("run", "count")])
        for version_id, digest, n in zip(*(grouped.column(c).to_pylist()
                                           for c in ("task_version", "task_hash", "run_count"))):
            counts[(version_id, digest)] = counts.get((version_id, digest), 0) + n
    return [(v, h, n) for (v, h), n in sorted(counts.items())]


def episode_summary(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """Mean return and length per task, agent setting, condition and phase, over seeds and
    episodes (`sweep.summary` of `recorded_episodes`), summed in the store and in the chunks
    rather than over a row per episode."""
    sums: dict[tuple[str, str, str, int, str], list[float]] = {}

    def add(key: tuple[str, str, str, int, str], count: int, reward: float, length: float) -> None:
        total = sums.setdefault(key, [0, 0.0, 0.0])
        total[0] += count
        total[1] += reward
        total[2] += length

    uid = experiment_uid(name)
    for task, label, condition, index, phase, count, reward, length in store.cypher(
        "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.owner = $uid "
        "RETURN r.task, r.label, r.condition, e.phase_index, e.phase, count(e), sum(e.reward), sum(e.length)",
        {"uid": uid},
    ).rows:
        add((task, label, condition or "", index, phase), int(count), float(reward), float(length))
    table = chunk_table(store, name, "episodes", ["phase_index", "phase", "reward", "length"])
    if table is not None:
        import numpy as np

        runs = run_columns(store, name)
        # summed by run and phase with numpy, not Arrow's group_by (its engine loads
        # pyarrow.dataset, which imports pandas: 0.3 s or more of a command's start); a phase
        # index names one phase of a run, so its name is its first row's
        run_of, index_of = numpy_of(table.column("run")), numpy_of(table.column("phase_index"))
        groups, first, inverse = np.unique(run_of.astype(np.int64) * 65536 + index_of, return_index=True,
                                           return_inverse=True)
        counts = np.bincount(inverse, minlength=len(groups))
        rewards = np.bincount(inverse, weights=numpy_of(table.column("reward")), minlength=len(groups))
        lengths = np.bincount(inverse, weights=numpy_of(table.column("length")), minlength=len(groups))
        phases = table.column("phase").take(arrow_array(first, require_arrow().int64())).to_pylist()
        for g, start in enumerate(first.tolist()):
            task, _, label, _, _, condition = runs[int(run_of[start])]
            add((task, label, condition, int(index_of[start]), phases[g]), int(counts[g]), float(rewards[g]),
                float(lengths[g]))
    return [
        {"task": task, "agent": label, "condition": condition, "phase": phase, "episodes": int(count),
         "mean_return": float(reward / count), "mean_length": float(length / count)}
        for (task, label, condition, _, phase), (count, reward, length) in sorted(sums.items())
    ]


def recorded_episodes(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """Every recorded episode of an experiment, as the rows `run_experiment` returns: its
    Episode nodes (stores on a server, stores written before chunks) and its chunks' rows."""
    result = store.cypher(QUERY_EPISODES, {"experiment": experiment_uid(name)})
    keys = COLUMNS[1:]  # the query returns every column but the experiment's name, in order
    out = []
    canonical: dict[str, str] = {}  # a run's params, once per run rather than once per episode
    chunked = chunk_episodes(store, name)
    if chunked and not result.rows:
        return chunked
    for row in result.rows:
        record = dict(zip(keys, row))
        params = record["params"]
        key = params if isinstance(params, str) else json.dumps(params, sort_keys=True)
        if key not in canonical:
            canonical[key] = json.dumps(json.loads(key), sort_keys=True)
        record["params"] = canonical[key]
        record["condition"] = record["condition"] or ""
        out.append({"experiment": name, **record})
    if chunked:
        out = sorted(out + chunked, key=lambda r: (r["run"], r["phase_index"], r["episode"]))
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

    A run is marked running at the first write after it has run for `marker_delay` seconds
    (the driver's heartbeat gives it a turn while it waits for its workers), so anyone looking
    sees it under way; a run that ends sooner, as most of a batched sweep's do, is written
    once, completed: one write per run instead of two. (`experiment delete` does not rely on
    the markers: it asks the experiment's driver lock, held from the driver's start.)
    """

    def __init__(
        self,
        location: str | None,
        spec: ExperimentSpec,
        seconds: float = 1.0,
        most: int = 64,
        on_wait: Callable[[Any], None] | None = None,
        marker_delay: float = 1.0,
    ) -> None:
        self.location, self.spec, self.on_wait = location, spec, on_wait
        self.seconds, self.most, self.marker_delay = seconds, most, marker_delay
        self.started: list[tuple[Cell, str]] = []
        self.since: dict[int, float] = {}  # a started run's index -> when it started (monotonic)
        self.pending: list[RunOutcome] = []
        self.last = time.monotonic()
        self.wrote = 0.0  # seconds the last write took
        self.gone: ExperimentGone | None = None  # the experiment was deleted: nothing more is written

    def run_started(self, cell: Cell, started_at: str) -> None:
        self.started.append((cell, started_at))
        self.since[cell.index] = time.monotonic()
        self._maybe_flush()

    def heartbeat(self) -> None:
        self._maybe_flush()

    def driver_busy(self) -> None:
        """No heartbeat until the runs end: mark the runs under way now, if a write is due (as
        often as any write: many short units played in the driver open the store no more often)."""
        if time.monotonic() - self.last >= max(self.seconds, 10 * self.wrote) and self._markers(everything=True):
            self.flush(everything=True)

    def run_finished(self, outcome: RunOutcome) -> None:
        self.pending.append(outcome)
        self._maybe_flush()

    def runs_finished(self, outcomes: Sequence[RunOutcome]) -> None:
        self.pending.extend(outcomes)  # a batch's runs: one write, however many
        self._maybe_flush()

    def experiment_finished(self, status: str) -> None:
        if self.gone is None:
            self.flush(everything=True)

    def _markers(self, everything: bool = False) -> list[tuple[Cell, str]]:
        """The started runs due a running marker: those under way for `marker_delay` (all, at the end)."""
        ended = {o.cell.index for o in self.pending}
        cutoff = time.monotonic() - self.marker_delay
        return [(cell, at) for cell, at in self.started
                if cell.index not in ended and (everything or self.since.get(cell.index, 0.0) <= cutoff)]

    def _maybe_flush(self) -> None:
        due = max(self.seconds, 10 * self.wrote)
        if len(self.pending) >= self.most:
            self.flush()
        elif time.monotonic() - self.last >= due:  # only then look for markers due (a pass over the runs)
            if self.pending or self._markers():
                self.flush()
            else:
                self.last = time.monotonic()  # nothing due: look again after `due`, not at every event

    def flush(self, everything: bool = False) -> None:
        if self.gone is not None:
            raise self.gone
        start = time.monotonic()
        markers = self._markers(everything)
        if self.pending or markers:
            from graphstore import open_store
            from graphstore.interrupts import interrupts_held

            # a Ctrl-C waits for the write to finish (and the close, in `close`), never for the
            # turn at the store: a driver waiting for another writer can still be stopped
            with open_store(self.location, "w", on_wait=self.on_wait) as store, interrupts_held():
                try:
                    record_runs(store, self.spec, self.pending, markers)
                except ExperimentGone as gone:
                    self.gone = gone
                    raise
                done = {o.cell.index for o in self.pending} | {cell.index for cell, _ in markers}
                self.started = [(cell, at) for cell, at in self.started if cell.index not in done]
                for index in done:
                    self.since.pop(index, None)
                self.pending = []
            self.wrote = time.monotonic() - start
        self.last = time.monotonic()
