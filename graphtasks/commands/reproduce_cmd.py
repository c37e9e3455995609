"""`graphtasks reproduce NAME`: run a published result's experiment from scratch and check it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .extras import require_plotting
from .output import print_rows


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
    parser.add_argument("--all", action="store_true", help="run every reproduction, one after another")
    parser.add_argument("--seeds", type=int, help="runs per agent and condition (default: the spec's)")
    parser.add_argument("-o", "--output", default=".", metavar="DIR", help="where the figure goes (default: .)")
    parser.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument("--no-figure", action="store_true", help="check only, draw nothing")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (of runs, and of reproductions with --all)")
    parser.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from graphtasks.experiments.reproduce import REPRODUCTIONS, ReproductionError, reproduce

    if args.name is None and not args.all:
        rows = [[r.name, r.title, r.reference] for r in REPRODUCTIONS.values()]
        print_rows(["reproduction", "result", "reference"], rows, "table")
        return 0
    if args.all and args.name:
        raise ReproductionError("give a reproduction's name or --all, not both")
    if not args.no_figure:
        require_plotting("reproduce (its figure; --no-figure checks the findings without one)")
    from tqdm.auto import tqdm

    from graphtasks.experiments.observers import ProgressObserver

    names = list(REPRODUCTIONS) if args.all else [args.name]
    outcomes = []
    overall = tqdm(names, desc="reproductions", unit="reproduction", disable=args.no_progress or not args.all,
                   leave=False, position=0)
    for name in overall:
        overall.set_postfix_str(name)
        known = REPRODUCTIONS.get(name)  # an unknown name: reproduce() says so, in one line
        if known is not None and known.study is not None and not args.no_progress:  # a study runs in this process
            tqdm.write(f"{name}: running the study ({known.title})", file=sys.stderr)
        runs = ProgressObserver(name, disable=args.no_progress)
        outcome = reproduce(name, args.seeds, args.output, args.store, args.workers, not args.no_figure, [runs])
        outcomes.append(outcome)
        if not args.json:
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
