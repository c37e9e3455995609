"""`graphtasks room baselines|show`: the Room memory task and the paper's baseline table.

`graphtasks room baselines` runs the four handcrafted memory agents over seeds and
capacities and prints the table beside the published figures. The Room task reads its
locations from the store's ConceptNet AtLocation assertions; when the store has none, the
environment loads the bundled snapshot first (said on stderr), as every use of the task
does. `graphtasks run room` is the same command: the `run` group adds it with
`register_run(its subparsers)`.
"""

from __future__ import annotations

import argparse
import json

from graphstore.errors import did_you_mean

from .arguments import MAX_SEED, integer, integers, one_line_errors
from .errors import CommandError

MAX_CAPACITY = 1_000_000  # memory slots of a baseline agent (the paper's go up to 32)
MAX_ROOM_AGENTS = 1000  # agents in one room: the baselines' time grows faster than linearly with them


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("room", help="the Room memory task (RoomEnv-v0) on stored ConceptNet triples")
    sub = group.add_subparsers(dest="room_command", metavar="COMMAND")
    base = sub.add_parser("baselines", help="the paper's handcrafted memory agents: mean total reward per capacity")
    add_baseline_arguments(base)
    base.set_defaults(func=run_baselines)
    show = sub.add_parser("show", help="the room's people, objects and commonsense locations, read from the store")
    show.add_argument("--room-size", choices=["small", "big"], default="small")
    show.set_defaults(func=_show)
    group.set_defaults(func=lambda args: group.print_help() or 2)


def register_run(run_subparsers: argparse._SubParsersAction) -> None:
    """Add `room` under the lead's `graphtasks run` group: `graphtasks run room` = `graphtasks room baselines`."""
    run = run_subparsers.add_parser("room", help="the Room baselines of the paper (handcrafted memory agents)")
    add_baseline_arguments(run)
    run.set_defaults(func=run_baselines)


def add_baseline_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--room-size", choices=["small", "big"], default="small")
    parser.add_argument(
        "--capacities", type=integers(2, MAX_CAPACITY), default="4,8,16,32",
        help=f"comma-separated memory capacities, 2..{MAX_CAPACITY:,} (default 4,8,16,32)",
    )
    parser.add_argument("--seeds", type=integers(0, MAX_SEED), default="0,1,2,3,4",
                        help="comma-separated seeds (default 0-4, as in the paper)")
    parser.add_argument("--agents", default=None, help="comma-separated agent kinds (default: all four)")
    parser.add_argument("--num-agents", type=integer(1, MAX_ROOM_AGENTS), default=1,
                        help=f"agents in the room, 1..{MAX_ROOM_AGENTS} (default 1)")
    parser.add_argument(
        "--reference-noncommonsense",
        action="store_true",
        help="room-env 0.1.5's non-commonsense draw (may pick the commonsense location), as in the paper",
    )
    parser.add_argument("--weighting-mode", choices=["highest", "weighted"], default="highest")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    one_line_errors(parser)


def run_baselines(args: argparse.Namespace) -> int:
    from gym_bridge.room.agents import KINDS, PAPER, baseline_table
    from gym_bridge.room.env import RoomEnv

    capacities, seeds = args.capacities, args.seeds
    kinds = [k.strip() for k in args.agents.split(",")] if args.agents else list(KINDS)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        hint = did_you_mean(unknown[0], KINDS) if len(unknown) == 1 else ""
        raise CommandError(f"--agents: unknown kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}{hint}")
    env = RoomEnv(args.room_size, store=args.store, num_agents=args.num_agents, text_info=False,
                  reference_noncommonsense=args.reference_noncommonsense, weighting_mode=args.weighting_mode)
    table = baseline_table(lambda: env, capacities, seeds, kinds)
    if args.json:
        print(json.dumps({k: {str(c): v for c, v in row.items()} for k, row in table.items()}, indent=2))
        return 0
    mode = "reference non-commonsense draw" if args.reference_noncommonsense else "fixed non-commonsense draw"
    print(f"Room {args.room_size}, {args.num_agents} agent(s), {mode}, mean total reward over seeds {seeds}")
    paper = args.room_size == "small" and args.num_agents == 1 and args.weighting_mode == "highest"
    print(f"{'agent':28s}" + "".join(f"{c:>18d}" for c in capacities))
    for kind, row in table.items():
        cells = []
        for c in capacities:
            ref = PAPER.get(kind, {}).get(c) if paper else None
            cells.append(f"{row[c]:8.1f} ({ref:6.1f})" if ref is not None else f"{row[c]:18.1f}")
        print(f"{kind:28s}" + "".join(f"{x:>18s}" for x in cells))
    if paper:
        print("(in brackets: the paper's figures, arXiv 2204.01611)")
    return 0


def _show(args: argparse.Namespace) -> int:
    from gym_bridge.room.env import RoomEnv

    env = RoomEnv(args.room_size, store=args.store)
    print(f"{env.task_id}: {len(env.names)} people, {len(env.heads)} objects, {len(env.tails)} locations")
    print("people: " + ", ".join(env.names[: env.n_slots]))
    for head, cs in zip(env.heads, env.knowledge.commonsense):
        print(
            f"  {head}: " + ", ".join(f"{env.tails[t]} ({w:.2f})" for t, w in cs[:5]) + (" ..." if len(cs) > 5 else "")
        )
    return 0
