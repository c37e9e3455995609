"""Run an experiment: every cell (task x agent setting x seed) through every phase, in parallel.

Workers get the task versions once, prepared by their families (no store is opened in a worker) and return one
row per episode; the order of the rows and every number in them depend only on the spec
and its seeds, never on the number of workers: each cell draws from generators seeded by
its seed and phase index alone.
"""

from __future__ import annotations

import csv
import ctypes
import dataclasses
import functools
import json
import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from graphstore import TaskGraph

from .batched_runs import group_cells, play_batch, play_batch_phases
from .chunks import MS, RecordChunkError, write_lanes, write_played
from .observers import COMPLETED, FAILED, INTERRUPTED, RunObserver, RunOutcome, now
from .runs import Cell, PhaseEpisode, cells, play_run
from .spec import ExperimentSpec
from .versions import TaskVersion, prepare_versions
from .worker_slots import STILL_WORKING, received, stop_workers

COLUMNS = (
    "experiment",
    "run",
    "task",
    "phase_task",
    "task_hash",
    "agent",
    "label",
    "params",
    "seed",
    "condition",
    "phase",
    "phase_index",
    "episode",
    "return",
    "length",
    "start_state",
)


@dataclass
class SweepResult:
    """What a sweep did: its failures, how many runs were batched, and (read when first asked,
    from the records chunks where workers wrote them) its completed runs' rows."""

    outcomes: list[RunOutcome]  # the completed runs, in run order
    failures: list[tuple[Cell, str]]
    batched: int = 0  # runs played as lanes of a batch (the others per agent)

    @functools.cached_property
    def _split(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        every = [row for outcome in self.outcomes for row in outcome.episode_rows() or []]
        rows, trials = split_steps(every)
        return rows, trials, split_probes(every)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One per episode."""
        return self._split[0]

    @property
    def trials(self) -> list[dict[str, Any]]:
        """One per step, where steps are recorded."""
        return self._split[1]

    @property
    def probes(self) -> list[dict[str, Any]]:
        """One per probed phase of each run."""
        return self._split[2]


def task_versions(spec: ExperimentSpec) -> dict[str, TaskGraph]:
    """Every task version a phase runs, by id (a changed task is a variant with its own id)."""
    return dict(spec.graphs)


def run_head(spec: ExperimentSpec, cell: Cell) -> dict[str, Any]:
    """The columns every episode row of a run shares."""
    return {
        "experiment": spec.name,
        "run": cell.index,
        "task": cell.task,
        "agent": cell.agent.name,
        "label": cell.agent.label,
        "params": json.dumps(cell.agent.recorded, sort_keys=True),
        "seed": cell.seed,
        "condition": cell.condition,
    }


def episode_row(head: dict[str, Any], played: PhaseEpisode) -> dict[str, Any]:
    """One episode as a row of the sweep's results (with its steps where they are recorded)."""
    episode = played.episode
    row = {
        **head,
        "phase_task": played.version.task_id,
        "task_hash": played.version.content_hash,
        "phase": played.phase.name,
        "phase_index": played.phase_index,
        "episode": episode.index,
        "return": episode.reward,
        "length": episode.length,
        "start_state": episode.start_state,
    }
    if played.records_steps:
        row["steps"] = episode.steps
        row["trial_condition"] = episode.condition
        if played.rts is not None:
            row["rts"] = played.rts
    if played.probe is not None:
        row["probe"] = played.probe
    return row


def run_cell(spec: ExperimentSpec, cell: Cell, versions: Mapping[str, TaskVersion]) -> list[dict[str, Any]]:
    """Every phase of one cell; one row per episode, with its `steps` (state, action, reward,
    next state, P(action)) where the spec records steps for the task."""
    head = run_head(spec, cell)
    return [episode_row(head, played) for played in play_run(spec, cell, versions)]


def split_steps(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Episode rows without their steps, and one trial row per recorded step."""
    episodes, trials = [], []
    for row in rows:
        steps = row.get("steps")
        condition = row.get("trial_condition")
        rts = row.get("rts")
        episodes.append({k: v for k, v in row.items() if k not in ("steps", "trial_condition", "probe", "rts")})
        for step, (state, action, reward, next_state, p_action) in enumerate(steps or ()):
            trials.append(
                {
                    **({} if rts is None else {"rt": rts[step] * MS}),  # records keep milliseconds
                    "run": row["run"],
                    "phase_index": row["phase_index"],
                    "episode": row["episode"],
                    "step": step,
                    "state": state,
                    "action": action,
                    "reward": reward,
                    "next_state": next_state,
                    "p_action": p_action,
                    "condition": condition,
                }
            )
    return episodes, trials


def split_probes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per probed phase of each run: its preference and the values it compared."""
    return [
        {"run": row["run"], "phase": row["phase"], "phase_index": row["phase_index"], **row["probe"]}
        for row in rows
        if "probe" in row
    ]


_WORKER: dict[str, Any] = {}


def _init_worker(spec: ExperimentSpec, versions: Mapping[str, TaskVersion], records: str | None = None) -> None:
    _WORKER["spec"], _WORKER["versions"], _WORKER["records"] = spec, versions, records
    _WORKER.pop("progress", None)  # who hears of a batch's episodes as they end: set by the pool or the driver


Unit = Cell | tuple[Cell, ...]  # one cell played per agent, or a batch (`batched_runs.group_cells`)


def unit_cells(unit: Unit) -> tuple[Cell, ...]:
    return unit if isinstance(unit, tuple) else (unit,)


def _run_in_worker(unit: Unit) -> list[RunOutcome]:
    """Play one unit of work; a failure fails its cells with the error, the others go on.

    Where the sweep keeps records as chunks (`records`: the store's records folder), the
    worker writes its completed runs' rows there itself, as columns made straight from the
    played episodes (`chunks.write_played`), and sends the driver only what the catalogue
    needs; otherwise it sends every episode's row."""
    started = now()
    spec, versions = _WORKER["spec"], _WORKER["versions"]
    folder = _WORKER.get("records")
    played: list[tuple[Cell, Sequence[PhaseEpisode]]]
    phases: list[Any] = []
    try:
        if isinstance(unit, tuple) and folder is not None:  # columns from the lanes to the chunk
            tell = _WORKER.get("progress")
            first = unit[0].index
            phases = play_batch_phases(spec, unit, versions,
                                       progress=None if tell is None else lambda count: tell(first, count))
            played = [(cell, ()) for cell in unit]
        elif isinstance(unit, tuple):
            batch = play_batch(spec, unit, versions)
            played = [(cell, batch[cell.index]) for cell in unit]
        else:
            played = [(unit, list(play_run(spec, unit, versions)))]
    except Exception as exc:  # noqa: BLE001 - a failed cell is reported with its error, the others go on
        error = f"{type(exc).__name__}: {exc}"
        return [RunOutcome(cell, FAILED, None, error, started, now()) for cell in unit_cells(unit)]
    ended = now()
    if folder is None:
        outcomes = []
        for cell, episodes in played:
            head = run_head(spec, cell)
            outcomes.append(RunOutcome(cell, COMPLETED, [episode_row(head, p) for p in episodes], None, started, ended))
        return outcomes
    try:
        if isinstance(unit, tuple):
            chunks, probes = write_lanes(folder, spec.name, unit, phases)
        else:
            chunks, probes = write_played(folder, spec.name, played)
    except RecordChunkError as exc:  # a full disk: not the runs' fault; the sweep stops and says why in one line
        return [RunOutcome(cell, INTERRUPTED, None, str(exc), started, now(), halt=True) for cell, _ in played]
    return [
        RunOutcome(cell, COMPLETED, None, None, started, ended, tuple(c for c in chunks if cell.index in c.runs),
                   str(folder), tuple(probes.get(cell.index, ())))
        for cell, _ in played
    ]


PR_SET_PDEATHSIG = 1  # linux/prctl.h
HEARTBEAT_SECONDS = 0.5  # how often a driver waiting for its workers tells the observers so
PROGRESS = "progress"  # a worker's word that episodes of its batch ended (before its runs end)


def die_with(parent: int) -> None:
    """End this process when `parent` ends, however it ends (kill -9 included).

    On Linux the kernel sends SIGKILL when the parent dies (`prctl(PR_SET_PDEATHSIG)`); if the
    parent died before that was set, the process ends at once. Elsewhere a worker ends at its
    next word with the driver (the pipe is closed), after the run it is making.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _serve(connection: Any, spec: ExperimentSpec, versions: Mapping[str, TaskVersion], parent: int,
           records: str | None = None) -> None:
    """A worker process: run the cells the driver sends, one at a time, until it sends None or
    is gone. Ctrl-C is the driver's to handle (it stops the workers); a driver that dies takes
    its workers with it, so none holds the command's output open."""
    die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(spec, versions, records)
    _WORKER["progress"] = lambda unit, count: connection.send((PROGRESS, unit, count))
    try:
        while (unit := connection.recv()) is not None:
            connection.send(_run_in_worker(unit))
    except (EOFError, OSError):  # the driver is gone
        os._exit(1)


def _process_outcomes(
    workers: int,
    spec: ExperimentSpec,
    versions: Mapping[str, TaskVersion],
    todo: list[Unit],
    started: Callable[[Cell], object],
    records: str | None = None,
    tick: Callable[[], object] = lambda: None,
    played: Callable[[int, int], object] = lambda unit, count: None,
) -> Iterator[list[RunOutcome]]:
    """Run the units (cells and batches) on `workers` processes, one unit per process at a time
    over its own pipe, and yield each unit's outcomes as it finishes; `tick` is called about
    twice a second while no unit ends (the observers' heartbeat), `played` with a batch's
    episodes as they end (its first run's index, how many).

    A pool of our own rather than ProcessPoolExecutor: there, a worker killed while the
    shared call queue is being fed can hang the driver (Python 3.11), and the whole pool
    breaks. Here a worker that dies (killed, out of memory) costs only its own run, recorded
    as interrupted; a new process takes its place and the sweep goes on.
    """
    context = multiprocessing.get_context()
    queue = deque(todo)
    slots: list[tuple[Any, Any]] = []  # (process, connection)
    running: dict[int, Unit] = {}  # slot index -> its unit

    def start(index: int) -> None:
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, spec, versions, os.getpid(), records), daemon=True)
        process.start()
        child.close()
        if index < len(slots):
            slots[index] = (process, parent)
        else:
            slots.append((process, parent))

    def assign(index: int) -> None:
        if queue:
            running[index] = queue.popleft()
            for cell in unit_cells(running[index]):
                started(cell)
            slots[index][1].send(running[index])
        else:
            running.pop(index, None)

    try:
        for index in range(workers):
            start(index)
            assign(index)
        while running:
            waiting = {slots[i][1]: i for i in running} | {slots[i][0].sentinel: i for i in running}
            ready_ones = wait(list(waiting), timeout=HEARTBEAT_SECONDS)
            if not ready_ones:
                tick()
            for ready in ready_ones:
                index = waiting[ready]
                if index not in running:
                    continue  # its pipe and its sentinel were both ready
                process, connection = slots[index]
                outcomes = received(process, connection)
                if isinstance(outcomes, tuple) and outcomes[0] == PROGRESS:  # a batch's episodes, not its end
                    played(outcomes[1], outcomes[2])
                    continue
                if outcomes is STILL_WORKING:
                    continue
                if outcomes is None:  # the process died with the unit
                    error = "its worker process died (killed or out of memory)"
                    outcomes = [RunOutcome(c, INTERRUPTED, None, error, "", now()) for c in unit_cells(running[index])]
                    connection.close()
                    start(index)
                yield outcomes
                assign(index)
    finally:
        stop_workers(slots)


def warm_workers(spec: ExperimentSpec, versions: Mapping[str, TaskVersion], units: Sequence[Unit],
                 records: str | None) -> None:
    """Load in the driver, before its workers fork, what every worker would load for itself:
    the compiled lane loop (numba's cache, about half a second a process: one lane of the first
    batch plays one episode of its first phase, and nothing of it is kept) and, where workers
    write chunks, pyarrow's Parquet writer."""
    if multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        return
    if records is not None:
        from .chunks import require_arrow

        require_arrow()
    batch = next((u for u in units if isinstance(u, tuple)), None)
    if batch is None:
        return
    first = spec.phases_of(batch[0].condition)[0]
    taster = dataclasses.replace(spec, phases=(dataclasses.replace(first, episodes=1, probe=()),), conditions=())
    try:
        play_batch_phases(taster, (dataclasses.replace(batch[0], condition=""),), versions)
    except Exception:  # noqa: BLE001 - only a head start: the workers play (and report) the real thing
        pass


def _run_with(payload: tuple[ExperimentSpec, Mapping[str, TaskVersion], str | None], unit: Unit) -> list[RunOutcome]:
    """One unit on a Dask worker, with the spec and task versions scattered to it once."""
    _init_worker(*payload)
    return _run_in_worker(unit)


def _dask_outcomes(
    address: str,
    workers: int,
    spec: ExperimentSpec,
    versions: Mapping[str, TaskVersion],
    todo: list[Unit],
    started: Callable[[Cell], object],
    records: str | None = None,
    tick: Callable[[], object] = lambda: None,
) -> Iterator[list[RunOutcome]]:
    """Run the units on a Dask cluster (`address`, or "local" for a LocalCluster of `workers`
    single-threaded processes) and yield each unit's outcomes as it finishes (`tick` about
    twice a second while none does). A run counts as started when it is submitted (the
    scheduler does not say when a worker takes it)."""
    try:
        from distributed import Client, LocalCluster
        from distributed import wait as dask_wait
    except ImportError:
        raise ImportError("a Dask cluster needs the dask extra: pip install 'graphtasks[dask]'") from None
    cluster = None
    if address == "local":
        import dask

        with dask.config.set({"distributed.worker.multiprocessing-method": "fork"}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        payload = client.scatter((spec, versions, records), broadcast=True)
        futures = []
        for unit in todo:
            for cell in unit_cells(unit):
                started(cell)
            futures.append(client.submit(_run_with, payload, unit, pure=False))
        waiting = set(futures)
        while waiting:
            try:
                done = dask_wait(list(waiting), timeout=HEARTBEAT_SECONDS, return_when="FIRST_COMPLETED").done
            except TimeoutError:  # distributed's wait raises the built-in TimeoutError (dask >= 2023)
                tick()
                continue
            for future in [f for f in futures if f in done and f in waiting]:  # in submission order
                waiting.discard(future)
                yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_experiment(
    spec: ExperimentSpec,
    workers: int | None = None,
    skip: Iterable[int] = (),
    dask: str | None = None,
    store: Any = None,
    observers: Sequence[RunObserver] = (),
    batched: bool = True,
    records: str | Path | None = None,
) -> SweepResult:
    """Run every cell on `workers` processes (default: the number of cores; 1: in this process),
    or on a Dask cluster (`dask`: a scheduler address, or "local" for a LocalCluster), telling
    `observers` what happens (see `graphtasks.experiments.observers`).

    Cells that share a task, an agent and a protocol run as batches (`batched_runs`: the
    lanes of one batched agent, with numbers that do not depend on the batch); `batched=False`
    plays every cell per agent, as `graphtasks run` does.

    Cells whose index is in `skip` are not run (already recorded). What a family's envs read
    from a store (the Room task's knowledge) is read here, from `store`, once. If the sweep is
    stopped (Ctrl-C), the runs under way end `interrupted` and the observers are told so before
    the KeyboardInterrupt goes on.
    """
    skipped = set(skip)
    todo = [cell for cell in cells(spec) if cell.index not in skipped]
    versions = prepare_versions(spec, store) if todo else {}  # nothing to play (a resumed, finished sweep)
    for observer in observers:
        observer.experiment_started(spec, todo, len(skipped))
    done: dict[int, RunOutcome] = {}
    failures: list[tuple[Cell, str]] = []
    under_way: dict[int, tuple[Cell, str]] = {}

    def tick() -> None:
        for observer in observers:
            observer.heartbeat()

    def played(unit: int, count: int) -> None:
        for observer in observers:
            observer.episodes_played(unit, count)

    def started(cell: Cell) -> None:
        at = now()
        under_way[cell.index] = (cell, at)
        for observer in observers:
            observer.run_started(cell, at)

    def finished(ended: list[RunOutcome]) -> None:
        """A unit's runs ended (a batch's end together): the observers hear of them in one call.

        The runs leave `under_way` only after the observers were told: a Ctrl-C before that
        records them as interrupted (to be run again), never as neither."""
        outcomes = []
        for outcome in ended:
            _, at = under_way.get(outcome.cell.index, (outcome.cell, outcome.started_at))
            outcomes.append(outcome if outcome.started_at else dataclasses.replace(outcome, started_at=at))
        for observer in observers:
            observer.runs_finished(outcomes)
        for outcome in outcomes:
            under_way.pop(outcome.cell.index, None)
        for outcome in outcomes:
            if outcome.status == COMPLETED:
                done[outcome.cell.index] = outcome
            else:
                said = outcome.error or ""  # an interrupted run says so: its own code is not to blame
                failures.append((outcome.cell, f"{INTERRUPTED}: {said}" if outcome.status == INTERRUPTED else said))
        halted = next((o for o in outcomes if o.halt), None)
        if halted is not None:  # the records cannot be written (a full disk): no later run could be either
            raise RecordChunkError(f"{halted.error}; the runs finished before are recorded: make room and run the "
                                   "same command to go on")

    count = max(1, min(workers or os.cpu_count() or 1, len(todo) or 1))
    units: list[Unit] = group_cells(spec, todo, versions, count) if batched else list(todo)
    in_batches = sum(len(u) for u in units if isinstance(u, tuple))
    count = min(count, len(units) or 1)

    folder = str(records) if records is not None else None

    def in_process() -> Iterator[list[RunOutcome]]:
        _init_worker(spec, versions, folder)
        _WORKER["progress"] = played
        try:
            for unit in units:
                for cell in unit_cells(unit):
                    started(cell)
                for observer in observers:
                    observer.driver_busy()
                yield _run_in_worker(unit)
        finally:  # the module keeps no word of a finished sweep's observers
            _WORKER.pop("progress", None)

    status = FAILED
    outcomes: Iterator[list[RunOutcome]] = iter(())
    ctrl_c = _CtrlC()
    try:
        ctrl_c.watch()
        if units:
            if dask is not None:
                if dask == "local":  # its workers fork from this process too
                    warm_workers(spec, versions, units, folder)
                outcomes = _dask_outcomes(dask, count, spec, versions, units, started, folder, tick)
            elif count == 1:
                outcomes = in_process()
            else:
                warm_workers(spec, versions, units, folder)
                outcomes = _process_outcomes(count, spec, versions, units, started, folder, tick, played)
            for outcome in outcomes:
                finished(outcome)
                ctrl_c.check()
        ctrl_c.check()
        status = COMPLETED
    except KeyboardInterrupt:
        status = INTERRUPTED
        finished([RunOutcome(cell, INTERRUPTED, None, "the sweep was stopped", at, now())
                  for cell, at in list(under_way.values())])
        raise
    except RecordChunkError:
        status = INTERRUPTED
        for observer in observers:  # the runs under way end with the sweep, to be run again
            observer.runs_finished([RunOutcome(cell, INTERRUPTED, None, "the sweep stopped: its records could not "
                                               "be written", at, now()) for cell, at in list(under_way.values())])
        raise
    finally:
        ctrl_c.restore()
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # a pool's generator stops its workers
        for observer in observers:
            observer.experiment_finished(status)
    return SweepResult([done[index] for index in sorted(done)], sorted(failures, key=lambda f: f[0].index), in_batches)


class _CtrlC:
    """Remembers a Ctrl-C for the sweep's driver. A KeyboardInterrupt raised while the driver forks
    its workers lands in an at-fork callback (logging's), where Python prints it and goes on: the
    sweep would finish as if never stopped. The handler notes the signal, so `check` raises it again."""

    def __init__(self) -> None:
        self.seen = False
        self.previous: Any = None

    def watch(self) -> None:
        """Note SIGINT from now on, where Python's own handler would take it (the main thread)."""
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self._noted)

    def _noted(self, signum: int, frame: Any) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def check(self) -> None:
        """Raise the Ctrl-C that was swallowed, if one was."""
        if self.seen:
            raise KeyboardInterrupt

    def restore(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None


def write_csv(rows: list[dict[str, Any]], path: str | Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean return and length per task, agent setting and phase, over seeds and episodes."""
    groups: dict[tuple[str, str, str, int, str], list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["task"], row["label"], row.get("condition") or "", row["phase_index"], row["phase"])
        groups.setdefault(key, []).append(row)
    out = []
    for (task, label, condition, _, phase), members in sorted(groups.items()):
        out.append(
            {
                "task": task,
                "agent": label,
                "condition": condition,
                "phase": phase,
                "episodes": len(members),
                "mean_return": float(np.mean([r["return"] for r in members])),
                "mean_length": float(np.mean([r["length"] for r in members])),
            }
        )
    return out
