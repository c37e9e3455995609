"""Twin drivers: two identical `graphtasks experiment run` commands on one store, against one
alone, measured in the same run: wall time until both end, and the peak memory of both
process trees together (drivers and their workers: resident set sizes summed, sampled every
20 ms from /proc, so Linux only).

The second driver waits for the first (graphtasks.experiments.drivers), holding only its
imports, then finds every run completed. Targets (issue 43): both together within 1.5x the
memory and 1.2x the time of one alone.

    python benchmarks/twin_drivers_bench.py             # 2,000 runs, 2 workers each
    python benchmarks/twin_drivers_bench.py --runs 200  # quicker
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """
[experiment]
name = "twins"
tasks = ["neuronav/grid/four_rooms/small"]
seeds = {runs}

[[agents]]
name = "q"
params = {{ lr = 0.1, gamma = 0.99, epsilon = 0.1 }}

[[phases]]
name = "learning"
episodes = 100
max_steps = 100
"""


def tree_rss(pid: int) -> int:
    """Bytes resident in process `pid` and all its descendants (0 once it is gone)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:"))
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, StopIteration, ValueError):
            continue
    return total


def drivers(count: int, runs: int, workers: int) -> tuple[float, int]:
    """Seconds until `count` identical drivers started together all end, and their peak memory together."""
    with tempfile.TemporaryDirectory() as directory:
        spec = Path(directory) / "twins.toml"
        spec.write_text(SPEC.format(runs=runs))
        command = [sys.executable, "-m", "graphtasks", "--store", str(Path(directory) / "store.lbug"),
                   "experiment", "run", str(spec), "--workers", str(workers), "--no-progress"]
        start = time.perf_counter()
        started = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                   for _ in range(count)]
        peak = 0
        while any(p.poll() is None for p in started):
            peak = max(peak, sum(tree_rss(p.pid) for p in started))
            time.sleep(0.02)
        took = time.perf_counter() - start
        for p in started:
            assert p.returncode == 0, p.stderr.read() if p.stderr else ""
    return took, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"Q on four_rooms small, {args.runs} runs of 100 episodes, {args.workers} workers per driver, "
          "a fresh embedded store each time")
    one_time, one_memory = drivers(1, args.runs, args.workers)
    two_time, two_memory = drivers(2, args.runs, args.workers)
    print(f"{'drivers':<9} {'wall s':>8} {'peak MB':>9}")
    print(f"{'one':<9} {one_time:8.2f} {one_memory / 1e6:9.0f}")
    print(f"{'two':<9} {two_time:8.2f} {two_memory / 1e6:9.0f}")
    print(f"two against one: time {two_time / one_time:.2f}x (target 1.2x), memory {two_memory / one_memory:.2f}x "
          "(target 1.5x)")


if __name__ == "__main__":
    main()
