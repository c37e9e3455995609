"""`graphtasks experiment check|run SPEC`: check an experiment spec, or run its sweep in parallel
and print the mean return per task, agent setting and phase (every episode with --output)."""

from __future__ import annotations

import argparse
import csv
import io

from tqdm import tqdm

from graphtasks.experiments import COLUMNS, cells, load_spec, run_experiment, summary

from .errors import CommandError
from .files import write_output
from .output import add_format_argument, print_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("experiment", help="check or run an experiment spec (TOML)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check a spec file and list the runs it makes")
    check.add_argument("spec", help="the spec file (TOML), e.g. data/experiments/russek2017-reward-transfer.toml")
    check.set_defaults(func=cmd_check)
    run = actions.add_parser("run", help="run every task x agent x seed through the phases")
    run.add_argument("spec", help="the spec file (TOML)")
    run.add_argument("--workers", type=int, default=None, help="processes (default: the number of cores)")
    run.add_argument("-o", "--output", metavar="FILE.csv", help="write one row per episode (CSV)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_format_argument(run)
    run.set_defaults(func=cmd_run)


def cmd_check(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    runs = cells(spec)
    episodes = sum(p.episodes for p in spec.phases)
    print(
        f"{spec.name}: {len(spec.tasks)} task(s) x {len(spec.agents)} agent setting(s) x {len(spec.seeds)} seed(s)"
        f" = {len(runs)} runs of {len(spec.phases)} phase(s), {episodes} episodes each"
    )
    for phase in spec.phases:
        for task in spec.tasks:
            print(
                f"  {phase.name}: {phase.episodes} episodes on {phase.task_id(task)}"
                + ("" if phase.learn else " (test: no learning)")
            )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers: expected a positive number, got {args.workers}")
    spec = load_spec(args.spec)
    todo = cells(spec)
    bar = tqdm(total=len(todo), desc=spec.name, unit="run", disable=args.no_progress, leave=False)
    result = run_experiment(spec, workers=args.workers, on_cell=lambda cell: bar.update(1))
    bar.close()
    if args.output:
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(result.rows)
        write_output(args.output, text.getvalue())
    table = summary(result.rows)
    columns = ["task", "agent", "phase", "episodes", "mean_return", "mean_length"]
    print_rows(columns, [[row[c] for c in columns] for row in table], args.format)
    for cell, error in result.failures:
        print(f"graphtasks: error: run {cell.index} ({cell.task}, {cell.agent.label}, seed {cell.seed}): {error}")
    return 1 if result.failures else 0
