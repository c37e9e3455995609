"""Psych-DS metadata beside the exports: `dataset_description.json` as schema.org JSON-LD.

Psych-DS (0.x) describes a folder of tabular data with one file, `dataset_description.json`: a
schema.org `Dataset` (`@context` "https://schema.org/", `@type` "Dataset") with a `name`, a
`description` and `variableMeasured`, the columns of its data files (each a `PropertyValue`
with its name, a description and, where it has one, its unit). Its data files are CSVs under
`data/`, named by keywords (`study-<name>_data.csv`).

- `write_trials_dataset` writes an experiment's trial table as a Psych-DS dataset (the CSV of
  `graphtasks experiment export NAME --trials`, under `data/`, with its description);
- a BIDS export (`graphtasks.experiments.export.write_bids`) keeps its BIDS keys (`Name`,
  `BIDSVersion`, ...) and gains Psych-DS's (`psychds_keys`) in the same file, the events
  files' columns as its variables: the keys differ (JSON is case-sensitive), so one file
  serves both.

`check_description` lists what a description lacks of Psych-DS's required keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .spreadsheet import csv_text as table_text

CONTEXT = "https://schema.org/"
REQUIRED = ("@context", "@type", "name", "description", "variableMeasured")
SCHEMA_VERSION = "Psych-DS 0.4.0"

# what each column of graphtasks' trial table is (the events files' columns are described by the BIDS sidecar)
TRIAL_VARIABLES: dict[str, tuple[str, str | None]] = {
    "experiment": ("the experiment's name in graphtasks", None),
    "run": ("the run's number in the experiment (a participant's session, or an agent's run)", None),
    "task": ("the task id", None),
    "task_version": ("the task version played (task id and content hash)", None),
    "agent": ("the agent's name (participant: a person)", None),
    "label": ("the agent's label (a participant's pseudonymous id)", None),
    "params": ("the agent's settings (JSON; param_<name> columns in a tidy table)", None),
    "seed": ("the run's seed (its outcome stream)", None),
    "condition": ("the run's condition (none: the experiment has none)", None),
    "phase": ("the experiment phase", None),
    "phase_index": ("the phase's place in the run, from 0", None),
    "episode": ("the episode (round) in the phase, from 0", None),
    "step": ("the step (choice) in the episode, from 0", None),
    "state": ("the index of the state the choice was made in", None),
    "action": ("the action taken (its index in the task's actions)", None),
    "reward": ("the reward of the step", None),
    "next_state": ("the index of the state the step led to", None),
    "p_action": ("the agent's probability of the action taken (empty for people)", None),
    "trial_type": ("the trial's condition in the task's trial schedule", None),
    "rt": ("people: from the screen's display to the response, measured in the browser", "ms"),
    "shown_ms": ("people: performance.now() when the screen was shown", "ms"),
    "pressed_ms": ("people: performance.now() at the response", "ms"),
    "key": ("people: the key pressed", None),
    "timeouts": ("people: 'too slow' screens shown before the response", None),
    "server_rt": ("people: from the server's sending the screen to its receiving the response", "ms"),
    "received_at": ("people: UTC time the server received the response (ISO 8601)", None),
}
# what each column of the events table is: the StudyEvents of people's sessions (graphtasks.serve.schema)
EVENT_VARIABLES: dict[str, tuple[str, str | None]] = {
    "participant": ("the participant's pseudonymous id", None),
    "kind": ("what happened: a screen besides the trials (consent, instructions, banner, break) or an "
             "attention_check answered", None),
    "trial": ("the session's trials done when it happened", None),
    "page": ("instructions: the page, from 0; break: the block done, from 1", None),
    "onset_ms": ("a screen: performance.now() when the page showed it (the trials' shown_ms clock)", "ms"),
    "duration_ms": ("a screen: from its display until the participant went on", "ms"),
    "check": ("attention_check: the check's number in the study, from 0", None),
    "answer": ("attention_check: the option chosen, from 0", None),
    "passed": ("attention_check: the answer was the instructed one", None),
    "attempt": ("attention_check: 1 for the first answer, 2 for the second", None),
    "at": ("the server's UTC time it was recorded (ISO 8601)", None),
}
EVENT_COLUMNS = ("run", "participant", "kind", "trial", "phase_index", "page", "onset_ms", "duration_ms", "check",
                 "answer", "passed", "attempt", "rt", "input", "at")
EVENTS_QUERY = (
    "MATCH (p:Participant)-[:PERFORMED]->(r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE r.owner = $uid "
    "RETURN r.index, p.participant_id, e.kind, e.trial, e.phase_index, e.page, e.onset_ms, e.duration_ms, e.check, "
    "e.answer, e.passed, e.attempt, e.rt, e.input, e.at ORDER BY r.index, e.at, e.onset_ms"
)


def variables(columns: Sequence[str], described: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """`variableMeasured`: one schema.org PropertyValue per column.

    Parameters
    ----------
    columns : sequence of str
        The data files' columns, in order.
    described : mapping, optional
        Column descriptions as a BIDS sidecar has them (`{"Description": ..., "Units": ...}`),
        before graphtasks' own (`TRIAL_VARIABLES`).

    Returns
    -------
    list of dict
        `{"@type": "PropertyValue", "name", "description"[, "unitText"]}` per column.

    Examples
    --------
    >>> from graphtasks.experiments.psychds import variables
    >>> variables(["rt"])[0]["unitText"]
    'ms'
    """
    out = []
    for column in columns:
        entry: dict[str, Any] = {"@type": "PropertyValue", "name": column}
        side = (described or {}).get(column)
        if isinstance(side, Mapping) and side.get("Description"):
            entry["description"] = str(side["Description"])
            if side.get("Units"):
                entry["unitText"] = str(side["Units"])
        elif column in TRIAL_VARIABLES or column in EVENT_VARIABLES:
            text, unit = TRIAL_VARIABLES.get(column) or EVENT_VARIABLES[column]
            entry["description"] = text
            if unit:
                entry["unitText"] = unit
        elif column.startswith("param_"):
            entry["description"] = f"the agent's setting {column.removeprefix('param_')!r}"
        else:
            entry["description"] = column
        out.append(entry)
    return out


def psychds_keys(name: str, description: str, columns: Sequence[str],
                 described: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Psych-DS's keys of `dataset_description.json` for a dataset whose files have `columns`.

    Examples
    --------
    >>> from graphtasks.experiments.psychds import check_description, psychds_keys
    >>> keys = psychds_keys("x", "trials of x", ["run", "reward"])
    >>> keys["@type"], [v["name"] for v in keys["variableMeasured"]], check_description(keys)
    ('Dataset', ['run', 'reward'], [])
    """
    return {
        "@context": CONTEXT, "@type": "Dataset", "name": name, "description": description,
        "schemaVersion": SCHEMA_VERSION, "variableMeasured": variables(columns, described),
    }


def check_description(description: Mapping[str, Any]) -> list[str]:
    """What `description` lacks of a Psych-DS `dataset_description.json` (empty: nothing).

    Examples
    --------
    >>> from graphtasks.experiments.psychds import check_description
    >>> check_description({"@context": "https://schema.org/", "@type": "Dataset", "name": "x"})
    ['description: missing', 'variableMeasured: missing']
    """
    problems = [f"{key}: missing" for key in REQUIRED if key not in description]
    if description.get("@type", "Dataset") != "Dataset":
        problems.append(f"@type: expected 'Dataset', got {description['@type']!r}")
    context = description.get("@context", CONTEXT)
    if not (context == CONTEXT or (isinstance(context, str) and "schema.org" in context)):
        problems.append(f"@context: expected {CONTEXT!r}, got {context!r}")
    measured = description.get("variableMeasured", [])
    if "variableMeasured" not in description:
        pass
    elif not isinstance(measured, list) or not measured:
        problems.append("variableMeasured: expected a list of the columns")
    else:
        for i, v in enumerate(measured):
            if not (isinstance(v, str) or (isinstance(v, Mapping) and v.get("@type") == "PropertyValue"
                                           and isinstance(v.get("name"), str))):
                problems.append(f"variableMeasured[{i}]: expected a column name or a PropertyValue with a name")
    for key in ("name", "description"):
        if key in description and (not isinstance(description[key], str) or not description[key]):
            problems.append(f"{key}: expected a text")
    return problems


def keyword(text: str) -> str:
    """A Psych-DS keyword value: letters and digits only.

    Examples
    --------
    >>> from graphtasks.experiments.psychds import keyword
    >>> keyword("two-step pilot")
    'twosteppilot'
    """
    return re.sub(r"[^A-Za-z0-9]", "", text) or "x"


def study_events(store: Any, name: str) -> list[dict[str, Any]]:
    """The StudyEvents of an experiment's sessions (screens besides the trials, attention checks),
    as rows of EVENT_COLUMNS, in run order.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.psychds import study_events
    >>> with open_store(":memory:", "w") as store:
    ...     study_events(store, "nothing recorded")
    []
    """
    from .ids import experiment_uid

    try:
        rows = store.cypher(EVENTS_QUERY, {"uid": experiment_uid(name)}).rows
    except Exception as exc:  # a store whose schema has no StudyEvent (nothing served into it)
        if "StudyEvent" in str(exc) or "HAS_EVENT" in str(exc):
            return []
        raise
    return [dict(zip(EVENT_COLUMNS, row)) for row in rows]


def write_trials_dataset(name: str, csv_text: str, columns: Sequence[str], directory: str | Path,
                         events: Sequence[Mapping[str, Any]] = ()) -> Path:
    """Write an experiment's trial table (CSV) as a Psych-DS dataset in `directory`, with its
    sessions' events (`study_events`: instructions, breaks, attention checks) as a second table.

    Parameters
    ----------
    name : str
        The experiment's name.
    csv_text : str
        The trial table as `graphtasks experiment export NAME --trials` writes it.
    columns : sequence of str
        Its columns.
    directory : str or Path
        The dataset's folder (made if missing).
    events : sequence of dict, optional
        Rows of EVENT_COLUMNS; none: no events table.

    Returns
    -------
    Path
        The trials' data file (`data/study-<name>_table-trials_data.csv`; the events':
        `..._table-events_data.csv`); the description is beside `data/`.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from graphtasks.experiments.psychds import write_trials_dataset
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_trials_dataset("my study", "run,reward\\n0,1.0\\n", ["run", "reward"], folder).relative_to(folder)
    PosixPath('data/study-mystudy_table-trials_data.csv')
    >>> json.loads((folder / "dataset_description.json").read_text())["name"]
    'my study'
    """
    target = Path(directory)
    (target / "data").mkdir(parents=True, exist_ok=True)
    path = target / "data" / f"study-{keyword(name)}_table-trials_data.csv"
    path.write_text(csv_text, encoding="utf-8")
    described = list(columns)
    text = (f"The trials of the graphtasks experiment {name!r}, one row per step (choice) of each run, as "
            "`graphtasks experiment export --trials` writes them")
    if events:
        (target / "data" / f"study-{keyword(name)}_table-events_data.csv").write_text(
            table_text([{k: ("" if v is None else v) for k, v in e.items()} for e in events], EVENT_COLUMNS),
            encoding="utf-8")
        described += [c for c in EVENT_COLUMNS if c not in described]
        text += ("; and the sessions' events (table-events: the screens besides the trials, with their onsets and "
                 "durations, and the attention checks answered), one row per event")
    keys = psychds_keys(name, text + ".", described)
    (target / "dataset_description.json").write_text(json.dumps(keys, indent=2) + "\n", encoding="utf-8")
    return path
