"""Sequences of choices to fit: from a run recorded in the store, or from an events file of
human behaviour in rewardGym's BIDS-like columns.

A `Choices` holds one participant's (or one simulated run's) steps in order: the state the
choice was made in, the action, what it paid, where it led, whether it ended its trial, and
whether the agent learnt from it (false in test phases). The likelihood replays them.

`Choices`, `BehaviourError` and the cell-by-cell reading of an events file are
`graphtasks.fitting.choices`' (re-exported here), which `graphtasks.fitting.hbayesdm` reads
with too; this module reads any file's participants through both. Which runs to fit
(`recorded_runs`, `select_runs`) is `graphtasks.fitting.selection`, above this module.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from graphtasks.experiments.ids import experiment_uid, run_uid
from tasks.data import open_input

from .choices import (  # noqa: F401 (re-export: Choices and the events file's limits are read from here)
    MAX_EVENTS_LINE,
    MAX_INDEX,
    MAX_REWARD,
    MISSING,
    BehaviourError,
    Choices,
    EventsFile,
    _index,
    _real,
    _Table,
    _where,
)
from .hbayesdm import is_hbayesdm, read_hbayesdm

# -- from the store ------------------------------------------------------------------------------
# A run's trials are Trial nodes (stores on a server or in memory, stores written before chunks,
# imports, sessions) or rows of the experiment's catalogued chunks (a sweep into an embedded
# store: graphtasks.experiments.chunks); every reader here takes both.
RUN_TRIALS = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid AND r.index = $run "
    "MATCH (e)-[:IN_PHASE]->(p:Phase) {phases}"
    "RETURN r.task, r.agent, r.params, e.phase_index, e.index, t.step, t.state, t.action, t.reward, "
    "t.next_state, p.learn, t.rt ORDER BY e.phase_index, e.index, t.step"
)
RUN_QUERY = "MATCH (r:Run) WHERE r.owner = $uid AND r.index IN $runs RETURN r.index, r.task, r.agent, r.params"
PHASE_TABLE = (
    "MATCH (x:Experiment)-[:HAS_PHASE]->(p:Phase) WHERE x.uid = $uid RETURN p.condition, p.index, p.name, p.learn"
)
CHUNK_COLUMNS = ["phase_index", "episode", "step", "state", "action", "reward", "next_state", "condition", "rt"]


def _chunk_trials(store: Any, experiment: str, columns: Sequence[str]) -> Any:
    """The experiment's trial rows kept in chunks (an Arrow table in run order), or None."""
    from graphtasks.experiments.records import chunk_table

    return chunk_table(store, experiment, "trials", list(columns))


def _phase_table(store: Any, experiment: str) -> dict[tuple[str, int], tuple[str, bool]]:
    """(condition, phase index) -> (phase name, learn) of the experiment's phases."""
    rows = store.cypher(PHASE_TABLE, {"uid": experiment_uid(experiment)}).rows
    return {(str(condition or ""), int(index)): (str(name), bool(learn)) for condition, index, name, learn in rows}


def load_run(store: Any, experiment: str, run: int, phases: Sequence[str] | None = None) -> Choices:
    """The recorded trials of one run of an experiment (a simulated agent or an imported participant).

    Parameters
    ----------
    store : GraphStore
        An open store.
    experiment : str
        The experiment's name.
    run : int
        The run's index.
    phases : sequence of str, optional
        Only the trials of these phases (by name), in order; None: every phase. The agent
        replaying them starts afresh at the first one taken.

    Returns
    -------
    Choices
        The run's choices; BehaviourError if it has none (in those phases).

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting import load_run
    >>> with open_store(":memory:") as store:
    ...     load_run(store, "lab", 0)
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: experiment 'lab', run 0: no recorded trials (record = 'steps' \
in the spec records them)
    """
    return load_runs(store, experiment, [run], phases)[0]


def load_runs(store: Any, experiment: str, runs: Sequence[int], phases: Sequence[str] | None = None
              ) -> list[Choices]:
    """`load_run` of each of `runs`, in order, the experiment's chunks (if any) read once.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.behaviour import load_runs
    >>> with open_store(":memory:") as store:
    ...     load_runs(store, "lab", [])
    []
    """
    import json

    if not runs:
        return []
    uid = experiment_uid(experiment)
    chunked: Any = None
    out = []
    for run in runs:
        params: dict[str, Any] = {"uid": uid, "run": int(run)}
        if phases is not None:
            params["phases"] = [str(p) for p in phases]
        query = RUN_TRIALS.replace("{phases}", "WHERE p.name IN $phases " if phases is not None else "")
        rows = store.cypher(query, params).rows
        if rows:
            head, steps, learn = (rows[0][0], rows[0][1], rows[0][2]), [], []
            for i, row in enumerate(rows):
                key = (row[3], row[4])
                last = i + 1 == len(rows) or (rows[i + 1][3], rows[i + 1][4]) != key
                steps.append((int(row[6]), int(row[7]), float(row[8]), int(row[9]), last))
                learn.append(bool(row[10]))
            # response times (Trial.rt, ms: the browser's, or an agent's response model's), in seconds
            timed = [None if row[11] is None else float(row[11]) / 1000 for row in rows]
            rts = timed if any(r is not None for r in timed) else None
        else:
            if chunked is None:
                chunked = _chunked_runs(store, experiment, runs, phases)
            head, steps, learn, timed = chunked.get(int(run), (None, [], [], []))
            # the chunk's rt column (ms, as Trial.rt) where the agent had a response model, in seconds
            rts = [None if r is None else float(r) / 1000 for r in timed] if any(r is not None for r in timed) else None
        if not steps:
            if phases is not None:
                raise BehaviourError(f"experiment {experiment!r}, run {run}: no recorded trials in phase(s) "
                                     f"{', '.join(map(str, phases))}")
            raise BehaviourError(
                f"experiment {experiment!r}, run {run}: no recorded trials (record = 'steps' in the spec records them)"
            )
        task_id, agent, settings = head
        settings = json.loads(settings) if isinstance(settings, str) else dict(settings or {})
        out.append(Choices.from_steps(task_id, steps, run_uid(uid, int(run)), learn, {"agent": agent, **settings},
                                      rts))
    return out


def _chunked_runs(store: Any, experiment: str, runs: Sequence[int], phases: Sequence[str] | None
                  ) -> dict[int, tuple[Any, list[tuple[int, int, float, int, bool]], list[bool], list[Any]]]:
    """Each of `runs`' (head: task id, agent, settings; steps; learn; response times in ms or
    None) from the chunks (empty steps for a run without trials there)."""
    table = _chunk_trials(store, experiment, CHUNK_COLUMNS)
    if table is None:
        return {}
    from graphtasks.experiments.chunks import require_arrow

    pa = require_arrow()
    wanted = [int(r) for r in runs]
    table = table.filter(pa.compute.is_in(table.column("run"), value_set=pa.array(wanted, table.column("run").type)))
    named = _phase_table(store, experiment)
    heads = {int(index): (task, agent, settings) for index, task, agent, settings in store.cypher(
        RUN_QUERY, {"uid": experiment_uid(experiment), "runs": wanted}).rows}
    columns = [table.column(c).to_pylist() for c in ("run", *CHUNK_COLUMNS)]
    out: dict[int, tuple[Any, list[tuple[int, int, float, int, bool]], list[bool], list[Any]]] = {}
    rows = list(zip(*columns))
    for i, (run, phase_index, episode, _, state, action, reward, nxt, condition, rt) in enumerate(rows):
        name, learns = named.get((str(condition or ""), int(phase_index)), (None, True))
        if phases is not None and name not in phases:
            continue
        following = rows[i + 1] if i + 1 < len(rows) else None
        last = following is None or (following[0], following[1], following[2]) != (run, phase_index, episode)
        entry = out.setdefault(int(run), (heads.get(int(run)), [], [], []))
        entry[1].append((int(state), int(action), float(reward), int(nxt), last))
        entry[2].append(bool(learns))
        entry[3].append(rt)
    return out


RUN_PHASES = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(:Trial) WHERE r.owner = $uid "
    "MATCH (e)-[:IN_PHASE]->(p:Phase) RETURN DISTINCT r.index, p.name"
)


def run_phases(store: Any, experiment: str) -> dict[int, set[str]]:
    """The names of the phases each run of an experiment has recorded trials in, by run index
    (runs without trials are absent), from its Trial nodes and its chunks alike.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.behaviour import run_phases
    >>> with open_store(":memory:") as store:
    ...     run_phases(store, "lab")
    {}
    """
    out: dict[int, set[str]] = {}
    for run, phase in store.cypher(RUN_PHASES, {"uid": experiment_uid(experiment)}).rows:
        out.setdefault(int(run), set()).add(str(phase))
    table = _chunk_trials(store, experiment, ["phase_index", "condition"])
    if table is not None:
        named = _phase_table(store, experiment)
        grouped = table.group_by(["run", "phase_index", "condition"]).aggregate([])
        for run, phase_index, condition in zip(*(grouped.column(c).to_pylist()
                                                 for c in ("run", "phase_index", "condition"))):
            name = named.get((str(condition or ""), int(phase_index)), (f"phase {phase_index}", True))[0]
            out.setdefault(int(run), set()).add(name)
    return out


# -- from an events file -------------------------------------------------------------------------
MAX_EVENTS_BYTES = 256 * 2**20  # an events file (about 5 million rows); refused before a byte is read
OBS, ACTION, REWARD = 0, 1, 2
CHUNK = 2**16  # rows handed from numpy to the Python loop at a time


def read_events(path: str | Path, task_id: str | None = None, drop_reminded: bool = True) -> Choices:
    r"""One participant's choices from a tab-separated events file.

    Two layouts are read. rewardGym's logger (an `rl_label` column): within each `trial`,
    in `onset` order, an `obs` row gives the location (`current_location`), an `action` row
    a choice (`action`), a `reward` row what it paid (`reward`); each action is a step from
    the last location seen to the next, paid what the reward rows between it and the next
    action say. A trial with a `reminder` event (shown after a missed response) is left out
    whole, as rewardGym's own `prepare_data` does, unless `drop_reminded` is false.
    graphtasks' own export (`graphtasks experiment export --bids`): one row per
    step with `state`, `response_button`, `delta_reward` and `current_location`. Rows
    without a choice (timeouts, breaks, reminders) are left out. `task_id` defaults to the
    file's `task` column.

    The file is read as a stream, once (a regular file of at most MAX_EVENTS_BYTES, refused
    before reading otherwise); what a row holds goes into typed arrays, so memory is a small
    multiple of the file. Every cell is checked: trials, states and actions are whole numbers
    in 0..MAX_INDEX, onsets and rewards finite (|reward| <= MAX_REWARD).

    Parameters
    ----------
    path : str or Path
        A tab-separated events file of one participant.
    task_id : str, optional
        The task the choices were made on (default: the file's `task` column).
    drop_reminded : bool, optional
        rewardGym's layout: leave out trials with a `reminder` event.

    Returns
    -------
    Choices
        The participant's choices, in order.

    Raises
    ------
    BehaviourError
        The file is too large, has neither layout's columns, or a cell that is not what its
        column holds, naming the file, line and column.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphtasks.fitting import read_events
    >>> path = Path(tempfile.mkdtemp()) / "sub-01_events.tsv"
    >>> _ = path.write_text(
    ...     "trial\tstate\tresponse_button\tcurrent_location\tdelta_reward\ttask\n"
    ...     "0\t0\t1\t2\t0\trewardgym/two-step\n"
    ...     "0\t2\t0\t5\t1\trewardgym/two-step\n"
    ...     "1\t0\t0\t1\t0\trewardgym/two-step\n"
    ...     "1\t1\t1\t4\t0\trewardgym/two-step\n"
    ... )
    >>> choices = read_events(path)
    >>> choices.task_id, len(choices), choices.trials, choices.rewards.tolist()
    ('rewardgym/two-step', 4, 2, [0.0, 1.0, 0.0, 0.0])
    """
    return read_events_file(Path(path), task_id, drop_reminded).choices


def read_events_file(
    path: Path, task_id: str | None = None, drop_reminded: bool = True, digest: Any = None
) -> EventsFile:
    """`read_events`, with the participant id and each choice's line; `digest` (a hashlib
    object), if given, is fed every byte read."""
    with open_input(path, MAX_EVENTS_BYTES, BehaviourError) as handle:
        return _read_table(_Table(path, handle, digest), task_id, drop_reminded)


def read_participants(
    path: Path, task_id: str | None = None, drop_reminded: bool = True, digest: Any = None, layout: str | None = None
) -> list[tuple[str, EventsFile]]:
    """Every participant of an events file.

    Parameters
    ----------
    path
        A tab-separated file: rewardGym's events, graphtasks' export (one participant each)
        or one of hBayesDM's layouts (a `subjID` column; any number of participants).
    task_id
        The task (default: the file's `task` column; for hBayesDM, the layout's task).
    drop_reminded
        rewardGym: leave out trials with a `reminder` event.
    digest
        A hashlib object fed every byte read.
    layout
        hBayesDM's layout, where the columns fit two (`graphtasks.fitting.hbayesdm.LAYOUTS`).

    Returns
    -------
    list of (str, EventsFile)
        (participant id, what they did): hBayesDM's `subjID`, else the `participant_id` of the
        file's first row ("" if none). An example is on `hbayesdm.read_hbayesdm`.
    """
    with open_input(path, MAX_EVENTS_BYTES, BehaviourError) as handle:
        table = _Table(path, handle, digest)
        if is_hbayesdm(table.columns):
            return read_hbayesdm(table, task_id, layout)
        if layout is not None:
            raise BehaviourError(f"{path}: --layout {layout}: the file has no subjID column (not hBayesDM's layout)")
        events = _read_table(table, task_id, drop_reminded)
        return [(events.participant, events)]


def _read_table(table: _Table, task_id: str | None, drop_reminded: bool) -> EventsFile:
    path = table.path
    if "rl_label" in table.columns:
        steps, lines, seen = _rewardgym_steps(table, drop_reminded, task_id is None)
    elif {"state", "response_button", "current_location"} <= set(table.columns):
        steps, lines, seen = _exported_steps(table, task_id is None)
    else:
        raise BehaviourError(
            f"{path}: neither rewardGym's columns (rl_label, action, current_location, reward, trial), "
            "graphtasks' export (state, response_button, current_location, delta_reward) nor hBayesDM's (subjID)"
        )
    if not len(steps[0]):
        raise BehaviourError(f"{path}: no choices to fit")
    if task_id is None:
        if len(seen.tasks) != 1:
            shown = sorted(seen.tasks)[:5] + (["..."] if len(seen.tasks) > 5 else [])
            raise BehaviourError(f"{path}: name the task (--task): the file's task column has {shown}")
        task_id = next(iter(seen.tasks))
    choices = Choices(task_id, *steps, np.ones(len(steps[0]), dtype=bool), str(path))
    return EventsFile(choices, seen.participant or "", lines)


def _require(table: _Table, needed: tuple[str, ...]) -> None:
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise BehaviourError(f"{table.path}: missing column(s) {', '.join(missing)}")


class _Row:
    """Where the values every layout reads (task, participant) are kept while rows go by."""

    def __init__(self, table: _Table, want_task: bool) -> None:
        self.task_column = table.column("task") if want_task else -1
        self.participant_column = table.column("participant_id")
        self.tasks: set[str] = set()
        self.participant: str | None = None

    def note(self, row: list[str]) -> None:
        if self.participant is None:  # the first row names the participant (or nobody)
            value = row[self.participant_column].strip() if self.participant_column >= 0 else ""
            self.participant = "" if value.lower() in MISSING else value
        if self.task_column >= 0 and len(self.tasks) <= 5:
            value = row[self.task_column].strip()
            if value.lower() not in MISSING:
                self.tasks.add(value)


Steps = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _rewardgym_steps(table: _Table, drop_reminded: bool, want_task: bool) -> tuple[Steps, np.ndarray, _Row]:
    _require(table, ("trial", "onset", "action", "current_location", "reward"))
    path = table.path
    c_trial, c_onset, c_label = table.column("trial"), table.column("onset"), table.column("rl_label")
    c_action, c_location, c_reward = table.column("action"), table.column("current_location"), table.column("reward")
    c_event = table.column("event_type")
    trials, lines, values = array("q"), array("q"), array("q")
    onsets, rewards, kinds = array("d"), array("d"), array("b")
    reminded: set[int] = set()
    seen = _Row(table, want_task)
    for row in table.rows():
        seen.note(row)
        line = table.line
        trial = _index(row[c_trial], path, line, "trial")
        if trial < 0:
            continue
        onset = _real(row[c_onset], path, line, "onset")
        if onset is None:
            raise BehaviourError(f"{_where(path, line)}: column 'onset': expected a number, got {row[c_onset]!r:.60}")
        if drop_reminded and c_event >= 0 and row[c_event].strip() == "reminder":
            reminded.add(trial)
        label, reward = row[c_label].strip(), 0.0
        if label == "obs":
            kind, value = OBS, _index(row[c_location], path, line, "current_location")
        elif label == "action":
            kind, value = ACTION, _index(row[c_action], path, line, "action")
            if value < 0:  # a missed response: no choice
                continue
        elif label == "reward":
            kind, value = REWARD, -1
            reward = _real(row[c_reward], path, line, "reward", MAX_REWARD) or 0.0
        else:
            continue
        trials.append(trial)
        lines.append(line)
        values.append(value)
        onsets.append(onset)
        rewards.append(reward)
        kinds.append(kind)
    trial_of = np.frombuffer(trials, dtype=np.int64)
    keep = ~np.isin(trial_of, np.fromiter(reminded, dtype=np.int64, count=len(reminded))) if reminded else None
    line_of = np.frombuffer(lines, dtype=np.int64)
    onset_of = np.frombuffer(onsets, dtype=np.float64)
    order = np.lexsort((line_of, onset_of, trial_of))  # within each trial, in onset order (ties: file order)
    if keep is not None:
        order = order[keep[order]]
    columns = (trial_of, np.frombuffer(kinds, dtype=np.int8), np.frombuffer(values, dtype=np.int64),
               np.frombuffer(rewards, dtype=np.float64), line_of)
    return (*_replay_rows(path, columns, order), seen)


def _replay_rows(path: Path, columns: tuple[np.ndarray, ...], order: np.ndarray) -> tuple[Steps, np.ndarray]:
    """The steps made by rewardGym rows (trial, kind, value, reward, line) taken in `order`,
    and the line of each step's choice."""
    states, actions, nexts, ends, lines = array("q"), array("q"), array("q"), array("b"), array("q")
    paid = array("d")
    current = -1
    location = -1  # the last location seen in this trial (-1: none yet)
    pending = False  # a choice waiting for where it led: (p_state, p_action, p_reward, p_line)
    p_state = p_action = p_line = 0
    p_reward = 0.0
    made = 0  # choices completed in this trial

    def finish() -> None:
        nonlocal made, pending
        if pending:  # the last choice led nowhere new: it ended the trial where it was
            if location < 0:
                raise BehaviourError(
                    f"{_where(path, p_line)}: trial {current}: the choice's trial shows no location after it"
                )
            states.append(p_state)
            actions.append(p_action)
            paid.append(p_reward)
            nexts.append(location)
            ends.append(0)
            lines.append(p_line)
            made += 1
            pending = False
        if made:
            ends[-1] = 1

    for start in range(0, len(order), CHUNK):
        chosen = order[start : start + CHUNK]
        for trial, kind, value, reward, line in zip(*(c[chosen].tolist() for c in columns)):
            if trial != current:
                finish()
                current, location, made = trial, -1, 0
            if kind == OBS:
                location = value
                if pending and location >= 0:
                    states.append(p_state)
                    actions.append(p_action)
                    paid.append(p_reward)
                    nexts.append(location)
                    ends.append(0)
                    lines.append(p_line)
                    made += 1
                    pending = False
            elif kind == ACTION:
                if location < 0:
                    raise BehaviourError(f"{_where(path, line)}: a choice before any 'obs' row of trial {trial}")
                if pending:  # two choices without a location between them
                    raise BehaviourError(f"{_where(path, line)}: trial {trial}: a choice before the last one's outcome")
                pending, p_state, p_action, p_reward, p_line = True, location, value, 0.0, line
            elif pending:
                p_reward += reward
            elif made:
                paid[-1] += reward
            else:
                raise BehaviourError(f"{_where(path, line)}: a reward before any choice of trial {trial}")
    finish()
    steps = (np.frombuffer(states, dtype=np.int64), np.frombuffer(actions, dtype=np.int64),
             np.frombuffer(paid, dtype=np.float64), np.frombuffer(nexts, dtype=np.int64),
             np.frombuffer(ends, dtype=np.int8).astype(bool))
    return steps, np.frombuffer(lines, dtype=np.int64)


def _exported_steps(table: _Table, want_task: bool) -> tuple[Steps, np.ndarray, _Row]:
    path = table.path
    c_state, c_button, c_location = table.column("state"), table.column("response_button"), table.column(
        "current_location")
    c_reward, c_trial = table.column("delta_reward"), table.column("trial")
    states, actions, nexts, trials, lines = array("q"), array("q"), array("q"), array("q"), array("q")
    paid = array("d")
    seen = _Row(table, want_task)
    for row in table.rows():
        seen.note(row)
        line = table.line
        action = _index(row[c_button], path, line, "response_button")
        if action < 0:
            continue
        state = _index(row[c_state], path, line, "state")
        nxt = _index(row[c_location], path, line, "current_location")
        if state < 0 or nxt < 0:
            raise BehaviourError(f"{_where(path, line)}: a choice without its state or current_location")
        states.append(state)
        actions.append(action)
        nexts.append(nxt)
        paid.append((_real(row[c_reward], path, line, "delta_reward", MAX_REWARD) or 0.0) if c_reward >= 0 else 0.0)
        trials.append(_index(row[c_trial], path, line, "trial") if c_trial >= 0 else -1)
        lines.append(line)
    trial_of = np.frombuffer(trials, dtype=np.int64)
    ends = np.ones(len(trial_of), dtype=bool)
    ends[:-1] = trial_of[1:] != trial_of[:-1]
    steps = (np.frombuffer(states, dtype=np.int64), np.frombuffer(actions, dtype=np.int64),
             np.frombuffer(paid, dtype=np.float64), np.frombuffer(nexts, dtype=np.int64), ends)
    return steps, np.frombuffer(lines, dtype=np.int64), seen


def first_participant(path: Path) -> str:
    """The `participant_id` of an events file's first row ("" if none), reading only that row."""
    with open_input(path, MAX_EVENTS_BYTES, BehaviourError) as handle:
        table = _Table(path, handle)
        column = table.column("participant_id")
        for row in table.rows():
            value = row[column].strip() if column >= 0 else ""
            return "" if value.lower() in MISSING else value
    return ""


NA_TEXT = "n/a"
EVENT_COLUMNS = ("onset", "duration", "trial", "event_type", "rl_label", "action", "current_location", "reward",
                 "participant_id", "task")


def events_text(choices: Choices, participant: str) -> str:
    """`choices` as an events file in rewardGym's layout (what `read_events` reads back): per
    trial an `obs` row, then per choice an `action` row and an `obs` row of where it led, and a
    `reward` row after a choice that paid. A simulation has no clock: `onset` counts rows."""
    rows: list[tuple[Any, ...]] = []
    trial, first = 0, True

    def add(kind: str, label: str, action: Any = NA_TEXT, location: Any = NA_TEXT, reward: Any = 0) -> None:
        rows.append((len(rows), 1, trial, kind, label, action, location, reward, participant, choices.task_id))

    for s, a, r, n, end in zip(choices.states.tolist(), choices.actions.tolist(), choices.rewards.tolist(),
                               choices.next_states.tolist(), choices.ends.tolist()):
        if first:
            add("stimulus", "obs", location=s)
        add("response", "action", action=a)
        add("stimulus", "obs", location=n)
        if r:
            add("outcome", "reward", reward=r)
        trial, first = trial + end, end
    lines = ["\t".join(EVENT_COLUMNS)] + ["\t".join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"

