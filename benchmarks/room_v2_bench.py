"""Room v2 single-env speed against room-env 3.0.6's RoomEnv2, in the same process.

Both envs play random moves and random answers (10 a step) on v2's default map
(room-env's `room_size="xl-different-prob"`: 32 rooms, 8 static, 8 independent and 8
dependent objects), resets counted in. room-env is not a dependency: point `--room-env` at
the site-packages of a venv that has it (room-env 3.0.6 needs torch, rdflib, matplotlib,
IPython; it is appended to sys.path, so this project's gymnasium and numpy stay first):

    python -m venv /tmp/roomenv && /tmp/roomenv/bin/pip install room-env==3.0.6
    python benchmarks/room_v2_bench.py --room-env /tmp/roomenv/lib/python3.11/site-packages

Without it only this project's env is timed and the ratio is against room-env's published-
here rate (2,000-2,800 steps/s of CPU on the 2-core machine these docs were measured on).
Rates are CPU time of the process (the steadier figure on a shared machine) and wall clock.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOM_ENV_CPU_RATE = 2_000  # steps/s of CPU, RoomEnv2 xl-different-prob, measured by tests/data/room_env/record.py


def ours(name: str, steps: int, seed: int = 0) -> tuple[float, float]:
    import numpy as np

    import tasks
    from gym_bridge.roommap import RoomMapEnv

    env = RoomMapEnv(tasks.build(f"room/v2/{name}"))
    rng = np.random.default_rng(seed)
    n_rooms = env.compiled.n_rooms
    actions = [np.concatenate([rng.integers(0, n_rooms, 10), rng.integers(0, 5, 1)]) for _ in range(1000)]
    env.reset(seed=seed)
    step, reset = env.step, env.reset
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(steps):
        if step(actions[i % 1000])[2]:
            reset()
    return steps / (time.process_time() - cpu), steps / (time.perf_counter() - start)


def room_env(name: str, steps: int, seed: int = 0) -> tuple[float, float]:
    from room_env.envs.room2 import RoomEnv2  # type: ignore[import-not-found]  # an optional reference

    env = RoomEnv2(room_size=name, seed=seed)
    rng = random.Random(seed)
    rooms = list(env.rooms)
    moves = ["north", "east", "south", "west", "stay"]
    obs, _ = env.reset()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        answers = [rng.choice(rooms) for _ in obs["questions"]]
        obs, _, done, _, _ = env.step((answers, rng.choice(moves)))
        if done:
            obs, _ = env.reset()
    return steps / (time.process_time() - cpu), steps / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--map", default="xl-different-prob", help="a v2 map shipped in data/room_env")
    parser.add_argument("--steps", type=int, default=300_000, help="steps of this project's env")
    parser.add_argument("--room-env-steps", type=int, default=5_000, help="steps of room-env's env")
    parser.add_argument("--room-env", default=None, help="a site-packages folder that holds room-env 3.0.6")
    args = parser.parse_args()
    cpu, wall = ours(args.map, args.steps)
    print(f"graphtasks RoomMapEnv  room/v2/{args.map}: {cpu:>10,.0f} steps/s CPU  {wall:>10,.0f} wall")
    if args.room_env:
        sys.path.append(args.room_env)
        ref_cpu, ref_wall = room_env(args.map, args.room_env_steps)
        print(f"room-env 3.0.6 RoomEnv2 {args.map}: {ref_cpu:>10,.0f} steps/s CPU  {ref_wall:>10,.0f} wall")
    else:
        ref_cpu = ref_wall = float(ROOM_ENV_CPU_RATE)
        print(f"room-env 3.0.6 not timed (--room-env): its recorded rate {ROOM_ENV_CPU_RATE:,} steps/s CPU")
    print(f"ratio: {cpu / ref_cpu:.0f}x (CPU), {wall / ref_wall:.0f}x (wall); goal 100x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
