"""Fits per second of a group: 100 two-step participants of 200 trials each, before and after.

Before (the baseline, measured in the same run): each participant fitted alone, one likelihood
at a time (`fit(..., batched=False)`: the vectorised form for Q and the hybrid, the per-agent
replay for SARSA and the SR). After: `fit_many`, which chooses by itself; for a group this
large it climbs every start of every participant at once, each round of likelihood and
gradient requests one pass of a batched agent (`graphtasks.fitting.lockstep`). Both start
from the same seeded points; the largest difference of a participant's maximum
log-likelihood between the two is printed beside the ratio, and how many maxima the batched
fits found higher or lower by more than 1e-6 (the likelihoods agree to rounding, which can
still send an optimiser on a flat ridge to a slightly different end).

SARSA and the SR have no vectorised form, so their baseline replays the agent step by step;
it is measured on the first `--before` participants (default 10) and given per fit.

`--one-blas-thread` sets OPENBLAS_NUM_THREADS=1 before numpy is imported: L-BFGS-B's tiny BLAS
calls otherwise wake OpenBLAS's threads at every step, which on a busy two-core machine made a
single fit 5 times slower (0.30 s against 0.054 s for Q, 3 starts); the lockstep fits overlap
those waits, the fits one at a time do not. Both sides always run the same way.

    python benchmarks/batched_fit_bench.py           # a few minutes
    python benchmarks/batched_fit_bench.py --quick   # short, to check the script
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if "--one-blas-thread" in sys.argv:
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.fitting import MODELS, FitModel, fit, simulate, task_shape  # noqa: E402
from graphtasks.fitting.mle import fit_many  # noqa: E402

TASK = "rewardgym/two-step"
BOUNDS = {"lr": (0.01, 1.0), "beta": (0.1, 20.0)}
CASES = {  # name -> (model, the simulated agent's settings)
    "q": (MODELS["q"], {"lr": 0.4, "beta": 5.0, "gamma": 1.0}),
    "hybrid": (MODELS["hybrid"], {"lr": 0.4, "beta": 5.0, "w": 0.5, "perseveration": 0.0}),
    "sarsa": (FitModel.of("sarsa", BOUNDS, {"gamma": 1.0}), {"lr": 0.4, "beta": 5.0, "gamma": 1.0}),
    "sr": (FitModel.of("sr", BOUNDS, {"gamma": 0.9}), {"lr": 0.4, "beta": 5.0, "gamma": 0.9}),
}
REPLAYED = {"sarsa", "sr"}  # no vectorised form: the baseline replays the agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run, to check the script")
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--before", type=int, default=10, help="participants the replayed baseline is timed on")
    parser.add_argument("--models", default=",".join(CASES))
    parser.add_argument("--one-blas-thread", action="store_true", help="OPENBLAS_NUM_THREADS=1 (set before numpy)")
    parser.add_argument("--em", type=int, default=0, metavar="N",
                        help="instead: hierarchical (EM) fits of N participants, E-step one at a time against lockstep")
    args = parser.parse_args()
    if args.quick:
        args.participants, args.trials, args.before = 6, 30, 2
    shape = task_shape(TASK)
    if args.em:
        return em(args, shape)
    print(f"Fits of {args.participants} participants on {TASK}, {args.trials} trials each, {args.starts} starts "
          f"(L-BFGS-B); before = each fitted alone, in the same run; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', '(default)')}")
    print(f"{'model':<8} {'before fits/s':>14} {'after fits/s':>13} {'ratio':>7} {'max |dLL|':>10} {'higher/lower':>13}"
          f"  after's path")
    for name in args.models.split(","):
        model, truth = CASES[name]
        group = [simulate(TASK, model.agent, truth, args.trials, seed=i) for i in range(args.participants)]
        fit(model, group[0], starts=1, seed=0, shape=shape, batched=False)  # warm: imports, plans
        fit_many(model, group[:2], starts=1, seed=0, shapes=[shape] * 2, batched=True)
        timed = group[: args.before] if name in REPLAYED else group
        start = time.perf_counter()
        before = [fit(model, c, starts=args.starts, seed=0, shape=shape, batched=False) for c in timed]
        before_rate = len(timed) / (time.perf_counter() - start)
        start = time.perf_counter()
        after = fit_many(model, group, starts=args.starts, seed=0, shapes=[shape] * len(group))
        after_rate = len(group) / (time.perf_counter() - start)
        gap = max(abs(a.log_likelihood - b.log_likelihood) for a, b in zip(before, after))
        higher = sum(b.log_likelihood > a.log_likelihood + 1e-6 for a, b in zip(before, after))
        lower = sum(b.log_likelihood < a.log_likelihood - 1e-6 for a, b in zip(before, after))
        from graphtasks.fitting.batched import batched_pays

        lanes = len(group) * args.starts * (len(model.free) + 1)
        path = "batched" if batched_pays(model.agent, model.settings([truth[p] for p in model.free]), group[:1],
                                         [shape], lanes) else "one at a time"
        print(f"{name:<8} {before_rate:>14.2f} {after_rate:>13.2f} {after_rate / before_rate:>6.1f}x {gap:>10.1e} "
              f"{f'{higher}/{lower}':>13}  {path}", flush=True)


def em(args: argparse.Namespace, shape: object) -> None:
    """EM fits of `--em` participants: the E-step one participant at a time, then in lockstep."""
    from graphtasks.fitting import fit_group

    print(f"EM fits of {args.em} participants on {TASK}, {args.trials} trials each, {args.starts} starts; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(default)')}")
    print(f"{'model':<8} {'before s':>9} {'after s':>8} {'ratio':>7} {'iterations':>11} {'max |d mean|':>13}")
    for name in args.models.split(","):
        model, truth = CASES[name]
        group = [simulate(TASK, model.agent, truth, args.trials, seed=i) for i in range(args.em)]
        times, fits = [], []
        for batched in (False, None):
            start = time.perf_counter()
            fits.append(fit_group(model, group, starts=args.starts, seed=0, batched=batched))
            times.append(time.perf_counter() - start)
        gap = max(abs(fits[0].mean[n] - fits[1].mean[n]) for n in model.free)
        print(f"{name:<8} {times[0]:>9.1f} {times[1]:>8.1f} {times[0] / times[1]:>6.1f}x "
              f"{fits[0].iterations:>5}/{fits[1].iterations:<5} {gap:>13.1e}", flush=True)


if __name__ == "__main__":
    main()
