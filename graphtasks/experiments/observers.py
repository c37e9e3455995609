"""What happens to an experiment's runs, told to observers.

A run has a status, `running` from when a worker takes it until it ends `completed`, `failed`
(its own error) or `interrupted` (stopped from outside: Ctrl-C, its worker process killed).
The sweep tells every observer as it happens, as Sacred's run observers and MLflow's tracking
stores are told: the store recorder (`records.StoreRecorder`), the progress bar, the CSV and
BIDS writers, and any of a user's own. Adding an output is one observer.

Observers run in the driver process; a run's episodes reach them when the run ends (workers
send a run's results whole).

Examples
--------
An observer of one's own: print each run as it ends.

>>> from graphtasks.experiments.observers import RunObserver
>>> class Printer(RunObserver):
...     def run_finished(self, outcome):
...         print(outcome.cell.index, outcome.status, len(outcome.rows or []))
"""

from __future__ import annotations

import csv
import datetime
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .chunks import Chunk
    from .runs import Cell
    from .spec import ExperimentSpec

RUNNING, COMPLETED, FAILED, INTERRUPTED = "running", "completed", "failed", "interrupted"
STATUSES = (RUNNING, COMPLETED, FAILED, INTERRUPTED)
FINISHED = (COMPLETED, "done")  # 'done': how runs recorded before statuses had names say completed


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunOutcome:
    """How one run ended: its status, its episode rows (None unless completed) and its error."""

    cell: Cell
    status: str
    rows: list[dict[str, Any]] | None
    error: str | None
    started_at: str
    ended_at: str
    # where a worker wrote the run's rows as record chunks (`chunks`): the chunks, the records
    # folder and the run's probes; `rows` is then None (`episode_rows` reads them back)
    chunks: tuple[Chunk, ...] = ()
    folder: str | None = None
    probes: tuple[dict[str, Any], ...] = ()
    halt: bool = False  # the sweep cannot go on (its records cannot be written: a full disk)

    def episode_rows(self) -> list[dict[str, Any]] | None:
        """The run's episode rows (with their steps and probe, as the sweep makes them), read
        back from its chunks where a worker wrote it as chunks."""
        if self.rows is not None or not self.chunks:
            return self.rows
        from .chunks import outcome_rows

        return outcome_rows(self)


class RunObserver:
    """Told what happens to an experiment's runs; every method does nothing unless overridden.

    The store's recorder, the progress bar and exports such as BIDS are observers; an output
    of one's own is a subclass overriding the methods it needs, passed to `Experiment.run`
    (``observers=[...]``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphtasks.experiments import Experiment
    >>> from graphtasks.experiments.observers import RunObserver
    >>> class Tally(RunObserver):
    ...     def __init__(self):
    ...         self.ended = []
    ...     def run_finished(self, outcome):
    ...         self.ended.append((outcome.cell.index, outcome.status))
    ...     def experiment_finished(self, status):
    ...         print(status, self.ended)
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "one.toml").write_text('''
    ... [experiment]
    ... name = "one-run"
    ... tasks = ["rewardgym/two-step"]
    ...
    ... [[agents]]
    ... name = "q"
    ...
    ... [[phases]]
    ... name = "trials"
    ... episodes = 3
    ... ''')
    >>> experiment, store = Experiment.from_file(folder / "one.toml"), str(folder / "store.lbug")
    >>> report = experiment.run(store, workers=1, observers=[Tally()])
    completed [(0, 'completed')]
    """

    def experiment_started(self, spec: ExperimentSpec, todo: Sequence[Cell], done: int) -> None:
        """The sweep starts: `todo` are the runs it will run, `done` were recorded before.

        Parameters
        ----------
        spec : ExperimentSpec
            The experiment.
        todo : sequence of Cell
            The runs it will run.
        done : int
            The number of runs recorded before.
        """

    def run_started(self, cell: Cell, started_at: str) -> None:
        """A worker took the run (on a Dask cluster: the run was submitted).

        Parameters
        ----------
        cell : Cell
            The run.
        started_at : str
            When it started (ISO 8601, UTC).
        """

    def run_finished(self, outcome: RunOutcome) -> None:
        """The run ended, completed, failed or interrupted.

        Parameters
        ----------
        outcome : RunOutcome
            How it ended: its status, its episode rows and its error.
        """

    def runs_finished(self, outcomes: Sequence[RunOutcome]) -> None:
        """Runs that ended together (a batch's lanes, a unit of work): each told to `run_finished`
        unless an observer has a better use for them together (the store writes them at once).

        Parameters
        ----------
        outcomes : sequence of RunOutcome
            How each run ended.
        """
        for outcome in outcomes:
            self.run_finished(outcome)

    def experiment_finished(self, status: str) -> None:
        """The sweep ended: `completed` (every run ended), `interrupted` or `failed` (the driver's error).

        Parameters
        ----------
        status : str
            ``"completed"``, ``"interrupted"`` or ``"failed"``.
        """

    def waiting(self, what: str | None) -> None:
        """The driver waits its turn for the store (`what` says for whom), or no longer (None).

        Parameters
        ----------
        what : str or None
            What it waits for, as one line; None: it no longer waits.
        """

    def heartbeat(self) -> None:
        """The driver waits for its workers: told about twice a second while nothing else
        happens (as Sacred's heartbeat), so an observer can write what has become due."""

    def driver_busy(self) -> None:
        """The driver is about to play the runs just started itself (one worker) and will hear
        nothing until they end: an observer writes now what it would write on a heartbeat."""

    def episodes_played(self, unit: int, count: int) -> None:
        """Episodes of a batch under way ended (`count`, summed over its lanes), before its
        runs do: the batch is the one whose first run has index `unit`. Told by the batched
        lanes on processes and in the driver (not from a Dask cluster); the runs' ends are
        told as always.

        Parameters
        ----------
        unit : int
            The index of the batch's first run.
        count : int
            Episodes that ended since the last word.
        """


class ProgressObserver(RunObserver):
    """A progress bar of the sweep's episodes (tqdm: a text bar in a terminal, a widget in a
    notebook): a batch of lanes moves it as its episodes end, not only when its runs do, so
    the bar moves and its time left is the episodes' rate's, not that of runs ending in bursts."""

    def __init__(self, description: str, disable: bool = False) -> None:
        self.description, self.disable = description, disable
        self.bar: Any = None
        self.said = False  # a wait before the bar was said
        self.planned: dict[int, int] = {}  # a run's index -> its episodes
        self.told: dict[int, int] = {}  # a batch's first run -> its episodes told before its runs ended

    def experiment_started(self, spec: ExperimentSpec, todo: Sequence[Cell], done: int) -> None:
        from tqdm.auto import tqdm

        if done:
            print(f"{spec.name}: {done} run(s) already recorded, {len(todo)} to go")
        self.planned = {cell.index: sum(p.episodes for p in spec.phases_of(cell.condition)) for cell in todo}
        # smoothing=0: the rate is episodes over the time since the start (runs end in bursts)
        self.bar = tqdm(total=sum(self.planned.values()), desc=self.description, unit="episode",
                        disable=self.disable, leave=False, smoothing=0)

    def episodes_played(self, unit: int, count: int) -> None:
        self.told[unit] = self.told.get(unit, 0) + count
        if self.bar is not None:
            self.bar.update(count)

    def run_finished(self, outcome: RunOutcome) -> None:
        self.runs_finished([outcome])

    def runs_finished(self, outcomes: Sequence[RunOutcome]) -> None:
        """A unit's runs: what of their episodes was not told yet, in one step."""
        if self.bar is not None and outcomes:
            planned = sum(self.planned.get(o.cell.index, 0) for o in outcomes)
            told = self.told.pop(min(o.cell.index for o in outcomes), 0)
            self.bar.update(max(0, planned - told))

    def experiment_finished(self, status: str) -> None:
        if self.bar is not None:
            self.bar.close()

    def waiting(self, what: str | None) -> None:
        if self.bar is not None and not self.disable:
            self.bar.set_postfix_str(what or "", refresh=True)
        elif self.bar is None and what and not self.said:  # before the sweep (waiting for another driver
            print(what, file=sys.stderr, flush=True)  # or the store): a notice, not progress, so said bar or not,
        self.said = bool(what)  # once per wait


class CsvObserver(RunObserver):
    """One row per episode of the runs this sweep completes, written when it ends, in run order."""

    def __init__(self, path: str | Path, columns: Sequence[str]) -> None:
        self.path, self.columns = Path(path), tuple(columns)
        self.rows: dict[int, list[dict[str, Any]]] = {}

    def run_finished(self, outcome: RunOutcome) -> None:
        rows = outcome.episode_rows()
        if rows:
            self.rows[outcome.cell.index] = [{c: r.get(c) for c in self.columns} for r in rows]

    def experiment_finished(self, status: str) -> None:
        with open(self.path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns)
            writer.writeheader()
            for index in sorted(self.rows):
                writer.writerows(self.rows[index])
