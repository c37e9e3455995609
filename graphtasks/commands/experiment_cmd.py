"""`graphtasks experiment specs|check|run|list|show|plot|export|delete`: check an experiment
spec; run its sweep in parallel, recording every finished run in the store (a re-run
resumes); list, show, draw, export or delete the recorded experiments."""

from __future__ import annotations

import argparse
import io
import json
from typing import Any, Callable, TypeVar

from graphstore import StoreMissingError, did_you_mean, open_store
from graphtasks.experiments import COLUMNS, cells, load_spec
from graphtasks.experiments.api import UnknownExperiment, delete_records, describe, run_and_record
from graphtasks.experiments.records import recorded_episodes, recorded_experiments
from graphtasks.experiments.spec import shipped_specs, spec_path

from .errors import CommandError
from .files import write_output
from .lookups import MOST_LISTED, recorded_names, require_experiment, unknown_experiment
from .output import add_format_argument, print_rows
from .progress import add_no_progress, bar
from .progress import shown as progress_shown

# graphtasks.experiments.figures.KINDS, without importing numpy here
KINDS = ("auto", "curves", "stay", "revaluation", "choices", "test")
T = TypeVar("T")
FIGURES = {"curves": "learning curves", "stay": "stay probabilities", "revaluation": "revaluation scores",
           "choices": "test-phase choices", "test": "test-phase returns"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("experiment", help="check or run an experiment spec (TOML)")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check a spec file and list the runs it makes")
    check.add_argument(
        "spec", help="the spec file (TOML), a shipped spec by name, or the name of an experiment recorded in the store"
    )
    check.set_defaults(func=cmd_check)
    run = actions.add_parser("run", help="run every task x agent x seed through the phases")
    run.add_argument(
        "spec", help="the spec file (TOML), a shipped spec by name, or a recorded experiment's name (resumes it)"
    )
    run.add_argument("--workers", type=int, default=None, help="processes (default: the number of cores)")
    run.add_argument(
        "--dask", metavar="ADDRESS", help="run on a Dask cluster: its scheduler (tcp://host:8786) or 'local'"
    )
    run.add_argument("-o", "--output", metavar="FILE.csv", help="write one row per episode (CSV)")
    run.add_argument("--plot", metavar="FILE.png", help="then draw the experiment's figure (as experiment plot)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--bids", metavar="DIR", help="also write each run into the BIDS dataset in DIR as it ends")
    run.add_argument("--trial-duration", type=float, metavar="SECONDS",
                     help="with --bids: how long each trial lasts (agents' runs have no clock; BIDS onsets are s)")
    run.add_argument(
        "--per-agent", action="store_true",
        help="play every run per agent, not as lanes of batched agents (slower; other random streams)",
    )
    add_format_argument(run)
    run.set_defaults(func=cmd_run)
    specs = actions.add_parser("specs", help="the spec files that ship with graphtasks (run them by name)")
    specs.set_defaults(func=cmd_specs)
    listing = actions.add_parser("list", help="the experiments recorded in the store")
    add_format_argument(listing)
    listing.set_defaults(func=cmd_list)
    show = actions.add_parser("show", help="a recorded experiment: phases, runs by status, task versions")
    show.add_argument("name", help="the experiment's name")
    add_format_argument(show)
    show.set_defaults(func=cmd_show)
    delete = actions.add_parser("delete", help="delete a recorded experiment and all its records")
    delete.add_argument("name", help="the experiment's name")
    delete.add_argument("--force", action="store_true", help="delete it even while a driver runs it (the driver stops)")
    delete.set_defaults(func=cmd_delete)
    plot = actions.add_parser(
        "plot", help="a recorded experiment's figure (PNG), one panel per task and condition: learning curves, "
        "stay, revaluation, test-phase choice or return bars"
    )
    plot.add_argument("name", help="the experiment's name")
    plot.add_argument("-o", "--output", metavar="FILE.png", required=True, help="the picture to write")
    plot.add_argument("--metric", choices=["return", "length"], default="return")
    plot.add_argument("--smooth", type=int, default=1,
                      help="mean over the last N episodes, restarted at each phase (default 1: none)")
    plot.add_argument(
        "--kind",
        choices=KINDS,
        default="auto",
        help="auto (default): revaluation bars for probed phases, stay bars when every task is two-step-like, "
        "else learning curves; stay: two-step-like tasks only; choices: first choices in test phases "
        "(learn = false); test: returns in test phases",
    )
    plot.add_argument("--task", action="append", default=[], metavar="TASK",
                      help="only this task (repeatable; default: every task, a panel each)")
    plot.add_argument("--condition", action="append", default=[], metavar="NAME",
                      help="only this condition (repeatable; default: every condition, a panel each)")
    plot.add_argument("--columns", type=int, default=None, metavar="N",
                      help="panels side by side before the grid wraps (default: up to 3)")
    plot.set_defaults(func=cmd_plot)
    export = actions.add_parser(
        "export", help="a recorded experiment as a table (one row per episode or trial), its records as Turtle, "
        "or its provenance as W3C PROV-O"
    )
    export.add_argument("name", help="the experiment's name")
    export.add_argument(
        "--format",
        choices=["csv", "parquet", "turtle", "prov"],
        default="csv",
        help="csv (default) or parquet: a table; turtle: the records' RDF view; prov: W3C PROV-O (Turtle)",
    )
    export.add_argument("--trials", action="store_true", help="one row per recorded trial (step)")
    export.add_argument("-o", "--output", metavar="FILE", help="write to a file (default: print; csv only)")
    export.add_argument(
        "--bids", metavar="DIR", help="write the trials as a BIDS dataset into DIR (one subject per run, beh events)"
    )
    export.add_argument("--psychds", metavar="DIR", help="write the trials as a Psych-DS dataset into DIR "
                        "(data/study-<name>_data.csv and its dataset_description.json)")
    export.add_argument("--trial-duration", type=float, metavar="SECONDS",
                        help="with --bids: how long each trial of a run without recorded times lasts (agents' runs)")
    add_no_progress(export, "no progress bar (of the records added to the RDF view, with --format turtle)")
    export.set_defaults(func=cmd_export)
    migrate = actions.add_parser(
        "migrate", help="rewrite the record ids of experiments recorded by an earlier version (names with / or %%)"
    )
    migrate.set_defaults(func=cmd_migrate)


def cmd_check(args: argparse.Namespace) -> int:
    spec, _ = _spec_and_text(args.spec, args.store)
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
                    + (f", agent {phase.agent}" if phase.agent else "")
                    + (f", probe {[list(o) for o in phase.probe]}" if phase.probe else "")
                )
    return 0


def _require_plotting() -> None:
    from graphtasks.experiments.figures import require_matplotlib

    try:
        require_matplotlib()
    except ImportError as exc:
        raise CommandError(str(exc)) from None


def _bids_observer(folder: str, trial_duration: float | None, name: str) -> Any:
    """The observer of `run --bids`, its folder and trial duration checked before the sweep."""
    from graphtasks.experiments.export import BidsDatasetObserver, ExportError, bids_dataset_check

    if trial_duration is None:
        raise CommandError("--bids: agents' runs record no times and BIDS onsets are seconds: give --trial-duration "
                           "SECONDS (how long each trial lasts)")
    try:
        bids_dataset_check(folder, name)
        return BidsDatasetObserver(folder, trial_duration)
    except ExportError as exc:
        raise CommandError(str(exc)) from None


def cmd_run(args: argparse.Namespace) -> int:
    from graphtasks.experiments.observers import ProgressObserver, RunObserver

    if args.workers is not None and args.workers < 1:
        raise CommandError(f"--workers: expected a positive number, got {args.workers}")
    spec, text = _spec_and_text(args.spec, args.store)
    if args.dask is not None:
        try:
            import distributed  # noqa: F401  (reported before anything runs)
        except ImportError:
            raise CommandError("--dask needs the dask extra: pip install 'graphtasks[dask]'") from None
    if args.plot:
        _require_plotting()  # a missing extra is reported before the sweep, not after it
    observers: list[RunObserver] = [ProgressObserver(spec.name, disable=not progress_shown(args))]
    if args.bids:
        observers.append(_bids_observer(args.bids, args.trial_duration, spec.name))
    elif args.trial_duration is not None:
        raise CommandError("--trial-duration: only with --bids DIR")
    try:
        report = run_and_record(spec, text, args.store, args.workers, args.dask, observers, not args.per_agent)
    except KeyboardInterrupt:
        raise CommandError(
            f"{spec.name}: interrupted; the finished runs are recorded, run the same command to go on"
        ) from None
    if args.output:
        write_output(args.output, _table(report.rows, COLUMNS, "csv"))
    table = report.summary
    columns = ["task", "agent", "phase", "episodes", "mean_return", "mean_length"]
    if spec.conditions:
        columns.insert(2, "condition")
    print_rows(columns, [[row[c] for c in columns] for row in table], args.format)
    if report.ran:
        per_agent = report.ran - report.batched
        print(f"{report.ran} runs: {report.batched} as lanes of batched agents, {per_agent} per agent")
    for cell, error in report.failures:
        print(f"graphtasks: error: run {cell.index} ({cell.task}, {cell.agent.label}, seed {cell.seed}): {error}")
    if args.plot:
        _plot(args.store, spec.name, args.plot, "auto", "return", 1)
    return 1 if report.failures else 0


def _spec_and_text(name: str, store: str | None) -> tuple[Any, str]:
    """A spec file or shipped spec by name, else the spec of the experiment `name` recorded in
    the store (so a recorded experiment can be checked and resumed from its store alone)."""
    from graphtasks.experiments.spec import ExperimentSpecError, parse_spec

    try:
        path = spec_path(name)
    except ExperimentSpecError:
        path = None
    if path is not None and path.exists():
        return load_spec(path, store), path.read_text(encoding="utf-8")
    recorded: list[str] = []
    try:
        with open_store(store, "r") as opened:
            rows = opened.cypher("MATCH (x:Experiment) WHERE x.name = $name RETURN x.spec", {"name": name}).rows
            if not rows:
                recorded = recorded_names(opened)
    except StoreMissingError:
        rows = []
    if not rows and path is None:  # a name, not a file
        shipped = list(shipped_specs())
        raise CommandError(
            f"{name}: no such file, shipped spec or recorded experiment{did_you_mean(name, shipped + recorded)} "
            f"(shipped: {', '.join(shipped)}; recorded: {', '.join(recorded[:MOST_LISTED]) or 'none'}"
            + (", ...)" if len(recorded) > MOST_LISTED else ")")
        )
    if not rows:
        load_spec(name, store)  # the error for a missing file
    text = rows[0][0]
    return parse_spec(text, f"experiment {name!r} recorded in the store", store), text


def cmd_specs(args: argparse.Namespace) -> int:
    for name, path in shipped_specs().items():
        spec = load_spec(path)
        print(f"{name:<32} {spec.description} ({spec.reference})")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        rows = recorded_experiments(store)
    columns = ["experiment", "created_at", "runs", "completed"]
    print_rows(columns, [[row[c] for c in columns] for row in rows], args.format)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        info = _known(store, args.name, lambda: describe(store, args.name))
    print(f"{info['name']}: {info['description']}")
    if info["reference"]:
        print(f"reference: {info['reference']}")
    print(f"recorded: {info['created_at']}")
    print()
    phase_columns = ["condition", "index", "name", "episodes", "learn", "changes"]
    for phase in info["phases"]:
        phase["changes"] = json.dumps(json.loads(phase["changes"]) if isinstance(phase["changes"], str)
                                      else phase["changes"], sort_keys=True) if phase["changes"] else ""
        phase["condition"] = phase["condition"] or ""
    print_rows(phase_columns, [[p[c] for c in phase_columns] for p in info["phases"]], args.format)
    print()
    for run in info["runs"]:
        run["condition"] = run["condition"] or ""
    print_rows(["agent", "condition", "status", "runs"],
               [[r[c] for c in ("agent", "condition", "status", "runs")] for r in info["runs"]], args.format)
    print()
    version_columns = ["task_version", "task_hash", "episodes"]
    print_rows(version_columns, [[v[c] for c in version_columns] for v in info["task_versions"]], args.format)
    for failed in info["failed"]:
        print(f"run {failed['run']} ({failed['agent']}, seed {failed['seed']}) {failed['status']}: {failed['error']}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with open_store(args.store, "w") as store:
        counts = _known(store, args.name, lambda: delete_records(store, args.name, args.force))
    print(
        f"deleted experiment {args.name!r}: {counts.get('Run', 0)} runs, {counts.get('Episode', 0)} episodes, "
        f"{counts.get('Trial', 0)} trials, {counts.get('Probe', 0)} probes (the task versions stay)"
    )
    return 0


def _known(store: Any, name: str, read: Callable[[], T]) -> T:
    """`read()`, with an unknown experiment reported as one line naming the nearest."""
    try:
        return read()
    except UnknownExperiment:
        raise CommandError(unknown_experiment(name, recorded_names(store))) from None


def _plot(store_location: str | None, name: str, output: str, kind: str, metric: str, smooth: int,
          tasks: tuple[str, ...] = (), conditions: tuple[str, ...] = (), columns: int | None = None) -> None:
    from graphtasks.experiments.figures import plot_experiment

    picture = io.BytesIO()
    notes: list[str] = []
    with open_store(store_location, "r") as store:
        require_experiment(store, name)
        try:
            drawn = plot_experiment(store, name, picture, kind, metric, smooth, tasks, conditions, columns, notes)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
    write_output(output, picture.getvalue())
    print(f"{FIGURES[drawn]} written to {output}")
    for note in notes:
        print(note)


def cmd_plot(args: argparse.Namespace) -> int:
    _require_plotting()  # before reading anything
    if args.smooth < 1:
        raise CommandError(f"--smooth: expected a positive number of episodes, got {args.smooth}")
    if args.columns is not None and args.columns < 1:
        raise CommandError(f"--columns: expected a positive number of panels side by side, got {args.columns}")
    _plot(args.store, args.name, args.output, args.kind, args.metric, args.smooth, tuple(args.task),
          tuple(args.condition), args.columns)
    return 0


def _table(rows: list[dict], columns: tuple[str, ...], fmt: str) -> str | bytes:
    """The rows as a tidy table (`tidy_table`: a typed column per agent setting), CSV or parquet."""
    from graphtasks.experiments.export import csv_text, parquet_bytes, tidy_table

    rows, columns, types = tidy_table(rows, columns)
    return parquet_bytes(rows, columns, types) if fmt == "parquet" else csv_text(rows, columns)


def cmd_export(args: argparse.Namespace) -> int:
    from graphtasks.experiments.export import (
        ExportError,
        csv_text,
        recorded_trials,
        require_parquet,
        tidy_table,
        trial_columns,
        write_bids,
    )

    if args.format in ("turtle", "prov"):
        return _export_rdf(args)
    if args.trial_duration is not None and not args.bids:
        raise CommandError("--trial-duration: only with --bids DIR")
    if args.format == "parquet":
        if not args.output and not args.bids:
            raise CommandError("--format parquet writes a file: give -o FILE.parquet")
        require_parquet()  # before reading anything
    with open_store(args.store, "r") as store:
        require_experiment(store, args.name)
        trials = recorded_trials(store, args.name) if args.trials or args.bids or args.psychds else []
        if args.psychds:
            from graphtasks.experiments.psychds import study_events

            events = study_events(store, args.name)
        episodes = [] if args.trials else recorded_episodes(store, args.name)
    if (args.trials or args.bids or args.psychds) and not trials:
        raise CommandError(
            f"experiment {args.name!r} has no recorded trials (steps are recorded for trial tasks, "
            'or with record = "steps" in the spec)'
        )
    if args.bids:
        try:
            written = write_bids(trials, args.bids, args.trial_duration)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        print(f"{len(written)} events files written to the BIDS dataset {args.bids}")
        if not args.output:
            return 0
    if args.psychds:
        from graphtasks.experiments.psychds import write_trials_dataset

        rows, columns, _ = tidy_table(trials, trial_columns(trials))
        written_to = write_trials_dataset(args.name, csv_text(rows, columns), columns, args.psychds, events)
        print(f"{len(rows)} trials and {len(events)} events written to the Psych-DS dataset {args.psychds} "
              f"({written_to.name})")
        if not args.output:
            return 0
    rows, columns = (trials, trial_columns(trials)) if args.trials else (episodes, COLUMNS)
    table = _table(rows, columns, args.format)
    if args.output:
        write_output(args.output, table)
    else:
        print(table, end="")
    return 0


def _export_rdf(args: argparse.Namespace) -> int:
    from graphtasks.experiments.export import rdf_text

    if args.trials or args.bids:
        raise CommandError(f"--format {args.format}: --trials and --bids are for tables (csv, parquet)")
    if args.trial_duration is not None:
        raise CommandError("--trial-duration: only with --bids DIR")
    # the records' view holds every episode and trial: a bar of them as they are added (their
    # number is known once they are read), then of the writing
    shown = progress_shown(args) and args.format == "turtle"
    with open_store(args.store, "r") as store:
        require_experiment(store, args.name)
        with bar(None, "records to RDF", "record", shown) as adding:
            text = rdf_text(store, args.name, args.format, adding if shown else None)
    if args.output:
        write_output(args.output, text)
    else:
        print(text, end="")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from graphtasks.experiments.migrate import migrate_record_ids

    with open_store(args.store, "w") as store:
        moved = migrate_record_ids(store)
    for name, count in moved.items():
        print(f"{name}: {count} records under new ids")
    print(f"{len(moved)} experiment(s) migrated" if moved else "nothing to migrate: every record id is current")
    return 0
