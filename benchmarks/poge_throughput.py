"""POGE random-policy throughput on world1, against the reference figure.

The reference (POGE's own env) runs a random policy at 450,000 to 760,000
steps/s on a 2-core Xeon with Python 3.11; it is not installable here, so that documented
figure is the baseline. Actions are drawn in advance, the unwrapped env is stepped, episodes
are reset when they end (the reset counts in the time). Target: >= 1,000,000 steps/s.

    PYTHONPATH=. python benchmarks/poge_throughput.py [--steps 2000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import play  # noqa: E402
from graphstore import open_store  # noqa: E402
from gym_bridge.poge.env import PogeEnv  # noqa: E402

REFERENCE_LOW, REFERENCE_HIGH = 450_000, 760_000
TARGET = 1_000_000


def throughput(env: PogeEnv, actions: list[int]) -> float:
    """Steps per second of one pass over `actions`."""
    env.reset(seed=0)
    start = time.perf_counter()
    play(env, actions)
    return len(actions) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    actions = np.random.default_rng(0).integers(0, 4, args.steps).tolist()
    store = open_store(":memory:")  # the world is read from a real (in-memory) store, not the user's
    configs = {
        "reference defaults (partially observable)": {},
        "fully observable, indicate_slip + indicate_wall": dict(
            is_partially_obs=False, indicate_slip=True, indicate_wall=True
        ),
    }
    print(f"world1, random policy, {args.steps:,} steps, best of {args.repeats}")
    for label, kwargs in configs.items():
        env = PogeEnv("poge/world1", store=store, **kwargs).unwrapped
        best = max(throughput(env, actions) for _ in range(args.repeats))
        print(
            f"  {label}: {best:,.0f} steps/s; "
            f"x{best / REFERENCE_HIGH:.2f} to x{best / REFERENCE_LOW:.2f} the reference "
            f"({REFERENCE_LOW:,}-{REFERENCE_HIGH:,}); target {TARGET:,}: {'met' if best >= TARGET else 'NOT met'}"
        )
    store.close()


if __name__ == "__main__":
    main()
