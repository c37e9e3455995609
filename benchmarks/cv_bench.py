"""Held-out likelihood: the wall time of a 5-fold cross-validation as a ratio to one fit of the same data.

Participants are simulated from the hybrid (lr 0.3..0.7, beta 3..7, w 0.6..1, seeded) on
two-step. The baseline, measured in the same run, fits every participant once by maximum
likelihood (`fit_many`, as `graphtasks fit run` does, the same starts); the cross-validation
fits every participant once per fold to the choices its fold keeps
(`graphtasks.fitting.cross_validate`, blocks of trials) and scores the held-out block. It also
prints the ranking (the issue's check: the hybrid above Q on the hybrid's data) and, with
`--gru N`, the time of a GRU of N units per participant and shared, trained on the same folds.

    python benchmarks/cv_bench.py                 # 20 participants x 200 trials, a few minutes
    python benchmarks/cv_bench.py --quick         # 4 x 60, to check the script
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from graphtasks.fitting import MODELS, cross_validate, fit_many, simulate, task_shape  # noqa: E402

TASK = "rewardgym/two-step"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run, to check the script")
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--starts", type=int, default=2)
    parser.add_argument("--gru", type=int, default=0, help="also time a GRU of this many units (needs JAX)")
    args = parser.parse_args()
    if args.quick:
        args.participants, args.trials = 4, 60
    rng = np.random.default_rng(0)
    people = [simulate(TASK, "hybrid", {"lr": float(rng.uniform(0.3, 0.7)), "beta": float(rng.uniform(3, 7)),
                                        "w": float(rng.uniform(0.6, 1.0))}, trials=args.trials, seed=s)
              for s in range(args.participants)]
    shape = task_shape(TASK)
    print(f"{args.folds}-fold cross-validation (blocks of trials) against one fit of the same data: {TASK}, "
          f"{args.participants} participants x {args.trials} trials simulated from the hybrid, {args.starts} starts")
    print(f"{'model':<14} {'one fit s':>10} {'cv s':>8} {'ratio':>7} {'held-out / choice':>18}")
    totals = {}
    for name in ("q", "hybrid"):
        fit_many(MODELS[name], people[:1], starts=1, seed=0, shapes=[shape])  # warm: imports, first plans
        cross_validate([name], people[:1], by="block", folds=2, seed=0, starts=1, shapes=[shape])
        began = time.perf_counter()
        fit_many(MODELS[name], people, starts=args.starts, seed=0, shapes=[shape] * len(people))
        once = time.perf_counter() - began
        began = time.perf_counter()
        result = cross_validate([name], people, by="block", folds=args.folds, seed=0, starts=args.starts,
                                shapes=[shape] * len(people))
        cv = time.perf_counter() - began
        row = result.rows()[0]
        totals[name] = row["heldout_log_likelihood"]
        print(f"{name:<14} {once:>10.2f} {cv:>8.2f} {cv / once:>6.1f}x {row['per_choice']:>18.4f}")
        totals[f"{name} one fit"] = once
    if args.gru:
        for shared in ("", "-shared"):
            name = f"gru-{args.gru}{shared}"
            began = time.perf_counter()
            result = cross_validate([name], people, by="block", folds=args.folds, seed=0,
                                    shapes=[shape] * len(people))
            cv = time.perf_counter() - began
            once = totals["hybrid one fit"]
            print(f"{name:<14} {'':>10} {cv:>8.2f} {cv / once:>6.1f}x {result.rows()[0]['per_choice']:>18.4f}"
                  "  (ratio to the hybrid's one fit; includes compiling)")
    ranked = "hybrid above q" if totals["hybrid"] > totals["q"] else "q above hybrid"
    print(f"held-out log-likelihood: hybrid {totals['hybrid']:.1f}, q {totals['q']:.1f}: {ranked}")


if __name__ == "__main__":
    main()
