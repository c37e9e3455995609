"""Tables of recorded experiments: one row per episode or per trial, as CSV or parquet (tidy:
a typed column per agent setting, the same dtypes in both), and a BIDS dataset of the trials
(one subject per run, rewardGym-style events files with their JSON sidecars, onsets in seconds).

Trials of people (`graphtasks serve`) carry what the browser measured (`BROWSER_COLUMNS`);
a trial table has those columns only when some of its trials do."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

from graphstore import GraphStore
from graphstore.errors import GraphtasksError

from .ids import run_uid as run_uid_of
from .observers import COMPLETED, RunObserver, RunOutcome
from .psychds import psychds_keys
from .records import chunk_table, experiment_uid, run_columns
from .spreadsheet import csv_text

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
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
    "RETURN r.index, r.task, e.task_version, r.agent, r.label, r.params, r.seed, r.condition, e.phase, "
    "e.phase_index, e.index, t.step, t.state, t.action, t.reward, t.next_state, t.p_action, t.condition, "
    "e.start_state ORDER BY r.index, e.phase_index, e.index, t.step"
)

# What the browser measured on a person's trial (graphtasks.serve.schema); agents' trials leave them empty
BROWSER_COLUMNS = ("rt", "shown_ms", "pressed_ms", "key", "timeouts", "server_rt", "received_at",
                   "timer_resolution_ms", "isolated", "input", "blurs", "away_ms", "hidden", "fullscreen_exits",
                   "pastes", "key_repeats", "webdriver")  # graphtasks.serve.schema's Trial properties
QUERY_BROWSER = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
    "WHERE r.owner = $uid AND t.received_at IS NOT NULL RETURN r.index, e.phase_index, e.index, t.step, "
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
# The sidecar of an events file (BIDS: every column described); onset and duration are described
# per file, by how its times were made (BIDS_TIMES)
BIDS_SIDECAR: dict[str, dict[str, str]] = {
    "onset": {"Description": "when the trial's screen was shown, from the run's first screen", "Units": "s"},
    "duration": {"Description": "how long the trial lasted", "Units": "s"},
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
    "run": {"Description": "the BIDS run (1: each subject is one graphtasks run)"},
    "participant_id": {"Description": "the subject's label (sub-<label>); participants.tsv maps it to the "
                       "experiment's run, agent and label"},
    "expected_duration": {"Description": "not recorded (n/a)"},
    "trial_time": {"Description": "not recorded (n/a)"},
    "total_reward": {"Description": "the reward collected in the run so far (as reward)"},
    "current_location": {"Description": "the index of the state the step led to"},
    "state": {"Description": "the index of the state the step was taken in"},
    "p_action": {"Description": "the agent's probability of the action taken (n/a for people)"},
    "phase": {"Description": "the experiment phase of the step"},
}
# How a run's onsets and durations were made: from what was recorded, or from a stated trial duration
BIDS_TIMES = {
    "browser": (
        "when the trial's screen was shown, in seconds from the run's first screen, by the browser's clock "
        "(performance.now() at the display, shown_ms)",
        "the response time the browser measured (rt): from the screen's display to the key press",
    ),
    "server": (
        "when the trial's screen was shown, in seconds from the run's first screen: the time the server received "
        "the response (received_at) less the response time the browser measured (rt); the browser's clock was "
        "not kept for every trial or restarted (a reloaded page)",
        "the response time the browser measured (rt): from the screen's display to the key press",
    ),
    "stated": (
        "the trial's start in seconds from the run's start, with every trial lasting the stated trial duration "
        "({seconds:g} s, --trial-duration): the run recorded no times (a simulated run has no clock)",
        "the stated trial duration ({seconds:g} s, --trial-duration), not a measured time",
    ),
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


# The type of each column of the exported tables ("str", "int", "float", "bool"): parquet is
# written with it and CSV values are made to read back as it (pandas reads both to the same dtypes)
EXPORT_TYPES: dict[str, str] = {
    "experiment": "str", "run": "int", "task": "str", "phase_task": "str", "task_hash": "str", "agent": "str",
    "label": "str", "seed": "int", "condition": "str", "phase": "str", "phase_index": "int", "episode": "int",
    "return": "float", "length": "int", "start_state": "int", "task_version": "str", "step": "int", "state": "int",
    "action": "int", "reward": "float", "next_state": "int", "p_action": "float", "trial_type": "str",
    "rt": "float", "shown_ms": "float", "pressed_ms": "float", "key": "str", "timeouts": "int", "server_rt": "float",
    "received_at": "str", "timer_resolution_ms": "float", "isolated": "bool", "input": "str", "blurs": "int",
    "away_ms": "float", "hidden": "int", "fullscreen_exits": "int", "pastes": "int", "key_repeats": "int",
    "webdriver": "bool",
}
NONE = "none"  # the condition of a run of an experiment without conditions, the trial type of an unscheduled trial
PARAM_PREFIX = "param_"  # the column of an agent setting: param_<name>


def _param_type(values: list[Any]) -> str:
    """The type of a setting's column: bool, int, float (numbers of both kinds), else str."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "str"


def _typed(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "str" and not isinstance(value, str):
        return json.dumps(value, sort_keys=True)
    return value


def tidy_table(
    rows: list[dict[str, Any]], columns: tuple[str, ...]
) -> tuple[list[dict[str, Any]], tuple[str, ...], dict[str, str]]:
    """An exported table in tidy form: the agent settings (`params`, JSON) as one typed column per
    setting (`param_<name>`, in the place of `params`, empty where an agent has no such
    setting), every value of its column's type (`EXPORT_TYPES`), and `condition` and
    `trial_type` "none" where a run has no condition or a trial no scheduled type, so that
    CSV and parquet read back (pandas) with the same dtypes and values.

    Parameters
    ----------
    rows : list of dict
        Episode or trial rows (`recorded_episodes`, `recorded_trials`).
    columns : tuple of str
        Their columns, `params` among them.

    Returns
    -------
    (list of dict, tuple of str, dict of str to str)
        The rows, their columns and each column's type (str, int, float or bool).

    Examples
    --------
    >>> from graphtasks.experiments.export import tidy_table
    >>> rows = [{"run": 0, "params": '{"lr": 0.1, "beta": 2}', "condition": "", "return": 1},
    ...         {"run": 1, "params": '{"lr": 0.5}', "condition": "", "return": 0.5}]
    >>> tidy, columns, types = tidy_table(rows, ("run", "params", "condition", "return"))
    >>> columns, types["param_beta"], types["param_lr"]
    (('run', 'param_beta', 'param_lr', 'condition', 'return'), 'int', 'float')
    >>> tidy[1]
    {'run': 1, 'param_beta': None, 'param_lr': 0.5, 'condition': 'none', 'return': 0.5}
    """
    settings = [_settings(row.get("params")) for row in rows]
    names = sorted({name for found in settings for name in found})
    param_types = {PARAM_PREFIX + n: _param_type([found.get(n) for found in settings]) for n in names}
    at = columns.index("params") if "params" in columns else len(columns)
    out_columns = (*columns[:at], *param_types, *columns[at + 1 :])
    types = {c: param_types.get(c) or EXPORT_TYPES.get(c, "str") for c in out_columns}
    out = []
    for row, found in zip(rows, settings):
        values = {**row, **{PARAM_PREFIX + n: found.get(n) for n in names}}
        for column in ("condition", "trial_type"):
            if column in types and not values.get(column):
                values[column] = NONE
        out.append({c: _typed(types[c], values.get(c)) for c in out_columns})
    return out, out_columns, types


def _settings(params: Any) -> dict[str, Any]:
    if params is None or params == "":
        return {}
    found = json.loads(params) if isinstance(params, str) else params
    if not isinstance(found, dict):
        raise ExportError(f"params: expected a JSON object of agent settings, got {params!r:.80}")
    return found


ARROW_TYPES = {"str": "string", "int": "int64", "float": "float64", "bool": "bool_"}


def parquet_bytes(rows: list[dict[str, Any]], columns: tuple[str, ...], types: dict[str, str] | None = None) -> bytes:
    """The rows as a parquet file: each column of its type in `types` (str, int, float, bool;
    `EXPORT_TYPES` by default), else typed from its values."""
    parquet = require_parquet()
    import pyarrow

    kinds = {**EXPORT_TYPES, **(types or {})}
    arrays = {}
    for c in columns:
        values = [row.get(c) for row in rows]
        kind = kinds.get(c)
        arrays[c] = pyarrow.array(values, type=getattr(pyarrow, ARROW_TYPES[kind])()) if kind else values
    table = pyarrow.table(arrays)
    sink = pyarrow.BufferOutputStream()
    parquet.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


BIDS_VERSION = "1.10.0"
PEOPLE_AGENT = "participant"  # the agent of people's runs (graphtasks serve's sessions, imported events files)
PARTICIPANTS_COLUMNS = ("participant_id", "run", "agent", "label", "seed", "condition", "task")
PARTICIPANTS_SIDECAR: dict[str, dict[str, str]] = {
    "participant_id": {"Description": "sub-<label>: the subject's label, letters and digits only (BIDS); "
                       "sim<run> for an agent's run, the person's id without other characters for a person"},
    "run": {"Description": "the experiment's run this subject is (graphtasks' run index)"},
    "agent": {"Description": "the agent that made the choices (participant: a person)"},
    "label": {"Description": "the agent setting's label; for a person, their id as recorded (pseudonymous)"},
    "seed": {"Description": "the run's seed"},
    "condition": {"Description": "the run's condition (n/a: none)"},
    "task": {"Description": "the task id in graphtasks; the events files' task-<label> is it in letters and "
             "digits (their task column keeps it whole)"},
}


def bids_label(text: str) -> str:
    """A BIDS entity label: the text's letters and digits (ASCII), "x" if it has none.

    Examples
    --------
    >>> from graphtasks.experiments.export import bids_label
    >>> [bids_label(t) for t in ("two-step", "p-1f3a", "neuronav/grid/four_rooms/small", "é")]
    ['twostep', 'p1f3a', 'neuronavgridfourroomssmall', 'x']
    """
    return re.sub(r"[^A-Za-z0-9]", "", text) or "x"


def task_label(task: str) -> str:
    """The BIDS task label of a task id: its letters and digits after the family's name
    (`rewardgym/two-step` -> `twostep`, `neuronav/grid/four_rooms/small` -> `gridfourroomssmall`)."""
    return bids_label(task.split("/", 1)[-1])


def _seconds(stamp: str, where: str) -> float:
    import datetime

    try:
        return datetime.datetime.fromisoformat(stamp).timestamp()
    except (TypeError, ValueError):
        raise ExportError(f"{where}: received_at: expected an ISO 8601 time, got {stamp!r:.60}") from None


def _run_times(run: int, steps: list[dict[str, Any]], trial_duration: float | None) -> tuple[list[Any], list[Any], str]:
    """A run's onsets and durations in seconds, and how they were made (a key of BIDS_TIMES):
    by the browser's clock when every trial kept it and it never went back, else by the
    server's clock, else from the stated trial duration."""
    timed = [t.get("received_at") is not None and t.get("rt") is not None for t in steps]
    if all(timed):
        durations = [round(float(t["rt"]) / 1000, 6) for t in steps]
        if all(t.get("shown_ms") is not None for t in steps):
            shown = [float(t["shown_ms"]) for t in steps]
            if all(a <= b for a, b in zip(shown, shown[1:])):
                return [round((s - shown[0]) / 1000, 6) for s in shown], durations, "browser"
        at = [_seconds(t["received_at"], f"run {run}") - float(t["rt"]) / 1000 for t in steps]
        return [round(s - at[0], 6) for s in at], durations, "server"
    if any(timed):
        raise ExportError(f"run {run}: {timed.count(False)} of its {len(steps)} trials have no recorded time "
                          "(received_at and rt): its onsets cannot all be in seconds")
    if trial_duration is None:
        raise ExportError(
            f"run {run} ({steps[0]['agent']}) recorded no times (a simulated run has no clock) and BIDS onsets are "
            "seconds: give --trial-duration SECONDS (trial_duration=): each trial then lasts that long, one after "
            "another")
    return [round(i * trial_duration, 6) for i in range(len(steps))], [trial_duration] * len(steps), "stated"


def _check_duration(trial_duration: float | None) -> float | None:
    if trial_duration is None:
        return None
    if isinstance(trial_duration, bool) or not isinstance(trial_duration, (int, float)) or not (
        0 < trial_duration < math.inf
    ):
        raise ExportError(f"--trial-duration: expected a positive number of seconds, got {trial_duration!r}")
    return float(trial_duration)


def bids_events(
    trials: list[dict[str, Any]], trial_duration: float | None = None, subjects: dict[int, str] | None = None
) -> dict[str, tuple[str, dict[str, Any]]]:
    """rewardGym-style events files, one per run: the path in the dataset -> (TSV text, sidecar).

    `onset` and `duration` are seconds: from what the run recorded (a person's trials: when each
    screen was shown by the browser's clock, or, where that clock was not kept or restarted,
    when the server received the response less the response time; the duration is the
    response time), else from `trial_duration` (each trial lasts that long, one after another),
    else ExportError naming `--trial-duration`. Each run is one subject (`subjects`: run -> label; default `sim<run>`),
    `participant_id` its label, `response_button` the action, `reward` and `total_reward` the
    running total, `delta_reward` what the step paid, `current_location` the state it led to;
    the columns after rewardGym's are ours. The sidecar describes every column and says how the
    times were made.

    Parameters
    ----------
    trials : list of dict
        Trial rows, as `recorded_trials` returns them.
    trial_duration : float, optional
        Seconds each trial lasts, for runs that recorded no times.
    subjects : dict of int to str, optional
        The subject label of each run.

    Returns
    -------
    dict of str to (str, dict)
        `sub-<label>/beh/sub-<label>_task-<label>_run-1_events.tsv` -> (its text, its sidecar).

    Examples
    --------
    >>> from graphtasks.experiments.export import bids_events
    >>> rows = [{"experiment": "x", "run": 0, "task": "rewardgym/two-step", "agent": "q", "phase": "p",
    ...          "phase_index": 0, "episode": 0, "step": s, "state": s, "action": 1, "reward": 0.0,
    ...          "next_state": s + 1, "p_action": 0.5, "trial_type": None, "start_state": 0} for s in (0, 1)]
    >>> (path, (text, sidecar)), = bids_events(rows, trial_duration=2.5).items()
    >>> path
    'sub-sim0000/beh/sub-sim0000_task-twostep_run-1_events.tsv'
    >>> [line.split("\\t")[:2] for line in text.splitlines()]
    [['onset', 'duration'], ['0.0', '2.5'], ['2.5', '2.5']]
    >>> sidecar["onset"]["Units"], sidecar["onset"]["Description"][:40]
    ('s', "the trial's start in seconds from the ru")
    """
    trial_duration = _check_duration(trial_duration)
    runs: dict[int, list[dict[str, Any]]] = {}
    for t in trials:
        runs.setdefault(t["run"], []).append(t)
    times = {run: _run_times(run, steps, trial_duration) for run, steps in sorted(runs.items())}  # all, then write
    files = {}
    for run, steps in sorted(runs.items()):
        first = steps[0]
        subject = (subjects or {}).get(run) or f"sim{run:04d}"
        task = task_label(first["task"])
        name = f"sub-{subject}/beh/sub-{subject}_task-{task}_run-1_events.tsv"
        onsets, durations, how = times[run]
        total, trial, rows = 0.0, -1, []
        episode_key = None
        for onset, duration, t in zip(onsets, durations, steps):
            key = (t["phase_index"], t["episode"])
            if key != episode_key:
                trial, episode_key = trial + 1, key
            total += float(t["reward"])
            rows.append(
                {
                    **{c: NA for c in BIDS_COLUMNS},
                    "onset": onset,
                    "duration": duration,
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
                    "participant_id": subject,
                    "total_reward": total,
                    "current_location": t["next_state"],
                    "state": t["state"],
                    "p_action": NA if t["p_action"] is None else t["p_action"],
                    "phase": t["phase"],
                }
            )
        onset_text, duration_text = (text.format(seconds=trial_duration) for text in BIDS_TIMES[how])
        sidecar: dict[str, Any] = {c: dict(BIDS_SIDECAR[c]) for c in BIDS_COLUMNS}
        sidecar["onset"]["Description"], sidecar["duration"]["Description"] = onset_text, duration_text
        files[name] = (csv_text(rows, BIDS_COLUMNS, "\t"), sidecar)
    return files


def _graphtasks_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("graphtasks")
    except PackageNotFoundError:
        return "unknown"


def _read_participants(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if rows and not {"participant_id", "run"} <= set(rows[0]):
        raise ExportError(f"{path}: not a participants file written by graphtasks (no participant_id and run columns)")
    return rows


def bids_dataset_check(directory: str | Path, experiment: str) -> None:
    """Refuse a folder a BIDS dataset of `experiment` cannot be written into: a file, a folder
    holding files but no `dataset_description.json`, or the dataset of another experiment
    (ExportError naming it)."""
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target}: not a folder")
    description = target / "dataset_description.json"
    if description.is_file():
        try:
            name = json.loads(description.read_text(encoding="utf-8")).get("Name")
        except (ValueError, AttributeError):
            raise ExportError(f"{description}: not a BIDS dataset description (JSON object)") from None
        if name != experiment:
            raise ExportError(f"{target}: holds the BIDS dataset of {name!r}; write {experiment!r} into another folder")
    elif target.is_dir() and any(target.iterdir()):
        raise ExportError(f"{target}: not empty and not a BIDS dataset (no dataset_description.json); "
                          "give a new or empty folder")


def _subjects(runs: dict[int, dict[str, Any]], known: list[dict[str, str]]) -> dict[int, str]:
    """The subject label of each run: the one participants.tsv gives it, else sim<run> (an agent)
    or the person's id in letters and digits, with `run<run>` added if another run has it."""
    labels = {int(row["run"]): row["participant_id"].removeprefix("sub-") for row in known if row["run"].isdigit()}
    taken = set(labels.values())
    for run, first in sorted(runs.items()):
        if run in labels:
            continue
        label = bids_label(str(first["label"])) if first["agent"] == PEOPLE_AGENT else f"sim{run:04d}"
        if label in taken:
            label = f"{label}run{run}"
        labels[run] = label
        taken.add(label)
    return labels


def write_bids(trials: list[dict[str, Any]], directory: str | Path, trial_duration: float | None = None) -> list[Path]:
    """Write the trials into `directory` as a BIDS dataset (made if missing, or added to when it
    holds this experiment's dataset): one subject per run.

    The dataset holds `dataset_description.json` (the experiment's name, BIDS version,
    `DatasetType` raw, `GeneratedBy` graphtasks and its version; and Psych-DS's schema.org keys,
    `graphtasks.experiments.psychds`, the events' columns as `variableMeasured`), a README,
    `participants.tsv` with `participants.json` (each subject's run, agent, label, seed,
    condition and task: the map from the BIDS labels, letters and digits only, to the
    experiment's names), and per run `sub-<label>/beh/sub-<label>_task-<label>_run-1_events.tsv`
    (`bids_events`) with its `_events.json` sidecar. Onsets and durations are seconds, from the
    recorded times or `trial_duration`; a run with neither is refused before anything is written.

    Parameters
    ----------
    trials : list of dict
        Trial rows of one experiment, as `recorded_trials` returns them.
    directory : str or Path
        The dataset's folder: new, empty, or this experiment's dataset.
    trial_duration : float, optional
        Seconds each trial lasts, for runs that recorded no times (agents' runs).

    Returns
    -------
    list of Path
        The events files written.

    Examples
    --------
    >>> import tempfile
    >>> from graphtasks.experiments.export import write_bids
    >>> rows = [{"experiment": "x", "run": 0, "task": "rewardgym/two-step", "agent": "q", "label": "q",
    ...          "seed": 1, "condition": "", "phase": "p", "phase_index": 0, "episode": 0, "step": s,
    ...          "state": s, "action": 1, "reward": 0.0, "next_state": s + 1, "p_action": 0.5,
    ...          "trial_type": None, "start_state": 0} for s in (0, 1)]
    >>> folder = tempfile.mkdtemp()
    >>> [p.relative_to(folder).as_posix() for p in write_bids(rows, folder, trial_duration=2.0)]
    ['sub-sim0000/beh/sub-sim0000_task-twostep_run-1_events.tsv']
    >>> sorted(p.name for p in Path(folder).iterdir())
    ['README', 'dataset_description.json', 'participants.json', 'participants.tsv', 'sub-sim0000']
    """
    if not trials:
        return []
    experiments = {t["experiment"] for t in trials}
    if len(experiments) != 1:
        raise ExportError(f"a BIDS dataset holds one experiment; the trials are of {sorted(experiments)}")
    (experiment,) = experiments
    target = Path(directory)
    bids_dataset_check(target, experiment)
    runs = {t["run"]: t for t in reversed(trials)}  # each run's first trial
    known = _read_participants(target / "participants.tsv")
    subjects = _subjects(runs, known)
    files = bids_events(trials, trial_duration, subjects)  # refuses before anything is written
    target.mkdir(parents=True, exist_ok=True)
    description = {
        "Name": experiment, "BIDSVersion": BIDS_VERSION, "DatasetType": "raw",
        "GeneratedBy": [{"Name": "graphtasks", "Version": _graphtasks_version(),
                         "Description": "graphtasks experiment export --bids (or experiment run --bids)"}],
    }
    # Psych-DS's keys beside BIDS's (graphtasks.experiments.psychds): the events files' columns as its variables
    text, sidecar = next(iter(files.values()))
    description.update(psychds_keys(
        experiment, f"The trials of the graphtasks experiment {experiment!r} as a BIDS dataset, one subject per run "
        "(events files under sub-*/beh/).", text.split("\n", 1)[0].split("\t"), sidecar))
    (target / "dataset_description.json").write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    (target / "README").write_text(
        f"The trials of the graphtasks experiment {experiment!r}, one subject per run of the experiment.\n\n"
        "participants.tsv maps each subject's label (letters and digits only, as BIDS labels are) to the run,\n"
        "agent, label, seed, condition and task it was; each events file's sidecar (.json) describes its\n"
        "columns and says how its onsets and durations were made; its task column keeps the task id whole.\n",
        encoding="utf-8")
    rows = {row["participant_id"]: row for row in known}
    for run, first in runs.items():
        rows[f"sub-{subjects[run]}"] = {
            "participant_id": f"sub-{subjects[run]}", "run": run, "agent": first["agent"], "label": first["label"],
            "seed": first["seed"], "condition": first["condition"] or NA, "task": first["task"],
        }
    ordered = sorted(rows.values(), key=lambda row: int(row["run"]))
    (target / "participants.tsv").write_text(csv_text(ordered, PARTICIPANTS_COLUMNS, "\t"), encoding="utf-8")
    (target / "participants.json").write_text(json.dumps(PARTICIPANTS_SIDECAR, indent=2) + "\n", encoding="utf-8")
    written = []
    for name, (text, sidecar) in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


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


class BidsDatasetObserver(RunObserver):
    """A run observer that writes each completed run into the BIDS dataset in `folder` as the
    run ends (`write_bids`, with `trial_duration` for runs that record no times): what
    `graphtasks experiment run --bids DIR --trial-duration SECONDS` adds to a sweep.

    Parameters
    ----------
    folder : str or Path
        The dataset's folder: new, empty, or this experiment's dataset.
    trial_duration : float, optional
        Seconds each trial lasts (agents' runs record no times).

    Examples
    --------
    >>> import tempfile
    >>> from graphtasks.experiments.export import BidsDatasetObserver
    >>> BidsDatasetObserver(tempfile.mkdtemp(), trial_duration=2.0).written
    []
    """

    def __init__(self, folder: str | Path, trial_duration: float | None = None) -> None:
        self.folder = Path(folder)
        self.written: list[Path] = []
        self.trial_duration = _check_duration(trial_duration)

    def run_finished(self, outcome: RunOutcome) -> None:
        rows = outcome.episode_rows() if outcome.status == COMPLETED else None
        if rows:
            self.written += write_bids(trials_of_rows(rows), self.folder, self.trial_duration)


# -- RDF: the records as Turtle, their provenance as W3C PROV-O ---------------------------------
PROV_NS = "http://www.w3.org/ns/prov#"
PROV_PREFIXES = {"prov": PROV_NS}
QUERY_PROV_RUNS = (
    "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) WHERE x.uid = $uid "
    "RETURN r.uid, r.index, r.status, r.agent, r.label, r.params, r.seed, r.started_at, r.ended_at, r.version "
    "ORDER BY r.index"
)
QUERY_PROV_USED = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode) WHERE r.owner = $uid "
    "RETURN DISTINCT r.uid, e.task_version, e.task_hash"
)
QUERY_PROV_PARTICIPANTS = (
    "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid RETURN p.uid, p.participant_id, r.uid"
)
QUERY_PROV_FITS = (
    "MATCH (f:Fit)-[:FITS]->(r:Run) WHERE f.owner = $uid "
    "RETURN f.uid, f.model, f.agent, f.method, f.created_at, f.version, r.uid"
)
QUERY_PROV_GROUP_FITS = (
    "MATCH (g:GroupFit)-[:HAS_FIT]->(f:Fit) WHERE g.owner = $uid RETURN g.uid, g.model, g.method, g.created_at, f.uid"
)
QUERY_PROV_MODELS = "MATCH (f)-[:OF_MODEL]->(m:Model) WHERE m.owner = $uid RETURN f.uid, m.uid, m.name"
QUERY_PROV_EXPERIMENT = "MATCH (x:Experiment) WHERE x.uid = $uid RETURN x.name, x.spec_hash, x.created_at"


RDF_ROWS_STEP = 500  # records kept outside the graph (episodes, trials) added to the view per step


def records_rdf(store: GraphStore, name: str, progress: Any = None) -> Any:
    """The RDF view of one experiment's records (the gt: vocabulary, W3C ML-Schema types).

    Parameters
    ----------
    store
        An open store holding the experiment.
    name
        The experiment's name.
    progress : tqdm-like, optional
        A progress bar of the records kept outside the graph (episodes, trials and their
        relationships, the bulk of the view): `reset(total=)` with their number once they are
        read, then `update(n)` as each n of them are added.

    Returns
    -------
    rdflib.Graph
        Its Experiment, Phase, Run, Episode, Trial, Probe, Participant, Model and Fit nodes with the
        relationships among them; JSON attributes (a run's `params`) as structured values. The
        graph is on Oxigraph (SPARQL runs there; `graphstore.rdf.to_turtle` dumps it from there).
        The same graph as `graphstore.rdf.store_to_rdf(store, [], owners=[its uid])`, built in steps.
    """
    from graphstore.rdf import add_shared_rows, new_graph, outside_rows, shared_to_rdf

    owners = [experiment_uid(name)]
    rdf = new_graph()
    shared_to_rdf(store, rdf, owners=owners)
    found = outside_rows(store, owners)
    if progress is not None:  # its clock starts now: the rate is that of adding records, not of reading them
        progress.reset(total=sum(len(rows) for nodes, edges in found for *_, rows in [*nodes, *edges]))
    for nodes, edges in found:
        for label, rows in nodes:
            for k in range(0, len(rows), RDF_ROWS_STEP):
                add_shared_rows(rdf, [(label, rows[k:k + RDF_ROWS_STEP])])
                if progress is not None:
                    progress.update(len(rows[k:k + RDF_ROWS_STEP]))
        for rel, source, target, rows in edges:
            for k in range(0, len(rows), RDF_ROWS_STEP):
                add_shared_rows(rdf, [], [(rel, source, target, rows[k:k + RDF_ROWS_STEP])])
                if progress is not None:
                    progress.update(len(rows[k:k + RDF_ROWS_STEP]))
    return rdf


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


def rdf_text(store: GraphStore, name: str, fmt: str, progress: Any = None) -> str:
    """An experiment's records (`fmt` 'turtle') or their provenance ('prov') as Turtle text;
    `progress`: a bar of the records added to the view (`records_rdf`), then told it is writing."""
    from graphstore.rdf import to_turtle

    if fmt == "prov":
        return to_turtle(prov_rdf(store, name), PROV_PREFIXES)
    if fmt == "turtle":
        from .schema import MLS

        graph = records_rdf(store, name, progress)
        if progress is not None:
            progress.set_postfix_str(f"writing {len(graph):,} triples as Turtle", refresh=True)
        return to_turtle(graph, {"mls": MLS})
    raise ExportError(f"--format: expected prov or turtle, got {fmt!r}")
