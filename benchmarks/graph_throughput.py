"""Graph-task step throughput and compile time.

Random policy, actions drawn in advance, unwrapped env. Each figure is printed with its
ratio to the reference implementation's figure (the baseline, measured on the same kind of
2-core machine with Python 3.11) and to an empty Python loop measured in this same run
(the machine's ceiling).

    python benchmarks/graph_throughput.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tasks  # noqa: E402
from benchmarks.common import best_time, python_loop_baseline, save, steps_per_second  # noqa: E402
from graphstore import open_store  # noqa: E402
from gym_bridge import GraphTaskEnv, compile_from_store  # noqa: E402

CASES = [
    # task, obs_type, reference steps/s, target steps/s
    ("neuronav/graph/neighborhood", "index", 1_240_000, 1_250_000),
    ("neuronav/graph/neighborhood", "onehot", 194_000, 400_000),
    ("rewardgym/two-step", "index", 134_000, 400_000),
]


def main() -> int:
    n = 1_000_000
    ceiling = python_loop_baseline(n)
    print(f"empty Python loop (ceiling, this run): {ceiling:,.0f} iterations/s\n")
    print(f"{'case':<42} {'steps/s':>12} {'/ceiling':>9} {'reference':>10} {'ratio':>7} {'target':>10}  ok")
    rows = []
    failed = 0
    for task_id, obs, reference, target in CASES:
        env = GraphTaskEnv(task_id, obs_type=obs, max_episode_steps=None)
        rate = steps_per_second(env, n // 2)
        ok = rate >= target
        failed += not ok
        rows.append({"task": task_id, "obs": obs, "steps_per_s": rate, "reference": reference, "target": target})
        print(
            f"{task_id + ' ' + obs:<42} {rate:>12,.0f} {rate / ceiling:>9.3f} {reference:>10,} "
            f"{rate / reference:>6.2f}x {target:>10,}  {'yes' if ok else 'NO'}"
        )
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(Path(folder) / "bench.lbug")
        graph_ids = tasks.builtin_ids("graph")  # not grids, POGE, Room
        for task_id in graph_ids:
            store.put(tasks.build(task_id))
        times = {task_id: best_time(lambda t=task_id: compile_from_store(store, t)) for task_id in graph_ids}
        store.close()
    slowest = max(times, key=times.get)
    print(f"\ncompile from the embedded store: slowest {slowest} {times[slowest] * 1000:.1f} ms "
          f"(target < 20 ms), median {sorted(times.values())[len(times) // 2] * 1000:.1f} ms")
    failed += times[slowest] >= 0.020
    path = save(
        "graph_throughput", {"ceiling": ceiling, "cases": rows, "compile_ms": {k: v * 1000 for k, v in times.items()}}
    )
    print(f"written {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
