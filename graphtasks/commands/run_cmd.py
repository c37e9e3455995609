"""`graphtasks run TASK --agent q --episodes N --seed S`: one run of an agent on a task, with
progress and a summary (with the two-step stay analysis where it applies), optionally a plot.

A run is the experiment of one cell (`graphtasks.experiments.spec.single_run_spec`), played by
the same loop with the same seed tree as an experiment's cells: `graphtasks run TASK --seed 0`
walks the episodes of a spec's cell of seed 0 on that task.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import time
from pathlib import Path
from typing import Any

from gym_bridge.runner import RunLog, first_transitions, stay_probabilities

from .arguments import COUNT, MAX_COUNT, SEED, max_episode_steps, one_line_errors
from .errors import CommandError, blame
from .extras import require_plotting
from .files import write_output
from .lookups import agent_name
from .output import parse_params
from .progress import add_no_progress, bar, shown


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="run an agent on a task (one run of the experiment loop)")
    parser.add_argument("task", help="task id, e.g. rewardgym/two-step (built in, or any task in the store)")
    parser.add_argument("--agent", type=agent_name(), default="q", metavar="NAME",
                        help="the agent (default q; `graphtasks agents` lists them)")
    parser.add_argument("--episodes", type=COUNT, default=1000,
                        help=f"episodes to run, 1..{MAX_COUNT:,} (default 1000)")
    parser.add_argument("--seed", type=SEED, default=0, help="the run's seed, 0..2**63-1 (default 0)")
    parser.add_argument("--max-episode-steps", type=COUNT, metavar="N",
                        help="episode length (default: the environment's; as max_episode_steps everywhere)")
    parser.add_argument("--max-steps", type=COUNT, metavar="N", dest="old_max_steps",
                        help="deprecated: --max-episode-steps")
    parser.add_argument("--schedule", action="store_true", help="play the task's trial schedule (block structure)")
    parser.add_argument("--agent-param", action="append", metavar="KEY=VALUE", help="agent setting, e.g. beta=3")
    parser.add_argument(
        "--env-param", action="append", metavar="KEY=VALUE", help="environment setting, e.g. time_penalty=0.01"
    )
    parser.add_argument("--plot", metavar="FILE.png", help="save a learning curve (needs matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON, with every episode's return")
    add_no_progress(parser, "no progress bar (of episodes)")
    parser.add_argument(
        "--per-agent", action="store_true",
        help="play the agent's per-agent form even where it has a batched one (other random streams)",
    )
    parser.set_defaults(func=cmd_run)
    one_line_errors(parser)


def cmd_run(args: argparse.Namespace) -> int:
    from graphtasks.experiments.batched_runs import batch_key, play_cell
    from graphtasks.experiments.runs import cells
    from graphtasks.experiments.spec import single_run_spec
    from graphtasks.experiments.versions import prepare_versions

    if args.plot:
        require_plotting("--plot")  # before the run, not after it
    env_params = parse_params(args.env_param, "--env-param")
    agent_params = parse_params(args.agent_param, "--agent-param")
    spec = single_run_spec(
        args.task, args.agent, args.seed, args.episodes, agent_params, env_params, max_episode_steps(args),
        args.schedule, args.store,
    )
    (cell,) = cells(spec)
    versions = prepare_versions(spec, args.store)
    graph = next(iter(versions.values())).graph
    batched = not args.per_agent and batch_key(spec, cell, versions) is not None
    # smoothing=0: the rate is episodes over the time since the start, not the last burst's
    episodes = bar(args.episodes, args.task, "ep", shown(args), smoothing=0)
    log = RunLog(graph.task_id)
    started = time.perf_counter()
    with blame("--env-param", active=bool(env_params)), blame("--agent-param", active=bool(agent_params)):
        if batched:
            # a batch plays every episode before the first comes out: the bar moves once, at the
            # end (an update per episode would time the first by the whole run: hours of ETA)
            episodes.set_postfix_str("one batch: every episode at once", refresh=True)
            for item in play_cell(spec, cell, versions):
                log.add(item.episode)
            episodes.update(len(log.rewards))
            episodes.set_postfix(reward=f"{sum(log.rewards[-100:]) / len(log.rewards[-100:]):.3f}")
        else:
            for item in play_cell(spec, cell, versions, batched=False):
                episode = item.episode
                log.add(episode)
                episodes.update(1)  # tqdm redraws at most every 0.1 s: no rate from the first episode alone
                if episode.index % 50 == 49:
                    recent = log.rewards[-100:]
                    episodes.set_postfix(reward=f"{sum(recent) / len(recent):.3f}", refresh=False)
    episodes.close()
    log.seconds = time.perf_counter() - started
    summary: dict[str, Any] = {**log.summary(), "agent": args.agent, "seed": args.seed}
    if any(0.0 < p < 1.0 for p in first_transitions(graph).values()):  # the first choice leads on by chance
        stay = stay_probabilities(log, graph)
        summary["stay_probability"] = {k: round(v, 3) for k, v in stay.items() if not math.isnan(v)}
    if args.json:
        print(json.dumps({**summary, "returns": log.rewards, "lengths": log.lengths}, indent=2))
    else:
        for key, value in summary.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for k, v in value.items():
                    print(f"  {k:<20} {v}")
            else:
                print(f"{key:<22} {value}")
    if args.plot:
        plot_run(log, summary, args.plot)
        print(f"plot written to {args.plot}")
    return 0


def run_figure(rewards: list[float], summary: dict) -> Any:
    """The picture `--plot` saves: every episode's reward (dots) and its trailing mean (line)
    from the first episode on, the y axis from 0 (or below, for losses) to the largest reward;
    beside it, for two-step-like tasks, the stay probabilities with zero bars drawn as lines."""
    import numpy as np

    from graphtasks.experiments.figures import require_matplotlib, trailing_mean

    plt = require_matplotlib()
    stay = summary.get("stay_probability")
    fig, axes = plt.subplots(1, 2 if stay else 1, figsize=(11 if stay else 6.5, 4.2), squeeze=False)
    values = np.asarray(rewards, dtype=float)
    window = max(1, min(100, len(values) // 10))
    x = np.arange(1, len(values) + 1)
    ax = axes[0][0]
    ax.plot(x, values, ls="", marker=".", ms=2.5, color="0.65", alpha=0.6, label="each episode", gid="episodes")
    ax.plot(x, trailing_mean(values, window), color="#0072B2", lw=1.6,
            label=f"mean of the last {window} episodes" if window > 1 else "reward", gid="mean")
    ax.set_xlim(0.5, len(values) + 0.5)
    low, high = min(0.0, float(values.min())), max(0.0, float(values.max()))
    pad = 0.04 * ((high - low) or 1.0)
    ax.set_ylim(low - pad, high + pad)
    ax.set_xlabel("episode")
    ax.set_ylabel("reward (total per episode)")
    ax.set_title(f"{summary['task']} - {summary['agent']} agent", fontsize=10)
    ax.grid(alpha=0.25)
    ax.legend(fontsize=8, loc="lower right", frameon=False)
    if stay:
        ax = axes[0][1]
        labels = ["rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare"]
        heights = [stay.get(k, float("nan")) for k in labels]
        colours = ["#3060c0", "#90b0f0", "#c03030", "#f0a0a0"]
        ax.bar(range(4), heights, color=colours, edgecolor=colours, linewidth=1.5, gid="stay")
        for i, height in enumerate(heights):
            if height == 0:
                ax.annotate("0", (i, 0), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=8)
        ax.axhline(0.5, color="0.4", linestyle=":", linewidth=1)
        ax.set_xticks(range(4), ["rew.\ncommon", "rew.\nrare", "unrew.\ncommon", "unrew.\nrare"])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("P(stay with first choice)")
    fig.tight_layout()
    return fig


def plot_run(log, summary: dict, path: str) -> None:
    try:
        fig = run_figure(log.rewards, summary)
    except ImportError:
        raise CommandError("--plot needs matplotlib: pip install 'graphtasks[plot]'") from None
    import matplotlib.pyplot as plt

    picture = io.BytesIO()
    try:
        fig.savefig(picture, dpi=100, format=Path(path).suffix[1:].lower() or "png")
    except ValueError as exc:  # matplotlib names the formats it supports
        raise CommandError(f"--plot {path}: {exc}") from None
    finally:
        plt.close(fig)
    write_output(path, picture.getvalue(), "--plot")
