"""Choices with response times: parameter recovery of the RL-DDM and the RL-LBA, and RL-DDM fits per second.

1. Recovery (issue 38): `q-ddm` and `q-lba` at 50 simulated participants x 200 two-step trials,
   settings drawn from each model's prior, fitted back by maximum likelihood
   (`graphtasks.fitting.recovery.parameter_recovery`); r and MAE per setting. Target: r >= 0.8
   for the drift scaling, the threshold and the learning rate.
2. Speed: maximum-likelihood fits per second of `q-ddm` for 100 participants x 200 trials
   (`fit_many`, one process), against the choice-only `q` fitted to the same choices in the same
   run (`fit_many` as it chooses: batched lanes where they pay). The ratio is printed.

    python benchmarks/rt_fit_bench.py                 # about 7 minutes on a shared two-core machine
    python benchmarks/rt_fit_bench.py --quick         # short, to check the script
    python benchmarks/rt_fit_bench.py --figure docs/images/fit-rt-recovery.png   # also draws the recovery
    python benchmarks/rt_fit_bench.py --models hybrid-ddm   # the hybrid-ddm recovery instead (about 9 minutes)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from graphtasks.fitting import MODELS, fit_many, simulate, task_shape  # noqa: E402
from graphtasks.fitting.recovery import ParameterRecovery, parameter_recovery  # noqa: E402

TASK = "rewardgym/two-step"
RESULTS = Path(__file__).resolve().parent / "results" / "rt_fit.json"


def recover(model: str, participants: int, trials: int, starts: int, workers: int) -> tuple[ParameterRecovery, float]:
    started = time.perf_counter()
    result = parameter_recovery(model, participants=participants, trials=trials, starts=starts, seed=0,
                                workers=workers)
    return result, time.perf_counter() - started


def speed(participants: int, trials: int, starts: int) -> dict[str, float]:
    """Fits per second of q-ddm and of the choice-only q on the same simulated choices."""
    rng = np.random.default_rng(1)
    model = MODELS["q-ddm"]
    people = [simulate(TASK, model.agent, model.settings([rng.uniform(*model.prior_of(n)) for n in model.free]),
                       trials, seed=i) for i in range(participants)]
    shapes = [task_shape(TASK)] * participants
    out = {}
    for name in ("q", "q-ddm"):
        started = time.perf_counter()
        fit_many(MODELS[name], people, starts=starts, seed=0, shapes=shapes)
        out[name] = participants / (time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run, to check the script")
    parser.add_argument("--starts", type=int, default=2, help="optimiser starts of each recovery fit (default 2)")
    parser.add_argument("--workers", type=int, default=1, help="processes of the recoveries (default 1)")
    parser.add_argument("--figure", metavar="FILE.png", help="draw the recovery figure")
    parser.add_argument("--skip-recovery", action="store_true", help="only the speed part")
    parser.add_argument("--models", default="q-ddm,q-lba", help="the models recovered (default q-ddm,q-lba)")
    args = parser.parse_args()
    participants, trials, fitted = (6, 60, 6) if args.quick else (50, 200, 100)
    report: dict[str, object] = {"task": TASK, "participants": participants, "trials": trials}
    results = []
    if not args.skip_recovery:
        print(f"Parameter recovery on {TASK}: {participants} participants x {trials} trials, {args.starts} starts")
        print(f"{'model':<8} {'setting':<12} {'r':>6} {'MAE':>8}")
        for name in args.models.split(","):
            result, seconds = recover(name, participants, trials, args.starts, args.workers)
            results.append(result)
            rows = {}
            for setting in result.truth:
                mae = float(np.mean(np.abs(np.subtract(result.fitted[setting], result.truth[setting]))))
                rows[setting] = {"r": result.correlation(setting), "mae": mae}
                print(f"{name:<8} {setting:<12} {rows[setting]['r']:>6.3f} {mae:>8.3g}")
            print(f"{name:<8} ({seconds:.0f} s)")
            report[name] = {"rows": rows, "seconds": seconds, "truth": result.truth, "fitted": result.fitted}
        if args.figure:
            from graphtasks.fitting.rt_figures import plot_rt_recovery

            plot_rt_recovery(results, args.figure)
            print(f"figure: {args.figure}")
    rates = speed(fitted, trials, 1)
    print(f"MLE fits per second, {fitted} participants x {trials} trials, 1 start each (one process):")
    print(f"  q (choices only) {rates['q']:.2f}/s, q-ddm (choices and RTs) {rates['q-ddm']:.2f}/s, "
          f"ratio q-ddm / q = {rates['q-ddm'] / rates['q']:.3f}")
    report["fits_per_second"] = rates
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(report, indent=1))
        print(f"results: {RESULTS}")


if __name__ == "__main__":
    main()
