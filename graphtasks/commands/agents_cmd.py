"""`graphtasks agents`: every agent with its settings, their defaults, the task families it runs
on (those whose envs offer the observation it takes) and its source."""

from __future__ import annotations

import argparse

from .output import add_format_argument, print_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "agents",
        help="list the agents: settings with their defaults, the task families each takes, the paper it comes from",
        description="Every agent `graphtasks run --agent` and experiment specs accept, one row each.",
    )
    add_format_argument(parser)
    parser.set_defaults(func=cmd_agents)


def cmd_agents(args: argparse.Namespace) -> int:
    from gym_bridge.agents.registry import AGENT_INFO, describe_settings

    rows = [
        [i.name, i.summary, describe_settings(i.name), " ".join(i.families()), i.reference] for i in AGENT_INFO.values()
    ]
    print_rows(["agent", "rule", "settings (defaults)", "families", "reference"], rows, args.format)
    return 0
