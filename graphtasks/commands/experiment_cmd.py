"""`graphtasks experiment check|run|list|export`: check an experiment spec; run its sweep in
parallel, recording every finished run in the store (a re-run resumes); list the recorded
experiments; export one as a table, one row per episode."""

from __future__ import annotations

import argparse
import csv
import io

from tqdm import tqdm

from graphstore import open_store
from graphtasks.experiments import COLUMNS, cells, load_spec, run_experiment, summary, task_versions
from graphtasks.experiments.records import (
    RunRecorder,
    finished_runs,
    record_experiment,
    record_tasks,
    recorded_episodes,
    recorded_experiments,
)
from graphtasks.experiments.spec import shipped_specs, spec_path

from .errors import CommandError
from .files import write_output
from .output import add_format_argument, print_rows

KINDS = ("auto", "curves", "stay", "revaluation")  # graphtasks.experiments.figures.KINDS, without importing numpy here
FIGURES = {"curves": "learning curves", "stay": "stay probabilities", "revaluation": "revaluation scores"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("experiment", help="check or run an experiment spec (TOML)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check a spec file and list the runs it makes")
    check.add_argument("spec", help="the spec file (TOML), e.g. data/experiments/russek2017-reward-transfer.toml")
    check.set_defaults(func=cmd_check)
    run = actions.add_parser("run", help="run every task x agent x seed through the phases")
    run.add_argument("spec", help="the spec file (TOML), or a shipped spec by name")
    run.add_argument("--workers", type=int, default=None, help="processes (default: the number of cores)")
    run.add_argument(
        "--dask", metavar="ADDRESS", help="run on a Dask cluster: its scheduler (tcp://host:8786) or 'local'"
    )
    run.add_argument("-o", "--output", metavar="FILE.csv", help="write one row per episode (CSV)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_format_argument(run)
    run.set_defaults(func=cmd_run)
    specs = actions.add_parser("specs", help="the spec files that ship with graphtasks (run them by name)")
    specs.set_defaults(func=cmd_specs)
    listing = actions.add_parser("list", help="the experiments recorded in the store")
    add_format_argument(listing)
    listing.set_defaults(func=cmd_list)
    plot = actions.add_parser(
        "plot", help="a recorded experiment's figure (PNG): learning curves, stay or revaluation bars"
    )
    plot.add_argument("name", help="the experiment's name")
    plot.add_argument("-o", "--output", metavar="FILE.png", required=True, help="the picture to write")
    plot.add_argument("--metric", choices=["return", "length"], default="return")
    plot.add_argument("--smooth", type=int, default=1, help="mean over the last N episodes (default 1: none)")
    plot.add_argument(
        "--kind",
        choices=KINDS,
        default="auto",
        help="auto (default): revaluation bars for probed phases, stay bars for two-step, else learning curves",
    )
    plot.set_defaults(func=cmd_plot)
    export = actions.add_parser("export", help="one row per recorded episode of an experiment (CSV)")
    export.add_argument("name", help="the experiment's name")
    export.add_argument("-o", "--output", metavar="FILE.csv", help="write to a file (default: print)")
    export.set_defaults(func=cmd_export)


def cmd_check(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    runs = cells(spec)
    episodes = sum(p.episodes for p in spec.phases)
    print(
        f"{spec.name}: {len(spec.tasks)} task(s) x {len(spec.agents)} agent setting(s) x {len(spec.seeds)} seed(s)"
        + (f" x {len(spec.conditions)} condition(s)" if spec.conditions else "")
        + f" = {len(runs)} runs of {len(spec.phases)} phase(s), {episodes} episodes each"
    )
    for condition in spec.condition_names():
        if condition:
            print(f"condition {condition}:")
        for phase in spec.phases_of(condition):
            for task in spec.tasks:
                print(
                    f"  {phase.name}: {phase.episodes} episodes on {phase.task_id(task)}"
                    + ("" if phase.learn else " (test: no learning)")
                    + (f", probe {[list(o) for o in phase.probe]}" if phase.probe else "")
                )
    return 0


def _csv(rows: list[dict]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue()


def cmd_run(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers: expected a positive number, got {args.workers}")
    spec = load_spec(args.spec)
    text = spec_path(args.spec).read_text(encoding="utf-8")
    if args.dask is not None:
        try:
            import distributed  # noqa: F401  (reported before anything runs)
        except ImportError:
            raise CommandError("--dask needs the dask extra: pip install 'graphtasks[dask]'") from None
    with open_store(args.store, "w") as store:  # the store is held only while writing
        record_experiment(store, spec, text)
        record_tasks(store, task_versions(spec))
        done = finished_runs(store, spec)
    todo = [cell for cell in cells(spec) if cell.index not in done]
    if done:
        print(f"{spec.name}: {len(done)} run(s) already recorded, {len(todo)} to go")
    bar = tqdm(total=len(todo), desc=spec.name, unit="run", disable=args.no_progress, leave=False)
    recorder = RunRecorder(args.store, spec)

    def record(cell, rows, error, started) -> None:
        recorder.add(cell, rows, error, started)
        bar.update(1)

    try:
        result = run_experiment(spec, workers=args.workers, skip=done, on_result=record, dask=args.dask)
    finally:
        recorder.flush()  # what finished is kept, also when the sweep is interrupted
        bar.close()
    with open_store(args.store, "r") as store:
        rows = recorded_episodes(store, spec.name)
    if args.output:
        write_output(args.output, _csv(rows))
    table = summary(rows)
    columns = ["task", "agent", "phase", "episodes", "mean_return", "mean_length"]
    if spec.conditions:
        columns.insert(2, "condition")
    print_rows(columns, [[row[c] for c in columns] for row in table], args.format)
    for cell, error in result.failures:
        print(f"graphtasks: error: run {cell.index} ({cell.task}, {cell.agent.label}, seed {cell.seed}): {error}")
    return 1 if result.failures else 0


def cmd_specs(args: argparse.Namespace) -> int:
    for name, path in shipped_specs().items():
        spec = load_spec(path)
        print(f"{name:<32} {spec.description} ({spec.reference})")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        rows = recorded_experiments(store)
    columns = ["experiment", "created_at", "runs", "done"]
    print_rows(columns, [[row[c] for c in columns] for row in rows], args.format)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from graphtasks.experiments.figures import plot_experiment, require_matplotlib

    try:
        require_matplotlib()  # before reading anything
    except ImportError as exc:
        raise CommandError(str(exc)) from None
    if args.smooth < 1:
        raise CommandError(f"--smooth: expected a positive number of episodes, got {args.smooth}")
    _recorded(args)  # a clear line for an unknown experiment
    picture = io.BytesIO()
    with open_store(args.store, "r") as store:
        try:
            kind = plot_experiment(store, args.name, picture, args.kind, args.metric, args.smooth)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    write_output(args.output, picture.getvalue())
    print(f"{FIGURES[kind]} written to {args.output}")
    return 0


def _recorded(args: argparse.Namespace) -> list[dict]:
    with open_store(args.store, "r") as store:
        rows = recorded_episodes(store, args.name)
        if not rows:
            names = [row["experiment"] for row in recorded_experiments(store)]
            raise CommandError(
                f"no recorded episodes of experiment {args.name!r}; recorded: {', '.join(names) or 'none'}"
            )
    return rows


def cmd_export(args: argparse.Namespace) -> int:
    rows = _recorded(args)
    if args.output:
        write_output(args.output, _csv(rows))
    else:
        print(_csv(rows), end="")
    return 0
