"""Agents against neuro-nav's: steps at episodes 91-100 on four_rooms small, over 100 seeds.

Every agent graphtasks shares with neuro-nav learns four_rooms small (index observation) with
the settings of issue 24: lr 0.1, gamma 0.99, softmax with beta 1000, episodes that end on the
reward or after 100 steps (neuro-nav's notebooks' `max_steps`; `--max-steps` sets another
cap), 100 episodes per seed, the other settings at neuro-nav's defaults (3 replays a step for
the Dyna agents, lambda 0.95 for Q(lambda), mix 0.5 for SR-MB, mood factor 0 and mood rate 0.1
for the mood agent). Per seed the figure is the mean length of episodes 91-100; the table
gives its mean over seeds with two standard errors, the seeds that reached the goal in none of
episodes 91-100, and graphtasks' mean as a ratio to neuro-nav's, with the difference and its
two standard errors. Rows "X nn" run graphtasks' agent with the settings that give neuro-nav's
rule where its default differs (docs/differences.md).

neuro-nav is not a dependency. Its column is measured in the same run when `import neuronav`
works in this interpreter, or in another interpreter given by `--neuronav-python`; otherwise
it is read from `agents_vs_neuronav.json` beside this file, which says when and with which
versions it was recorded, per episode cap (`--reference-only --record` adds a cap's run).

    python benchmarks/agents_vs_neuronav.py                    # 100 seeds: ~15 minutes of CPU
    python benchmarks/agents_vs_neuronav.py --quick            # 2 seeds, to check the script
    python benchmarks/agents_vs_neuronav.py --agents dyna,dynaac --seeds 300 --neuronav-python /path/to/python
    python benchmarks/agents_vs_neuronav.py --max-steps 400 --markdown   # the docs' second table
    /path/to/python benchmarks/agents_vs_neuronav.py --reference-only --record benchmarks/agents_vs_neuronav.json

neuro-nav's column takes about 90 minutes of CPU at 100 seeds (its Dyna agents scan their
model at every replay, MBV plans in Python loops); `--workers N` runs N seeds at once.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "agents_vs_neuronav.json"
if not __package__:  # run as a script: make the checkout importable (the graphtasks side imports it lazily)
    sys.path.insert(0, str(HERE.parent))

EPISODES = 100
WINDOW = (91, 100)  # episodes (1-based, inclusive) whose lengths are averaged
MAX_STEPS = 100
SHARED = {"lr": 0.1, "gamma": 0.99, "beta": 1000.0}  # both libraries' settings for every agent


@dataclass(frozen=True)
class Pair:
    """One agent of both libraries: graphtasks' name and settings, neuro-nav's class and settings,
    and variants: rows of graphtasks' agent with settings that give more of the reference's rule."""

    name: str
    reference: str  # neuro-nav's class, "module.Class" under neuronav.agents
    settings: dict[str, Any] = field(default_factory=dict)  # graphtasks' settings beside SHARED
    reference_settings: dict[str, Any] = field(default_factory=dict)  # neuro-nav's beside SHARED
    variants: tuple[tuple[str, dict[str, Any]], ...] = ()  # (row label, settings added to `settings`)

    def rows(self) -> list[tuple[str, dict[str, Any]]]:
        """(label, graphtasks' settings) of every row of this agent: its defaults first."""
        return [(self.name, self.settings)] + [(label, {**self.settings, **extra}) for label, extra in self.variants]


# Settings that give neuro-nav's rules where graphtasks' defaults differ (docs/differences.md):
POLICY = {"bootstrap": "policy"}  # TDQ, MoodQ and DynaQ bootstrap from the softmax policy's mean
RECENT = {"successors": 25}  # the Dyna module keeps 25 outcomes per pair, replayed by recency
PLANNING = {"planning": "on_change", "ignore_ends": True}  # MBV re-plans on a model change, past episode ends
PAIRS = (
    Pair("q", "td_agents.TDQ", variants=(("q nn", POLICY),)),
    Pair("sarsa", "td_agents.SARSA"),
    Pair("qlambda", "td_agents.QET", {"lam": 0.95}),
    Pair("mc", "mc_agents.QMC"),
    Pair("ec", "mc_agents.QEC"),
    Pair("ac", "td_agents.TDAC"),
    Pair("dyna", "dyna_agents.DynaQ", {"replays": 3}, variants=(("dyna nn", {**POLICY, **RECENT}),)),
    Pair("dynaac", "dyna_agents.DynaAC", {"replays": 3}, variants=(("dynaac nn", RECENT),)),
    Pair("sr", "td_agents.TDSR", {"w_lr": 0.1}),
    Pair("dynasr", "dyna_agents.DynaSR", {"w_lr": 0.1, "replays": 3}, variants=(("dynasr nn", RECENT),)),
    Pair("srmb", "mb_agents.SRMB", {"mix": 0.5}, variants=(("srmb nn", PLANNING),)),
    Pair("mbv", "mb_agents.MBV", variants=(("mbv nn", PLANNING),)),
    Pair("distq", "dist_agents.DistQ"),
    Pair("mood", "td_agents.MoodQ", {"lr_pos": 0.1, "lr_neg": 0.1, "mood_lr": 0.1, "mood_factor": 0.0},
         variants=(("mood nn", {**POLICY, "mood_reset": True}),)),
)
NO_LR = {"ec", "mood"}  # agents without a setting named lr (ec has none; mood has lr_pos / lr_neg)


@dataclass
class Column:
    """One library's results for one agent: per seed, the mean length of the window's episodes."""

    window_means: list[float]
    never: list[int]  # seeds that reached the goal in none of the window's episodes
    error: str = ""  # the exception that stopped the agent, if one did

    @property
    def mean(self) -> float:
        return float(np.mean(self.window_means))

    @property
    def two_se(self) -> float:
        n = len(self.window_means)
        return 2 * float(np.std(self.window_means, ddof=1)) / math.sqrt(n) if n > 1 else math.nan

    def as_json(self) -> dict[str, Any]:
        return {"window_means": self.window_means, "never": self.never, "error": self.error}


def summarise(lengths_by_seed: dict[int, list[int]]) -> Column:
    lo, hi = WINDOW
    means = [round(float(np.mean(lengths[lo - 1:hi])), 4) for lengths in lengths_by_seed.values()]
    never = [seed for seed, lengths in lengths_by_seed.items() if min(lengths[lo - 1:hi]) >= MAX_STEPS]
    return Column(means, never)


def graphtasks_lengths(row: tuple[str, dict[str, Any]], seed: int) -> list[int]:
    """Episode lengths of graphtasks' agent (name, settings) on one seed, played by the project's
    one episode loop."""
    from gym_bridge.agents import make_agent
    from gym_bridge.episodes import SeedTree, play
    from gym_bridge.grid.env import GridEnv

    name, settings = row
    env = GridEnv("four_rooms", "small", max_episode_steps=MAX_STEPS)
    shared = {k: v for k, v in SHARED.items() if not (k == "lr" and name in NO_LR)}
    agent = make_agent(name, env.n_states, env.n_actions, seed=seed, **shared, **settings)
    return [episode.length for episode in play(env, agent, EPISODES, SeedTree(seed).env(0))]


def neuronav_lengths(pair: Pair, seed: int) -> list[int]:
    """Episode lengths of neuro-nav's agent on one seed (its global numpy stream seeded), played
    by neuro-nav's own `run_episode` on its own grid env."""
    import importlib

    import numpy.random as npr
    from neuronav.envs.grid_env import GridEnv, GridObservation, GridSize
    from neuronav.envs.grid_templates import GridTemplate
    from neuronav.utils import run_episode

    module, name = pair.reference.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"neuronav.agents.{module}"), name)
    npr.seed(seed)
    env = GridEnv(template=GridTemplate.four_rooms, size=GridSize.small, obs_type=GridObservation.index, seed=seed)
    agent = cls(env.state_size, env.action_space.n, poltype="softmax", **SHARED, **pair.reference_settings)
    lengths = []
    for _ in range(EPISODES):
        agent, steps, _ = run_episode(env, agent, MAX_STEPS)
        lengths.append(int(steps))
    return lengths


def measure(run: Callable[[Any, int], list[int]], what: Any, seeds: range, workers: int,
            tolerate: bool = False) -> Column:
    """`run` over `seeds`; with `tolerate`, an exception is the column's result (a reference agent
    that fails on this task), else it stops the script."""
    try:
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(workers) as pool:
                lengths = list(pool.map(run, [what] * len(seeds), seeds))
        else:
            lengths = [run(what, seed) for seed in seeds]
    except Exception as error:
        if not tolerate:
            raise
        return Column([], [], f"{type(error).__name__}: {error}")
    return summarise(dict(zip(seeds, lengths)))


def reference_columns(pairs: list[Pair], seeds: range, workers: int) -> dict[str, Column]:
    return {pair.name: measure(neuronav_lengths, pair, seeds, workers, tolerate=True) for pair in pairs}


def neuronav_version() -> str:
    from importlib.metadata import version

    return version("neuronav")


ABOUT = (
    "neuro-nav's agents on four_rooms small (index observation), with `settings`: for each episode cap "
    "(`runs`, by max_steps), per agent and seed the mean length of the `window`'s episodes, and the seeds that "
    "reached the goal in none of them; recorded by benchmarks/agents_vs_neuronav.py --reference-only --record. "
    "neuro-nav: https://github.com/awjuliani/neuro-nav, Apache-2.0 licence; numbers measured by running it, "
    "not its code."
)


def run_record(columns: dict[str, Column], seeds: range) -> dict[str, Any]:
    """One run's columns, with when and with what they were measured."""
    return {
        "recorded": datetime.date.today().isoformat(),
        "neuronav": neuronav_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "seeds": [seeds.start, seeds.stop],
        "agents": {name: column.as_json() for name, column in columns.items()},
    }


def record(columns: dict[str, Column], seeds: range, path: Path) -> None:
    """Write this run (this episode cap) into the record at `path`, keeping its other caps' runs."""
    payload = json.loads(path.read_text()) if path.is_file() else {}
    runs = payload.get("runs", {})
    runs[str(MAX_STEPS)] = run_record(columns, seeds)
    payload = {"about": ABOUT, "settings": SHARED, "episodes": EPISODES, "window": list(WINDOW),
               "runs": dict(sorted(runs.items(), key=lambda item: int(item[0])))}
    text = json.dumps(payload, indent=1)
    # a list of numbers on one line: a record of 100 seeds a line per agent, not a number per line
    text = re.sub(r"\[\s+([^\[\]{}\"]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    path.write_text(text + "\n")


def from_json(data: dict[str, Any], seeds: range | None = None) -> dict[str, Column]:
    """Columns from one run's record; with `seeds`, only those (its seeds start at data['seeds'][0])."""
    first = data["seeds"][0]
    columns = {}
    for row, c in data["agents"].items():
        means, never = c["window_means"], c["never"]
        if seeds is not None and means:
            means = means[seeds.start - first:seeds.stop - first]
            never = [s for s in never if s in seeds]
        columns[row] = Column(means, never, c.get("error", ""))
    return columns


def recorded_columns(seeds: range) -> tuple[str, dict[str, Column]]:
    """neuro-nav's columns from the record beside this file, for this run's episode cap, and what
    they are (when recorded, with which versions, on which seeds)."""
    if not RECORDED.is_file():
        return f"none: `import neuronav` failed here and {RECORDED} is missing", {}
    runs = json.loads(RECORDED.read_text())["runs"]
    data = runs.get(str(MAX_STEPS))
    if data is None:
        caps = ", ".join(runs)
        return f"none: `import neuronav` failed here and {RECORDED.name} has episodes of up to {caps} steps", {}
    recorded = range(*data["seeds"])
    use = seeds if seeds.start >= recorded.start and seeds.stop <= recorded.stop else None
    source = (f"neuro-nav {data['neuronav']}, recorded {data['recorded']} (Python {data['python']}, numpy "
              f"{data['numpy']}) in {RECORDED.name}, as `import neuronav` failed here")
    if use is None:
        source += f"; its {len(recorded)} seeds, not this run's {len(seeds)}"
    return source, from_json(data, use)


def cell(column: Column | None) -> str:
    if column is None:
        return "-"
    if column.error:
        return "fails: " + column.error.split(":")[0]
    return f"{column.mean:5.1f} +- {column.two_se:4.1f} ({len(column.never)})"


def comparison(ours: Column, theirs: Column | None) -> str:
    if theirs is None or theirs.error or ours.error or not theirs.window_means:
        return ""
    difference = ours.mean - theirs.mean
    spread = math.hypot(ours.two_se, theirs.two_se)
    verdict = "within 2 SE" if abs(difference) <= spread else "beyond 2 SE"
    return f"{difference:+6.1f} +- {spread:4.1f} {verdict:<12} {ours.mean / theirs.mean:5.2f}x"


def main(argv: list[str] | None = None) -> None:
    global MAX_STEPS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, to check the script")
    parser.add_argument("--seeds", type=int, default=100, help="seeds 0..N-1 (default 100)")
    parser.add_argument("--agents", default="", help="comma-separated agents to run (default: all)")
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS, help=f"episode cap (default {MAX_STEPS})")
    parser.add_argument("--workers", type=int, default=1, help="processes per column (default 1)")
    parser.add_argument("--neuronav-python", default="", help="an interpreter that imports neuronav, for its column")
    parser.add_argument("--reference-only", action="store_true", help="only neuro-nav's column (needs neuronav)")
    parser.add_argument("--record", default="", help="with --reference-only: write the column to this JSON file")
    parser.add_argument("--json", action="store_true", help="with --reference-only: print the column as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (docs/differences.md's)")
    args = parser.parse_args(argv)
    if args.seeds < 2 or args.workers < 1 or args.max_steps < 1:
        parser.error("--seeds: expected 2 or more; --workers, --max-steps: expected 1 or more")
    MAX_STEPS = args.max_steps
    seeds = range(2 if args.quick else args.seeds)
    wanted = [name for name in args.agents.split(",") if name]
    unknown = set(wanted) - {p.name for p in PAIRS}
    if unknown:
        parser.error(f"--agents: unknown {', '.join(sorted(unknown))} (agents: {', '.join(p.name for p in PAIRS)})")
    pairs = [p for p in PAIRS if not wanted or p.name in wanted]

    if args.reference_only:
        columns = reference_columns(pairs, seeds, args.workers)
        if args.record:
            record(columns, seeds, Path(args.record))
        if args.json:
            print(json.dumps(run_record(columns, seeds)))
        else:
            for row, column in columns.items():
                print(f"{row:<10} {cell(column)}")
        return

    reference: dict[str, Column]
    try:
        import neuronav  # noqa: F401

        source = f"neuro-nav {neuronav_version()}, measured in this run"
        reference = reference_columns(pairs, seeds, args.workers)
    except ImportError:
        if args.neuronav_python:
            command = [args.neuronav_python, str(Path(__file__).resolve()), "--reference-only", "--json",
                       "--seeds", str(len(seeds)), "--workers", str(args.workers), "--max-steps", str(MAX_STEPS)]
            if wanted:
                command += ["--agents", ",".join(wanted)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            data = json.loads(done.stdout.strip().splitlines()[-1])
            source = f"neuro-nav {data['neuronav']}, measured in this run by {args.neuronav_python}"
            reference = from_json(data)
        else:
            source, reference = recorded_columns(seeds)

    print(f"Agents on four_rooms small (index), lr {SHARED['lr']}, gamma {SHARED['gamma']}, softmax beta "
          f"{SHARED['beta']:g}; episodes end on the reward or after {MAX_STEPS} steps; {EPISODES} episodes x "
          f"{len(seeds)} seeds.")
    print(f"Steps at episodes {WINDOW[0]}-{WINDOW[1]}: mean +- 2 SE over seeds (seeds that reached the goal in none).")
    print(f"Baseline: {source}.")
    if args.markdown:
        print("\n| agent | graphtasks | neuro-nav | difference +- 2 SE | ratio |\n|---|---|---|---|---|")
    else:
        print(f"{'agent':<12} {'graphtasks':<22} {'neuro-nav':<22} {'difference +- 2 SE':<32} {'ratio':>6}")
    for pair in pairs:
        theirs = reference.get(pair.name)
        for label, settings in pair.rows():
            ours = measure(graphtasks_lengths, (pair.name, settings), seeds, args.workers)
            if args.markdown:
                words = comparison(ours, theirs).split()
                difference, ratio = " ".join(words[:-1]), " ".join(words[-1:])
                print(f"| `{label}` | {' '.join(cell(ours).split())} | {' '.join(cell(theirs).split())} | "
                      f"{difference} | {ratio} |", flush=True)
            else:
                print(f"{label:<12} {cell(ours):<22} {cell(theirs):<22} {comparison(ours, theirs)}", flush=True)
    print("Rows 'X nn': graphtasks' agent with the settings that give neuro-nav's rule (bootstrap = policy; "
          "successors = 25; planning = on_change, ignore_ends; mood_reset).")


if __name__ == "__main__":
    main()
