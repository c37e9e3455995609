"""Fitting speed: maximum-likelihood fits per second on two-step, 200 trials per participant.

The baseline, measured in the same run, fits the same choices by replaying the agent step by
step (`graphtasks.fitting.replay_log_likelihood`, what any agent gets); the vectorised form
(`graphtasks.fitting.vectorised`) filters each pair's values over all trials at once. Both
fits start from the same seeded points and reach the same maximum. Target (issue 17): fits of
Q and the hybrid faster than the replay; the ratio is printed.

    python benchmarks/fit_bench.py           # about a minute
    python benchmarks/fit_bench.py --quick   # short, to check the script
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.fitting import MODELS, fit, simulate, task_shape  # noqa: E402
from graphtasks.fitting.likelihood import replay_log_likelihood  # noqa: E402
from graphtasks.fitting.vectorised import vectorised_log_likelihood  # noqa: E402

TASK = "rewardgym/two-step"
CASES = {  # model -> the generating agent's settings
    "q": {"lr": 0.4, "beta": 5.0, "gamma": 1.0},
    "hybrid": {"lr": 0.4, "beta": 5.0, "w": 0.5, "perseveration": 0.0},
}


def per_second(job, seconds: float) -> float:
    """Calls of `job` per second, repeated for at least `seconds`."""
    job()  # warm: imports, the plan of the choices
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        job()
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run, to check the script")
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    seconds = 0.5 if args.quick else 8.0
    shape = task_shape(TASK)
    print(f"Fits on {TASK}, {args.trials} trials, 3 starts each (L-BFGS-B); the same run's replay is the baseline")
    print(f"{'model':<8} {'what':<12} {'replayed /s':>12} {'vectorised /s':>14} {'ratio':>7}")
    for name, truth in CASES.items():
        model = MODELS[name]
        choices = simulate(TASK, model.agent, truth, args.trials, seed=1)
        settings = model.settings([truth[p] for p in model.free])
        slow = per_second(lambda: replay_log_likelihood(model.agent, settings, choices, shape), seconds / 4)
        fast = per_second(lambda: vectorised_log_likelihood(model.agent, settings, choices, shape), seconds / 4)
        print(f"{name:<8} {'likelihood':<12} {slow:>12.1f} {fast:>14.1f} {fast / slow:>6.1f}x")
        slow = per_second(lambda: fit(model, choices, starts=3, seed=0, shape=shape, vectorised=False), seconds)
        fast = per_second(lambda: fit(model, choices, starts=3, seed=0, shape=shape), seconds)
        print(f"{name:<8} {'fit':<12} {slow:>12.2f} {fast:>14.2f} {fast / slow:>6.1f}x")


if __name__ == "__main__":
    main()
