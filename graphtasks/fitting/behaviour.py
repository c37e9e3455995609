"""Sequences of choices to fit: from a run recorded in the store, or from an events file of
human behaviour in rewardGym's BIDS-like columns.

A `Choices` holds one participant's (or one simulated run's) steps in order: the state the
choice was made in, the action, what it paid, where it led, whether it ended its trial, and
whether the agent learnt from it (false in test phases). The likelihood replays them.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from graphstore.errors import GraphtasksError


class BehaviourError(GraphtasksError, ValueError):
    """Behaviour that cannot be read or fitted: one line naming the file, line or field."""


@dataclass(frozen=True, eq=False)
class Choices:
    """One sequence of choices, in order (arrays of one length); compared by identity."""

    task_id: str
    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_states: np.ndarray
    ends: np.ndarray  # the step ended its trial (episode)
    learn: np.ndarray  # the chooser learnt from the step (false in a test phase)
    source: str = ""
    truth: dict[str, Any] = field(default_factory=dict)  # the generating agent's settings, when known

    def __post_init__(self) -> None:
        if not len(self.states):
            raise BehaviourError(f"{self.source or 'choices'}: no choices to fit")

    def __len__(self) -> int:
        return len(self.states)

    @property
    def trials(self) -> int:
        return int(self.ends.sum())

    @classmethod
    def from_steps(
        cls,
        task_id: str,
        steps: Sequence[tuple[int, int, float, int, bool]],
        source: str = "",
        learn: Sequence[bool] | None = None,
        truth: dict[str, Any] | None = None,
    ) -> Choices:
        """From (state, action, reward, next_state, ended) tuples."""
        columns: list[Sequence[Any]] = list(zip(*steps)) if steps else [[], [], [], [], []]
        return cls(
            task_id,
            np.asarray(columns[0], dtype=np.int64),
            np.asarray(columns[1], dtype=np.int64),
            np.asarray(columns[2], dtype=np.float64),
            np.asarray(columns[3], dtype=np.int64),
            np.asarray(columns[4], dtype=bool),
            np.ones(len(steps), dtype=bool) if learn is None else np.asarray(learn, dtype=bool),
            source,
            dict(truth or {}),
        )


# -- from the store ------------------------------------------------------------------------------
RUN_TRIALS = (
    "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.task = $uid AND r.index = $run "
    "MATCH (e)-[:IN_PHASE]->(p:Phase) "
    "RETURN r.task_id, r.agent, r.params, e.phase_index, e.index, t.step, t.state, t.action, t.reward, "
    "t.next_state, p.learn ORDER BY e.phase_index, e.index, t.step"
)


def load_run(store: Any, experiment: str, run: int) -> Choices:
    """The recorded trials of one run of an experiment (a simulated agent or an imported participant)."""
    import json

    uid = f"experiment/{experiment}"
    rows = store.cypher(RUN_TRIALS, {"uid": uid, "run": int(run)}).rows
    if not rows:
        raise BehaviourError(
            f"experiment {experiment!r}, run {run}: no recorded trials (record = 'steps' in the spec records them)"
        )
    steps, learn = [], []
    for i, row in enumerate(rows):
        key = (row[3], row[4])
        last = i + 1 == len(rows) or (rows[i + 1][3], rows[i + 1][4]) != key
        steps.append((int(row[6]), int(row[7]), float(row[8]), int(row[9]), last))
        learn.append(bool(row[10]))
    params = rows[0][2]
    params = json.loads(params) if isinstance(params, str) else dict(params or {})
    truth = {"agent": rows[0][1], **params}
    return Choices.from_steps(rows[0][0], steps, f"{uid}/run/{run}", learn, truth)


def recorded_runs(store: Any, experiment: str) -> list[int]:
    """The indices of an experiment's runs that have trials, in order."""
    rows = store.cypher(
        "MATCH (r:Run)-[:HAS_EPISODE]->(:Episode)-[:HAS_TRIAL]->(:Trial) WHERE r.task = $uid "
        "RETURN DISTINCT r.index ORDER BY r.index",
        {"uid": f"experiment/{experiment}"},
    ).rows
    return [int(r[0]) for r in rows]


# -- from an events file -------------------------------------------------------------------------
def _number(text: str | None, where: str, column: str, kind: type = int) -> Any:
    """A cell as a number; None for rewardGym's missing values ('n/a', 'None', empty)."""
    if text is None or text.strip() in ("", "n/a", "None", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise BehaviourError(f"{where}: column {column!r}: expected a number, got {text!r}") from None
    if kind is int:
        if not math.isfinite(value) or value != int(value):
            raise BehaviourError(f"{where}: column {column!r}: expected a whole number, got {text!r}")
        return int(value)
    return value


def read_events(path: str | Path, task_id: str | None = None, drop_reminded: bool = True) -> Choices:
    """One participant's choices from a tab-separated events file.

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
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise BehaviourError(f"{p}: cannot read: {exc.strerror}") from None
    reader = csv.DictReader(text.splitlines(), delimiter="\t")
    columns = set(reader.fieldnames or ())
    rows = [(number, row) for number, row in enumerate(reader, 2)]
    if "rl_label" in columns:
        steps = _rewardgym_steps(p, rows, columns, drop_reminded)
    elif {"state", "response_button", "current_location"} <= columns:
        steps = _exported_steps(p, rows)
    else:
        raise BehaviourError(
            f"{p}: neither rewardGym's columns (rl_label, action, current_location, reward, trial) "
            "nor graphtasks' export (state, response_button, current_location, delta_reward)"
        )
    if task_id is None:
        tasks = {row.get("task") for _, row in rows if row.get("task") not in (None, "", "n/a")}
        if len(tasks) != 1:
            raise BehaviourError(f"{p}: name the task (--task): the file's task column has {sorted(map(str, tasks))}")
        task_id = str(tasks.pop())
    return Choices.from_steps(task_id, steps, str(p))


def _require(path: Path, columns: set[str], needed: tuple[str, ...]) -> None:
    missing = [c for c in needed if c not in columns]
    if missing:
        raise BehaviourError(f"{path}: missing column(s) {', '.join(missing)}")


def _rewardgym_steps(
    path: Path, rows: list[tuple[int, dict[str, str]]], columns: set[str], drop_reminded: bool
) -> list[tuple[int, int, float, int, bool]]:
    _require(path, columns, ("trial", "onset", "action", "current_location", "reward"))
    trials: dict[int, list[tuple[float, int, dict[str, str]]]] = {}
    reminded: set[int] = set()
    for number, row in rows:
        where = f"{path}, line {number}"
        trial = _number(row["trial"], where, "trial")
        if trial is None:
            continue
        onset = _number(row["onset"], where, "onset", float)
        trials.setdefault(trial, []).append((onset if onset is not None else math.inf, number, row))
        if drop_reminded and (row.get("event_type") or "").strip() == "reminder":
            reminded.add(trial)
    steps: list[tuple[int, int, float, int, bool]] = []
    for trial in sorted(set(trials) - reminded):
        location: int | None = None
        pending: list[Any] | None = None  # [state, action, reward] of a choice waiting for where it led
        made: list[list[Any]] = []
        for _, number, row in sorted(trials[trial], key=lambda item: (item[0], item[1])):
            where, label = f"{path}, line {number}", (row["rl_label"] or "").strip()
            if label == "obs":
                location = _number(row["current_location"], where, "current_location")
                if pending is not None and location is not None:
                    pending.append(location)
                    made.append(pending)
                    pending = None
            elif label == "action":
                action = _number(row["action"], where, "action")
                if action is None:  # a missed response: no choice
                    continue
                if location is None:
                    raise BehaviourError(f"{where}: a choice before any 'obs' row of trial {trial}")
                if pending is not None:  # two choices without a location between them
                    raise BehaviourError(f"{where}: trial {trial}: a choice before the last one's outcome")
                pending = [location, action, 0.0]
            elif label == "reward":
                value = _number(row["reward"], where, "reward", float) or 0.0
                target = pending if pending is not None else made[-1] if made else None
                if target is None:
                    raise BehaviourError(f"{where}: a reward before any choice of trial {trial}")
                target[2] += value
        if pending is not None:  # the last choice led nowhere new: it ended the trial where it was
            pending.append(location)
            made.append(pending)
        for i, (state, action, reward, nxt) in enumerate(made):
            steps.append((state, action, reward, nxt, i == len(made) - 1))
    return steps


def _exported_steps(path: Path, rows: list[tuple[int, dict[str, str]]]) -> list[tuple[int, int, float, int, bool]]:
    steps: list[tuple[int, int, float, int, bool]] = []
    trial_of: list[Any] = []
    for number, row in rows:
        where = f"{path}, line {number}"
        action = _number(row.get("response_button"), where, "response_button")
        if action is None:
            continue
        state = _number(row["state"], where, "state")
        nxt = _number(row["current_location"], where, "current_location")
        if state is None or nxt is None:
            raise BehaviourError(f"{where}: a choice without its state or current_location")
        reward = _number(row.get("delta_reward"), where, "delta_reward", float) or 0.0
        steps.append((state, action, reward, nxt, False))
        trial_of.append(row.get("trial"))
    return [(*s[:4], i + 1 == len(steps) or trial_of[i + 1] != trial_of[i]) for i, s in enumerate(steps)]


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

