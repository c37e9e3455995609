"""`graphtasks reproduce NAME`: run a published result's experiment from scratch and check it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .extras import require_plotting
from .output import print_rows
from .progress import add_no_progress, bar
from .progress import shown as progress_shown


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="reproduce a published result: run its experiment, draw its figure, check the paper's findings",
        description=(
            "Runs the shipped experiment spec NAME into a new embedded store (or the global --store), "
            "writes DIR/NAME.png and prints each check: the measured value, the paper's finding and pass/fail. "
            "Exit code 1 if a check fails. Without NAME: the reproductions there are."
        ),
    )
    parser.add_argument("name", nargs="?", help="the reproduction (omit to list them)")
    parser.add_argument("--all", action="store_true",
                        help="run every reproduction, --jobs at once; their outcomes print in order")
    parser.add_argument("--seeds", type=int, help="runs per agent and condition (default: the spec's)")
    parser.add_argument("-o", "--output", default=".", metavar="DIR", help="where the figure goes (default: .)")
    parser.add_argument("--workers", type=int,
                        help="worker processes of a reproduction's runs (default: one per core; with --all "
                             "and --jobs above 1, 1: the reproduction's process plays them)")
    parser.add_argument("--jobs", type=int,
                        help="with --all: reproductions run at once, each in a process of its own (default: one "
                             "per core; with the global --store, 1)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument("--no-figure", action="store_true", help="check only, draw nothing")
    add_no_progress(parser, "no progress bars (of runs, and of reproductions with --all)")
    parser.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from graphtasks.experiments.reproduce import REPRODUCTIONS, ReproductionError, reproduce_all

    if args.name is None and not args.all:
        rows = [[r.name, r.title, r.reference] for r in REPRODUCTIONS.values()]
        print_rows(["reproduction", "result", "reference"], rows, "table")
        return 0
    if args.all and args.name:
        raise ReproductionError("give a reproduction's name or --all, not both")
    if args.jobs is not None and not args.all:
        raise ReproductionError("--jobs: give --all too (one reproduction runs in this process)")
    if not args.no_figure:
        require_plotting("reproduce (its figure; --no-figure checks the findings without one)")
    from graphtasks.experiments.observers import ProgressObserver

    names = list(REPRODUCTIONS) if args.all else [args.name]
    jobs = args.jobs if args.all else 1
    outcomes = []
    show = progress_shown(args)
    # reproductions end in their order (side by side, each waits for those before): the average rate
    overall = bar(len(names), "reproductions", "reproduction", show and args.all, position=0, smoothing=0)

    def started(name: str) -> None:
        overall.set_postfix_str(name)
        known = REPRODUCTIONS.get(name)
        if known is not None and known.study is not None and show:  # a study runs in its process
            overall.write(f"{name}: running the study ({known.title})", file=sys.stderr)

    def observers(name: str) -> list[Any]:
        return [ProgressObserver(name, disable=not show)]

    for outcome in reproduce_all(names, args.seeds, args.output, args.store, args.workers, not args.no_figure,
                                 jobs, observers, started):
        outcomes.append(outcome)
        overall.update()
        if not args.json:
            with overall.external_write_mode(file=sys.stdout):  # the bar is cleared, then drawn again below
                _print_outcome(outcome)
    overall.close()
    if args.json:
        shown = [o.as_dict() for o in outcomes]
        print(json.dumps(shown if args.all else shown[0], indent=2))
    elif args.all:
        failed = [o.reproduction.name for o in outcomes if not o.passed]
        print(f"{len(outcomes)} reproductions: {len(outcomes) - len(failed)} passed"
              + (f", failed: {', '.join(failed)}" if failed else ""))
    return 0 if all(o.passed for o in outcomes) else 1


def _print_outcome(outcome: Any) -> None:
    print(
        f"{outcome.reproduction.name}: {outcome.reproduction.title} ({outcome.reproduction.reference}), "
        f"{outcome.seeds} seeds"
    )
    rows = [[c.name, f"{c.measured:g}", c.finding, "pass" if c.passed else "FAIL"] for c in outcome.checks]
    print_rows(["check", "measured", "paper", "result"], rows, "table")
    if outcome.figure:
        print(f"figure: {outcome.figure}")
    print()
