"""The vector environments' fixed cost per step, and env-steps/s at N = 1, 16, 256, 4096.

For each case (graph neighborhood `index`, the fast table path; graph two-step `index`, the
stochastic path with skip states and drawn rewards; grid four_rooms small `index`; POGE world1
`index`): the native vector env with its default episode limit, NEXT_STEP autoreset, a pool
of 64 random action batches drawn in advance; env-steps/s = steps x N, best of `--repeats`
runs of about `--budget` seconds. The fixed cost per step is the time of one step at N = 1
(in microseconds): what every step pays whatever N. "calls/step" is the number of Python-level
function calls per step at N = 256 that cProfile sees (numpy methods and functions, ours); array
operators (`a + b`) do not appear in it, so it is a floor on the numpy calls.

Baselines measured in the same run:
- the single env's steps/s (the same task, actions drawn in advance), printed as the ratio
  vector N = 1 / single;
- with `--baseline-commit REV` (e.g. the commit before a change), the same measurement on
  that commit's code (extracted with `git archive` into a temporary folder), interleaved
  with this tree's repeat by repeat, and the ratio after / before per case and N.

    python benchmarks/vector_fixed_cost.py
    python benchmarks/vector_fixed_cost.py --baseline-commit 022127b --repeats 5
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

SIZES = (1, 16, 256, 4096)
CASES = ("graph neighborhood index", "graph two-step index", "grid four_rooms small index", "poge world1 index")
HERE = Path(__file__).resolve()


def _makers(store: Any) -> dict[str, tuple[Callable[[int], Any], Callable[[], Any]]]:
    """(vector env of N copies, single env) per case; imported from the code under test."""
    from gym_bridge import GraphTaskEnv
    from gym_bridge.graph.vector_env import GraphVectorEnv
    from gym_bridge.grid.env import GridEnv
    from gym_bridge.grid.vector_env import GridVectorEnv
    from gym_bridge.poge.env import PogeEnv
    from gym_bridge.poge.vector_env import PogeVectorEnv

    return {
        "graph neighborhood index": (
            lambda n: GraphVectorEnv(n, task="neuronav/graph/neighborhood", store=store),
            lambda: GraphTaskEnv("neuronav/graph/neighborhood", store=store),
        ),
        "graph two-step index": (
            lambda n: GraphVectorEnv(n, task="rewardgym/two-step", store=store),
            lambda: GraphTaskEnv("rewardgym/two-step", store=store),
        ),
        "grid four_rooms small index": (
            lambda n: GridVectorEnv(n, "four_rooms", "small", store=store),
            lambda: GridEnv("four_rooms", "small", store=store),
        ),
        "poge world1 index": (
            lambda n: PogeVectorEnv(n, world="poge/world1", store=store),
            lambda: PogeEnv(world="poge/world1", store=store),
        ),
    }


def vector_rate(venv: Any, budget: float) -> float:
    """Steps/s (not env-steps) of one timed run of about `budget` seconds, after sizing it."""
    import numpy as np

    pool = np.random.default_rng(0).integers(0, venv.single_action_space.n, (64, venv.num_envs))
    venv.reset(seed=0)
    step = venv.step
    steps, elapsed = 16, 0.0
    while True:
        start = time.perf_counter()
        for i in range(steps):
            step(pool[i & 63])
        elapsed = time.perf_counter() - start
        if elapsed >= budget * 0.5:
            return steps / elapsed
        steps = int(max(steps * 2, steps * budget / max(elapsed, 1e-6)))


def single_rate(env: Any, budget: float) -> float:
    import numpy as np

    env = env.unwrapped
    actions = np.random.default_rng(0).integers(0, env.action_space.n, 200_000).tolist()
    env.reset(seed=0)
    step, reset = env.step, env.reset
    n = 1_000
    while True:
        start = time.perf_counter()
        for a in actions[:n]:
            _, _, terminated, truncated, _ = step(a)
            if terminated or truncated:
                reset()
        elapsed = time.perf_counter() - start
        if elapsed >= budget * 0.5 or n >= len(actions):
            return n / elapsed
        n = min(len(actions), int(max(n * 2, n * budget / max(elapsed, 1e-6))))


def calls_per_step(venv: Any, steps: int = 200) -> float:
    """Python-level calls cProfile sees per step (numpy functions and methods included)."""
    import numpy as np

    pool = np.random.default_rng(0).integers(0, venv.single_action_space.n, (64, venv.num_envs))
    venv.reset(seed=0)
    profile = cProfile.Profile()
    profile.enable()
    for i in range(steps):
        venv.step(pool[i & 63])
    profile.disable()
    return pstats.Stats(profile).total_calls / steps  # type: ignore[attr-defined]


def measure(budget: float, cases: list[str]) -> dict[str, Any]:
    """One pass over the cases and every N (run in a subprocess with the code under test first on sys.path)."""
    import gym_bridge
    from graphstore import open_store

    result: dict[str, Any] = {"gym_bridge": gym_bridge.__file__}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(os.path.join(folder, "bench.lbug"))
        for case, (make_vector, make_single) in _makers(store).items():
            if case not in cases:
                continue
            row: dict[str, Any] = {"single": single_rate(make_single(), budget)}
            for n in SIZES:
                row[str(n)] = vector_rate(make_vector(n), budget)  # steps/s
            row["calls"] = calls_per_step(make_vector(256))
            result[case] = row
        store.close()
    return result


def run_pass(code_root: Path, budget: float, cases: list[str]) -> dict[str, Any]:
    """`measure` in a fresh interpreter whose first import path is `code_root`."""
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    done = subprocess.run(
        [sys.executable, str(HERE), "--measure", str(budget), "--code-root", str(code_root), "--cases", *cases],
        env=env, cwd=code_root, capture_output=True, text=True, check=False,
    )
    if done.returncode:
        raise RuntimeError(f"measuring {code_root} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best_of(passes: list[dict[str, Any]], cases: list[str]) -> dict[str, Any]:
    best: dict[str, Any] = {}
    for case in cases:
        rows = [p[case] for p in passes]
        best[case] = {k: max(r[k] for r in rows) for k in rows[0] if k != "calls"}
        best[case]["calls"] = rows[0]["calls"]
    return best


def extract(commit: str, folder: Path) -> Path:
    """The tree of `commit` (git archive) in `folder`."""
    root = HERE.parents[1]
    archive = folder / "code.tar"
    subprocess.run(["git", "-C", str(root), "archive", "-o", str(archive), commit], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder / "code", filter="data")
    return folder / "code"


def fmt(rate: float) -> str:
    return f"{rate / 1e6:.1f}M" if rate >= 1e6 else f"{rate / 1e3:.0f}k"


def report(now: dict[str, Any], before: dict[str, Any] | None, cases: list[str]) -> None:
    head = f"{'case':<29}{'single':>8}" + "".join(f"{'N=' + str(n):>9}" for n in SIZES)
    print(head + f"{'fixed us':>10}{'N=1/single':>11}{'calls/step':>11}")
    for label, table in (("before", before), ("after", now)):
        if table is None:
            continue
        print(f"-- {label} (env-steps/s; fixed us = one step at N = 1)")
        for case in cases:
            row = table[case]
            rates = "".join(f"{fmt(row[str(n)] * n):>9}" for n in SIZES)
            print(
                f"{case:<29}{fmt(row['single']):>8}{rates}{1e6 / row['1']:>10.2f}"
                f"{row['1'] / row['single']:>10.2f}x{row['calls']:>11.0f}"
            )
    if before is not None:
        print("-- ratio after / before (same run, best of the repeats each)")
        for case in cases:
            ratios = "".join(f"{now[case][str(n)] / before[case][str(n)]:>8.2f}x" for n in SIZES)
            fixed = before[case]["1"] and now[case]["1"] / before[case]["1"]
            print(f"{case:<29}{'':>8}{ratios}{fixed:>9.2f}x (fixed cost {1e6 / before[case]['1']:.2f} -> "
                  f"{1e6 / now[case]['1']:.2f} us)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per timed run (default 0.5)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many passes (default 3)")
    parser.add_argument("--baseline-commit", help="also measure this commit's code, interleaved, as the baseline")
    parser.add_argument("--json", type=Path, help="write every figure here as JSON")
    parser.add_argument("--cases", nargs="+", metavar="WORD", help="only the cases whose name holds one of these words")
    parser.add_argument("--measure", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--code-root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:  # a pass in a child process
        sys.path.insert(0, str(args.code_root))
        os.environ["GRAPHTASKS_STORE"] = os.path.join(tempfile.mkdtemp(), "store.lbug")
        print(json.dumps(measure(args.measure, args.cases)))
        return 0
    cases = [c for c in CASES if not args.cases or any(word in c for word in args.cases)]
    tree = HERE.parents[1]
    with tempfile.TemporaryDirectory() as folder:
        old = extract(args.baseline_commit, Path(folder)) if args.baseline_commit else None
        now_passes, old_passes = [], []
        for _ in range(args.repeats):  # interleaved: both see the same load
            now_passes.append(run_pass(tree, args.budget, cases))
            if old is not None:
                old_passes.append(run_pass(old, args.budget, cases))
    now = best_of(now_passes, cases)
    before = best_of(old_passes, cases) if old_passes else None
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"best of {args.repeats} passes of {args.budget} s per figure")
    report(now, before, cases)
    if args.json:
        args.json.write_text(json.dumps({"after": now, "before": before, "baseline_commit": args.baseline_commit},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
