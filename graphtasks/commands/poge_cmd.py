"""`graphtasks poge ...`: load POGE world files into the store, show them back, print statistics."""

from __future__ import annotations

import argparse
import json

from .errors import blame


def register(subparsers: argparse._SubParsersAction) -> None:
    poge = subparsers.add_parser("poge", help="POGE gridworld files (load, show, stats)")
    sub = poge.add_subparsers(dest="poge_command", metavar="POGE_COMMAND", required=True)
    load = sub.add_parser("load", help="parse a world file and store it as a tile graph")
    load.add_argument("file", help="world file (===Layout=== ...)")
    load.add_argument("--id", default=None, help="task id to store it under (default: user/poge/<file stem>)")
    load.set_defaults(func=_load)
    show = sub.add_parser("show", help="write a stored world back as world-file text")
    show.add_argument("task", help="stored world id, e.g. poge/world1 or user/poge/myworld")
    show.set_defaults(func=_show)
    stats = sub.add_parser("stats", help="parsed statistics of a world file or a stored world")
    stats.add_argument("world", help="world file path or stored world id")
    stats.set_defaults(func=_stats)


def _load(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from tasks.poge import build_from_world_file

    graph = build_from_world_file(args.file, args.id)  # parse and validate before the store is opened
    with open_store(args.store, "w") as store:
        changed = store.put(graph)
    state = "stored" if changed else "unchanged (same content already stored)"
    print(f"{graph.task_id}: {state}; {graph.count('Tile')} tiles, {graph.task['n_states']} floor states")
    return 0


def _stored_world(task_id: str, location: str | None):
    from gym_bridge.poge.env import load_world_graph
    from tasks.poge import graph_to_world

    return graph_to_world(load_world_graph(task_id, location))


def _show(args: argparse.Namespace) -> int:
    from tasks.poge import write_world

    with blame("poge show"):  # a world that cannot be loaded is the argument's fault, not a bug
        world = _stored_world(args.task, args.store)
    print(write_world(world), end="")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from tasks.poge import statistics

    with blame("poge stats"):
        world = _stored_world(args.world, args.store)
    for key, value in statistics(world).items():
        print(f"{key}: {json.dumps(value)}")
    return 0
