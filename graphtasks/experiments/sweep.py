"""Run an experiment: every cell (task x agent setting x seed) through every phase, in parallel.

Workers get the built task versions once (no store is opened in a worker) and return one
row per episode; the order of the rows and every number in them depend only on the spec
and its seeds, never on the number of workers: each cell draws from generators seeded by
its seed and phase index alone.
"""

from __future__ import annotations

import csv
import datetime
import json
import multiprocessing
import os
import signal
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from graphstore import TaskGraph
from gym_bridge import family_of
from gym_bridge.agents import AGENTS
from gym_bridge.runner import _view, action_count, agent_state_count, schedule_rng
from tasks import trial_schedule
from tasks.variants import task_variant

from .spec import AgentSpec, ExperimentSpec, PhaseSpec

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


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: a task, an agent setting and a seed, through every phase."""

    index: int
    task: str
    agent: AgentSpec
    seed: int
    condition: str = ""  # the protocol's condition ("": the spec has none)


@dataclass
class SweepResult:
    rows: list[dict[str, Any]]  # one per episode
    failures: list[tuple[Cell, str]]
    trials: list[dict[str, Any]] = field(default_factory=list)  # one per step, where steps are recorded
    probes: list[dict[str, Any]] = field(default_factory=list)  # one per probed phase of each run


def cells(spec: ExperimentSpec) -> list[Cell]:
    combos = [
        (t, c, a, s) for t in spec.tasks for c in spec.condition_names() for a in spec.agents for s in spec.seeds
    ]
    return [Cell(i, t, a, s, c) for i, (t, c, a, s) in enumerate(combos)]


def task_versions(spec: ExperimentSpec) -> dict[str, TaskGraph]:
    """Every task version a phase runs, by id (a changed task is a variant with its own id)."""
    graphs: dict[str, TaskGraph] = {}
    phases = [p for c in spec.condition_names() for p in spec.phases_of(c)]
    for task in spec.tasks:
        for phase in phases:
            task_id = phase.task_id(task)
            if task_id not in graphs:
                graphs[task_id] = task_variant(phase.task or task, phase.changes)
    return graphs


def phase_seed(seed: int, phase_index: int, stream: int = 0) -> int:
    """The seed of one phase's environment (stream 0) or start-state draws (stream 1)."""
    return int(np.random.SeedSequence([seed, phase_index, stream]).generate_state(1)[0])


def _starts(phase: PhaseSpec, graph: TaskGraph, grid: bool, seed: int, index: int, episodes: int) -> list[dict]:
    """The reset options of each episode: where it starts."""
    start = phase.start
    if start is None:
        return [{}] * episodes
    if isinstance(start, dict):  # {"random": [states]}: drawn from the set
        drawn = start["random"]
        rng = np.random.default_rng(phase_seed(seed, index, 1))
        picks = [drawn[k] for k in rng.integers(0, len(drawn), episodes)]
        return [{"agent_pos": tuple(p)} if grid and isinstance(p, list) else {"start": int(p)} for p in picks]
    if start == "random":
        if grid:
            return [{"random_start": True}] * episodes
        terminal = {p["index"] for _, p in graph.nodes("State") if p.get("terminal")}
        states = [p["index"] for _, p in graph.nodes("State") if p["index"] not in terminal]
        rng = np.random.default_rng(phase_seed(seed, index, 1))
        return [{"start": int(states[k])} for k in rng.integers(0, len(states), episodes)]
    if grid:
        cells = [start] if isinstance(start[0], int) else start
        return [{"agent_pos": tuple(cells[e % len(cells)])} for e in range(episodes)]
    states = [start] if isinstance(start, int) else start
    if not all(isinstance(s, int) for s in states):
        raise ValueError(f"phase {phase.name!r}: a graph task starts at states (indices), not cells: {start!r}")
    return [{"start": int(states[e % len(states)])} for e in range(episodes)]


def run_cell(spec: ExperimentSpec, cell: Cell, graphs: dict[str, TaskGraph]) -> list[dict[str, Any]]:
    """Every phase of one cell; one row per episode, with its `steps` (state, action, reward,
    next state) where the spec records steps for the cell's task."""
    rows: list[dict[str, Any]] = []
    record_steps = spec.records_steps(cell.task)
    agent = None
    shape: tuple[int, int] | None = None
    for index, phase in enumerate(spec.phases_of(cell.condition)):
        task_id = phase.task_id(cell.task)
        graph = graphs[task_id]
        family = family_of(task_id)
        settings = dict(spec.env)
        if phase.max_steps is not None:
            settings[family.episode_length] = phase.max_steps
        make: Any = family.env_class()  # every family's env takes task= (an id or a TaskGraph)
        env = make(task=graph, **settings)
        sizes = (agent_state_count(env), action_count(env))
        if agent is None:
            agent = AGENTS[cell.agent.name](*sizes, seed=cell.seed, **cell.agent.params)
            shape = sizes
        elif sizes != shape:
            raise ValueError(
                f"phase {phase.name!r}: {task_id} has {sizes[0]} states and {sizes[1]} actions; "
                f"the agent was made for {shape}"
            )
        env_seed = phase_seed(cell.seed, index)
        conditions: list[str | None] = [None] * phase.episodes
        if phase.schedule:
            schedule = getattr(getattr(env, "compiled", None), "schedule", None)
            if not schedule:
                raise ValueError(f"phase {phase.name!r}: {task_id} has no trial schedule")
            order = trial_schedule(schedule, schedule_rng(env_seed))
            conditions = [order[e % len(order)] for e in range(phase.episodes)]
        starts = _starts(phase, graph, family.name == "grid", cell.seed, index, phase.episodes)
        all_actions = tuple(range(sizes[1]))
        content_hash = graph.content_hash()
        for episode in range(phase.episodes):
            options = dict(starts[episode])
            if conditions[episode]:
                options["condition"] = conditions[episode]
            obs, info = env.reset(seed=env_seed if episode == 0 else None, options=options or None)
            state, available = _view(obs, info, all_actions)
            first = state
            agent.begin_episode()
            total, length = 0.0, 0
            steps: list[tuple[int, int, float, int, float]] = []
            while True:
                action = agent.act(state, available)
                if record_steps:  # before the step and the learning that follows it change the policy
                    p_action = float(agent.action_probabilities(state, available)[action])
                obs, reward, terminated, truncated, info = env.step(action)
                next_state, available = _view(obs, info, all_actions)
                if record_steps:
                    steps.append((int(state), int(action), float(reward), int(next_state), p_action))
                if phase.learn:
                    agent.learn(state, action, float(reward), next_state, terminated, available)
                total += float(reward)
                length += 1
                state = next_state
                if terminated or truncated:
                    break
            rows.append(
                {
                    "experiment": spec.name,
                    "run": cell.index,
                    "task": cell.task,
                    "phase_task": task_id,
                    "task_hash": content_hash,
                    "agent": cell.agent.name,
                    "label": cell.agent.label,
                    "params": json.dumps(cell.agent.params, sort_keys=True),
                    "seed": cell.seed,
                    "condition": cell.condition,
                    "phase": phase.name,
                    "phase_index": index,
                    "episode": episode,
                    "return": total,
                    "length": length,
                    "start_state": first,
                    **({"steps": steps, "trial_condition": conditions[episode]} if record_steps else {}),
                }
            )
        if phase.probe:
            rows[-1]["probe"] = probe(agent, phase)
    return rows


def probe(agent: Any, phase: PhaseSpec) -> dict[str, Any]:
    """The agent's preference among the phase's probe options at its end: the softmax, at the
    probe's temperature, of the values it gives each (state, action), for the first option
    (the revaluation measure of Momennejad et al. 2017, as neuro-nav's notebooks compute it)."""
    values = np.array([float(agent.values(s)[a]) for s, a in phase.probe])
    z = np.exp((values - values.max()) / phase.probe_temperature)
    return {"preference": float(z[0] / z.sum()), "values": [float(v) for v in values]}


def split_steps(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Episode rows without their steps, and one trial row per recorded step."""
    episodes, trials = [], []
    for row in rows:
        steps = row.get("steps")
        condition = row.get("trial_condition")
        episodes.append({k: v for k, v in row.items() if k not in ("steps", "trial_condition", "probe")})
        for step, (state, action, reward, next_state, p_action) in enumerate(steps or ()):
            trials.append(
                {
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


INTERRUPTED = "interrupted: "  # the error of a run that did not finish for a reason outside it


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


_WORKER: dict[str, Any] = {}


def _init_worker(spec: ExperimentSpec, graphs: dict[str, TaskGraph]) -> None:
    _WORKER["spec"], _WORKER["graphs"] = spec, graphs


Outcome = tuple[Cell, "list[dict[str, Any]] | None", "str | None", str]  # cell, rows, error, start time


def _run_in_worker(cell: Cell) -> Outcome:
    started = _now()
    try:
        return cell, run_cell(_WORKER["spec"], cell, _WORKER["graphs"]), None, started
    except Exception as exc:  # noqa: BLE001 - a failed cell is reported with its error, the others go on
        return cell, None, f"{type(exc).__name__}: {exc}", started


def _serve(connection: Any, spec: ExperimentSpec, graphs: dict[str, TaskGraph]) -> None:
    """A worker process: run the cells the driver sends, one at a time, until it sends None.
    Ctrl-C is the driver's to handle (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(spec, graphs)
    while (cell := connection.recv()) is not None:
        connection.send(_run_in_worker(cell))


def _process_outcomes(
    workers: int, spec: ExperimentSpec, graphs: dict[str, TaskGraph], todo: list[Cell]
) -> Iterator[Outcome]:
    """Run the cells on `workers` processes, one cell per process at a time over its own pipe,
    and yield their outcomes as they finish.

    A pool of our own rather than ProcessPoolExecutor: there, a worker killed while the
    shared call queue is being fed can hang the driver (Python 3.11), and the whole pool
    breaks. Here a worker that dies (killed, out of memory) costs only its own run, recorded
    as interrupted; a new process takes its place and the sweep goes on.
    """
    context = multiprocessing.get_context()
    queue = deque(todo)
    slots: list[tuple[Any, Any]] = []  # (process, connection)
    running: dict[int, Cell] = {}  # slot index -> its cell

    def start(index: int) -> None:
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, spec, graphs), daemon=True)
        process.start()
        child.close()
        if index < len(slots):
            slots[index] = (process, parent)
        else:
            slots.append((process, parent))

    def assign(index: int) -> None:
        if queue:
            running[index] = queue.popleft()
            slots[index][1].send(running[index])
        else:
            running.pop(index, None)

    try:
        for index in range(workers):
            start(index)
            assign(index)
        while running:
            waiting = {slots[i][1]: i for i in running} | {slots[i][0].sentinel: i for i in running}
            for ready in wait(list(waiting)):
                index = waiting[ready]
                if index not in running:
                    continue  # its pipe and its sentinel were both ready
                process, connection = slots[index]
                try:
                    outcome = connection.recv() if connection.poll() else None
                except (EOFError, OSError):
                    outcome = None
                if outcome is None and process.is_alive():
                    continue
                if outcome is None:  # the process died with the cell
                    cell = running[index]
                    outcome = (cell, None, INTERRUPTED + "its worker process died (killed or out of memory)", _now())
                    connection.close()
                    start(index)
                yield outcome
                assign(index)
    finally:
        for process, connection in slots:
            try:
                connection.send(None)
            except (OSError, ValueError):
                pass
        for process, _ in slots:
            process.join(timeout=2)
            if process.is_alive():
                process.kill()
                process.join()


def _run_with(payload: tuple[ExperimentSpec, dict[str, TaskGraph]], cell: Cell) -> Outcome:
    """One cell on a Dask worker, with the spec and task versions scattered to it once."""
    _init_worker(*payload)
    return _run_in_worker(cell)


def _dask_outcomes(
    address: str, workers: int, spec: ExperimentSpec, graphs: dict[str, TaskGraph], todo: list[Cell]
) -> Iterator[Outcome]:
    """Run the cells on a Dask cluster (`address`, or "local" for a LocalCluster of `workers`
    single-threaded processes) and yield their outcomes as they finish."""
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise ImportError("a Dask cluster needs the dask extra: pip install 'graphtasks[dask]'") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        payload = client.scatter((spec, graphs), broadcast=True)
        futures = [client.submit(_run_with, payload, cell, pure=False) for cell in todo]
        for future in dask_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_experiment(
    spec: ExperimentSpec,
    workers: int | None = None,
    on_cell: Callable[[Cell], object] | None = None,
    skip: Iterable[int] = (),
    on_result: Callable[[Cell, "list[dict[str, Any]] | None", "str | None", str], object] | None = None,
    dask: str | None = None,
) -> SweepResult:
    """Run every cell on `workers` processes (default: the number of cores; 1: in this process),
    or on a Dask cluster (`dask`: a scheduler address, or "local" for a LocalCluster).

    Cells whose index is in `skip` are not run (already recorded); `on_result` sees each
    finished cell in this process as it comes (the driver records it there)."""
    graphs = task_versions(spec)
    skipped = set(skip)
    todo = [cell for cell in cells(spec) if cell.index not in skipped]
    if not todo:
        return SweepResult([], [])
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo)))
    done: dict[int, list[dict[str, Any]]] = {}
    failures: list[tuple[Cell, str]] = []

    def collect(results: Iterable[Outcome]) -> None:
        for cell, rows, error, started in results:
            if on_result is not None:
                on_result(cell, rows, error, started)
            if error is not None:
                failures.append((cell, error))
            else:
                done[cell.index] = rows or []
            if on_cell is not None:
                on_cell(cell)

    if dask is not None:
        collect(_dask_outcomes(dask, workers, spec, graphs, todo))
    elif workers == 1:
        _init_worker(spec, graphs)
        collect(_run_in_worker(cell) for cell in todo)
    else:
        collect(_process_outcomes(workers, spec, graphs, todo))
    every = [row for index in sorted(done) for row in done[index]]
    rows, trials = split_steps(every)
    return SweepResult(rows, sorted(failures, key=lambda f: f[0].index), trials, split_probes(every))


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
