"""`graphtasks run TASK --agent q --episodes N --seed S`: train a reference agent, show progress
and a summary (with the two-step stay analysis where it applies), optionally plot."""

from __future__ import annotations

import argparse
import io
import json
import math
from pathlib import Path
from typing import Any

from tqdm import tqdm

from gym_bridge import make_env
from gym_bridge.agents import AGENTS, AgentSettingError, check_agent_settings
from gym_bridge.graph.env import GraphTaskEnv
from gym_bridge.runner import action_count, agent_state_count, run_episodes, stay_probabilities

from .errors import CommandError, blame
from .files import write_output
from .output import parse_params


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="run a reference agent on a task")
    parser.add_argument("task", help="task id, e.g. rewardgym/two-step")
    parser.add_argument("--agent", choices=sorted(AGENTS), default="q")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--schedule", action="store_true", help="play the task's trial schedule (block structure)")
    parser.add_argument("--agent-param", action="append", metavar="KEY=VALUE", help="agent setting, e.g. beta=3")
    parser.add_argument(
        "--env-param", action="append", metavar="KEY=VALUE", help="environment setting, e.g. time_penalty=0.01"
    )
    parser.add_argument("--plot", metavar="FILE.png", help="save a learning curve (needs matplotlib)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=cmd_run)


def agent_params(agent: str, items: list[str] | None) -> dict[str, Any]:
    """--agent-param values checked against the agent's settings: known names, numbers for numbers."""
    params = parse_params(items, "--agent-param")
    for key, value in params.items():
        try:
            check_agent_settings(agent, {key: value})
        except AgentSettingError as exc:
            raise CommandError(f"--agent-param {key}: {exc}") from None
    return params


def cmd_run(args: argparse.Namespace) -> int:
    env_params = parse_params(args.env_param, "--env-param")
    chosen_agent = agent_params(args.agent, args.agent_param)  # checked before the env is built
    with blame("--env-param", active=bool(env_params)):
        env = make_env(args.task, store=args.store, **env_params)
    n_states = agent_state_count(env)
    with blame("--agent-param", active=bool(chosen_agent)):
        agent = AGENTS[args.agent](n_states, action_count(env), seed=args.seed, **chosen_agent)
    bar = tqdm(total=args.episodes, desc=args.task, unit="ep", disable=args.no_progress, leave=False)

    def tick(episode: int, log) -> None:
        bar.update(1)
        if episode % 50 == 0:
            bar.set_postfix(reward=f"{sum(log.rewards[-100:]) / len(log.rewards[-100:]):.3f}")

    log = run_episodes(env, agent, args.episodes, seed=args.seed, schedule=args.schedule, on_episode=tick)
    bar.close()
    summary = log.summary()
    summary["agent"] = args.agent
    if isinstance(env, GraphTaskEnv) and (env.compiled.probs[env.compiled.start] % 1.0 > 0).any():
        stay = stay_probabilities(log, env)
        summary["stay_probability"] = {k: round(v, 3) for k, v in stay.items() if not math.isnan(v)}
    if args.json:
        print(json.dumps(summary, indent=2))
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


def plot_run(log, summary: dict, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError("--plot needs matplotlib: pip install 'graphtasks[plot]'") from None
    import numpy as np

    stay = summary.get("stay_probability")
    fig, axes = plt.subplots(1, 2 if stay else 1, figsize=(10 if stay else 6, 4), squeeze=False)
    rewards = np.asarray(log.rewards)
    window = max(1, min(100, len(rewards) // 10))
    smooth = np.convolve(rewards, np.ones(window) / window, mode="valid")
    ax = axes[0][0]
    ax.plot(np.arange(len(smooth)) + window, smooth)
    ax.set_xlabel("episode")
    ax.set_ylabel(f"reward (moving mean over {window})")
    ax.set_title(f"{summary['task']} - {summary['agent']} agent")
    if stay:
        ax = axes[0][1]
        labels = ["rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare"]
        values = [stay.get(k, float("nan")) for k in labels]
        ax.bar(range(4), values, color=["#3060c0", "#90b0f0", "#c03030", "#f0a0a0"])
        ax.set_xticks(range(4), ["rew.\ncommon", "rew.\nrare", "unrew.\ncommon", "unrew.\nrare"])
        ax.set_ylim(0, 1)
        ax.set_ylabel("P(stay with first choice)")
    fig.tight_layout()
    picture = io.BytesIO()
    try:
        fig.savefig(picture, dpi=100, format=Path(path).suffix[1:].lower() or "png")
    except ValueError as exc:  # matplotlib names the formats it supports
        raise CommandError(f"--plot {path}: {exc}") from None
    finally:
        plt.close(fig)
    write_output(path, picture.getvalue(), "--plot")
