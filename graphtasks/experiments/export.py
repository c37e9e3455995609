"""Tables of recorded experiments: one row per episode or per trial, as CSV or parquet, and
rewardGym-style BIDS events files (one TSV per run, with its JSON sidecar) for trial tasks.

Trials of people (`graphtasks serve`) carry what the browser measured (`BROWSER_COLUMNS`);
a trial table has those columns only when some of its trials do."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Iterable

from graphstore import GraphStore
from graphstore.errors import GraphtasksError

from .ids import run_uid as run_uid_of
from .records import chunk_table, experiment_uid, run_columns

TRIAL_COLUMNS = (
    "experiment",
    "run",
    "task",
    "task_version",
    "agent",
    "label",
    "params",
    "seed",
    "condition",
    "phase",
    "phase_index",
    "episode",
    "step",
    "state",
    "action",
    "reward",
    "next_state",
    "p_action",
    "trial_type",
)

QUERY_TRIALS = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.task = $uid "
    "RETURN r.index, r.task_id, e.task_version, r.agent, r.label, r.params, r.seed, r.condition, e.phase, "
    "e.phase_index, e.index, t.step, t.state, t.action, t.reward, t.next_state, t.p_action, t.condition, "
    "e.start_state ORDER BY r.index, e.phase_index, e.index, t.step"
)

# What the browser measured on a person's trial (graphtasks.serve.schema); agents' trials leave them empty
BROWSER_COLUMNS = ("rt", "shown_ms", "pressed_ms", "key", "timeouts", "server_rt", "received_at")
QUERY_BROWSER = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
    "WHERE r.task = $uid AND t.received_at IS NOT NULL RETURN r.index, e.phase_index, e.index, t.step, "
    + ", ".join(f"t.{c}" for c in BROWSER_COLUMNS)
)

# rewardGym's event-log columns (rewardgym/psychopy_render/logger.py), in its order; ours follow
BIDS_COLUMNS = (
    "onset",
    "duration",
    "trial_type",
    "start_position",
    "event_type",
    "response_time",
    "response_button",
    "response_late",
    "reward",
    "delta_reward",
    "trial",
    "TR",
    "task",
    "run",
    "participant_id",
    "expected_duration",
    "trial_time",
    "total_reward",
    "current_location",
    "state",
    "p_action",
    "phase",
)
NA = "n/a"
# The sidecar of an events file (BIDS: every column that is not onset or duration described)
BIDS_SIDECAR: dict[str, dict[str, str]] = {
    "onset": {"Description": "the trial's position in the run: one unit per step (a simulated run has no clock)",
              "Units": "steps"},
    "duration": {"Description": "one step", "Units": "steps"},
    "trial_type": {"Description": "the trial's condition in the task's trial schedule (n/a: none)"},
    "start_position": {"Description": "the index of the state the episode started in"},
    "event_type": {"Description": "stage-N: the N-th step (choice) of the episode, from 0"},
    "response_time": {"Description": "people: the time from the screen's display to the key press, measured in "
                      "the browser (performance.now()); n/a for agents", "Units": "s"},
    "response_button": {"Description": "the action taken (its index in the task's actions)"},
    "response_late": {"Description": "people: 'too slow' screens shown before this response; n/a for agents"},
    "reward": {"Description": "the reward collected in the run so far"},
    "delta_reward": {"Description": "the reward of this step"},
    "trial": {"Description": "the episode's number in the run, from 0"},
    "TR": {"Description": "repetition time (0: no scanner)", "Units": "s"},
    "task": {"Description": "the task id in graphtasks (its version is in the experiment records)"},
    "run": {"Description": "the BIDS run (1)"},
    "participant_id": {"Description": "sim<run>: the experiment's run number (agents and pseudonymous people)"},
    "expected_duration": {"Description": "not recorded (n/a)"},
    "trial_time": {"Description": "not recorded (n/a)"},
    "total_reward": {"Description": "the reward collected in the run so far (as reward)"},
    "current_location": {"Description": "the index of the state the step led to"},
    "state": {"Description": "the index of the state the step was taken in"},
    "p_action": {"Description": "the agent's probability of the action taken (n/a for people)"},
    "phase": {"Description": "the experiment phase of the step"},
}


class ExportError(GraphtasksError, ValueError):
    """An export cannot be made as asked (a missing extra, nothing of that kind recorded)."""


def chunk_trials(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """The trial rows of an experiment's chunks, as `recorded_trials` returns them."""
    table = chunk_table(store, name, "trials")
    if table is None:
        return []
    episodes = chunk_table(store, name, "episodes", ["phase_index", "episode", "start_state"])
    starts = {}
    if episodes is not None:
        keys = zip(*(episodes.column(c).to_pylist() for c in ("run", "phase_index", "episode", "start_state")))
        starts = {(run, phase, episode): start for run, phase, episode, start in keys}
    runs = run_columns(store, name)
    phases = {index: phase for index, phase in store.cypher(
        "MATCH (x:Experiment)-[:HAS_PHASE]->(p:Phase) WHERE x.uid = $uid RETURN p.index, p.name",
        {"uid": experiment_uid(name)}).rows}
    names = ("run", "task_version", "phase_index", "episode", "step", "state", "action", "reward", "next_state",
             "p_action", "condition")
    out = []
    for run, version, phase_index, episode, step, state, action, reward, next_state, p_action, condition in zip(
        *(table.column(c).to_pylist() for c in names)
    ):
        task, agent, label, params, seed, run_condition = runs[run]
        out.append({
            "experiment": name, "run": run, "task": task, "task_version": version, "agent": agent, "label": label,
            "params": params, "seed": seed, "condition": run_condition, "phase": phases.get(phase_index, ""),
            "phase_index": phase_index, "episode": episode, "step": step, "state": state, "action": action,
            "reward": reward, "next_state": next_state, "p_action": p_action, "trial_type": condition,
            "start_state": starts.get((run, phase_index, episode)),
        })
    return out


def recorded_trials(store: GraphStore, name: str) -> list[dict[str, Any]]:
    """Every recorded trial of an experiment, one row per step, in run, phase, episode, step order:
    its Trial nodes (stores on a server, people's sessions, stores written before chunks) and
    its chunks' rows."""
    chunked = chunk_trials(store, name)
    out = []
    for row in store.cypher(QUERY_TRIALS, {"uid": experiment_uid(name)}).rows:
        values = dict(zip(("experiment", *TRIAL_COLUMNS[1:], "start_state"), (name, *row)))
        params = values["params"]
        values["params"] = json.dumps(json.loads(params) if isinstance(params, str) else params, sort_keys=True)
        values["condition"] = values["condition"] or ""
        out.append(values)
    browser = {tuple(row[:4]): row[4:] for row in store.cypher(QUERY_BROWSER, {"uid": experiment_uid(name)}).rows}
    if browser:
        for values in out:
            found = browser.get((values["run"], values["phase_index"], values["episode"], values["step"]))
            values.update(zip(BROWSER_COLUMNS, found or (None,) * len(BROWSER_COLUMNS)))
    if chunked:
        if browser:
            for values in chunked:
                values.update(dict.fromkeys(BROWSER_COLUMNS))
        out = sorted(out + chunked, key=lambda r: (r["run"], r["phase_index"], r["episode"], r["step"]))
    return out


def trial_columns(trials: list[dict[str, Any]]) -> tuple[str, ...]:
    """The columns of a trial table: TRIAL_COLUMNS, then BROWSER_COLUMNS when the trials have them."""
    return TRIAL_COLUMNS + BROWSER_COLUMNS if trials and BROWSER_COLUMNS[0] in trials[0] else TRIAL_COLUMNS


def require_parquet() -> Any:
    """pyarrow's parquet module, or ExportError naming the extra to install."""
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ExportError("parquet needs pyarrow: pip install 'graphtasks[tables]'") from None
    return parquet


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A CSV or TSV cell that a spreadsheet shows as text, never evaluates: a text value starting
    with = + - @ a tab or a carriage return gets a leading single quote (OWASP's rule for CSV
    injection). Numbers, and text that is a plain number ("-3", "+1.5e2"), are kept as they are;
    parquet keeps every raw value.

    Parameters
    ----------
    value : Any
        The cell.

    Returns
    -------
    Any
        The value, or the quoted text.

    Examples
    --------
    >>> from graphtasks.experiments.export import spreadsheet_cell
    >>> [spreadsheet_cell(v) for v in ("=1+2", "@SUM(A1)", "-1+2", "-3", -3, 1.5, "f", None)]
    ["'=1+2", "'@SUM(A1)", "'-1+2", '-3', -3, 1.5, 'f', None]
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(rows: Iterable[dict[str, Any]], columns: tuple[str, ...], delimiter: str = ",") -> str:
    """The rows as CSV (or TSV with `delimiter="\t"`), each cell through `spreadsheet_cell`."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, delimiter=delimiter, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_cell(v) for k, v in row.items()} for row in rows)
    return text.getvalue()


def parquet_bytes(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> bytes:
    """The rows as a parquet file (columns typed from their values)."""
    parquet = require_parquet()
    import pyarrow

    table = pyarrow.table({c: [row.get(c) for row in rows] for c in columns})
    sink = pyarrow.BufferOutputStream()
    parquet.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _bids_label(text: str) -> str:
    """A BIDS entity label: letters and digits only."""
    return re.sub(r"[^A-Za-z0-9]", "", text) or "x"


def bids_events(trials: list[dict[str, Any]]) -> dict[str, str]:
    """rewardGym-style events files, one per run: file name -> TSV text.

    A simulated run has no clock, so `onset` counts trials (one unit per step) and
    `duration` is 1; `participant_id` is the run (`sim<run>`), `response_button` the action,
    `reward` and `total_reward` the running total, `delta_reward` what the step paid,
    `current_location` the state it led to; the columns after rewardGym's are ours.
    """
    runs: dict[int, list[dict[str, Any]]] = {}
    for t in trials:
        runs.setdefault(t["run"], []).append(t)
    files = {}
    for run, steps in sorted(runs.items()):
        first = steps[0]
        task = _bids_label(first["task"].rsplit("/", 1)[-1])
        name = f"sub-sim{run:04d}_task-{task}_run-1_events.tsv"
        total, trial, rows = 0.0, -1, []
        episode_key = None
        for onset, t in enumerate(steps):
            key = (t["phase_index"], t["episode"])
            if key != episode_key:
                trial, episode_key = trial + 1, key
            total += float(t["reward"])
            rows.append(
                {
                    **{c: NA for c in BIDS_COLUMNS},
                    "onset": onset,
                    "duration": 1,
                    "trial_type": t["trial_type"] or NA,
                    "start_position": t["start_state"],
                    "event_type": f"stage-{t['step']}",
                    "response_button": t["action"],
                    "response_time": NA if t.get("rt") is None else round(float(t["rt"]) / 1000, 6),
                    "response_late": NA if t.get("rt") is None else int(t.get("timeouts") or 0),
                    "reward": total,
                    "delta_reward": t["reward"],
                    "trial": trial,
                    "TR": 0,
                    "task": t["task"],
                    "run": 1,
                    "participant_id": f"sim{run:04d}",
                    "total_reward": total,
                    "current_location": t["next_state"],
                    "state": t["state"],
                    "p_action": NA if t["p_action"] is None else t["p_action"],
                    "phase": t["phase"],
                }
            )
        files[name] = csv_text(rows, BIDS_COLUMNS, "\t")
    return files


def trials_of_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trial rows (as `recorded_trials` reads them from a store) of a run's episode rows
    with their steps, as a sweep hands them to its observers."""
    out = []
    for row in rows:
        for step, (state, action, reward, next_state, p_action) in enumerate(row.get("steps") or ()):
            out.append(
                {
                    "experiment": row["experiment"], "run": row["run"], "task": row["task"],
                    "task_version": row["phase_task"], "agent": row["agent"], "label": row["label"],
                    "params": row["params"], "seed": row["seed"], "condition": row["condition"],
                    "phase": row["phase"], "phase_index": row["phase_index"], "episode": row["episode"],
                    "step": step, "state": state, "action": action, "reward": reward, "next_state": next_state,
                    "p_action": p_action, "trial_type": row.get("trial_condition"), "start_state": row["start_state"],
                }
            )
    return out


def write_bids(trials: list[dict[str, Any]], directory: str | Path) -> list[Path]:
    """Write `bids_events` into `directory` (made if missing), each events file with its
    `_events.json` sidecar describing its columns (`BIDS_SIDECAR`); the events files written."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    sidecar = json.dumps({c: BIDS_SIDECAR[c] for c in BIDS_COLUMNS}, indent=2) + "\n"
    for name, text in bids_events(trials).items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        path.with_suffix(".json").write_text(sidecar, encoding="utf-8")
        written.append(path)
    return written


# -- RDF: the records as Turtle, their provenance as W3C PROV-O ---------------------------------
PROV_NS = "http://www.w3.org/ns/prov#"
PROV_PREFIXES = {"prov": PROV_NS}
QUERY_PROV_RUNS = (
    "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) WHERE x.uid = $uid "
    "RETURN r.uid, r.index, r.status, r.agent, r.label, r.params, r.seed, r.started_at, r.ended_at, r.version "
    "ORDER BY r.index"
)
QUERY_PROV_USED = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.task = $uid "
    "RETURN DISTINCT r.uid, e.task_version, e.task_hash"
)
QUERY_PROV_PARTICIPANTS = (
    "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.task = $uid RETURN p.uid, p.participant_id, r.uid"
)
QUERY_PROV_FITS = (
    "MATCH (f:Fit)-[:FITS]->(r:Run) WHERE f.task = $uid "
    "RETURN f.uid, f.model, f.agent, f.method, f.created_at, f.version, r.uid"
)
QUERY_PROV_GROUP_FITS = (
    "MATCH (g:GroupFit)-[:HAS_FIT]->(f:Fit) WHERE g.task = $uid RETURN g.uid, g.model, g.method, g.created_at, f.uid"
)
QUERY_PROV_MODELS = "MATCH (f)-[:OF_MODEL]->(m:Model) WHERE m.task = $uid RETURN f.uid, m.uid, m.name"
QUERY_PROV_EXPERIMENT = "MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.name, x.spec_hash, x.created_at"


def records_rdf(store: GraphStore, name: str) -> Any:
    """The RDF view of one experiment's records (the gt: vocabulary, W3C ML-Schema types).

    Parameters
    ----------
    store
        An open store holding the experiment.
    name
        The experiment's name.

    Returns
    -------
    rdflib.Graph
        Its Experiment, Phase, Run, Episode, Trial, Probe, Participant, Model and Fit nodes with the
        relationships among them; JSON attributes (a run's `params`) as structured values. The
        graph is on Oxigraph (SPARQL runs there; `graphstore.rdf.to_turtle` dumps it from there).
    """
    from graphstore.rdf import store_to_rdf

    return store_to_rdf(store, [], owners=[experiment_uid(name)])


def prov_rdf(store: GraphStore, name: str) -> Any:
    """The provenance of one experiment as W3C PROV-O.

    Runs and fits are `prov:Activity` (with `prov:startedAtTime` / `prov:endedAtTime`); the task
    versions a run used are `prov:Entity` (`<task version IRI>@<content hash>`, a
    `prov:specializationOf` the task) it `prov:used`; the agent setting that ran it (or the
    participant who performed it) is a `prov:Agent` it `prov:wasAssociatedWith`, under the
    experiment as `prov:Plan` (`prov:qualifiedAssociation`). A fit `prov:wasInformedBy` the run
    whose choices it explains and `prov:used` its model; a group fit `prov:wasInformedBy` its
    members' fits. Runs, fits and the experiment keep the IRIs of the records' RDF view
    (`records_rdf`), so both graphs merge.

    Parameters
    ----------
    store
        An open store holding the experiment.
    name
        The experiment's name.

    Returns
    -------
    rdflib.Graph
        The PROV-O graph (rdflib's memory store).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from graphstore import open_store
    >>> from graphtasks.experiments import Experiment
    >>> from graphtasks.experiments.export import prov_rdf
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "spec.toml").write_text('''
    ... [experiment]
    ... name = "prov-example"
    ... tasks = ["rewardgym/two-step"]
    ... seeds = 2
    ... [[agents]]
    ... name = "hybrid"
    ... [[phases]]
    ... name = "trials"
    ... episodes = 3
    ... ''')
    >>> store = str(folder / "store.lbug")
    >>> _ = Experiment.from_file(folder / "spec.toml", store).run(store)
    >>> with open_store(store, "r") as opened:
    ...     graph = prov_rdf(opened, "prov-example")
    >>> from rdflib import RDF, Namespace
    >>> PROV = Namespace("http://www.w3.org/ns/prov#")
    >>> len(set(graph.subjects(RDF.type, PROV.Activity)))
    2
    """
    from rdflib import RDF, XSD, BNode, Graph, Literal, Namespace

    from graphstore.rdf import GT, node_iri

    prov = Namespace(PROV_NS)
    uid = experiment_uid(name)
    graph = Graph()
    graph.bind("prov", prov)
    graph.bind("gt", GT)
    params = {"uid": uid}

    def time(subject: Any, predicate: Any, value: Any) -> None:
        if value:
            graph.add((subject, predicate, Literal(str(value), datatype=XSD.dateTime)))

    plan = node_iri(uid)
    for exp_name, spec_hash, created_at in store.cypher(QUERY_PROV_EXPERIMENT, params).rows:
        graph.add((plan, RDF.type, prov.Plan))
        graph.add((plan, RDF.type, prov.Entity))
        graph.add((plan, GT.name, Literal(exp_name)))
        graph.add((plan, GT.spec_hash, Literal(spec_hash)))
        time(plan, prov.generatedAtTime, created_at)
    performers = {}
    for participant_uid, participant_id, run_uid in store.cypher(QUERY_PROV_PARTICIPANTS, params).rows:
        person = node_iri(participant_uid)
        graph.add((person, RDF.type, prov.Agent))
        graph.add((person, RDF.type, prov.Person))
        graph.add((person, GT.participant_id, Literal(participant_id)))
        performers[run_uid] = person
    for run_uid, index, status, agent, label, _params, seed, started, ended, version in store.cypher(
        QUERY_PROV_RUNS, params
    ).rows:
        run = node_iri(run_uid)
        graph.add((run, RDF.type, prov.Activity))
        graph.add((run, RDF.type, GT.Run))
        graph.add((run, GT["index"], Literal(int(index))))
        graph.add((run, GT.status, Literal(status)))
        graph.add((run, GT.seed, Literal(int(seed))))
        time(run, prov.startedAtTime, started)
        time(run, prov.endedAtTime, ended)
        who = performers.get(run_uid)
        if who is None:
            who = node_iri(f"{uid}/agent/{label}")
            graph.add((who, RDF.type, prov.Agent))
            graph.add((who, RDF.type, prov.SoftwareAgent))
            graph.add((who, GT.agent, Literal(agent)))
            graph.add((who, GT.label, Literal(label)))
        graph.add((run, prov.wasAssociatedWith, who))
        association = BNode("assoc-" + "".join(c if c.isalnum() else "-" for c in run_uid))
        graph.add((run, prov.qualifiedAssociation, association))
        graph.add((association, RDF.type, prov.Association))
        graph.add((association, prov.agent, who))
        graph.add((association, prov.hadPlan, plan))
    used = [tuple(row) for row in store.cypher(QUERY_PROV_USED, params).rows]
    chunked = chunk_table(store, name, "episodes", ["task_version", "task_hash"])
    if chunked is not None:  # the task versions a run's chunked episodes ran, once per run
        distinct = chunked.group_by(["run", "task_version", "task_hash"]).aggregate([])
        used += [(run_uid_of(experiment_uid(name), run), version_id, digest) for run, version_id, digest in
                 zip(*(distinct.column(c).to_pylist() for c in ("run", "task_version", "task_hash")))]
    for run_uid, task_version, task_hash in sorted(set(used)):
        version = node_iri(f"{task_version}@{task_hash}")
        graph.add((version, RDF.type, prov.Entity))
        graph.add((version, GT.task_version, Literal(task_version)))
        graph.add((version, GT.task_hash, Literal(task_hash)))
        graph.add((version, prov.specializationOf, node_iri(task_version)))
        graph.add((node_iri(run_uid), prov.used, version))
    for fit_uid, model, agent, method, created_at, version, run_uid in store.cypher(QUERY_PROV_FITS, params).rows:
        fit = node_iri(fit_uid)
        graph.add((fit, RDF.type, prov.Activity))
        graph.add((fit, RDF.type, GT.Fit))
        graph.add((fit, GT.model, Literal(model)))
        graph.add((fit, GT.method, Literal(method or "mle")))
        time(fit, prov.endedAtTime, created_at)
        graph.add((fit, prov.wasInformedBy, node_iri(run_uid)))
    for group_uid, model, method, created_at, fit_uid in store.cypher(QUERY_PROV_GROUP_FITS, params).rows:
        group = node_iri(group_uid)
        graph.add((group, RDF.type, prov.Activity))
        graph.add((group, RDF.type, GT.GroupFit))
        graph.add((group, GT.model, Literal(model)))
        graph.add((group, GT.method, Literal(method)))
        time(group, prov.endedAtTime, created_at)
        graph.add((group, prov.wasInformedBy, node_iri(fit_uid)))
    for fit_uid, model_uid, model_name in store.cypher(QUERY_PROV_MODELS, params).rows:
        model = node_iri(model_uid)
        graph.add((model, RDF.type, prov.Entity))
        graph.add((model, RDF.type, prov.Plan))
        graph.add((model, GT.name, Literal(model_name)))
        graph.add((node_iri(fit_uid), prov.used, model))
    return graph


def rdf_text(store: GraphStore, name: str, fmt: str) -> str:
    """An experiment's records (`fmt` 'turtle') or their provenance ('prov') as Turtle text."""
    from graphstore.rdf import to_turtle

    if fmt == "prov":
        return to_turtle(prov_rdf(store, name), PROV_PREFIXES)
    if fmt == "turtle":
        from .schema import MLS

        return to_turtle(records_rdf(store, name), {"mls": MLS})
    raise ExportError(f"--format: expected prov or turtle, got {fmt!r}")
