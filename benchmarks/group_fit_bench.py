"""Hierarchical (EM) fit of the hybrid model against separate maximum-likelihood fits, two-step.

A group of participants is simulated from the hybrid model's default group distribution
(`graphtasks.fitting.recovery.group_distribution`), then fitted twice on one process: each
participant alone by maximum likelihood (the baseline, measured in the same run) and all of
them at once by expectation-maximisation with Laplace approximations. Both use the vectorised
likelihood and 3 seeded starts per participant (EM: in its first E-step). The ratio is EM's
seconds over the baseline's: what the group prior costs on top of fitting everyone alone.

When NumPyro is installed (graphtasks[bayes]), the first 20 participants are also fitted by
EM and sampled by NUTS (one chain, 1000 warmup steps and 1000 draws, the JIT compilation
included), and NUTS's seconds are printed as a ratio to that EM fit of the same 20.

    python benchmarks/group_fit_bench.py           # 50 participants x 200 trials, several minutes
    python benchmarks/group_fit_bench.py --quick   # short, to check the script
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from graphtasks.fitting import MODELS, fit, fit_group, simulate, task_shape  # noqa: E402
from graphtasks.fitting.hierarchical import to_natural  # noqa: E402
from graphtasks.fitting.recovery import group_distribution, nuts_installed  # noqa: E402

TASK = "rewardgym/two-step"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="6 participants x 60 trials, EM stopped at 10 iterations: to check the script")
    parser.add_argument("--participants", type=int, default=50)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--nuts-participants", type=int, default=20)
    parser.add_argument("--no-nuts", action="store_true", help="leave NUTS out even when NumPyro is installed")
    args = parser.parse_args()
    participants, trials = (6, 60) if args.quick else (args.participants, args.trials)
    iterations = 10 if args.quick else 200  # a quick run checks the script, not EM's convergence
    model = MODELS["hybrid"]
    shape = task_shape(TASK)
    mean, sd = group_distribution(model)
    x = mean + sd * np.random.default_rng(0).standard_normal((participants, len(mean)))
    group = [simulate(TASK, model.agent, model.settings(v), trials, seed=i) for i, v in enumerate(to_natural(model, x))]
    for choices in group[:1]:  # warm: imports, the first plan
        fit(model, choices, starts=1, seed=0, shape=shape)
    print(f"hybrid on {TASK}: {participants} participants x {trials} trials, one process, 3 starts per participant")
    print("seconds: wall clock, and CPU of this process (on a shared machine the CPU seconds are the steadier)")
    clock = Clock()
    for choices in group:
        fit(model, choices, starts=3, seed=0, shape=shape)
    separate = clock.lap()
    result = fit_group(model, group, starts=3, seed=0, shapes=[shape] * participants, max_iterations=iterations)
    em = clock.lap()
    print(f"{'what':<40} {'seconds':>8} {'CPU':>8}")
    print(f"{f'{participants} maximum-likelihood fits (baseline)':<40} {separate[0]:>8.1f} {separate[1]:>8.1f}")
    print(f"{f'one EM fit ({result.iterations} iterations)':<40} {em[0]:>8.1f} {em[1]:>8.1f}")
    print(f"EM / separate MLE fits: {em[0] / separate[0]:.2f}x (CPU {em[1] / separate[1]:.2f}x)")
    if args.no_nuts or not nuts_installed():
        return
    from graphtasks.fitting.bayes import fit_group_nuts

    few, (samples, warmup) = group[: 3 if args.quick else args.nuts_participants], (20, 20) if args.quick else (
        1000, 1000)
    clock.lap()
    fit_group(model, few, starts=3, seed=0, shapes=[shape] * len(few), max_iterations=iterations)
    em_few = clock.lap()
    sampled = fit_group_nuts(model, few, samples=samples, warmup=warmup, seed=0, shapes=[shape] * len(few), chains=1)
    nuts = clock.lap()
    d = sampled.diagnostics
    print(f"{f'one EM fit of {len(few)} participants':<40} {em_few[0]:>8.1f} {em_few[1]:>8.1f}")
    print(f"{f'NUTS, {len(few)} participants, 1 chain':<40} {nuts[0]:>8.1f} {nuts[1]:>8.1f}   ({warmup} warmup + "
          f"{samples} draws; divergences {d['divergences']}, largest r-hat {d['max_r_hat']:.3f}, fewest effective "
          f"samples {d['min_ess']:.0f})")
    print(f"NUTS / EM of the same participants: {nuts[0] / em_few[0]:.1f}x (CPU {nuts[1] / em_few[1]:.1f}x)")


class Clock:
    """Wall-clock and CPU seconds since the last lap."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = (wall - self.wall, cpu - self.cpu)
        self.wall, self.cpu = wall, cpu
        return out


if __name__ == "__main__":
    main()
