"""People's two-step sessions from a trial table, recorded as sessions of a stored two-step task.

A two-step study run elsewhere (another program, another lab) keeps its trials as a table,
one row a trial. `read_two_step_people` reads such a table and `import_two_step_people`
records each participant as a person's session of a stored two-step task (Daw et al. 2011:
two first-stage options, each leading commonly to one second stage and rarely to the other,
two options in each second stage), as a served study's sessions are recorded: a Participant
(source: the table's file), a Run (agent "participant", label the participant's id), an
Episode per trial and a Trial per choice. The analyses of people's sessions then read them
from the store, beside agents' runs (`graphtasks participants stay`).

The table is CSV with a header and these columns (other columns are ignored):

=============  ===============================================================================
participant    the participant's id
trial          the trial's number (increasing within a participant)
common         1 if the transition was the common one, 0 if rare
choice1        the first-stage option chosen: 1 or 2 (-1 on a slow trial)
final_state    the second stage reached: k is the stage option k leads to commonly (-1 if slow)
choice2        the second-stage option chosen: 1 or 2 (-1 on a slow trial)
reward         1 if rewarded, else 0
rt1, rt2       the choices' response times in seconds (-1 where none)
slow           1 if the participant did not answer in time (the trial is left out), else 0
=============  ===============================================================================

This is the layout of Feher da Silva & Hare (2020)'s magic-carpet data, of which the
package keeps 24 participants (`FEHER_DA_SILVA_2020`: data/people/feherdasilva2020-magic-carpet,
GPL-3.0, see its ATTRIBUTION.md). Option k of the table is the task's action k - 1 in every
stage; the second stage reached is the task's common or rare next state of that action, as
the row's `common` says (a row whose `final_state` contradicts its `common` is refused). Slow
trials are left out: the trials either side of one are consecutive episodes. A row that is
not such a trial (a missing or unreadable value, an option that is not 1 or 2, a trial number
that does not increase) is refused in one line naming the file, its line and the column, and
nothing is recorded.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphstore import GraphStore, TaskGraph
from graphstore.errors import GraphtasksError

from .ids import experiment_uid, participant_uid
from .observers import COMPLETED, RunOutcome
from .records import _key, record_experiment, record_tasks, run_records
from .runs import Cell
from .spec import AgentSpec, ExperimentSpec, single_run_spec
from .versions import prepare_versions

PARTICIPANT = "participant"  # the agent name of people's runs (as graphtasks.serve.app records sessions)
COLUMNS = ("participant", "trial", "common", "choice1", "final_state", "choice2", "reward", "rt1", "rt2", "slow")
FEHER_DA_SILVA_2020 = "people/feherdasilva2020-magic-carpet/two-step.csv"
"""The packaged table (under the data folder): 24 people, 201 answered trials each."""
REFERENCE = ("Feher da Silva & Hare 2020, Nat Hum Behav 4: 1053-1066 (magic-carpet task; "
             "data: github.com/carolfs/muddled_models, GPL-3.0)")


class PeopleDataError(GraphtasksError, ValueError):
    """A people's trial table cannot be read or does not fit the task; the message names the file and line."""


@dataclass(frozen=True)
class PersonTrial:
    """One answered trial of a person, as the table has it (options and stages numbered 1 and 2)."""

    line: int
    trial: int
    choice1: int
    final_state: int
    common: bool
    choice2: int
    reward: float
    rt1: float | None  # seconds
    rt2: float | None


@dataclass(frozen=True)
class TwoStepMoves:
    """A two-step task's structure: its first stage, and per first-stage action the common and
    rare second stage; per second stage and action, the state it ends in."""

    start: int
    common: tuple[int, int]
    rare: tuple[int, int]
    ends: dict[tuple[int, int], int]


def packaged_table() -> Path:
    """The packaged people's table (`FEHER_DA_SILVA_2020`)."""
    from tasks.data import data_dir

    return data_dir() / FEHER_DA_SILVA_2020


def read_two_step_people(path: str | Path, participants: int | None = None,
                         slow: dict[str, int] | None = None) -> dict[str, list[PersonTrial]]:
    """Each participant's answered trials, in the table's order (see the module docstring).

    Parameters
    ----------
    path : str or Path
        The CSV table.
    participants : int, optional
        Read only the first this many participants of the table.
    slow : dict, optional
        Filled with participant id -> how many of its trials were slow (left out).

    Returns
    -------
    dict
        participant id -> its answered trials (slow trials left out), in the table's order.

    Raises
    ------
    PeopleDataError
        A missing column, or a row that is not a trial, in one line naming the file, the line and the column.

    Examples
    --------
    >>> from graphtasks.experiments.people_two_step import packaged_table, read_two_step_people
    >>> people = read_two_step_people(packaged_table(), participants=2)
    >>> [(who, len(trials)) for who, trials in people.items()]
    [('03187', 201), ('04862', 201)]
    """
    name = Path(path).name
    out: dict[str, list[PersonTrial]] = {}
    try:
        f = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise PeopleDataError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise PeopleDataError(f"{name}: line 1: missing column(s) {', '.join(missing)}")
        last: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            who = (row["participant"] or "").strip()
            if not who:
                raise PeopleDataError(f"{name}: line {line}: participant: empty")
            if who not in out and participants is not None and len(out) >= participants:
                break
            trial = _integer(row, "trial", name, line)
            if who in last and trial <= last[who]:
                raise PeopleDataError(f"{name}: line {line}: trial: {trial} does not follow trial {last[who]} "
                                      f"of participant {who}")
            last[who] = trial
            trials = out.setdefault(who, [])
            if _integer(row, "slow", name, line, (0, 1)):
                if slow is not None:
                    slow[who] = slow.get(who, 0) + 1
                continue
            choice1 = _integer(row, "choice1", name, line, (1, 2))
            final_state = _integer(row, "final_state", name, line, (1, 2))
            common = bool(_integer(row, "common", name, line, (0, 1)))
            if (final_state == choice1) != common:
                raise PeopleDataError(f"{name}: line {line}: final_state: {final_state} after choice1 {choice1} is a "
                                      f"{'rare' if final_state != choice1 else 'common'} transition, but common is "
                                      f"{int(common)}")
            choice2 = _integer(row, "choice2", name, line, (1, 2))
            reward = float(_integer(row, "reward", name, line, (0, 1)))
            trials.append(PersonTrial(line, trial, choice1, final_state, common, choice2, reward,
                                      _seconds(row, "rt1", name, line), _seconds(row, "rt2", name, line)))
    if not out:
        raise PeopleDataError(f"{name}: no trials")
    return out


def _integer(row: dict[str, Any], column: str, name: str, line: int, allowed: tuple[int, ...] = ()) -> int:
    text = (row.get(column) or "").strip()
    try:
        value = int(text)
    except ValueError:
        raise PeopleDataError(f"{name}: line {line}: {column}: expected an integer, got {text!r}") from None
    if allowed and value not in allowed:
        raise PeopleDataError(f"{name}: line {line}: {column}: expected {' or '.join(map(str, allowed))}, "
                              f"got {value}")
    return value


def _seconds(row: dict[str, Any], column: str, name: str, line: int) -> float | None:
    text = (row.get(column) or "").strip()
    try:
        value = float(text)
    except ValueError:
        raise PeopleDataError(f"{name}: line {line}: {column}: expected seconds, got {text!r}") from None
    if value != value or value == float("inf"):
        raise PeopleDataError(f"{name}: line {line}: {column}: expected seconds, got {text!r}")
    return value if value >= 0 else None


def two_step_moves(graph: TaskGraph) -> TwoStepMoves:
    """The structure of a two-step task graph; a graph of another shape is refused in one line.

    Parameters
    ----------
    graph : TaskGraph
        The task.

    Returns
    -------
    TwoStepMoves

    Examples
    --------
    >>> import tasks
    >>> from graphtasks.experiments.people_two_step import two_step_moves
    >>> moves = two_step_moves(tasks.build("rewardgym/two-step"))
    >>> moves.start, moves.common, moves.rare
    (0, (1, 2), (2, 1))
    """
    index = {node: props["index"] for node, props in graph.nodes() if "index" in props}
    moves: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for source, target, props in graph.edges():
        if source in index and target in index and "action" in props:
            moves.setdefault((index[source], int(props["action"])), []).append((index[target], float(props["p"])))
    roots = [index[target] for source, target, _ in graph.edges() if source == "" and target in index]
    where = f"{graph.task_id} is not a two-step task"
    if len(roots) != 1:
        raise PeopleDataError(f"{where}: expected one start state, found {len(roots)}")
    start = roots[0]
    common, rare = [], []
    for action in (0, 1):
        nexts = sorted(moves.get((start, action), []), key=lambda m: -m[1])
        if len(nexts) != 2 or not nexts[0][1] > 0.5 > nexts[1][1]:
            raise PeopleDataError(f"{where}: action {action} of its first stage does not lead commonly to one "
                                  "state and rarely to another")
        common.append(nexts[0][0])
        rare.append(nexts[1][0])
    if common[0] == common[1] or set(common) != set(rare):
        raise PeopleDataError(f"{where}: its first-stage actions do not lead commonly to two different states")
    ends = {}
    for state in common:
        for action in (0, 1):
            nexts = moves.get((state, action), [])
            if len(nexts) != 1:
                raise PeopleDataError(f"{where}: action {action} of state {state} does not lead to one state")
            ends[(state, action)] = nexts[0][0]
    return TwoStepMoves(start, (common[0], common[1]), (rare[0], rare[1]), ends)


def import_two_step_people(
    store: GraphStore,
    path: str | Path | None = None,
    name: str = "Feher da Silva & Hare 2020",
    task_id: str = "rewardgym/two-step",
    participants: int | None = None,
) -> list[dict[str, Any]]:
    """Record a people's trial table as people's sessions of a stored two-step task.

    Every row is checked before anything is recorded. A participant recorded in the
    experiment already is left as it is.

    Parameters
    ----------
    store : GraphStore
        A store opened for writing (the task is read from it if it is not built in).
    path : str or Path, optional
        The table (default: the packaged `FEHER_DA_SILVA_2020`).
    name : str
        The experiment to record the sessions as.
    task_id : str
        The two-step task the people played.
    participants : int, optional
        Record only the first this many participants of the table.

    Returns
    -------
    list of dict
        Per participant: participant, run, trials (answered trials recorded: episodes), slow
        (slow trials left out), status ("imported" or "already imported").

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.people_two_step import import_two_step_people
    >>> with open_store(":memory:") as store:
    ...     rows = import_two_step_people(store, participants=2)
    >>> [(r["participant"], r["run"], r["trials"], r["status"]) for r in rows]
    [('03187', 0, 201, 'imported'), ('04862', 1, 201, 'imported')]
    """
    table = Path(path) if path is not None else packaged_table()
    slow: dict[str, int] = {}
    people = read_two_step_people(table, participants, slow)
    base = single_run_spec(task_id, "random", 0, max(len(t) for t in people.values()), store=store)
    spec: ExperimentSpec = dataclasses.replace(
        base, name=name, description=f"people's two-step sessions from {table.name}",
        reference=REFERENCE if path is None else base.reference, agents=(AgentSpec(PARTICIPANT, "people", {}),))
    versions = prepare_versions(spec, store)
    (version,) = versions.values()  # one task, one phase
    moves = two_step_moves(version.graph)
    text = json.dumps({"kind": "people's two-step sessions", "name": name, "task": task_id, "table": table.name},
                      sort_keys=True)
    record_tasks(store, spec.graphs)
    record_experiment(store, spec, text)
    uid = experiment_uid(name)
    known = {str(who): int(index) for who, index in store.cypher(
        "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid RETURN p.participant_id, r.index",
        {"uid": uid}).rows}
    index = max(known.values(), default=-1) + 1
    out = []
    for who, trials in people.items():
        if who in known:
            out.append({"participant": who, "run": known[who], "trials": 0, "slow": 0, "status": "already imported"})
            continue
        cell = Cell(index, task_id, AgentSpec(PARTICIPANT, who, {}), 0)
        rows = [_episode_row(spec, version, moves, cell, episode, t) for episode, t in enumerate(trials)]
        head, (nodes, edges) = run_records(spec, RunOutcome(cell, COMPLETED, rows, None, "", ""))
        run = dict(head[0][0][1][0])
        person = participant_uid(uid, who)
        participant = {"uid": person, "owner": uid, "participant_id": who, "source": f"{table.name} ({name})"}
        store.merge_shared([*head[0], ("Participant", [participant]), *nodes],
                           [*head[1], ("PERFORMED", "Participant", "Run", [_key(person, run["uid"])]), *edges])
        out.append({"participant": who, "run": index, "trials": len(trials), "slow": slow.get(who, 0),
                    "status": "imported"})
        known[who] = index
        index += 1
    return out


def _episode_row(spec: ExperimentSpec, version: Any, moves: TwoStepMoves, cell: Cell, episode: int,
                 t: PersonTrial) -> dict[str, Any]:
    """One trial as the episode row a run records: the first choice, the stage it led to, the second choice."""
    action1, action2 = t.choice1 - 1, t.choice2 - 1
    second = (moves.common if t.common else moves.rare)[action1]
    steps = [(moves.start, action1, 0.0, second, 1.0), (second, action2, t.reward, moves.ends[(second, action2)], 1.0)]
    phase = spec.phases[0]
    return {
        "experiment": spec.name, "run": cell.index, "task": cell.task, "agent": PARTICIPANT,
        "label": cell.agent.label, "params": "{}", "seed": cell.seed, "condition": cell.condition,
        "phase_task": version.task_id, "task_hash": version.content_hash, "phase": phase.name, "phase_index": 0,
        "episode": episode, "return": t.reward, "length": 2, "start_state": moves.start, "steps": steps,
        "trial_condition": None,
        "rts": None if t.rt1 is None or t.rt2 is None else [t.rt1, t.rt2],  # seconds: records keep ms
    }
