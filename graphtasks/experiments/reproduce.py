"""Reproductions of published results: a shipped experiment spec, run from scratch, and checks
that compare what was measured with what the paper found.

Each reproduction names its spec (data/experiments/NAME.toml) and a function that reads the
recorded results back from the store (the same Cypher queries a user would run) and returns
its checks: the measured value, the paper's finding in words, and whether the value shows it.
`graphtasks reproduce NAME` runs the spec into a new embedded store (or `--store`), draws the
figure, prints the checks and exits 1 if any fails.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable

import numpy as np

from graphstore import open_store
from graphstore.errors import GraphtasksError

from . import decision, studies
from .api import run_and_record
from .figures import mean_and_error, plot_bars, plot_experiment
from .records import recorded_episodes, revaluation_by_run, stay_by_run
from .spec import load_spec, spec_path
from .worker_slots import STILL_WORKING, received, stop_workers


class ReproductionError(GraphtasksError, ValueError):
    """No reproduction of that name, or a bad setting for one."""


@dataclass(frozen=True)
class Check:
    """One finding of the paper, and whether the measured value shows it."""

    name: str
    measured: float
    finding: str
    passed: bool


Means = dict[tuple[str, str], float]


Study = Callable[[int, "str | None", Callable[..., Check]], list[Check]]  # (seeds, figure path, make_check)


@dataclass(frozen=True)
class Reproduction:
    """A published result: either an experiment spec (data/experiments/NAME.toml) whose recorded
    results `checks` reads back from the store, or a `study` run in Python that examines what
    the agents learnt (a map, a distribution, a mood) and records nothing."""

    name: str
    title: str
    reference: str
    checks: Callable[[Any, str], list[Check]] | None = None  # (store, experiment name) -> checks
    draw: Callable[[Any, str, str], object] | None = None  # (store, name, path); None: `plot_experiment`
    study: Study | None = None
    seeds: int = 5  # a study's default number of seeds (a spec's are in the spec)
    # One core's seconds at the paper's size, roughly (measured, on a loaded machine): the order
    # `reproduce --all` starts them in, the longest first, so that no core ends waiting on one
    # long reproduction. It changes no number.
    cost: float = 1.0


@dataclass
class Outcome:
    reproduction: Reproduction
    seeds: int
    checks: list[Check]
    figure: Path | None

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.reproduction.name,
            "reference": self.reproduction.reference,
            "seeds": self.seeds,
            "passed": self.passed,
            "figure": str(self.figure) if self.figure else None,
            "checks": [dataclasses.asdict(c) for c in self.checks],
        }


def _means(scores: dict[tuple[str, str], list[float]]) -> Means:
    return {key: float(np.mean(values)) for key, values in scores.items()}


def _below(name: str, value: float, limit: float, finding: str) -> Check:
    return Check(name, round(value, 3), finding, value < limit)


def _above(name: str, value: float, limit: float, finding: str) -> Check:
    return Check(name, round(value, 3), finding, value > limit)


# -- Momennejad et al. 2017: revaluation scores (change of the probed preference) ------------
def _revaluation_checks(store: Any, name: str, policy: bool) -> list[Check]:
    score = _means(revaluation_by_run(store, name))
    checks = [
        _above("TD-SR, reward revaluation", score["TD-SR", "reward"], 0.5, "TD-SR revalues a changed reward"),
        _below("TD-SR, transition revaluation", score["TD-SR", "transition"], 0.2, "TD-SR misses changed transitions"),
        _above("model-based, reward revaluation", score["model-based", "reward"], 0.5, "MB revalues rewards"),
        _above(
            "model-based, transition revaluation", score["model-based", "transition"], 0.5, "MB revalues transitions"
        ),
        _above("Dyna-SR, transition revaluation", score["Dyna-SR", "transition"], 0.2, "replay lets Dyna-SR revalue"),
        _below("TD-Q, reward revaluation", score["TD-Q", "reward"], 0.2, "TD-Q cannot revalue without re-experience"),
    ]
    srmb, sr, mb = score["SRMB", "transition"], score["TD-SR", "transition"], score["model-based", "transition"]
    checks.append(Check("SRMB, transition revaluation", round(srmb, 3), "SRMB between TD-SR and MB", sr < srmb <= mb))
    if policy:
        checks += [
            _below("TD-SR, policy revaluation", score["TD-SR", "policy"], 0.2, "TD-SR misses a changed policy"),
            _above("model-based, policy revaluation", score["model-based", "policy"], 0.5, "MB revalues policies"),
        ]
    return checks


# -- Daw et al. 2011: stay probabilities after the four kinds of trial ------------------------
def _stay_effects(stay: Means, label: str) -> tuple[float, float]:
    """(main effect of reward, reward x transition interaction) of one agent's stay probabilities."""
    rc, rr = stay[label, "rewarded_common"], stay[label, "rewarded_rare"]
    uc, ur = stay[label, "unrewarded_common"], stay[label, "unrewarded_rare"]
    return (rc + rr - uc - ur) / 2, (rc - rr) - (uc - ur)


def _two_step_checks(store: Any, name: str) -> list[Check]:
    stay = _means(stay_by_run(store, name))
    free_reward, free_interaction = _stay_effects(stay, "hybrid w=0.0")
    based_reward, based_interaction = _stay_effects(stay, "hybrid w=1.0")
    mixed_reward, mixed_interaction = _stay_effects(stay, "hybrid w=0.5")
    return [
        _above("model-free (w=0): reward effect", free_reward, 0.05, "MF stays after reward, either transition"),
        _below("model-free (w=0): |interaction|", abs(free_interaction), 0.1, "MF ignores the transition"),
        _above("model-based (w=1): interaction", based_interaction, 0.1, "MB: reward x transition interaction"),
        _above("hybrid (w=0.5): reward effect", mixed_reward, 0.05, "hybrid: both effects (people)"),
        _above("hybrid (w=0.5): interaction", mixed_interaction, 0.05, "hybrid: both effects (people)"),
        Check(
            "interaction grows with w",
            round(based_interaction - free_interaction, 3),
            "more model-based, larger interaction",
            free_interaction < mixed_interaction < based_interaction,
        ),
    ]


# -- Russek et al. 2017 as neuro-nav's notebook runs it: steps per episode through the change --
def _steps_after_change(store: Any, name: str) -> dict[str, np.ndarray]:
    """Each agent's mean steps per episode after the change (the last phase): one value per run.

    The mean over all episodes after the change is the area under the learning curve there,
    so an agent that adapts sooner has fewer; it is what neuro-nav's figure shows, in one
    number per run."""
    rows = recorded_episodes(store, name)
    last = max(row["phase_index"] for row in rows)
    per_run: dict[tuple[str, int], list[float]] = {}
    for row in rows:
        if row["phase_index"] == last:
            per_run.setdefault((row["label"], row["run"]), []).append(float(row["length"]))
    out: dict[str, list[float]] = {}
    for (label, _), lengths in sorted(per_run.items()):
        out.setdefault(label, []).append(float(np.mean(lengths)))
    return {label: np.asarray(values) for label, values in out.items()}


def _fewer_steps(steps: dict[str, np.ndarray], faster: str, slower: str, finding: str) -> Check:
    """`faster` took fewer steps per episode after the change than `slower`, by more than two
    standard errors of the difference (runs are independent): measured is the gap in steps."""
    a, b = steps[faster], steps[slower]
    gap = float(b.mean() - a.mean())
    se = float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))
    means = f"{faster} {a.mean():.1f}, {slower} {b.mean():.1f} steps"
    return Check(f"{faster} fewer steps than {slower}", round(gap, 3), f"{finding}: {means}, gap > 2 SE = {2 * se:.1f}",
                 gap > 2 * se)


def _reward_transfer_checks(store: Any, name: str) -> list[Check]:
    steps = _steps_after_change(store, name)
    return [
        _fewer_steps(steps, "MBV", "TD-SR", "MB re-plans to the moved goal, TD-SR relearns its map slowly"),
        _fewer_steps(steps, "Dyna-SR", "TD-SR", "replay updates Dyna-SR's map, TD-SR relearns it by walking"),
        _fewer_steps(steps, "TD-SR", "TD-Q", "TD-SR re-values from its map, TD-Q only where it walks"),
    ]


def _structure_transfer_checks(store: Any, name: str) -> list[Check]:
    steps = _steps_after_change(store, name)
    return [
        _fewer_steps(steps, "MBV", "Dyna-SR", "MB re-plans round the wall at once, Dyna-SR by replay"),
        _fewer_steps(steps, "Dyna-SR", "TD-SR", "replay lets Dyna-SR find the detour, TD-SR does not"),
        _above(
            "TD-SR, steps per episode after the wall",
            float(steps["TD-SR"].mean()),
            90.0,
            "TD-SR keeps walking into the wall (100 steps: the limit)",
        ),
    ]


def _draw_steps_per_episode(order: tuple[str, ...]) -> Callable[[Any, str, str], None]:
    """A drawing of steps per episode through the change, laid out as neuro-nav's notebook
    draws it (its colours for its agents, in `order`) so the two can be put side by side."""

    def draw(store: Any, name: str, path: str) -> None:
        from .figures import curves, phase_offsets, require_matplotlib

        plt = require_matplotlib()
        rows = recorded_episodes(store, name)
        (agents,) = curves(rows, "length").values()
        offsets = phase_offsets(rows)
        change = max(offsets.values())
        changed = next(row["phase"] for row in rows if offsets[row["phase_index"]] == change)
        colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
        fig, ax = plt.subplots(figsize=(8.25, 2.6))
        for colour, label in zip(colours, order):
            mean, se, runs = agents[label]
            x = np.arange(len(mean))
            ax.plot(x, mean, color=colour, linewidth=1.6, label=label)
            ax.fill_between(x, mean - se, mean + se, color=colour, alpha=0.15, linewidth=0)
        ax.axvline(change - 0.5, color="gray", linestyle=":", linewidth=2)
        ax.annotate(changed, (change, 103), fontsize=8, color="0.3", xytext=(3, 0), textcoords="offset points")
        ax.set_ylim(-3, 110)
        ax.set_xlabel("episode")
        ax.set_ylabel("steps per episode")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(fontsize=9, loc="center left", bbox_to_anchor=(1, 0.5), frameon=False,
                  title=f"mean of {runs} runs\nband: 1 SE", title_fontsize=8)
        ax.set_title(name, fontsize=10)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)

    return draw


# -- Russek et al. 2017, second view: return when shown the change, then tested from the start --
def _test_returns(store: Any, name: str) -> dict[str, float]:
    """Each agent's mean return over the test phase, over runs."""
    returns: dict[str, list[float]] = {}
    for row in recorded_episodes(store, name):
        if row["phase"] == "test":
            returns.setdefault(row["label"], []).append(float(row["return"]))
    return {label: float(np.mean(values)) for label, values in returns.items()}


def _draw_phase_returns(store: Any, name: str, path: str) -> None:
    """Bars of each agent's mean return in the test phase (runs' means, one standard error):
    what the checks read, which a learning curve would hide behind 200 episodes of learning."""
    per_run: dict[tuple[str, str, int], list[float]] = {}
    for row in recorded_episodes(store, name):
        if row["phase"] == "test":
            per_run.setdefault((row["label"], row["phase"], row["run"]), []).append(float(row["return"]))
    values: dict[tuple[str, str], list[float]] = {}
    for (label, phase, _), returns in per_run.items():
        values.setdefault((label, phase), []).append(float(np.mean(returns)))
    plot_bars(
        mean_and_error(values), path, "mean return per test episode", f"{name}: tested from the start", (), (0, 1.05)
    )


def _reward_transfer_tested_checks(store: Any, name: str) -> list[Check]:
    ret = _test_returns(store, name)
    return [
        _above("model-based, test return", ret["model-based"], 0.8, "MB goes to the new goal"),
        _above("Dyna-SR, test return", ret["Dyna-SR"], 0.5, "Dyna-SR re-plans by replay"),
        _below("TD-SR, test return", ret["successor representation"], 0.3, "TD-SR's map follows the old policy"),
        _below("TD-Q, test return", ret["model-free (Q)"], 0.3, "TD-Q walks to the old arm"),
    ]


def _structure_transfer_tested_checks(store: Any, name: str) -> list[Check]:
    ret = _test_returns(store, name)
    mb, dyna, sr, q = ret["model-based"], ret["Dyna-SR"], ret["successor representation"], ret["model-free (Q)"]
    return [
        _above("model-based, test return", mb, 0.7, "MB finds the way round the new wall"),
        Check(
            "Dyna-SR, test return",
            round(dyna, 3),
            "Dyna-SR partly: behind MB, ahead of TD-SR",
            sr + 0.3 < dyna < mb,
        ),
        _below("TD-SR, test return", sr, 0.3, "TD-SR keeps walking into the wall"),
        _below("TD-Q, test return", q, 0.3, "TD-Q keeps walking into the wall"),
    ]


REPRODUCTIONS = {
    r.name: r
    for r in (
        Reproduction(
            "momennejad2017-design-a",
            "reward and transition revaluation",
            "Momennejad et al. 2017, Nat Hum Behav 1: 680-692",
            lambda store, name: _revaluation_checks(store, name, policy=False),
            cost=2.7,
        ),
        Reproduction(
            "momennejad2017-design-b",
            "reward, transition and policy revaluation",
            "Momennejad et al. 2017, Nat Hum Behav 1: 680-692",
            lambda store, name: _revaluation_checks(store, name, policy=True),
            cost=5.1,
        ),
        Reproduction(
            "daw2011-two-step",
            "stay probabilities of model-free, model-based and hybrid agents",
            "Daw et al. 2011, Neuron 69(6): 1204-1215",
            _two_step_checks,
        ),
        Reproduction(
            "russek2017-reward-transfer",
            "reward transfer: the goal moves to the other arm of the T-maze (steps per episode)",
            "Russek et al. 2017, PLoS Comput Biol 13(9): e1005768",
            _reward_transfer_checks,
            _draw_steps_per_episode(("TD-Q", "TD-SR", "Dyna-SR", "MBV")),
            cost=11.8,
        ),
        Reproduction(
            "russek2017-structure-transfer",
            "structure transfer: the short corridor of the detour maze is blocked (steps per episode)",
            "Russek et al. 2017, PLoS Comput Biol 13(9): e1005768",
            _structure_transfer_checks,
            _draw_steps_per_episode(("TD-Q", "Dyna-Q", "Dyna-SR", "MBV", "TD-SR")),
            cost=14.6,
        ),
        Reproduction(
            "russek2017-reward-transfer-tested",
            "reward transfer, shown the moved goal, then tested from the start (return)",
            "Russek et al. 2017, PLoS Comput Biol 13(9): e1005768",
            _reward_transfer_tested_checks,
            _draw_phase_returns,
            cost=8.7,
        ),
        Reproduction(
            "russek2017-structure-transfer-tested",
            "structure transfer, shown the new wall, then tested from the start (return)",
            "Russek et al. 2017, PLoS Comput Biol 13(9): e1005768",
            _structure_transfer_tested_checks,
            _draw_phase_returns,
            cost=11.6,
        ),
    )
}


def _measured(name: str, value: float, finding: str, passed: bool) -> Check:
    return Check(name, round(float(value), 3), finding, bool(passed))


REPRODUCTIONS.update(
    (r.name, r)
    for r in (
        Reproduction(
            "schapiro2013-communities",
            "a successor representation learnt on random walks groups states by community",
            "Schapiro et al. 2013, Nat Neurosci 16(4): 486-492",
            study=studies.schapiro2013,
            seeds=5,
            cost=3.3,
        ),
        Reproduction(
            "stachenfeld2017-place-fields",
            "successor-representation place fields follow geodesic, not straight-line, distance",
            "Stachenfeld et al. 2017, Nat Neurosci 20(11): 1643-1653",
            study=studies.stachenfeld2017,
            seeds=3,
            cost=7.1,
        ),
        Reproduction(
            "dabney2020-distributional",
            "distributional cells spread their values in the order of their optimism",
            "Dabney et al. 2020, Nature 577: 671-675",
            study=studies.dabney2020,
            seeds=5,
            cost=2.2,
        ),
        Reproduction(
            "zorowitz2020-pessimism",
            "an optimistic agent reaches the reward past a loss, a pessimistic one avoids the path",
            "Zorowitz et al. 2020, Biol Psychiatry Cogn Neurosci Neuroimaging 5(2): 170-181",
            study=studies.zorowitz2020,
            seeds=3,
        ),
        Reproduction(
            "eldar2016-mood",
            "mood rises while learning, falls at a reward switch, returns to baseline",
            "Eldar et al. 2016, Trends Cogn Sci 20(1): 15-24",
            study=studies.eldar2016,
            seeds=5,
            cost=6.9,
        ),
    )
)


REPRODUCTIONS.update(
    (r.name, r)
    for r in (
        Reproduction(
            "cools2002-reversal",
            "probabilistic reversal learning: perseverative errors after a reversal fall as the learning rate rises",
            "Cools et al. 2002, J Neurosci 22(11): 4563-4567",
            lambda store, name: decision.reversal_checks(store, name, _measured),
            decision.draw_reversal,
        ),
        Reproduction(
            "cools2002-reversal-criterion",
            "reversal after 10 correct choices in a row: perseverative errors fall, reversals rise with lr",
            "Cools et al. 2002, J Neurosci 22(11): 4563-4567",
            lambda store, name: decision.criterion_checks(store, name, _measured),
            decision.draw_criterion,
        ),
        Reproduction(
            "frank2004-selection",
            "probabilistic selection: pairs learnt by reward difference; choose A, avoid B in a test without feedback",
            "Frank et al. 2004, Science 306(5703): 1940-1943",
            lambda store, name: decision.selection_checks(store, name, _measured),
            decision.draw_selection,
            cost=4.1,
        ),
        Reproduction(
            "bechara1994-iowa",
            "Iowa gambling task: choices drift from the bad decks (A, B) to the good ones (C, D)",
            "Bechara et al. 1994, Cognition 50(1-3): 7-15",
            lambda store, name: decision.iowa_checks(store, name, _measured),
            decision.draw_iowa,
        ),
        Reproduction(
            "daw2006-restless-bandit",
            "four-armed restless bandit: softmax Q-learners switch arms less as beta rises",
            "Daw et al. 2006, Nature 441(7095): 876-879",
            lambda store, name: decision.restless_checks(store, name, _measured),
            decision.draw_restless,
        ),
        Reproduction(
            "wilson2014-horizon",
            "horizon task: directed exploration grows with the horizon for a learner with an information bonus",
            "Wilson et al. 2014, J Exp Psychol Gen 143(6): 2074-2081",
            lambda store, name: decision.horizon_checks(store, name, _measured),
            decision.draw_horizon,
        ),
        Reproduction(
            "tolman1930-latent-learning",
            "latent learning: after exploring a maze without reward, learners with a map go straight to the goal",
            "Tolman & Honzik 1930, Univ Calif Publ Psychol 4: 257-275",
            lambda store, name: decision.latent_checks(store, name, _measured),
            decision.draw_latent,
            cost=2.6,
        ),
        Reproduction(
            "bakker2002-cued-t-maze",
            "cued T-maze: a learner that keeps the start's cue goes to the cued arm, one that sees its cell alone not",
            "Bakker 2002, Adv Neural Inf Process Syst 14: 1475-1482",
            study=decision.cued_maze_study,
            seeds=6,
        ),
        Reproduction(
            "charnov1976-foraging",
            "patch foraging: learners leave a depleting patch later when travel takes longer (marginal value theorem)",
            "Charnov 1976, Theor Popul Biol 9(2): 129-136; Constantino & Daw 2015, CABN 15(4): 837-853",
            study=decision.foraging_study,
            seeds=8,
        ),
    )
)


def reproduction(name: str) -> Reproduction:
    if name not in REPRODUCTIONS:
        from graphstore import did_you_mean

        raise ReproductionError(
            f"no reproduction {name!r}{did_you_mean(name, REPRODUCTIONS)} (reproductions: {', '.join(REPRODUCTIONS)})"
        )
    return REPRODUCTIONS[name]


def reproduce(
    name: str,
    seeds: int | None = None,
    out_dir: str | Path | None = None,
    store: str | None = None,
    workers: int | None = None,
    figure: bool = True,
    observers: Sequence[Any] = (),
) -> Outcome:
    """Run reproduction `name` from scratch and check it; the figure goes to `out_dir/NAME.png`.

    `store` None: a new embedded store in a temporary directory, removed afterwards (a study
    records nothing, and runs in this process). `observers` (RunObserver) are told of the
    experiment's runs, as a progress bar is.
    """
    chosen = reproduction(name)
    if seeds is not None and seeds < 1:
        raise ReproductionError(f"seeds: expected a positive number, got {seeds}")
    if chosen.study is not None:
        path = Path(out_dir or ".") / f"{name}.png" if figure else None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        count = seeds or chosen.seeds
        checks = chosen.study(count, str(path) if path else None, _measured)
        return Outcome(chosen, count, checks, path)
    assert chosen.checks is not None
    spec = load_spec(name)
    text = spec_path(name).read_text(encoding="utf-8")
    if seeds is not None:
        spec = dataclasses.replace(spec, seeds=tuple(range(seeds)))
        text += f"\n# seeds = {seeds} (graphtasks reproduce --seeds)\n"
    with tempfile.TemporaryDirectory(prefix="graphtasks-reproduce-") as scratch:
        location = store or str(Path(scratch) / "store")
        report = run_and_record(spec, text, location, workers, observers=observers)
        if report.failures:
            cell, error = report.failures[0]
            raise GraphtasksError(f"reproduction {name!r}: run {cell.index} failed: {error}")
        with open_store(location, "r") as opened:
            checks = chosen.checks(opened, spec.name)
            path = None
            if figure:
                path = Path(out_dir or ".") / f"{name}.png"
                path.parent.mkdir(parents=True, exist_ok=True)
                if chosen.draw is not None:
                    chosen.draw(opened, spec.name, str(path))
                else:
                    plot_experiment(opened, spec.name, str(path), smooth=5)
    return Outcome(chosen, len(spec.seeds), checks, path)


def _reproduce_here(task: tuple[str, int | None, str | Path | None, int | None, bool]) -> tuple[Any, ...]:
    """One reproduction in a worker process: ("ok", seeds, checks, figure) or ("error", error)."""
    name, seeds, out_dir, workers, figure = task
    try:
        outcome = reproduce(name, seeds, out_dir, None, workers, figure)
    except Exception as error:  # noqa: BLE001 - the driver raises it, in its turn
        try:
            import pickle

            pickle.dumps(error)
        except Exception:  # noqa: BLE001 - an error that cannot travel: its words do
            error = GraphtasksError(f"reproduction {name!r}: {type(error).__name__}: {error}")
        return ("error", error)
    return ("ok", outcome.seeds, outcome.checks, outcome.figure)


def _serve_reproductions(connection: Any, parent: int) -> None:
    """A worker process: run the reproductions the driver sends, one at a time, until None."""
    from .sweep import die_with

    die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it ends its workers
    try:
        while (task := connection.recv()) is not None:
            connection.send(_reproduce_here(task))
    except (EOFError, OSError):  # the driver is gone
        os._exit(1)


def reproduce_all(
    names: Sequence[str],
    seeds: int | None = None,
    out_dir: str | Path | None = None,
    store: str | None = None,
    workers: int | None = None,
    figure: bool = True,
    jobs: int | None = None,
    observers: Callable[[str], Sequence[Any]] = lambda name: (),
    started: Callable[[str], object] = lambda name: None,
) -> Iterator[Outcome]:
    """Run the reproductions `names` and yield their outcomes in that order.

    Each reproduction is independent (its own store, seeds and figure), so `jobs` of them run
    at once, each in a process of its own that plays its runs itself (`workers`, unless given,
    is 1 there); their numbers are those of one run after another, only sooner.

    Parameters
    ----------
    names : sequence of str
        The reproductions (`REPRODUCTIONS`), in the order their outcomes come.
    seeds, out_dir, workers, figure
        As `reproduce` takes them, for each reproduction.
    store : str, optional
        One store to record every reproduction in: they run one after another (a store has
        one writer at a time).
    jobs : int, optional
        Reproductions run at once (default: one per core; 1 without processes, in this one,
        the runs of each on `workers` processes). With `store` only 1.
    observers : callable
        The run observers of a reproduction (by name) run in this process (`jobs` 1).
    started : callable
        Told each reproduction's name as it starts.

    Returns
    -------
    iterator of Outcome

    Examples
    --------
    >>> outcomes = reproduce_all(["daw2011-two-step"], seeds=2, figure=False, jobs=1, workers=1)
    >>> [o.reproduction.name for o in outcomes]
    ['daw2011-two-step']
    """
    for name in names:
        reproduction(name)  # an unknown name: one line, before anything runs
    if jobs is not None and jobs < 1:
        raise ReproductionError(f"jobs: expected a positive number, got {jobs}")
    if seeds is not None and seeds < 1:
        raise ReproductionError(f"seeds: expected a positive number, got {seeds}")
    if store is not None and jobs is not None and jobs > 1:
        raise ReproductionError("jobs: reproductions recorded into one --store run one at a time (leave out --jobs)")
    count = 1 if store is not None else min(jobs or os.cpu_count() or 1, len(names))
    if count <= 1:
        for name in names:
            started(name)
            yield reproduce(name, seeds, out_dir, store, workers, figure, observers(name))
        return
    yield from _reproduce_in_processes(names, seeds, out_dir, 1 if workers is None else workers, figure, count,
                                       started)


def _reproduce_in_processes(
    names: Sequence[str], seeds: int | None, out_dir: str | Path | None, workers: int, figure: bool, count: int,
    started: Callable[[str], object],
) -> Iterator[Outcome]:
    """`reproduce_all` on `count` worker processes, one reproduction each at a time, started
    the longest first (`Reproduction.cost`); outcomes come in the order of `names` as soon as
    they and every one before have ended."""
    context = multiprocessing.get_context()
    slots: list[tuple[Any, Any]] = []
    running: dict[int, int] = {}  # slot -> index of its reproduction
    ended: dict[int, tuple[Any, ...]] = {}
    following, shown = 0, 0

    order = sorted(range(len(names)), key=lambda i: -REPRODUCTIONS[names[i]].cost)  # the longest first

    def assign(slot: int) -> None:
        nonlocal following
        if following < len(names):
            index = order[following]
            started(names[index])
            running[slot] = index
            slots[slot][1].send((names[index], seeds, out_dir, workers, figure))
            following += 1
        else:
            running.pop(slot, None)

    try:
        for slot in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=_serve_reproductions, args=(child, os.getpid()), daemon=True)
            process.start()
            child.close()
            slots.append((process, parent))
            assign(slot)
        while shown < len(names):
            while shown in ended:
                result = ended.pop(shown)
                if result[0] == "error":
                    raise result[1]
                _, used, checks, path = result
                yield Outcome(REPRODUCTIONS[names[shown]], used, checks, path)
                shown += 1
            if shown == len(names):
                break
            waiting = {slots[s][1]: s for s in running} | {slots[s][0].sentinel: s for s in running}
            for ready in wait(list(waiting)):
                slot = waiting[ready]
                if slot not in running:
                    continue  # its pipe and its sentinel were both ready
                got = received(*slots[slot])
                if got is STILL_WORKING:
                    continue
                if got is None:
                    name = names[running[slot]]
                    raise GraphtasksError(f"reproduction {name!r}: its worker process died (killed or out of memory)")
                ended[running[slot]] = got
                assign(slot)
    finally:
        stop_workers(slots)
