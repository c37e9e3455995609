"""`graphtasks room ...`: the Room memory task (filled in below)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    subparsers.add_parser("room", help="the Room memory task: baselines of the paper")
