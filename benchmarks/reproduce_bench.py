"""`graphtasks reproduce --all`: its seconds, and the MBV planning against the old one, in one run.

1. One reproduction whose time went to the batched MBV agent's planning
   (russek2017-structure-transfer by default: 40 seeds of five agents on the 121-state detour
   maze) played twice in this process: with the planning of before (every tried pair of every
   lane swept `sweeps` times a step, row maxima by numpy's reduction over the actions; kept
   below as `old_plan`) and with today's (only the pairs whose outcome's worth moved, compiled
   where numba is installed). Seconds of each, their ratio, and whether the checks' values are
   the same (they must be: the same numbers, sooner).
2. `graphtasks reproduce --all --no-figure` in a fresh process, as a user runs it (the
   reproductions side by side, one per core, the longest first): seconds, and how many passed.
3. With `--each`: every reproduction at its paper size in this process, one after another,
   its figure drawn (what tests/test_reproduce.py runs): seconds and CPU seconds of each, and
   their sum. On a machine other processes load, compare the CPU seconds.

    python benchmarks/reproduce_bench.py            # a few minutes on two cores
    python benchmarks/reproduce_bench.py --quick    # part 1 on 4 seeds and no --all: checks the script
    python benchmarks/reproduce_bench.py --each     # and part 3 (about two minutes of one core more)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import save  # noqa: E402
from graphtasks.experiments.reproduce import reproduce  # noqa: E402
from gym_bridge.agents.mbv import BatchedMBV  # noqa: E402


def old_plan(self: BatchedMBV, lanes: np.ndarray) -> None:
    """The batched MBV plan before the incremental sweeps: `sweeps` synchronous sweeps over
    every tried pair of every lane, row maxima by numpy's reduction (the baseline)."""
    q = self.q[lanes]
    count, n, a = q.shape
    tried = self.tried[lanes].astype(float)
    rewards = self.rewards[lanes] if self.reward_model == "pair" else None
    gamma = self.gamma[lanes][:, None]
    optimism = self.optimism[lanes][:, None]
    pessimists = not bool(np.all(optimism == 1.0))
    ends = None if self.ignore_ends else self.ends[lanes]
    arrival = self.w[lanes] if self.reward_model == "state" else None
    where = (self.model_next[lanes] + (np.arange(count) * n)[:, None, None]).ravel()
    for _ in range(self.sweeps):
        best = q.max(axis=-1)
        if pessimists:
            best = np.where(optimism == 1.0, best, optimism * best + (1 - optimism) * q.min(axis=-1))
        if ends is not None:
            best[ends] = 0.0
        worth = gamma * best if arrival is None else arrival + gamma * best
        planned = worth.ravel()[where].reshape(count, n, a)
        if rewards is not None:
            planned += rewards
        new = np.multiply(planned, tried, out=planned)
        if np.array_equal(new, q):
            break
        q = new
    self.q[lanes] = q


def timed(name: str, seeds: int | None, plan: Any) -> tuple[float, float, list[tuple[str, float]]]:
    """(seconds, CPU seconds, the checks' values) of reproduction `name` played in this process."""
    kept = BatchedMBV.plan
    BatchedMBV.plan = plan  # type: ignore[method-assign]
    try:
        start, cpu = time.perf_counter(), time.process_time()
        outcome = reproduce(name, seeds, figure=False, workers=1)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        BatchedMBV.plan = kept  # type: ignore[method-assign]
    return seconds, cpu, [(c.name, c.measured) for c in outcome.checks]


def each_reproduction(seeds: int | None) -> dict[str, tuple[float, float]]:
    """(seconds, CPU seconds) of every reproduction played in this process, its figure drawn."""
    from graphtasks.experiments.reproduce import REPRODUCTIONS

    times = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in sorted(REPRODUCTIONS):
            start, cpu = time.perf_counter(), time.process_time()
            reproduce(name, seeds, out_dir=folder, workers=1)
            times[name] = (time.perf_counter() - start, time.process_time() - cpu)
            print(f"  {name:40s} {times[name][0]:6.2f} s  ({times[name][1]:.2f} s CPU)", flush=True)
    return times


def reproduce_all() -> tuple[float, str]:
    """Seconds of `graphtasks reproduce --all --no-figure --no-progress` in a fresh process, and its last line."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "graphtasks", "reproduce", "--all", "--no-figure", "--no-progress",
                               "-o", folder], capture_output=True, text=True)
        seconds = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    return seconds, (lines[-1] if lines else done.stderr.strip()[-300:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="part 1 on 4 seeds, no --all: checks the script")
    parser.add_argument("--each", action="store_true", help="also time every reproduction in this process")
    parser.add_argument("--reproduction", default="russek2017-structure-transfer", help="part 1's reproduction")
    args = parser.parse_args(argv)
    seeds = 4 if args.quick else None
    print(f"{args.reproduction}{f' ({seeds} seeds)' if seeds else ''}, in this process, one worker:")
    old = timed(args.reproduction, seeds, old_plan)
    new = timed(args.reproduction, seeds, BatchedMBV.plan)
    same = old[2] == new[2]
    print(f"  old planning   {old[0]:7.2f} s  ({old[1]:.2f} s CPU)")
    print(f"  today          {new[0]:7.2f} s  ({new[1]:.2f} s CPU)   {old[0] / new[0]:.2f}x, "
          f"checks {'the same' if same else 'DIFFERENT'}")
    payload: dict[str, Any] = {"reproduction": args.reproduction, "seeds": seeds, "old_s": old[0], "old_cpu_s": old[1],
                               "new_s": new[0], "new_cpu_s": new[1], "ratio": old[0] / new[0], "same_checks": same}
    if not args.quick:
        seconds, said = reproduce_all()
        print(f"graphtasks reproduce --all: {seconds:.1f} s on {os.cpu_count()} cores ({said}); target < 30 s")
        passed = re.search(r"(\d+) reproductions: (\d+) passed", said)
        payload.update(all_s=seconds, all_said=said, all_passed=bool(passed and passed[1] == passed[2]))
    if args.each:
        print("every reproduction in this process, figures drawn:")
        times = each_reproduction(seeds)
        total, cpu = sum(t[0] for t in times.values()), sum(t[1] for t in times.values())
        print(f"  {'sum':40s} {total:6.2f} s  ({cpu:.2f} s CPU)")
        payload.update(each={name: {"s": t[0], "cpu_s": t[1]} for name, t in times.items()}, each_cpu_s=cpu)
    print(f"written: {save('reproduce', payload)}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
