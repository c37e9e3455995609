"""`graphtasks agents`: every reference agent with its settings, their defaults and its source."""

from __future__ import annotations

import argparse

from .output import add_format_argument, print_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "agents",
        help="list the reference agents: settings with their defaults, and the paper each comes from",
        description="Every agent `graphtasks run --agent` and experiment specs accept, one row each.",
    )
    add_format_argument(parser)
    parser.set_defaults(func=cmd_agents)


def cmd_agents(args: argparse.Namespace) -> int:
    from gym_bridge.agents.registry import AGENT_INFO, describe_settings

    rows = [[i.name, i.summary, describe_settings(i.name), i.reference] for i in AGENT_INFO.values()]
    print_rows(["agent", "rule", "settings (defaults)", "reference"], rows, args.format)
    return 0
