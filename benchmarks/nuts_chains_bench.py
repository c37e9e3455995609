"""NUTS on several chains against one chain, in the same run: what R-hat across chains costs.

A group of Q participants is simulated on the two-step task and sampled by NUTS
(`graphtasks.fitting.bayes.sample_group`, non-centred) three ways in one process: one chain
(the baseline: what `fit run --method nuts` ran before it had `--chains`), 4 chains as one
vectorised batch on one JAX CPU device, and 4 chains in parallel on a JAX CPU device each.
Each line gives the wall clock and the CPU seconds (JIT compilation included, as a user waits
for it) and the ratio to the baseline, with the largest R-hat and the fewest effective draws.
Warmup and draws are kept small so that the script runs in about a minute of CPU on two
cores; the diagnostics then fail their checks (ESS below 400), which is expected here.

    python benchmarks/nuts_chains_bench.py            # 20 participants x 100 trials, 100 warmup + 100 draws
    python benchmarks/nuts_chains_bench.py --quick    # 4 participants x 40 trials, 30 + 30: to check the script
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.fitting import MODELS, simulate  # noqa: E402
from graphtasks.fitting.bayes import require_numpyro, sample_group  # noqa: E402

TASK = "rewardgym/two-step"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 participants x 40 trials, 30 + 30 draws")
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--draws", type=int, default=100, help="warmup steps and draws kept, each, per chain")
    args = parser.parse_args()
    participants, trials, draws = (4, 40, 30) if args.quick else (args.participants, args.trials, args.draws)
    require_numpyro()  # asks JAX for a CPU device per chain before it starts
    import jax

    group = [simulate(TASK, "q", {"lr": 0.2 + 0.6 * i / max(1, participants - 1), "beta": 5.0, "gamma": 1.0},
                      trials, seed=i) for i in range(participants)]
    print(f"NUTS, q on {TASK}: {participants} participants x {trials} trials, {draws} warmup + {draws} draws per "
          f"chain; JAX CPU devices {jax.local_device_count()}")
    print(f"{'what':<34} {'seconds':>8} {'CPU':>8} {'ratio':>7} {'CPU ratio':>9} {'max R-hat':>9} {'min ESS':>8}")
    base = None
    for label, chains, method in (("1 chain (baseline)", 1, "sequential"), ("4 chains, vectorised", 4, "vectorized"),
                                  ("4 chains, parallel", 4, "parallel")):
        wall, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # short chains fail the ESS check: expected here
            fit = sample_group(MODELS["q"], group, samples=draws, warmup=draws, seed=0, chains=chains,
                               chain_method=method)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        base = base or (wall, cpu)
        d = fit.group.diagnostics
        print(f"{label:<34} {wall:>8.1f} {cpu:>8.1f} {wall / base[0]:>6.2f}x {cpu / base[1]:>8.2f}x "
              f"{d['max_r_hat']:>9.3f} {d['min_ess']:>8.0f}")


if __name__ == "__main__":
    main()
