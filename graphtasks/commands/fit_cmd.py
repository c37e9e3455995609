"""`graphtasks fit models|simulate|import|run|show|compare|cv|parameter-recovery|model-recovery|group-recovery|
group-model-recovery`: fit agents to recorded or imported behaviour by maximum likelihood or
hierarchically (EM), keep the fits in the store, compare models by summed BIC or by
random-effects model selection; check by simulation that a model's settings and the model
itself can be recovered, participant by participant and for a group."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from graphstore import open_store

from .arguments import COUNT, SEED, STARTS, WORKERS, integer, numbers, one_line_errors
from .extras import require_plotting
from .files import write_output
from .lookups import require_experiment
from .output import add_format_argument, print_rows
from .progress import add_no_progress
from .progress import shown as progress_shown

LAYOUT_NAMES = ("ts", "prl", "pst", "igt", "bandit4arm", "bandit4arm2")  # graphtasks.fitting.hbayesdm.LAYOUTS
SOURCES = ("people", "agents", "all")  # graphtasks.fitting.selection.SOURCES (not imported to build the parser)
CV_BY = ("block", "session", "participant")  # graphtasks.fitting.cv.BY


def with_progress(command: Any) -> Any:
    """A long command shows a bar of its fits and simulations where someone watches, unless
    `--no-progress` is given (`graphtasks.commands.progress.shown`)."""

    def run(args: argparse.Namespace) -> int:
        from graphtasks.fitting.recovery import progress

        with progress(progress_shown(args)):
            return int(command(args))

    run.__doc__, run.__name__ = command.__doc__, command.__name__
    return run


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fit", help="fit agents to behaviour (maximum likelihood, AIC, BIC), recovery")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    models = actions.add_parser("models", help="the models that ship: agent, free settings with bounds, fixed ones")
    add_format_argument(models)
    models.set_defaults(func=cmd_models)

    sim = actions.add_parser(
        "simulate", help="write a simulated participant's events file (rewardGym's columns), to try a pipeline"
    )
    sim.add_argument("output", metavar="FILE.tsv", help="the events file to write")
    sim.add_argument("--model", default="q", help="a shipped model (default: q)")
    sim.add_argument("--params", type=numbers, required=True, help="its free settings, e.g. lr=0.3,beta=4")
    sim.add_argument("--trials", type=COUNT, default=200, help="trials (default: 200)")
    sim.add_argument("--task", default="rewardgym/two-step", help="the task (default: rewardgym/two-step)")
    sim.add_argument("--seed", type=SEED, default=0, help="the simulation's seed (default: 0)")
    sim.add_argument("--participant", help="participant id (default: BIDS sub-<id> of the file name)")
    sim.add_argument("--layout", choices=("ts",),
                     help="write hBayesDM's layout instead (ts: two-step), for --participants participants")
    sim.add_argument("--participants", type=COUNT, default=1,
                     help="with --layout: participants (subjID 1, 2, ...; seeds --seed, --seed + 1, ...)")
    sim.set_defaults(func=cmd_simulate)

    imp = actions.add_parser(
        "import", help="import events files (rewardGym's columns, or hBayesDM's layouts) as runs of participants"
    )
    imp.add_argument("name", help="the experiment to record them as")
    imp.add_argument("files", nargs="+", metavar="FILE.tsv",
                     help="events files: one per participant, or hBayesDM files (a subjID column) of any number")
    imp.add_argument("--task", help="the task id (default: the files' task column, or the hBayesDM layout's task)")
    imp.add_argument("--layout", choices=LAYOUT_NAMES,
                     help="hBayesDM's layout of the files, where their columns fit two (igt or bandit4arm, ...)")
    imp.add_argument(
        "--keep-reminded", action="store_true", help="keep trials with a 'reminder' event (rewardGym drops them)"
    )
    imp.set_defaults(func=cmd_import)

    run = actions.add_parser("run", help="fit a model to the recorded runs of an experiment and store the fits")
    run.add_argument("experiment", help="a recorded or imported experiment")
    _model_arguments(run)
    run.add_argument("--runs", help="run indices, e.g. 0,3,5 (default: every run with trials the selection takes)")
    _selection_arguments(run, fits=False)
    run.add_argument(
        "--method", choices=("mle", "em", "nuts"), default="mle",
        help="mle: each run alone, by maximum likelihood (default); em: the runs together, hierarchically "
        "(expectation-maximisation with Laplace approximations); nuts: the same hierarchical model sampled by "
        "NUTS (NumPyro, --chains chains; pip install 'graphtasks[bayes]')",
    )
    run.add_argument("--max-iterations", type=integer(1, 1000), default=200,
                     help="em: iterations at most (default: 200)")
    run.add_argument("--samples", type=integer(10, 100_000), default=1000, help="nuts: draws kept (default: 1000)")
    run.add_argument("--warmup", type=integer(10, 100_000), default=1000,
                     help="nuts: adaptation steps before them (default: 1000)")
    _nuts_arguments(run)
    run.add_argument("--starts", type=STARTS, default=5, help="optimiser starts per run (default: 5)")
    run.add_argument("--seed", type=SEED, default=0, help="seed of the starting points (default: 0)")
    run.add_argument("--workers", type=WORKERS, default=1, help="processes fitting runs at once (default: 1)")
    run.add_argument("--no-record", action="store_true", help="print the fits, store nothing")
    add_format_argument(run)
    run.set_defaults(func=cmd_run)

    show = actions.add_parser(
        "show", help="the fits stored for an experiment, best (lowest BIC) first per run, and the group (EM) fits"
    )
    show.add_argument("experiment")
    show.add_argument("--plot", metavar="FILE.png",
                      help="draw each model's fitted settings per participant, with errors (and EM's group median)")
    _selection_arguments(show, fits=True)
    add_format_argument(show)
    show.set_defaults(func=cmd_show)

    compare = actions.add_parser(
        "compare", help="the stored fits' models side by side: summed AIC and BIC, runs each fits best"
    )
    compare.add_argument("experiment")
    compare.add_argument("--method", choices=("mle", "em", "nuts"), default="mle",
                         help="compare the maximum-likelihood fits (default), the EM fits or the NUTS fits")
    compare.add_argument(
        "--random-effects", action="store_true",
        help="random-effects Bayesian model selection: model frequencies, exceedance and protected exceedance "
        "probabilities, the omnibus risk (evidence: EM's Laplace evidence, or -BIC/2 of mle fits)",
    )
    compare.add_argument("--plot", metavar="FILE.png", help="with --random-effects: draw frequencies and probabilities")
    compare.add_argument("--by", choices=("bic", "cv"), default="bic",
                         help="rank by summed BIC (default) or by the held-out log-likelihood of a stored "
                         "cross-validation (graphtasks fit cv) of the same runs")
    compare.add_argument("--models", help="--by cv: these models (default: those of the latest cross-validation)")
    _selection_arguments(compare, fits=True)
    add_format_argument(compare)
    compare.set_defaults(func=cmd_compare)

    cross = actions.add_parser(
        "cv", help="cross-validated (held-out) log-likelihood of models on seeded folds (by block, session or "
        "participant), beside AIC and BIC; GRU networks too (gru-N, gru-N-shared)",
    )
    cross.add_argument("experiment", help="a recorded or imported experiment")
    cross.add_argument("--models", default="q,hybrid",
                       help="shipped models (graphtasks fit models) and GRUs of N units, 2 to 16: gru-N (one per "
                       "participant), gru-N-shared (one for everyone); GRUs need graphtasks[bayes]; default q,hybrid")
    cross.add_argument("--by", choices=CV_BY, default="block",
                       help="block: contiguous blocks of trials within each run (default); session: a participant's "
                       "runs; participant: whole participants (the models fitted to the others by EM)")
    cross.add_argument("--folds", type=integer(2, 100), default=5, help="folds (default: 5)")
    cross.add_argument("--score", choices=("marginal", "mean"),
                       help="--by participant: score a held-out participant by its marginal likelihood under the "
                       "group prior (default) or by the likelihood at the group's median settings")
    cross.add_argument("--runs", help="run indices, e.g. 0,3,5 (default: every run with trials the selection takes)")
    _selection_arguments(cross, fits=False)
    cross.add_argument("--starts", type=STARTS, default=2, help="optimiser starts per fit (default: 2)")
    cross.add_argument("--seed", type=SEED, default=0,
                       help="seed of the folds, the starting points and the networks' weights (default: 0)")
    cross.add_argument("--workers", type=WORKERS, default=1, help="processes fitting runs at once (default: 1)")
    cross.add_argument("--plot", metavar="FILE.png", help="draw each model's held-out log-likelihood per fold")
    cross.add_argument("--no-record", action="store_true", help="print the result, store nothing")
    add_format_argument(cross)
    cross.set_defaults(func=cmd_cv)

    params = actions.add_parser(
        "parameter-recovery", help="simulate participants from a model's prior, fit them back, correlate"
    )
    params.add_argument("--model", default="q", help="a shipped model (default: q)")
    params.add_argument("--participants", type=int, default=30, help="simulated participants (default: 30)")
    _recovery_arguments(params, starts=3)
    params.set_defaults(func=cmd_parameter_recovery)

    confusion = actions.add_parser(
        "model-recovery", help="simulate each model, fit every model, count which the BIC picks"
    )
    confusion.add_argument("--models", default="q,model-based,hybrid", help="shipped models (default: all three)")
    confusion.add_argument("--participants", type=int, default=10, help="simulations per model (default: 10)")
    _recovery_arguments(confusion, starts=2)
    confusion.set_defaults(func=cmd_model_recovery)

    group = actions.add_parser(
        "group-recovery",
        help="simulate a group from a Gaussian group distribution, fit it by MLE and by EM, compare the recovery",
    )
    group.add_argument("--model", default="hybrid", help="a shipped model (default: hybrid)")
    group.add_argument("--participants", type=int, default=30, help="simulated participants (default: 30)")
    group.add_argument("--nuts", action=argparse.BooleanOptionalAction, default=None,
                       help="fit by NUTS too, side by side (default: when graphtasks[bayes] is installed)")
    group.add_argument("--samples", type=integer(10, 100_000), default=1000, help="nuts: draws kept (default: 1000)")
    group.add_argument("--warmup", type=integer(10, 100_000), default=1000,
                       help="nuts: adaptation steps (default: 1000)")
    _recovery_arguments(group, starts=3)
    group.set_defaults(func=cmd_group_recovery)

    group_models = actions.add_parser(
        "group-model-recovery",
        help="simulate a group from each model, fit every model by EM, select by random-effects BMS",
    )
    group_models.add_argument("--models", default="q,model-based,hybrid", help="shipped models (default: all three)")
    group_models.add_argument("--participants", type=int, default=30, help="participants per group (default: 30)")
    _recovery_arguments(group_models, starts=2)
    group_models.set_defaults(func=cmd_group_model_recovery)
    for long_running in (run, cross, params, confusion, group, group_models):
        add_no_progress(long_running, "no progress bars (of fits, simulations and EM iterations)")
    for leaf in (models, sim, imp, run, show, compare, cross, params, confusion, group, group_models):
        one_line_errors(leaf)


def _selection_arguments(parser: argparse.ArgumentParser, fits: bool) -> None:
    """Which runs a command takes (graphtasks.fitting.selection): by phase, label, condition, source."""
    phase = ("the fits made of this phase's trials (fit run --phase); repeat for fits of several phases"
             if fits else "fit only the trials of this phase (repeat for several; default: every phase); the "
             "agent starts afresh at the first trial taken")
    parser.add_argument("--phase", action="append", default=[], metavar="NAME", help=phase)
    parser.add_argument("--label", action="append", default=[], metavar="LABEL",
                        help="only runs with this label: an agent setting's label or a participant's id (repeat)")
    parser.add_argument("--condition", action="append", default=[], metavar="NAME",
                        help="only runs of this condition (repeat)")
    parser.add_argument(
        "--source", choices=SOURCES,
        help="people: sessions and imported participants; agents: the spec's agents' runs and pilot sessions; all: "
        "both, pooled (a group fit or a comparison over both refuses unless this is given)",
    )


def _selection(args: argparse.Namespace) -> Any:
    from graphtasks.fitting.selection import Selection

    return Selection(tuple(dict.fromkeys(args.phase)), tuple(dict.fromkeys(args.label)),
                     tuple(dict.fromkeys(args.condition)), args.source)


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="q", help="a shipped model (graphtasks fit models); default q")
    parser.add_argument("--agent", help="fit this agent instead, with --free (and --fixed)")
    parser.add_argument("--free", help="free settings with bounds, e.g. lr=0.01:1,beta=0.1:20")
    parser.add_argument("--fixed", type=numbers, help="fixed settings, e.g. gamma=1,w=0.5")


def _recovery_arguments(parser: argparse.ArgumentParser, starts: int) -> None:
    parser.add_argument("--trials", type=COUNT, default=200, help="trials per participant (default: 200)")
    parser.add_argument("--task", default="rewardgym/two-step", help="the task (default: rewardgym/two-step)")
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the draws and simulations (default: 0)")
    parser.add_argument("--starts", type=STARTS, default=starts, help=f"optimiser starts per fit (default: {starts})")
    parser.add_argument("--workers", type=WORKERS, default=1, help="processes (default: 1)")
    parser.add_argument("-o", "--output", metavar="FILE.png", help="draw the figure")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def _chosen_model(args: argparse.Namespace) -> Any:
    from graphtasks.fitting import FitModel, fit_model
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.models import parse_bounds

    if args.agent is None:
        if args.free or args.fixed:
            raise BehaviourError("--free and --fixed go with --agent (a shipped --model has its own)")
        return fit_model(args.model)
    if not args.free:
        raise BehaviourError("--agent needs --free: the settings to fit, e.g. --free lr=0.01:1,beta=0.1:20")
    return FitModel.of(args.agent, parse_bounds(args.free), args.fixed or {})


def _bounds_text(bounds: dict[str, tuple[float, float]]) -> str:
    return ", ".join(f"{k} {lo:g}..{hi:g}" for k, (lo, hi) in bounds.items())


def cmd_models(args: argparse.Namespace) -> int:
    from graphtasks.fitting import MODELS

    rows = [
        [m.name, m.agent, _bounds_text(m.bounds),
         ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}" for k, v in m.fixed.items())]
        for m in MODELS.values()
    ]
    print_rows(["model", "agent", "free (bounds)", "fixed"], rows, args.format)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from graphtasks.fitting import fit_model, simulate
    from graphtasks.fitting.behaviour import BehaviourError, events_text
    from graphtasks.fitting.records import check_name, participant_of
    from gym_bridge.agents import AgentSettingError, check_agent_settings

    model = fit_model(args.model)
    if "rt" in model.fixed:
        raise BehaviourError(f"--model {model.name}: an events file keeps no response times; simulate a response-time "
                             "model in Python (graphtasks.fitting.simulate) or recover it (fit parameter-recovery)")
    values = args.params
    missing = [name for name in model.free if name not in values]
    unknown = [name for name in values if name not in model.free]
    if missing or unknown:
        raise BehaviourError(
            f"--params: model {model.name!r} needs {', '.join(model.free)}"
            + (f"; not {', '.join(unknown)}" if unknown else "")
        )
    settings = model.settings([values[n] for n in model.free])
    try:  # the agent's own ranges (lr in [0, 1], ...), named by this command's option
        check_agent_settings(model.agent, settings)
    except AgentSettingError as exc:
        raise BehaviourError(f"--params: {exc}") from None
    path = Path(args.output)
    if args.layout:
        from graphtasks.fitting.hbayesdm import layout_text

        if args.participant:
            raise BehaviourError("--participant goes without --layout (hBayesDM's files name theirs 1, 2, ...)")
        people = [(str(i + 1), simulate(args.task, model.agent, settings, args.trials, args.seed + i))
                  for i in range(args.participants)]
        text, participant = layout_text(args.layout, people), f"1..{args.participants} (hBayesDM's {args.layout})"
    else:
        if args.participants != 1:
            raise BehaviourError("--participants goes with --layout (an events file holds one participant)")
        participant = check_name(args.participant or participant_of(path, read=False), "--participant")
        text = events_text(simulate(args.task, model.agent, settings, args.trials, args.seed), participant)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, text, "fit simulate")
    shown = ",".join(f"{k}={v:g}" for k, v in values.items())
    who = "participant" if args.participants == 1 else "participants"
    print(f"{path}: {args.trials} trials of {model.name} ({shown}) on {args.task}, {who} {participant}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from graphtasks.fitting.records import read_behaviour, record_behaviour

    behaviour = read_behaviour(args.name, args.files, args.task, not args.keep_reminded,  # before the store is opened
                               args.layout)
    with open_store(args.store, "w") as store:
        rows = record_behaviour(store, behaviour)
    print_rows(["participant", "run", "trials", "choices"], [[r[c] for c in ("participant", "run", "trials",
                                                              "choices")] for r in rows], "table")
    return 0


def _print_fits(rows: list[dict[str, Any]], columns: list[str], fmt: str) -> None:
    """Fits as rows: in a table or CSV the settings read `lr 0.303 ± 0.037` (`no s.e.`: at a
    bound, or a flat likelihood); in JSON `params` and `stderr` stay separate numbers."""
    for row in rows:
        params, stderr = row["params"], row.get("stderr") or {}
        if fmt == "json":
            row["params"] = {k: round(v, 4) for k, v in sorted(params.items())}
            row["stderr"] = {k: None if v is None else round(v, 4) for k, v in sorted(stderr.items())}
        else:
            row["params"] = ", ".join(f"{k} {v:.4g}{_error_text(stderr, k)}" for k, v in sorted(params.items()))
        for key in ("log_likelihood", "aic", "bic", "log_evidence"):
            if row.get(key) is not None:
                row[key] = round(row[key], 3)
    shown = columns if fmt == "json" else [c for c in columns if c != "stderr"]
    print_rows(shown, [[r[c] for c in shown] for r in rows], fmt)


def _error_text(stderr: dict[str, Any], name: str) -> str:
    if name not in stderr:  # a fit stored before standard errors were
        return ""
    return " (no s.e.)" if stderr[name] is None else f" ± {stderr[name]:.2g}"


FIT_COLUMNS = ["participant", "source", "model", "method", "phases", "params", "stderr", "log_likelihood", "aic",
               "bic", "choices", "run"]
EM_COLUMNS = ["participant", "source", "model", "method", "phases", "params", "stderr", "log_likelihood",
              "log_evidence", "choices", "run"]
GROUP_COLUMNS = ["model", "method", "participants", "median", "mean", "sd", "log_evidence", "integrated_bic",
                 "iterations", "converged"]


@with_progress
def cmd_run(args: argparse.Namespace) -> int:
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.records import fit_group_runs, fit_runs, record_fits, record_group_fit
    from graphtasks.fitting.selection import fitted_phases, phase_names, phases_text, refuse_mixed, select_runs

    model = _chosen_model(args)
    selection = _selection(args)
    given = [o for o, on in (("--chains", args.chains != 4), ("--centred", args.centred), ("--ppc", args.ppc),
                             ("--ppc-draws", args.ppc_draws != 100)) if on]
    if given and args.method != "nuts":
        raise BehaviourError(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --method nuts")
    with open_store(args.store, "r") as store:
        require_experiment(store, args.experiment)
        chosen = {r.run: r for r in select_runs(store, args.experiment, selection)}
        runs = list(chosen) if args.runs is None else _run_list(args.runs, list(chosen), selection)
        phases = fitted_phases(selection, phase_names(store, args.experiment))
        if args.method != "mle":
            if len(runs) < 2:
                raise BehaviourError(f"--method {args.method} fits runs together: it needs two or more runs, got "
                                     f"{runs}")
            refuse_mixed([chosen[r].source for r in runs], selection, f"--method {args.method}", args.experiment)
            if args.method == "nuts":
                posterior = _sample_nuts(store, args, runs, model, phases)
                group = posterior.group
            else:
                group = fit_group_runs(store, args.experiment, runs, model, args.starts, args.seed, args.workers,
                                       args.max_iterations, args.method, args.samples, args.warmup, phases)
        else:
            fits = fit_runs(store, args.experiment, runs, model, args.starts, args.seed, args.workers, phases)

    def keyed(run: int) -> dict[str, Any]:
        info = chosen[run]
        return {"participant": info.key, "source": info.source, "phases": phases_text(phases), "run": run}

    if args.method != "mle":
        if not args.no_record:
            with open_store(args.store, "w") as store:
                if args.method == "nuts":
                    from graphtasks.fitting.records import record_posterior

                    record_posterior(store, args.experiment, posterior, runs, phases)
                else:
                    record_group_fit(store, args.experiment, group, phases)
        rows = [{**f.as_dict(), **keyed(run)} for run, f in zip(runs, group.fits)]
        _print_fits(rows, EM_COLUMNS, args.format)
        if args.format != "json":
            print()
        _print_groups([_group_row(group.as_dict())], args.format)
        if group.diagnostics and args.format == "table":
            print(_diagnostics_text(group.diagnostics))
        if args.method == "nuts":
            _after_nuts(args, posterior)
        return 0
    if not args.no_record:
        with open_store(args.store, "w") as store:
            record_fits(store, args.experiment, fits, phases)
    rows = [{**f.as_dict(), **keyed(run)} for run, f in zip(runs, fits)]
    _print_fits(rows, FIT_COLUMNS, args.format)
    return 0


def _nuts_arguments(parser: argparse.ArgumentParser) -> None:
    """fit run's options of a NUTS fit: chains, parameterisation, the posterior predictive figure."""
    parser.add_argument("--chains", type=integer(1, 64), default=4,
                        help="nuts: Markov chains, in parallel where JAX has a CPU device for each (default: 4)")
    parser.add_argument("--centred", action="store_true",
                        help="nuts: sample each participant's settings as they are (x ~ N(mu, sigma^2)) instead of "
                        "non-centred (x = mu + sigma z), the default")
    parser.add_argument("--ppc", metavar="FILE.png",
                        help="nuts: draw a posterior predictive check (two-step stay probabilities, or choice "
                        "rates of a one-choice task) of the data against simulations from the posterior")
    parser.add_argument("--ppc-draws", type=integer(1, 10_000), default=100,
                        help="nuts: posterior draws simulated for --ppc (default: 100)")


def _sample_nuts(store: Any, args: argparse.Namespace, runs: list[int], model: Any, phases: Any) -> Any:
    """A NUTS fit of the runs with its draws; a failed check of convergence is said on stderr in one line."""
    import sys
    import warnings

    from graphtasks.fitting.bayes import sample_runs
    from graphtasks.fitting.diagnostics import ConvergenceWarning

    if args.ppc:
        require_plotting("--ppc")  # before the sampling, not after it
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ConvergenceWarning)
        posterior = sample_runs(store, args.experiment, runs, model, args.samples, args.warmup, args.seed,
                                args.chains, "centred" if args.centred else "non-centred", phases)
    for warning in said:
        if issubclass(warning.category, ConvergenceWarning):
            print(f"warning: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return posterior


def _after_nuts(args: argparse.Namespace, posterior: Any) -> None:
    """A NUTS fit's table of diagnostics (table format) and its posterior predictive figure (--ppc)."""
    if args.format == "table":
        print()
        print_rows(["setting", "part", "r_hat", "ess_bulk", "ess_tail"],
                   [[name, part, f"{v['r_hat']:.3f}", f"{v['ess_bulk']:.0f}", f"{v['ess_tail']:.0f}"]
                    for name, row in posterior.group.diagnostics["settings"].items() for part, v in row.items()],
                   "table")
        loo = posterior.group.diagnostics["loo"]
        print(f"PSIS-LOO over participants: elpd {loo['elpd']:.2f} ± {loo['se']:.2f}, p_loo {loo['p_loo']:.2f}, "
              f"looic {loo['looic']:.2f}; Pareto k above {loo['good_k']:.2f} for {loo['bad']} of "
              f"{len(loo['pareto_k'])} participants")
    if args.ppc:
        from graphtasks.fitting.figures import plot_predictive_check
        from graphtasks.fitting.ppc import posterior_predictive

        check = posterior_predictive(posterior, args.ppc_draws, args.seed)
        Path(args.ppc).parent.mkdir(parents=True, exist_ok=True)
        plot_predictive_check(check, args.ppc)
        if args.format == "table":
            print(f"{args.ppc}: posterior predictive check ({check.kind}, {check.draws} draws); the data's group "
                  f"mean is outside the 95% interval for {check.outside()} of {check.group_observed().size} values")


def _diagnostics_text(diagnostics: dict[str, Any]) -> str:
    """A NUTS fit's diagnostics in one line."""
    worst = ", ".join(f"{k} {v:.3f}" for k, v in diagnostics["r_hat"].items())
    ess = ", ".join(f"{k} {v:.0f}" for k, v in diagnostics["ess"].items())
    chains = diagnostics["chains"]
    how = f" ({diagnostics['chain_method']})" if diagnostics.get("chain_method") else ""
    return (f"nuts: {chains} chain{'s' if chains != 1 else ''}{how}, "
            f"{diagnostics['warmup']} warmup + {diagnostics['samples']} draws each in "
            f"{diagnostics['seconds']:.1f} s; divergences {diagnostics['divergences']}; r-hat of the group means "
            f"{worst} (largest of all {diagnostics['max_r_hat']:.3f}); effective samples {ess} (fewest of all "
            f"{diagnostics['min_ess']:.0f})")


def _group_row(group: dict[str, Any]) -> dict[str, Any]:
    """A group fit as printed: the median participant's settings, the prior's mean (transformed)
    with its standard error, and its standard deviation."""
    return {
        **group,
        "sd": {k: v**0.5 for k, v in group["variance"].items()},
    }


def _print_groups(rows: list[dict[str, Any]], fmt: str) -> None:
    for row in rows:
        if fmt == "json":
            continue
        errors = row["mean_stderr"]
        row["median"] = ", ".join(f"{k} {v:.4g}" for k, v in sorted(row["median"].items()))
        row["mean"] = ", ".join(f"{k} {v:.3g} ± {errors[k]:.2g}" for k, v in sorted(row["mean"].items()))
        row["sd"] = ", ".join(f"{k} {v:.3g}" for k, v in sorted(row["sd"].items()))
        for key in ("log_evidence", "integrated_bic"):
            row[key] = round(row[key], 3)
    if fmt == "json":
        print_rows(["group"], [[r] for r in rows], fmt)
        return
    print_rows(GROUP_COLUMNS, [[r[c] for c in GROUP_COLUMNS] for r in rows], fmt)


def _run_list(text: str, available: list[int], selection: Any) -> list[int]:
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.selection import Selection

    try:
        runs = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise BehaviourError(f"--runs: expected run indices such as 0,3,5, got {text!r}") from None
    missing = [r for r in runs if r not in available]
    if missing:
        if selection != Selection():
            raise BehaviourError(f"--runs: run(s) {missing} not taken by {selection.describe()} (runs taken: "
                                 f"{available})")
        raise BehaviourError(f"--runs: no recorded trials for run(s) {missing} (runs with trials: {available})")
    return runs


def _fits(store: Any, args: argparse.Namespace, method: str | None = None) -> list[dict[str, Any]]:
    """The stored fits a command takes (its selection), refusing in one line when none is left."""
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.records import recorded_fits
    from graphtasks.fitting.selection import Selection, phases_text

    selection = _selection(args)
    require_experiment(store, args.experiment)
    every = recorded_fits(store, args.experiment, method=method)
    if not every:
        if method is None:
            raise BehaviourError(f"experiment {args.experiment!r}: no stored fits (graphtasks fit run makes them)")
        other = "em" if method == "mle" else "mle"
        made = f"--method {method} " if method != "mle" else ""
        raise BehaviourError(f"experiment {args.experiment!r}: no stored fits by {method} (graphtasks fit run "
                             f"{made}makes them; --method {other} compares the {other} fits)")
    if selection == Selection():
        return every
    chosen = recorded_fits(store, args.experiment, method=method, selection=selection)
    if not chosen:
        stored = sorted({phases_text(f["phases"]) for f in every})
        sources = sorted({f["source"] for f in every})
        raise BehaviourError(f"experiment {args.experiment!r}: no stored fit matches {selection.describe()} (the "
                             f"stored fits are of phases {', '.join(stored)}; of {' and '.join(sources)})")
    return chosen


def cmd_show(args: argparse.Namespace) -> int:
    from graphtasks.fitting.records import recorded_group_fits
    from graphtasks.fitting.selection import phases_text

    if args.plot:
        require_plotting("--plot")
    with open_store(args.store, "r") as store:
        rows = _fits(store, args)
        groups = _groups_of(recorded_group_fits(store, args.experiment), rows)
    if args.plot:
        from graphtasks.fitting.figures import plot_fits

        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot_fits(rows, args.plot, args.experiment, groups)
    for row in rows:
        row["participant"], row["phases"] = row["key"], phases_text(row["phases"])
    columns = list(FIT_COLUMNS)
    if any(r["method"] != "mle" for r in rows):
        columns.insert(-1, "log_evidence")
    _print_fits(rows, columns, args.format)
    if groups:
        if args.format == "table":
            print("\ngroup (hierarchical) fits; mean and sd of the group prior in the transformed space "
                  "(logistic in the bounds), median in the settings' units")
        if args.format != "json":
            _print_groups([_group_row(g) for g in groups], args.format)
            for g in groups:
                if g.get("diagnostics") and args.format == "table":
                    print(f"{g['model']} {_diagnostics_text(g['diagnostics'])}")
        else:
            print_rows(["group"], [[_group_row(g)] for g in groups], "json")
    return 0


def _groups_of(groups: list[dict[str, Any]], fits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The group fits whose every run's fit is among `fits` (of their model, method and phases)."""
    shown = {(f["run"], f["model"], f["method"], tuple(f["phases"] or ())) for f in fits}
    return [g for g in groups
            if all((run, g["model"], g["method"], tuple(g.get("phases") or ())) in shown for run in g["runs"])]


def cmd_compare(args: argparse.Namespace) -> int:
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.records import compare_models
    from graphtasks.fitting.selection import phases_text, refuse_mixed

    if args.by == "cv":
        return _compare_cv(args)
    if args.models:
        raise BehaviourError("--models goes with --by cv")
    if args.plot and args.random_effects:
        require_plotting("--plot")
    with open_store(args.store, "r") as store:
        fits = _fits(store, args, args.method)
    doing = "--random-effects" if args.random_effects else "fit compare"
    refuse_mixed(list({f["run"]: f["source"] for f in fits}.values()), _selection(args), doing, args.experiment)
    sets: dict[str, set[str]] = {}
    for f in fits:
        sets.setdefault(phases_text(f["phases"]), set()).add(f["model"])
    if len(sets) > 1:
        shown = "; ".join(f"{phases}: {', '.join(sorted(models))}" for phases, models in sorted(sets.items()))
        raise BehaviourError(f"experiment {args.experiment!r}: the {args.method} fits are of different phases "
                             f"({shown}); compare fits of the same trials: choose them with --phase, or refit "
                             "with fit run --phase")
    if args.random_effects:
        return _random_effects(args, fits)
    if args.plot:
        raise BehaviourError("--plot goes with --random-effects")
    rows = compare_models(fits)
    columns = ["model", "runs", "log_likelihood", "aic", "bic", "best_by_bic"]
    for row in rows:
        for key in ("log_likelihood", "aic", "bic"):
            row[key] = round(row[key], 3)
    print_rows(columns, [[r[c] for c in columns] for r in rows], args.format)
    if args.format == "table":
        print(f"{_taken(fits)}; best_by_bic: how many runs each model fits best (lowest BIC)")
    return 0


def _taken(fits: list[dict[str, Any]], runs: list[int] | None = None) -> str:
    """What a comparison took, in words: its runs (`runs`, or every run of `fits`) by source, and the phases."""
    from graphtasks.fitting.selection import describe_sources, phases_text

    source = {f["run"]: f["source"] for f in fits}
    taken = list(source) if runs is None else runs
    return (f"{len(taken)} run{'s' if len(taken) != 1 else ''} ({describe_sources([source[r] for r in taken])}); "
            f"phases: {phases_text(fits[0]['phases'])}")


def _random_effects(args: argparse.Namespace, fits: list[dict[str, Any]]) -> int:
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.bms import random_effects
    from graphtasks.fitting.records import evidence_matrix

    models, runs, matrix = evidence_matrix(fits)
    if len(models) < 2:
        raise BehaviourError(f"experiment {args.experiment!r}: --random-effects compares two or more models; "
                             f"the {args.method} fits are of {models[0]!r} only")
    if not runs:
        raise BehaviourError(f"experiment {args.experiment!r}: no run has {args.method} fits of every model "
                             f"({', '.join(models)})")
    keys = {f["run"]: f["key"] for f in fits}
    selection = random_effects(matrix, models)
    if args.plot:
        from graphtasks.fitting.figures import plot_model_selection

        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        evidence = (f"Laplace evidence of {args.method} fits" if args.method != "mle"
                    else "-BIC/2 of maximum-likelihood fits")
        plot_model_selection(selection, args.plot, f"{args.experiment}: random-effects model selection ({evidence})")
    if args.format == "json":
        print(json.dumps({**selection.as_dict(), "runs": runs, "participant_keys": [keys[r] for r in runs],
                          "method": args.method}, indent=2))
        return 0
    columns = ["model", "expected_participants", "frequency", "frequency_sd", "exceedance", "protected_exceedance"]
    rows = [[round(r[c], 4) if isinstance(r[c], float) else r[c] for c in columns] for r in selection.rows()]
    print_rows(columns, rows, args.format)
    if args.format == "table":
        evidence = (f"Laplace log evidence ({args.method}) less each run's share of the group prior's cost"
                    if args.method != "mle" else "-BIC/2 (mle)")
        print(f"Bayesian omnibus risk {selection.bor:.4g}; {_taken(fits, runs)}; evidence: {evidence}")
        print("expected_participants: the sum of each participant's posterior probability that the model made "
              "their choices, not a count of best fits (fit compare's best_by_bic counts those)")
    return 0


def _recovery(args: argparse.Namespace, recover: Any, plot: Any, first: Any, **extra: Any) -> Any:
    """Run a recovery with the shared arguments, draw its figure (-o) and print its JSON
    (--json); the result to print as tables, or None when the JSON was printed."""
    if args.output:
        require_plotting("-o (the figure)")  # before the fits, not after them
    result = recover(first, args.participants, args.trials, args.task, args.seed, args.starts, args.workers, **extra)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        plot(result, args.output)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return None
    return result


def _model_names(text: str) -> list[str]:
    return [m.strip() for m in text.split(",") if m.strip()]


@with_progress
def cmd_parameter_recovery(args: argparse.Namespace) -> int:
    from graphtasks.fitting.figures import plot_parameter_recovery
    from graphtasks.fitting.recovery import parameter_recovery

    result = _recovery(args, parameter_recovery, plot_parameter_recovery, args.model)
    if result is None:
        return 0
    print(f"parameter recovery: {result.model} on {result.task_id}, {args.participants} participants x "
          f"{result.trials} trials")
    print_rows(["setting", "correlation (true, fitted)"],
               [[n, f"{result.correlation(n):.3f}"] for n in result.truth], "table")
    return 0


@with_progress
def cmd_model_recovery(args: argparse.Namespace) -> int:
    from graphtasks.fitting.figures import plot_model_recovery
    from graphtasks.fitting.recovery import model_recovery

    result = _recovery(args, model_recovery, plot_model_recovery, _model_names(args.models))
    if result is None:
        return 0
    print(f"model recovery on {result.task_id}: rows generated, columns picked by BIC ({args.participants} "
          f"simulations per model, {result.trials} trials)")
    print_rows(["generated by", *result.models],
               [[g, *map(int, row)] for g, row in zip(result.models, result.confusion)], "table")
    return 0


@with_progress
def cmd_group_recovery(args: argparse.Namespace) -> int:
    from graphtasks.fitting.figures import plot_group_recovery
    from graphtasks.fitting.recovery import group_parameter_recovery

    if args.nuts:
        from graphtasks.fitting.bayes import require_numpyro

        require_numpyro()
    result = _recovery(args, group_parameter_recovery, plot_group_recovery, args.model, nuts=args.nuts,
                       samples=args.samples, warmup=args.warmup)
    if result is None:
        return 0
    nuts = f", NUTS fit {result.seconds['nuts']:.1f} s" if result.nuts else ""
    print(f"group parameter recovery: {result.model} on {result.task_id}, {args.participants} participants x "
          f"{result.trials} trials; MLE fits {result.seconds['mle']:.1f} s, EM fit {result.seconds['em']:.1f} s{nuts}")
    columns = ["setting", "r_mle", "r_em", "mae_mle", "mae_em", "true_mean", "em_mean", "em_mean_se", "true_sd",
               "em_sd"]
    if result.nuts:
        columns[3:3] = ["r_nuts"]
        columns[6:6] = ["mae_nuts"]
        columns.insert(9, "nuts_mean")
    print_rows(columns, [[r["setting"], *(round(r[c], 3) for c in columns[1:])] for r in result.rows()], "table")
    if result.nuts:
        print(_diagnostics_text({**result.diagnostics, "seconds": result.seconds["nuts"]}))
    return 0


@with_progress
def cmd_group_model_recovery(args: argparse.Namespace) -> int:
    from graphtasks.fitting.figures import plot_group_model_recovery
    from graphtasks.fitting.recovery import group_model_recovery

    result = _recovery(args, group_model_recovery, plot_group_model_recovery, _model_names(args.models))
    if result is None:
        return 0
    print(f"group model recovery on {result.task_id}: rows generated, columns the protected exceedance probability "
          f"of each model fitted by EM ({args.participants} participants x {result.trials} trials per group)")
    print_rows(["generated by", *result.models, "omnibus risk"],
               [[g, *(round(float(v), 4) for v in row), round(float(b), 4)]
                for g, row, b in zip(result.models, result.protected_exceedance, result.bor)], "table")
    return 0


# -- cross-validation -------------------------------------------------------------------------------
CV_COLUMNS = ["model", "heldout_log_likelihood", "per_choice", "p_choice", "fold_sd", "aic", "bic", "best_by_cv"]


def _stored_information(store: Any, experiment: str, runs: list[int], phases: Any) -> dict[str, dict[str, float]]:
    """model -> summed aic and bic of the stored maximum-likelihood fits of every one of `runs`
    (of `phases`); a model missing a run's fit is left out."""
    from graphtasks.fitting.records import recorded_fits

    by_model: dict[str, dict[int, dict[str, Any]]] = {}
    for f in recorded_fits(store, experiment, method="mle"):
        if f["run"] in runs and (f["phases"] or None) == (list(phases) if phases else None):
            by_model.setdefault(f["model"], {})[f["run"]] = f
    return {m: {"aic": sum(f["aic"] for f in fits.values()), "bic": sum(f["bic"] for f in fits.values())}
            for m, fits in by_model.items() if set(fits) == set(runs)}


def _print_cv(rows: list[dict[str, Any]], information: dict[str, dict[str, float]], fmt: str) -> None:
    for row in rows:
        stored = information.get(row["model"], {})
        row["aic"], row["bic"] = (round(stored["aic"], 3), round(stored["bic"], 3)) if stored else ("n/a", "n/a")
        for key in ("heldout_log_likelihood", "per_choice", "p_choice", "fold_sd"):
            row[key] = round(row[key], 4 if key != "heldout_log_likelihood" else 3)
    print_rows(CV_COLUMNS, [[r[c] for c in CV_COLUMNS] for r in rows], fmt)


def _cv_note(plan: dict[str, Any], taken: str) -> str:
    score = f", held-out participants scored by the group prior's {plan['score']} likelihood" if plan["score"] else ""
    return (f"{taken}; {plan['folds']} folds by {plan['by']}, seed {plan['seed']}{score}; "
            f"{sum(plan['choices'])} held-out choices; best_by_cv: participants each model predicts best; aic, bic: "
            "summed over the stored maximum-likelihood fits of the same runs (graphtasks fit run; n/a where a run "
            "has none)")


@with_progress
def cmd_cv(args: argparse.Namespace) -> int:
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.cv import chance_per_choice, cross_validate_runs, resolve_model
    from graphtasks.fitting.records import record_cross_validation
    from graphtasks.fitting.selection import describe_sources, fitted_phases, phase_names, refuse_mixed, select_runs

    if args.score is not None and args.by != "participant":
        raise BehaviourError("--score goes with --by participant (how a held-out participant is scored)")
    names = _model_names(args.models)
    if not names:
        raise BehaviourError("--models: expected model names such as q,hybrid,gru-4")
    chosen_models = [resolve_model(n) for n in names]  # an unknown model, or a GRU without JAX, before any fit
    if any(getattr(m, "units", None) for m in chosen_models):
        from graphtasks.fitting.neural import require_jax

        require_jax(", ".join(m.name for m in chosen_models if getattr(m, "units", None)))
    if args.plot:
        require_plotting("--plot")
    selection = _selection(args)
    with open_store(args.store, "r") as store:
        require_experiment(store, args.experiment)
        info = {r.run: r for r in select_runs(store, args.experiment, selection)}
        runs = list(info) if args.runs is None else _run_list(args.runs, list(info), selection)
        refuse_mixed([info[r].source for r in runs], selection, "fit cv", args.experiment)
        phases = fitted_phases(selection, phase_names(store, args.experiment))
        result, taken = cross_validate_runs(store, args.experiment, [info[r] for r in runs], chosen_models, args.by,
                                            args.folds, args.seed, args.starts, args.score or "marginal",
                                            args.workers, phases)
        information = _stored_information(store, args.experiment, taken, phases)
        if args.plot:
            from graphtasks.fitting.behaviour import load_runs
            from graphtasks.fitting.likelihood import task_shape

            read = load_runs(store, args.experiment, taken, phases)
            chance = chance_per_choice(read, [task_shape(c.task_id, store) for c in read])
    if not args.no_record:
        with open_store(args.store, "w") as store:
            record_cross_validation(store, args.experiment, result, taken, phases)
    if args.plot:
        from graphtasks.fitting.cv_figures import plot_cross_validation

        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot_cross_validation(list(result.models), [list(s.heldout) for s in result.scores], result.folds.choices(),
                              args.plot, f"{args.experiment}: held-out log-likelihood, {args.folds} folds by {args.by} "
                              f"(seed {args.seed}), {len(taken)} runs", chance)
    if args.format == "json":
        print(json.dumps({**result.as_dict(), "runs": taken, "information": information}, indent=2))
        return 0
    _print_cv(result.rows(), information, args.format)
    if args.format == "table":
        taken_text = f"{len(taken)} runs ({describe_sources([info[r].source for r in taken])})"
        plan = {"by": args.by, "folds": args.folds, "seed": args.seed, "score": result.score,
                "choices": result.folds.choices()}
        print(_cv_note(plan, taken_text))
    return 0


def _compare_cv(args: argparse.Namespace) -> int:
    """`fit compare --by cv`: the models ranked by a stored cross-validation of the runs taken."""
    from graphtasks.fitting.behaviour import BehaviourError
    from graphtasks.fitting.records import recorded_cross_validations
    from graphtasks.fitting.selection import (
        cv_ranking,
        describe_sources,
        fitted_phases,
        phase_names,
        refuse_mixed,
        select_runs,
    )

    for option in ("random_effects", "plot"):
        if getattr(args, option):
            raise BehaviourError(f"--{option.replace('_', '-')} does not go with --by cv")
    selection = _selection(args)
    with open_store(args.store, "r") as store:
        require_experiment(store, args.experiment)
        info = {r.run: r for r in select_runs(store, args.experiment, selection)}
        refuse_mixed([r.source for r in info.values()], selection, "fit compare", args.experiment)
        phases = fitted_phases(selection, phase_names(store, args.experiment))
        records = recorded_cross_validations(store, args.experiment)
        models = _model_names(args.models) if args.models else None
        rows, plan = cv_ranking(records, list(info), phases, models, args.experiment)
        information = _stored_information(store, args.experiment, list(info), phases)
    if args.format == "json":
        print(json.dumps({"rows": rows, "plan": plan, "information": information}, indent=2))
        return 0
    _print_cv(rows, information, args.format)
    if args.format == "table":
        print(_cv_note(plan, f"{len(info)} runs ({describe_sources([r.source for r in info.values()])})"))
    return 0
