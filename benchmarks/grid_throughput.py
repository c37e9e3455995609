"""Grid throughput: steps/s of GridEnv per observation type against the reference figures.

Random policy with actions drawn in advance, the unwrapped environment, resets included.
The baseline is the reference GridEnv (neuro-nav) measured on the same 2-core machine
class; the ratio column is ours / reference. Also the time
to compile a large template from the embedded store (fixed queries -> arrays).

Usage: python benchmarks/grid_throughput.py [--steps N] [--repeats R] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import tasks  # noqa: E402
from benchmarks.common import play, python_loop_baseline, random_actions, save  # noqa: E402
from graphstore import open_store  # noqa: E402
from gym_bridge.grid.compiled import compile_grid_from_store  # noqa: E402
from gym_bridge.grid.env import GridEnv  # noqa: E402

# steps/s of the reference (neuro-nav's GridEnv) and this project's targets on a 2-core machine
CASES = [
    # (label, template, size, obs_type, reference, target)
    ("four_rooms small index", "four_rooms", "small", "index", 179_000, 450_000),
    ("four_rooms small onehot", "four_rooms", "small", "onehot", 98_000, 250_000),
    ("four_rooms small twohot", "four_rooms", "small", "twohot", 149_000, None),
    ("four_rooms small geometric", "four_rooms", "small", "geometric", 154_000, None),
    ("four_rooms small boundary", "four_rooms", "small", "boundary", 25_000, 200_000),
    ("four_rooms small symbolic", "four_rooms", "small", "symbolic", 77_000, 200_000),
    ("four_rooms small symbolic_window", "four_rooms", "small", "symbolic_window", 26_000, None),
    ("four_rooms small visual 256", "four_rooms", "small", "visual", 1_360, 30_000),
    ("four_rooms small window 256", "four_rooms", "small", "window", 500, 30_000),
    ("four_rooms large index", "four_rooms", "large", "index", 146_000, None),
]
COMPILE_TARGET_MS = 30.0


def steps_per_second(env: GridEnv, steps: int, seed: int = 0) -> float:
    actions = random_actions(env, steps, seed)
    env.reset(seed=seed)
    play(env, actions[:5_000])  # warm-up: pictures and windows are drawn on first use, like any run's first episodes
    start = time.perf_counter()
    play(env, actions)
    return steps / (time.perf_counter() - start)


def compile_ms(repeats: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.lbug")
        with open_store(path) as store:
            store.put(tasks.build("neuronav/grid/four_rooms/large"))
        with open_store(path) as store:
            compile_grid_from_store(store, "neuronav/grid/four_rooms/large")
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                compile_grid_from_store(store, "neuronav/grid/four_rooms/large")
                times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200_000, help="steps per case (pictures: a tenth)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per case")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("GRAPHTASKS_STORE", os.path.join(tempfile.mkdtemp(), "bench.lbug"))
    results = []
    for label, template, size, obs_type, reference, target in CASES:
        env = GridEnv(template, size, obs_type=obs_type)
        steps = args.steps // 10 if obs_type in ("visual", "window") else args.steps
        rate = max(steps_per_second(env, steps, seed) for seed in range(args.repeats))
        results.append({"case": label, "steps_per_s": round(rate), "reference": reference,
                        "ratio": round(rate / reference, 2), "target": target,
                        "meets_target": None if target is None else rate >= target})
    compile_time = compile_ms(max(5, args.repeats))
    payload = {
        "cases": results,
        "compile_large_ms": round(compile_time, 2),
        "python_loop_per_s": round(python_loop_baseline()),
    }
    path = save("grid_throughput", payload)
    if args.json:
        print(json.dumps(payload, indent=2))
        return
    print(f"{'case':<36}{'steps/s':>12}{'reference':>12}{'ratio':>8}{'target':>10}  ok")
    for r in results:
        target = "" if r["target"] is None else f"{r['target']:,}"
        ok = "" if r["meets_target"] is None else ("yes" if r["meets_target"] else "NO")
        print(f"{r['case']:<36}{r['steps_per_s']:>12,}{r['reference']:>12,}{r['ratio']:>8.2f}{target:>10}  {ok}")
    ok = "yes" if compile_time < COMPILE_TARGET_MS else "NO"
    print(
        f"compile four_rooms large from the embedded store: {compile_time:.1f} ms "
        f"(target < {COMPILE_TARGET_MS:.0f} ms)  {ok}"
    )
    print(f"empty Python loop on this machine: {payload['python_loop_per_s']:,} iterations/s; results saved to {path}")


if __name__ == "__main__":
    main()
