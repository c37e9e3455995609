"""Sweeps at array speed: batched agents against the per-agent loop, measured in the same run.

1. A researcher's sweep, the way a user runs it (`graphtasks experiment run`: records written
   into a fresh embedded store): R runs of an agent on four_rooms small (100 episodes of at
   most 100 steps, one worker), batched against `--per-agent`. Agent-steps/s and the ratio.
2. The agent-and-env loop alone (no records): 2,000 runs batched (`play_batch`) against the
   per-agent loop (`play_run`, timed on a sample of the same cells): agent-steps/s and ratio.

    python benchmarks/batched_sweep_bench.py            # a few minutes
    python benchmarks/batched_sweep_bench.py --quick    # short, to check the script
    python benchmarks/batched_sweep_bench.py --agents mbv,mc --episodes 10 --loop-runs 400
        # any agents with a batched form (the rows of gym_bridge.agents.registry with batched=); the per-agent MBV
        # and SRMB plan 10 sweeps a step (about 1,000 steps/s), so shorter sweeps for those
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphtasks.experiments.api import run_and_record  # noqa: E402
from graphtasks.experiments.batched_runs import group_cells, play_batch  # noqa: E402
from graphtasks.experiments.runs import cells, play_run  # noqa: E402
from graphtasks.experiments.spec import parse_spec  # noqa: E402
from graphtasks.experiments.versions import prepare_versions  # noqa: E402

TASK = "neuronav/grid/four_rooms/small"
COMMON = "lr = 0.1, gamma = 0.99, epsilon = 0.1"
# agents whose settings are named otherwise: rates per sign of the error (valence's softmax at
# its default beta 5), no learning rate (episodic control)
PARAMS = {
    "valence": "lr_pos = 0.1, lr_neg = 0.1, gamma = 0.99",
    "mood": "lr_pos = 0.1, lr_neg = 0.1, gamma = 0.99, epsilon = 0.1",
    "ec": "gamma = 0.99, epsilon = 0.1",
    "opal": "lr = 0.1, gamma = 0.99",  # its softmax over the actors' weights
    "vhybrid": "lr_pos = 0.1, lr_neg = 0.1, gamma = 0.99",
    "infobonus": "epsilon = 0.1",  # its softmax at the default beta 0.2
}
SPEC = """
[experiment]
name = "bench-{agent}"
tasks = ["{task}"]
seeds = {runs}

[[agents]]
name = "{agent}"
params = {{ {params} }}

[[phases]]
name = "learning"
episodes = {episodes}
max_steps = 100
"""


def spec_of(agent: str, runs: int, episodes: int, task: str = TASK):
    text = SPEC.format(agent=agent, task=task, runs=runs, episodes=episodes, params=PARAMS.get(agent, COMMON))
    return parse_spec(text), text


def recorded_sweep(agent: str, runs: int, episodes: int, batched: bool) -> tuple[float, int]:
    """Seconds and agent-steps of the sweep run and recorded as the CLI does, on one worker."""
    spec, text = spec_of(agent, runs, episodes)
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store.lbug")
        start = time.perf_counter()
        report = run_and_record(spec, text, store, workers=1, batched=batched)
        took = time.perf_counter() - start
    assert not report.failures, report.failures
    return took, sum(int(row["length"]) for row in report.rows)


def sweep_table(agents: list[str], runs: int, episodes: int) -> None:
    print(f"1. Sweep of {runs} runs on four_rooms small ({episodes} episodes of at most 100 steps), one worker,")
    print("   records written into an embedded store (graphtasks experiment run), batched against per agent:")
    print(f"{'agent':<8} {'per agent s':>12} {'steps/s':>10} {'batched s':>10} {'steps/s':>11} {'ratio':>7}")
    for agent in agents:
        slow, steps_slow = recorded_sweep(agent, runs, episodes, batched=False)
        fast, steps_fast = recorded_sweep(agent, runs, episodes, batched=True)
        print(f"{agent:<8} {slow:12.2f} {steps_slow / slow:10.0f} {fast:10.2f} {steps_fast / fast:11.0f} "
              f"{(steps_fast / fast) / (steps_slow / slow):6.1f}x")


def loop_alone(agent: str, runs: int, sample: int, episodes: int) -> None:
    spec, _ = spec_of(agent, runs, episodes)
    versions = prepare_versions(spec)
    every = cells(spec)
    start = time.perf_counter()
    steps_per_agent = sum(p.episode.length for cell in every[:sample] for p in play_run(spec, cell, versions))
    slow = time.perf_counter() - start
    units = group_cells(spec, every, versions, workers=1)
    play_batch(spec, units[0][:2], versions)  # warm: numba loads its compiled loop once per process
    rates = []
    for compiled in (False, True):
        start = time.perf_counter()
        steps = 0
        for unit in units:
            assert isinstance(unit, tuple)
            steps += sum(p.episode.length for played in play_batch(spec, unit, versions, compiled).values()
                         for p in played)
        rates.append((steps / (time.perf_counter() - start), time.perf_counter() - start))
    rate_slow = steps_per_agent / slow
    (numpy_rate, numpy_s), (fast_rate, fast_s) = rates
    print(f"{agent:<8} per agent {rate_slow:10.0f} steps/s ({sample} runs) | numpy lanes {numpy_rate:11.0f} steps/s "
          f"({numpy_s:.1f} s) {numpy_rate / rate_slow:6.1f}x | compiled where it applies {fast_rate:11.0f} steps/s "
          f"({fast_s:.2f} s) {fast_rate / rate_slow:6.1f}x  ({runs} runs in {len(units)} batches)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, to check the script")
    parser.add_argument("--agents", default="q,sarsa,sr",
                        help="agents with a batched form, comma-separated (q, sarsa, qlambda, ac, sr, hybrid, dyna, "
                        "dynaac, dynasr, mbv, srmb, mc, ec, valence, mood, distq, opal, vhybrid, infobonus; "
                        "default: q,sarsa,sr)")
    parser.add_argument("--runs", type=int, default=0, help="runs of the recorded sweep (default 200)")
    parser.add_argument("--episodes", type=int, default=0, help="episodes of every run (default 100)")
    parser.add_argument("--loop-runs", type=int, default=0, help="runs of the loop alone (default 2,000)")
    args = parser.parse_args(argv)
    agents = args.agents.split(",")
    runs, episodes, loop_runs, sample = (8, 5, 40, 4) if args.quick else (200, 100, 2000, 20)
    runs, episodes, loop_runs = args.runs or runs, args.episodes or episodes, args.loop_runs or loop_runs
    sweep_table(agents, runs, episodes)
    print()
    print(f"2. The agent-and-env loop alone (no records), {loop_runs} runs of {episodes} episodes:")
    for agent in agents:
        loop_alone(agent, loop_runs if agent != "sr" else loop_runs // 4, sample, episodes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
