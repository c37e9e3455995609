"""The posterior predictive figures of docs/fitting.md (NUTS section), and the numbers beside them.

Twelve participants are simulated on the two-step task by the model-based agent (the hybrid
with w = 1), 150 trials each, and sampled by NUTS under two models: `q` (model-free, wrong
here) and `model-based` (right), 4 chains of 300 warmup steps and 300 draws. Each fit's
posterior predictive check (100 draws, the batched simulators) is drawn to
docs/images/fit-nuts-ppc-<model>.png, and its diagnostics and PSIS-LOO are printed.

    python scripts/nuts_ppc_figures.py [OUTPUT_DIR]   # default docs/images; minutes of CPU
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.fitting import MODELS, simulate  # noqa: E402
from graphtasks.fitting.bayes import require_numpyro, sample_group  # noqa: E402
from graphtasks.fitting.figures import plot_predictive_check  # noqa: E402
from graphtasks.fitting.ppc import posterior_predictive  # noqa: E402

TASK = "rewardgym/two-step"


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
    out.mkdir(parents=True, exist_ok=True)
    require_numpyro()
    group = [simulate(TASK, "hybrid", {"lr": 0.3 + 0.4 * i / 11, "beta": 4.0 + 2.0 * (i % 3) / 2, "w": 1.0,
                                       "perseveration": 0.0, "lam": 0.6}, 150, seed=100 + i) for i in range(12)]
    for name in ("q", "model-based"):
        started = time.process_time()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            posterior = sample_group(MODELS[name], group, samples=300, warmup=300, seed=0, chains=4)
        d = posterior.group.diagnostics
        loo = d["loo"]
        print(f"{name}: {time.process_time() - started:.0f} s CPU ({d['chain_method']}); divergences "
              f"{d['divergences']}; max R-hat {d['max_r_hat']:.3f}; min ESS {d['min_ess']:.0f}; "
              f"LOO elpd {loo['elpd']:.1f} ± {loo['se']:.1f}, p_loo {loo['p_loo']:.1f}, "
              f"k > {loo['good_k']:.2f}: {loo['bad']} of {len(loo['pareto_k'])}; problems {d['problems']}")
        for w in said:
            print(f"  warning: {w.message}")
        for setting, row in d["settings"].items():
            print("  ", setting, {part: {k: round(v, 3) for k, v in values.items()} for part, values in row.items()})
        check = posterior_predictive(posterior, draws=100, seed=0)
        path = out / f"fit-nuts-ppc-{name}.png"
        plot_predictive_check(check, str(path), f"Posterior predictive check: {name} fitted by NUTS to 12 simulated "
                              "model-based participants x 150 two-step trials (100 posterior draws)")
        shown = check.as_dict()
        intervals = [(round(a, 3), round(b, 3)) for a, b in zip(shown["low"], shown["high"])]
        print(f"  {path}: data {[round(v, 3) for v in shown['observed']]}, simulated 95% {intervals}; outside "
              f"{shown['outside']}")


if __name__ == "__main__":
    main()
