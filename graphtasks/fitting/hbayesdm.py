"""hBayesDM's data layouts: one tab-separated file holding many participants, a row per trial.

hBayesDM (Ahn, Haines & Zhang 2017) fits its models to files with a `subjID` column and a
few choice and outcome columns per task. Those files are read here as runs of participants of
a built-in task, so that researchers' existing data import with `graphtasks fit import` and
fit with `graphtasks fit run`. The layouts follow hBayesDM's documentation of each task's
data columns (its `commons/models/*.yml`); no file of hBayesDM is copied (its example files
in `tests/data/hbayesdm/` are simulated here, with a seed):

- `ts`, two-step (Daw et al. 2011): `level1_choice` (1, 2), `level2_choice` (1-4), `reward`.
  Stage 1: action level1_choice - 1; stage 2: the state that first-stage action
  (level2_choice - 1) // 2 leads to commonly (level-2 choices 1 and 2 follow stimulus 1's
  common transition), action (level2_choice - 1) % 2, paid `reward`. Task rewardgym/two-step.
- `prl`, probabilistic reversal: `choice` (1, 2), `outcome` (1 or -1, the reward). Task
  decision/reversal-learning, whose choice leads to a win or a loss state: the one paying
  `outcome`.
- `pst`, probabilistic selection: `type` (two digits: the pair of stimuli shown, 1-6),
  `choice` (1: the first of the pair, 0: the second), `reward`. Task
  decision/probabilistic-selection, stimulus k its action k - 1.
- `igt`, Iowa gambling: `choice` (deck 1-4), `gain`, `loss`; reward gain - abs(loss), in the
  task's units (decision/iowa-gambling pays 50 or 100 and loses up to 1250).
- `bandit4arm`, 4-armed bandit with gains and losses (Seymour et al. 2012): `choice` (1-4),
  `gain`, `loss`; reward gain - abs(loss). No built-in task yet (decision/four-armed-bandit).
- `bandit4arm2`, 4-armed restless bandit (Daw et al. 2006): `choice` (1-4), `outcome`
  (points 1-100, the reward). Task decision/restless-bandit.

Every choice of a one-choice layout is action choice - 1 from the task's start state.
Rows are taken in file order per `subjID` (the order of a participant's rows is the order of
their trials, as hBayesDM takes them; other columns such as `trial` are ignored); a row whose
choice is missing (`NA`, empty) is left out, as hBayesDM drops incomplete rows. Column names
are matched ignoring case. Every layout but `ts` maps onto a one-choice task (a start state
whose actions each end the trial; where an action may lead to several ends, as a reversal
task's win and loss, the step goes to the one that pays the row's reward); `--task` names
another task of the same shape. A layout whose task is not built in here is refused in one
line naming the task.

The likelihood offers a state's actions on every trial: a `pst` participant saw a pair, but a
fit of decision/probabilistic-selection takes each choice as among all six stimuli.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphstore.registry import Registry

from .choices import MAX_REWARD, MISSING, BehaviourError, Choices, EventsFile, _real, _Table, _where

SUBJECT = "subjid"


@dataclass(frozen=True)
class Layout:
    """One of hBayesDM's data layouts: its columns (besides `subjID`), the task it maps onto,
    how many options a choice has and how its outcome becomes a reward."""

    name: str
    title: str
    columns: tuple[str, ...]
    task: str
    options: int
    gain: str = ""  # the reward column ("" : gain - abs(loss))
    scale: float = 1.0  # the reward is the outcome times this


LAYOUTS: Registry[Layout] = Registry(
    "hBayesDM layout", error=BehaviourError,
    message=lambda name, known: f"--layout: no hBayesDM layout {name!r} (layouts: {', '.join(known)})",
)


def register_layout(layout: Layout, *, replace: bool = False) -> Layout:
    """Make an hBayesDM data layout readable (``graphtasks fit --layout NAME``, and recognised by its columns).

    Parameters
    ----------
    layout : Layout
        Its name, title, columns (besides `subjID`), the task it maps onto, the number of
        options and the reward column.
    replace : bool, optional
        Replace a layout of the same name (otherwise a ValueError).

    Returns
    -------
    Layout
        `layout`.

    Examples
    --------
    >>> from graphtasks.fitting.hbayesdm import LAYOUTS, register_layout
    >>> register_layout(LAYOUTS["prl"])
    Traceback (most recent call last):
    ...
    ValueError: hBayesDM layout 'prl' exists; pass replace=True to replace it
    """
    return LAYOUTS.register(layout.name, layout, replace=replace)


for _layout in (
    Layout("ts", "two-step", ("level1_choice", "level2_choice", "reward"), "rewardgym/two-step", 4, "reward"),
    Layout("prl", "probabilistic reversal", ("choice", "outcome"), "decision/reversal-learning", 2, "outcome"),
    Layout("pst", "probabilistic selection", ("type", "choice", "reward"), "decision/probabilistic-selection", 6,
           "reward"),
    Layout("igt", "Iowa gambling", ("choice", "gain", "loss"), "decision/iowa-gambling", 4, ""),
    Layout("bandit4arm", "4-armed bandit, gains and losses", ("choice", "gain", "loss"),
           "decision/four-armed-bandit", 4, ""),
    Layout("bandit4arm2", "4-armed restless bandit", ("choice", "outcome"), "decision/restless-bandit", 4,
           "outcome"),
):
    register_layout(_layout)


def is_hbayesdm(columns: dict[str, int]) -> bool:
    """Whether a header is hBayesDM's: it has a `subjID` column (any case)."""
    return SUBJECT in {c.strip().lower() for c in columns}


def _layout_of(table: _Table, name: str | None) -> Layout:
    have = {c.strip().lower() for c in table.columns}
    if name is not None:
        layout = LAYOUTS.lookup(name)
        missing = [c for c in layout.columns if c not in have]
        if missing:
            raise BehaviourError(f"{table.path}: hBayesDM's {name} layout needs column(s) {', '.join(missing)}")
        return layout
    fitting = [layout for layout in LAYOUTS.values() if set(layout.columns) <= have]
    most = max((len(layout.columns) for layout in fitting), default=0)
    fitting = [layout for layout in fitting if len(layout.columns) == most]  # the layout that uses most columns
    if len(fitting) == 1:
        return fitting[0]
    named = [layout for layout in fitting if table.path.name.startswith(layout.name + "_")]
    if len(named) == 1:  # hBayesDM's files are named after their task: prl_exampleData.txt
        return named[0]
    if not fitting:
        wanted = "; ".join(f"{n}: {', '.join(layout.columns)}" for n, layout in LAYOUTS.items())
        raise BehaviourError(f"{table.path}: a subjID column but no hBayesDM layout's columns ({wanted})")
    names = " and ".join(layout.name for layout in fitting)
    raise BehaviourError(f"{table.path}: columns {', '.join(fitting[0].columns)} are hBayesDM's {names} layouts: "
                         "name one with --layout (or begin the file's name with it, as prl_data.txt)")


@dataclass(frozen=True)
class _Shape:
    """Where a task's choices lead: its start state and, per (state, action), the targets and
    their probabilities."""

    task_id: str
    start: int
    targets: np.ndarray
    probs: np.ndarray
    terminal: np.ndarray
    paid: np.ndarray  # each state's reward (its mean where it is drawn)

    def ends(self, state: int, action: int) -> list[int]:
        """The states (state, action) may lead to, if every one ends the trial, else []."""
        if action >= self.targets.shape[1]:
            return []
        reached = [int(t) for t, p in zip(self.targets[state, action], self.probs[state, action]) if p > 0]
        return reached if reached and all(self.terminal[t] for t in reached) else []

    def by_reward(self, action: int, reward: float) -> int:
        """The end (start, action) leads to that pays `reward` (-1 if none or several do)."""
        found = [t for t in self.ends(self.start, action) if np.isclose(self.paid[t], reward)]
        return found[0] if len(found) == 1 else -1

    def certain(self, state: int, action: int) -> int:
        """The state (state, action) leads to, if it leads to one with certainty, else -1."""
        if action >= self.targets.shape[1]:
            return -1
        p = self.probs[state, action]
        return int(self.targets[state, action][int(np.argmax(p))]) if np.isclose(p.max(), 1.0) else -1

    def common(self, state: int, action: int) -> int:
        """The most likely state (state, action) leads to."""
        return int(self.targets[state, action][int(np.argmax(self.probs[state, action]))])


def _task_shape(task_id: str, layout: Layout, given: bool, path: Path | str = "") -> _Shape:
    import tasks
    from graphstore import GraphtasksError
    from gym_bridge import family_of

    where = "--task" if given else f"{path}: hBayesDM's {layout.name} layout ({layout.title})"
    if not given and not tasks.is_builtin(task_id):
        raise BehaviourError(f"{where} maps onto task {task_id!r}, which is not a built-in task here; "
                             "name a task of the same shape with --task")
    try:
        graph = tasks.build(task_id)
        compiled = getattr(family_of(graph).make_env(graph).unwrapped, "compiled", None)
    except GraphtasksError as exc:
        raise BehaviourError(f"{where}: {exc}") from None
    if compiled is None or not hasattr(compiled, "targets"):
        raise BehaviourError(f"{where}: task {task_id!r} is not a graph task (hBayesDM's layouts are choice tasks)")
    return _Shape(task_id, int(compiled.start), np.asarray(compiled.targets), np.asarray(compiled.probs),
                  np.asarray(compiled.terminal), np.asarray(compiled.reward_value, dtype=float))


def _option(text: str, path: Path, line: int, column: str, options: int) -> int:
    """A choice cell: 1..options -> 0..options-1, or -1 if missing."""
    stripped = text.strip()
    if stripped.lower() in MISSING or stripped == "NA":
        return -1
    try:
        number = float(stripped)
    except ValueError:
        number = float("nan")
    if not (number.is_integer() and 1 <= number <= options):
        choices = ", ".join(map(str, range(1, options))) + f" or {options}"
        raise BehaviourError(f"{_where(path, line)}: column {column!r}: expected {choices}, got {text!r:.60}")
    return int(number) - 1


def _number(text: str, path: Path, line: int, column: str) -> float:
    value = _real(text, path, line, column, MAX_REWARD)
    if value is None:
        raise BehaviourError(f"{_where(path, line)}: column {column!r}: expected a number, got {text!r:.60}")
    return value


class _Participant:
    """One participant's steps as they are read."""

    def __init__(self) -> None:
        self.states, self.actions, self.nexts, self.lines = array("q"), array("q"), array("q"), array("q")
        self.rewards, self.ends = array("d"), array("b")

    def add(self, state: int, action: int, reward: float, nxt: int, end: bool, line: int) -> None:
        self.states.append(state)
        self.actions.append(action)
        self.rewards.append(reward)
        self.nexts.append(nxt)
        self.ends.append(end)
        self.lines.append(line)

    def events(self, task_id: str, source: str, participant: str) -> EventsFile:
        n = len(self.states)
        choices = Choices(
            task_id, np.frombuffer(self.states, dtype=np.int64).copy(),
            np.frombuffer(self.actions, dtype=np.int64).copy(), np.frombuffer(self.rewards, dtype=np.float64).copy(),
            np.frombuffer(self.nexts, dtype=np.int64).copy(),
            np.frombuffer(self.ends, dtype=np.int8).astype(bool), np.ones(n, dtype=bool), f"{source} ({participant})",
        )
        return EventsFile(choices, participant, np.frombuffer(self.lines, dtype=np.int64).copy())


def read_hbayesdm(
    table: _Table, task_id: str | None = None, layout_name: str | None = None
) -> list[tuple[str, EventsFile]]:
    """Every participant of an hBayesDM file, in the order of their first row.

    Parameters
    ----------
    table
        The file opened for reading (its header has `subjID`); `read_participants` opens it.
    task_id
        The task the choices are steps of (default: the layout's); it must have the layout's shape.
    layout_name
        The layout, where the columns fit two (igt or bandit4arm; prl or bandit4arm2) and the
        file's name does not begin with one.

    Returns
    -------
    list of (str, EventsFile)
        (subjID, their choices on the task with the line of the file each was read from).
        BehaviourError naming the file, line and column of the first cell that does not fit,
        before anything is returned.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphtasks.fitting.behaviour import read_participants
    >>> path = Path(tempfile.mkdtemp()) / "ts_data.txt"
    >>> rows = ["subjID level1_choice level2_choice reward", "A 1 1 1", "A 2 4 0"]
    >>> _ = path.write_text("".join(row.replace(" ", chr(9)) + chr(10) for row in rows))
    >>> ((subject, events),) = read_participants(path)
    >>> subject, events.choices.states.tolist(), events.choices.next_states.tolist()
    ('A', [0, 1, 0, 2], [1, 3, 2, 6])
    """
    path = table.path
    layout = _layout_of(table, layout_name)
    shape = _task_shape(task_id or layout.task, layout, task_id is not None, path)
    lower = {c.strip().lower(): i for c, i in table.columns.items()}
    at = {c: lower[c] for c in (SUBJECT, *layout.columns)}
    convert = _two_step if layout.name == "ts" else _one_choice
    if layout.name == "pst":
        convert = _selection
    _check_shape(shape, layout, path)
    people: dict[str, _Participant] = {}
    for row in table.rows():
        line = table.line
        subject = row[at[SUBJECT]].strip()
        if subject.lower() in MISSING or subject == "NA":
            raise BehaviourError(f"{_where(path, line)}: column 'subjID': a row without a participant")
        convert(layout, shape, {c: row[i] for c, i in at.items()}, path, line, people.setdefault(subject,
                                                                                                   _Participant()))
    out = [(subject, person.events(shape.task_id, str(path), subject)) for subject, person in people.items()
           if len(person.states)]
    if not out:
        raise BehaviourError(f"{path}: no choices to fit")
    return out


def _check_shape(shape: _Shape, layout: Layout, path: Path) -> None:
    """Refuse, in one line, a task the layout's choices cannot be steps of."""
    start = shape.start
    if layout.name == "ts":
        firsts = [shape.common(start, a) for a in range(2)] if shape.targets.shape[1] >= 2 else []
        ok = len(set(firsts)) == 2 and all(shape.certain(s, a) >= 0 and shape.terminal[shape.certain(s, a)]
                                           for s in firsts for a in range(2))
        what = "two first-stage actions commonly leading to two second-stage states of two ending actions each"
    else:
        ok = all(shape.ends(start, a) for a in range(layout.options))
        what = f"a start state whose first {layout.options} actions each end the trial"
    if not ok:
        raise BehaviourError(f"{path}: task {shape.task_id!r} does not have the shape of hBayesDM's {layout.name} "
                             f"layout ({what})")


def _two_step(layout: Layout, shape: _Shape, cells: dict[str, str], path: Path, line: int,
              person: _Participant) -> None:
    first = _option(cells["level1_choice"], path, line, "level1_choice", 2)
    second = _option(cells["level2_choice"], path, line, "level2_choice", 4)
    if first < 0 or second < 0:
        return
    reward = _number(cells["reward"], path, line, "reward") * layout.scale
    stage = shape.common(shape.start, second // 2)  # level2 choices 1, 2 follow stimulus 1's common transition
    person.add(shape.start, first, 0.0, stage, False, line)
    person.add(stage, second % 2, reward, shape.certain(stage, second % 2), True, line)


def _one_choice(layout: Layout, shape: _Shape, cells: dict[str, str], path: Path, line: int,
                person: _Participant) -> None:
    choice = _option(cells["choice"], path, line, "choice", layout.options)
    if choice < 0:
        return
    if layout.gain:
        reward = _number(cells[layout.gain], path, line, layout.gain)
    else:
        reward = _number(cells["gain"], path, line, "gain") - abs(_number(cells["loss"], path, line, "loss"))
    _pay(layout, shape, choice, reward * layout.scale, path, line, layout.gain or "gain", person)


def _pay(layout: Layout, shape: _Shape, action: int, reward: float, path: Path, line: int, column: str,
         person: _Participant) -> None:
    """A one-choice step: where `action` leads (with certainty, or else the end that pays `reward`)."""
    nxt = shape.certain(shape.start, action)
    if nxt < 0:
        nxt = shape.by_reward(action, reward)
        if nxt < 0:
            paid = sorted({float(shape.paid[t]) for t in shape.ends(shape.start, action)})
            raise BehaviourError(f"{_where(path, line)}: column {column!r}: {reward:g} is not what a choice of "
                                 f"{action + 1} pays in task {shape.task_id!r} ({', '.join(f'{v:g}' for v in paid)})")
    person.add(shape.start, action, reward, nxt, True, line)


def _selection(layout: Layout, shape: _Shape, cells: dict[str, str], path: Path, line: int,
               person: _Participant) -> None:
    """`type` names the pair shown (tens: the first option's stimulus, ones: the second's; 1-6),
    `choice` 1 if the first was chosen, 0 if the second; stimulus k is action k - 1."""
    text = cells["type"].strip()
    if text.lower() in MISSING or text == "NA" or cells["choice"].strip().lower() in MISSING | {"na"}:
        return
    if not (len(text) == 2 and text.isdigit() and all("1" <= c <= str(layout.options) for c in text)
            and text[0] != text[1]):
        raise BehaviourError(f"{_where(path, line)}: column 'type': expected two different digits 1-{layout.options} "
                             f"(the pair shown, e.g. 12), got {cells['type']!r:.60}")
    flag = cells["choice"].strip()
    if flag not in ("0", "1", "0.0", "1.0"):
        raise BehaviourError(f"{_where(path, line)}: column 'choice': expected 1 (the first of the pair) or 0 (the "
                             f"second), got {cells['choice']!r:.60}")
    chosen = int(text[0]) if float(flag) == 1 else int(text[1])
    reward = _number(cells["reward"], path, line, "reward") * layout.scale
    _pay(layout, shape, chosen - 1, reward, path, line, "reward", person)


def layout_text(layout_name: str, participants: list[tuple[str, Choices]]) -> str:
    """Choices of participants written in hBayesDM's layout (what `read_hbayesdm` reads back).

    Parameters
    ----------
    layout_name
        One of `LAYOUTS` (`ts`: two-step; the others one-choice tasks).
    participants
        (subjID, choices) per participant, their choices on a task of the layout's shape.

    Returns
    -------
    str
        A row per trial: `subjID`, a `trial` column counted from 1 (as hBayesDM's example
        files have), then the layout's columns.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.hbayesdm import layout_text
    >>> run = simulate("rewardgym/two-step", "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, trials=2, seed=0)
    >>> layout_text("ts", [("1", run)]).splitlines()[0].split(chr(9))
    ['subjID', 'trial', 'level1_choice', 'level2_choice', 'reward']
    """
    layout = LAYOUTS[layout_name]
    lines = ["\t".join(("subjID", "trial", *layout.columns))]
    for subject, choices in participants:
        if layout.name == "ts":
            shape = _task_shape(choices.task_id, layout, True)
            firsts = choices.states == shape.start
            for t, i in enumerate(np.flatnonzero(firsts)):
                stage, action = int(choices.states[i + 1]), int(choices.actions[i + 1])
                level2 = 2 * [shape.common(shape.start, a) for a in range(2)].index(stage) + action + 1
                lines.append(f"{subject}\t{t + 1}\t{int(choices.actions[i]) + 1}\t{level2}\t"
                             f"{_cell(choices.rewards[i + 1] / layout.scale)}")
            continue
        for t, (action, reward) in enumerate(zip(choices.actions.tolist(), choices.rewards.tolist())):
            value = reward / layout.scale
            outcome = [_cell(value)] if layout.gain else [_cell(max(value, 0.0)), _cell(min(value, 0.0))]
            lines.append("\t".join((subject, str(t + 1), str(action + 1), *outcome)))
    return "\n".join(lines) + "\n"


def _cell(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"
