"""Records as columns: a recorded sweep against the per-agent loop, workers against one
worker, a Dask cluster against processes, and what a record costs on disk, measured in the
same run.

A researcher's sweep as a user runs it (`graphtasks experiment run`, records into a fresh
embedded store): Q-learning on four_rooms small, 100 episodes of at most 100 steps, lr 0.1,
gamma 0.99, epsilon 0.1 (the sweep of issue 36).

1. The baseline: the same spec played `--per-agent`, recorded, on a sample of its cells.
2. Recorded batched sweeps of 200 and 2,000 runs on one worker: agent-steps/s and the ratio
   to the baseline, and where the fixed cost of the small one goes.
3. 2,000 runs on W workers against one, and on a Dask LocalCluster of W workers against
   W processes.
4. Bytes on disk per episode record (the chunks, and the store with them), and a 20,000-run
   sweep on W workers.

    python benchmarks/records_bench.py              # a few minutes
    python benchmarks/records_bench.py --quick      # short, to check the script
    python benchmarks/records_bench.py --workers 16 --big 20000
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.batched_sweep_bench import spec_of  # noqa: E402
from graphstore import open_store  # noqa: E402
from graphtasks.experiments.api import run_and_record  # noqa: E402

PROFILED = {  # what the fixed cost of a small sweep is spent on, by the function that spends it
    "playing (agents and envs)": "play_batch_phases",
    "writing chunks (workers)": "write_lanes",
    "cataloguing (the store's writer)": "record_runs",
    "compiled loop loaded (numba cache)": "_compile_for_args",
    "task versions prepared": "prepare_versions",
    "experiment and tasks recorded": "record_experiment",
}


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.exists() else 0


def sweep(runs: int, episodes: int, workers: int, batched: bool = True, dask: str | None = None,
          profile: bool = False) -> dict[str, float]:
    """One recorded sweep in a fresh store: seconds, agent-steps, episodes, bytes."""
    spec, text = spec_of("q", runs, episodes)
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store.lbug")
        profiler = cProfile.Profile() if profile else None
        start = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        report = run_and_record(spec, text, store, workers=workers, dask=dask, batched=batched)
        if profiler is not None:
            profiler.disable()
        took = time.perf_counter() - start
        assert not report.failures, report.failures
        summary = report.summary
        steps = sum(row["episodes"] * row["mean_length"] for row in summary)
        count = sum(row["episodes"] for row in summary)
        with open_store(store, "r") as opened:
            assert opened.cypher("MATCH (e:Episode) RETURN count(e)").rows[0][0] in (0, count)
        records = folder_bytes(Path(store + ".records"))
        total = folder_bytes(Path(directory))  # the store and its records folder
    out = {"seconds": took, "steps": steps, "episodes": count, "records_bytes": records, "store_bytes": total}
    if profiler is not None:
        stats = pstats.Stats(profiler)
        spent = {name: 0.0 for name in PROFILED}
        for (_, _, function), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
            for name, wanted in PROFILED.items():
                if function == wanted:
                    spent[name] += cumulative
        out["profile"] = spent  # type: ignore[assignment]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short sweeps, to check the script")
    parser.add_argument("--workers", type=int, default=0, help="workers of the parallel sweeps (default: cores, >= 2)")
    parser.add_argument("--big", type=int, default=0, help="runs of the big sweep (default 20,000; 0 with --quick)")
    parser.add_argument("--sample", type=int, default=0, help="runs of the per-agent baseline (default 20)")
    args = parser.parse_args(argv)
    workers = args.workers or max(2, os.cpu_count() or 1)
    small, large, sample, episodes = (20, 200, 4, 20) if args.quick else (200, 2000, 20, 100)
    sample = args.sample or sample
    big = args.big if args.big or args.quick else 20_000

    base = sweep(sample, episodes, 1, batched=False)
    base_rate = base["steps"] / base["seconds"]
    print(f"Q on four_rooms small, {episodes} episodes of at most 100 steps, records in a fresh embedded store")
    print(f"1. per agent (baseline), {sample} runs, 1 worker: {base['seconds']:.2f} s, {base_rate:,.0f} agent-steps/s")

    print("2. batched, recorded as chunks, 1 worker:")
    for runs in (small, large):
        got = sweep(runs, episodes, 1, profile=runs == small)
        rate = got["steps"] / got["seconds"]
        print(f"   {runs:>6,} runs: {got['seconds']:6.2f} s, {rate:12,.0f} agent-steps/s, {rate / base_rate:6.1f}x "
              f"the per-agent loop; {got['records_bytes'] / got['episodes']:.1f} bytes of chunk per episode")
        if "profile" in got:
            spent = got["profile"]
            said = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in spent.items())  # type: ignore[union-attr]
            print(f"          where the {got['seconds']:.2f} s go: {said}")

    one = sweep(large, episodes, 1)
    many = sweep(large, episodes, workers)
    dask = sweep(large, episodes, workers, dask="local")
    print(f"3. {large:,} runs: 1 worker {one['seconds']:.2f} s | {workers} workers {many['seconds']:.2f} s "
          f"({one['seconds'] / many['seconds']:.2f}x one) | --dask local, {workers} workers {dask['seconds']:.2f} s "
          f"({many['seconds'] / dask['seconds']:.2f}x the processes)")

    if big:
        got = sweep(big, episodes, workers)
        print(f"4. {big:,} runs on {workers} workers: {got['seconds']:.1f} s, "
              f"{got['steps'] / got['seconds']:,.0f} agent-steps/s ({got['steps'] / got['seconds'] / base_rate:.0f}x); "
              f"{got['records_bytes'] / got['episodes']:.1f} bytes of chunk per episode, "
              f"{got['store_bytes'] / got['episodes']:.1f} with the store")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
