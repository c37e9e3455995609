"""Experiment sweeps: what recording costs, and what the process pool costs.

1. Recording overhead: the same runs with nothing recorded (the rows are thrown away), with
   episode records and with step records, each written into a fresh embedded store by the
   path `graphtasks experiment run` uses (StoreRecorder, an observer of the sweep). Targets (issue 16): episode records
   at most +10 %, step records at most +50 %, as ratios to the unrecorded runs.
2. Pool: 48 short cells on 2 worker processes against the same cells in one plain loop in
   this process; the pool's start-up (the first cell back) is printed beside it.

    python benchmarks/experiments_bench.py           # about a minute
    python benchmarks/experiments_bench.py --quick   # short, to check the script
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.experiments.observers import RunObserver  # noqa: E402
from graphtasks.experiments.records import StoreRecorder, record_experiment, record_tasks  # noqa: E402
from graphtasks.experiments.spec import ExperimentSpec, parse_spec  # noqa: E402
from graphtasks.experiments.sweep import _init_worker, _run_in_worker, cells, run_experiment, task_versions  # noqa: E402
from graphtasks.experiments.versions import prepare_versions  # noqa: E402

SPEC = """
[experiment]
name = "bench"
tasks = ["{task}"]
seeds = {seeds}

[[agents]]
name = "{agent}"

[[phases]]
name = "learning"
episodes = {episodes}
max_steps = 50
"""

CASES = {  # (task, agent, episodes per run as a multiple of --episodes): a grid episode is ~50 steps, a trial 2
    "grid (t_maze, q)": ("neuronav/grid/t_maze/small", "q", 1),
    "two-step (hybrid)": ("rewardgym/two-step", "hybrid", 5),
}


def spec_of(task: str, agent: str, seeds: int, episodes: int, record: str) -> ExperimentSpec:
    spec = parse_spec(SPEC.format(task=task, agent=agent, seeds=seeds, episodes=episodes))
    return dataclasses.replace(spec, record=record)


def run_recorded(spec: ExperimentSpec, record: bool, workers: int = 1) -> float:
    """Seconds to run every cell (in this process, or on `workers` processes) and, if `record`,
    write it as the CLI does."""
    with tempfile.TemporaryDirectory() as directory:
        location = str(Path(directory) / "store.lbug")
        if record:
            from graphstore import open_store

            with open_store(location, "w") as store:  # set-up, not timed: the same for any sweep size
                record_experiment(store, spec, "bench")
                record_tasks(store, task_versions(spec))
        observers = [StoreRecorder(location, spec)] if record else []
        start = time.perf_counter()
        run_experiment(spec, workers=workers, observers=observers, batched=False)  # the cost of recording per run
        return time.perf_counter() - start


def recording_overhead(seeds: int, episodes: int, repeats: int, workers: int) -> None:
    where = "in this process" if workers == 1 else f"on {workers} worker processes, the driver recording"
    print(f"Recording overhead, {where} (best of {repeats}; ratio to the same runs unrecorded):")
    print(f"{'case':<20} {'record':<9} {'seconds':>8} {'ratio':>7}  target")
    for name, (task, agent, times) in CASES.items():
        plain = min(
            run_recorded(spec_of(task, agent, seeds, episodes * times, "episodes"), False, workers)
            for _ in range(repeats)
        )
        print(f"{name:<20} {'nothing':<9} {plain:8.3f} {1.0:7.2f}")
        for record, target in (("episodes", 1.10), ("steps", 1.50)):
            spec = spec_of(task, agent, seeds, episodes * times, record)
            took = min(run_recorded(spec, True, workers) for _ in range(repeats))
            ratio = took / plain
            verdict = "ok" if ratio <= target else "MISSED"
            print(f"{name:<20} {record:<9} {took:8.3f} {ratio:7.2f}  <= {target:.2f}: {verdict}")


def pool_against_loop(episodes: int) -> None:
    spec = parse_spec(
        SPEC.format(task="neuronav/grid/t_maze/small", agent="q", seeds=12, episodes=episodes).replace(
            '[[agents]]\nname = "q"', '[[agents]]\nname = "q"\ngrid = { lr = [0.05, 0.1, 0.2, 0.4] }'
        )
    )
    todo = cells(spec)
    assert len(todo) == 48
    versions = prepare_versions(spec)
    start = time.perf_counter()
    _init_worker(spec, versions)
    for cell in todo:
        _run_in_worker(cell)
    loop = time.perf_counter() - start
    first: list[float] = []

    class FirstBack(RunObserver):
        def run_finished(self, outcome: object) -> None:
            if not first:
                first.append(time.perf_counter() - start)

    start = time.perf_counter()
    run_experiment(spec, workers=2, observers=[FirstBack()], batched=False)  # the loop above is per agent too
    pool = time.perf_counter() - start
    print()
    print("48 cells (t_maze small, q, 4 learning rates x 12 seeds, %d episodes each):" % episodes)
    print(f"  plain loop in this process:  {loop:6.2f} s")
    print(f"  2 worker processes:          {pool:6.2f} s  ratio {pool / loop:.2f} (first cell back: {first[0]:.2f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, to check the script")
    args = parser.parse_args(argv)
    if args.quick:
        recording_overhead(seeds=2, episodes=20, repeats=1, workers=1)
        pool_against_loop(episodes=5)
    else:
        for workers in (1, 2):
            recording_overhead(seeds=8, episodes=1000, repeats=2, workers=workers)
            print()
        pool_against_loop(episodes=100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
