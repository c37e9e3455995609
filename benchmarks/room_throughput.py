"""Room throughput: steps per second with random answers (RoomEnv-v0 small and big).

Baselines (room-env itself, measured on a 2-core Xeon, Python 3.11, logging off):
room-env 0.1.5 34,500 steps/s small, 17,500 big; room-env 3.0.6 108,000 small, 50,000 big.
Printed as ratios (wall clock; the last column is the rate in CPU time of this process).
Target: >= 200,000 steps/s for the small room.

Run: PYTHONPATH=. python benchmarks/room_throughput.py [--steps N] [--store PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import play, random_actions  # noqa: E402

REFERENCE = {"small": (34_500, 108_000), "big": (17_500, 50_000)}


def measure(env, steps: int, seed: int = 0) -> tuple[float, float]:
    """(wall-clock, CPU-time) steps per second of `env.step` with random answers (resets included).

    Why both: on a shared machine the wall clock also counts time spent waiting for a core;
    the CPU time of this process is what the code costs.
    """
    answers = random_actions(env, steps, seed)
    env.reset(seed=seed)
    start, cpu = time.perf_counter(), time.process_time()
    play(env, answers)
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def main() -> int:
    import gymnasium as gym

    import gym_bridge  # noqa: F401
    from graphstore import open_store
    from gym_bridge.room.env import RoomEnv
    from ingest.conceptnet_snapshot import ingest_snapshot

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument(
        "--store", default=None, help="store with AtLocation triples (default: a temp store + snapshot)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    store = args.store
    if store is None:
        store = tempfile.mkdtemp() + "/bench.lbug"
        with open_store(store) as s:
            ingest_snapshot(s)
    print(f"{'configuration':44s}{'steps/s':>12s}{'vs 0.1.5':>10s}{'vs 3.0.6':>10s}{'(CPU time)':>12s}")
    for size in ("small", "big"):
        configs = [
            ("RoomEnv, text in info", RoomEnv(size, store=store)),
            ("RoomEnv, text_info=False", RoomEnv(size, store=store, text_info=False)),
            ("gym.make (wrappers), text_info=False", gym.make("graphtasks/Room-v0", room_size=size, store=store,
                                                           text_info=False, disable_env_checker=True)),
        ]
        for label, env in configs:
            runs = [measure(env, args.steps, seed) for seed in range(args.repeats)]
            rate, cpu = max(r[0] for r in runs), max(r[1] for r in runs)
            old, new = REFERENCE[size]
            print(f"{size + ': ' + label:44s}{rate:12,.0f}{rate / old:9.1f}x{rate / new:9.1f}x{cpu:12,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
