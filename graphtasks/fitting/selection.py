"""Which runs a fit, a comparison or a figure takes: by phase, label, condition and source.

An experiment's runs are of two sources. **people**: sessions played in the browser
(`graphtasks serve`) and imported events files (`fit import`): a `Participant` performed
them. **agents**: the runs of the spec's agents (`graphtasks experiment run`) and pilot
sessions (agents playing through the study server: their Participant's `source` is
`pilot: AGENT`). Fitting both together as one group, or comparing models over both, pools
simulated choices with people's; a hierarchical fit and every comparison refuse to unless
the source is chosen (`--source people`, `--source agents`, or `--source all` to pool them
knowingly).

A selection names what it takes; a name that is not the experiment's (a phase, a label, a
condition) or a selection that takes nothing is refused in one line, naming what there is.
A phase selection restricts the trials fitted: the agent starts afresh at the first trial of
the selected phases and does not learn from the phases left out.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from graphtasks.experiments.ids import experiment_uid

from .behaviour import BehaviourError, run_phases
from .models import refuse_mixed_likelihoods

PEOPLE, AGENTS, ALL = "people", "agents", "all"
SOURCES = (PEOPLE, AGENTS, ALL)
PILOT = "pilot: "  # the start of a pilot session's Participant source (graphtasks.serve.app)

RUNS_QUERY = (
    "MATCH (r:Run) WHERE r.owner = $uid OPTIONAL MATCH (p:Participant)-[:PERFORMED]->(r) "
    "RETURN r.index, r.label, r.agent, r.condition, p.participant_id, p.source ORDER BY r.index"
)
PHASES_QUERY = "MATCH (x:Experiment)-[:HAS_PHASE]->(p:Phase) WHERE x.uid = $uid RETURN DISTINCT p.name, p.index"


@dataclass(frozen=True)
class Selection:
    """What to take of an experiment's runs; empty fields take everything.

    Parameters
    ----------
    phases
        Phase names: only the trials of these phases (fits), or fits made of them (show, compare).
    labels
        Run labels: an agent setting's label, or a participant's id (a session's or an import's).
    conditions
        Condition names of the spec.
    source
        "people", "agents" or "all"; None: not chosen (a pooling command then refuses a mix).

    Examples
    --------
    >>> from graphtasks.fitting.selection import Selection
    >>> Selection(phases=("test",), source="people").describe()
    '--phase test --source people'
    >>> Selection().describe()
    'every run'
    """

    phases: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    source: str | None = None

    def __post_init__(self) -> None:
        if self.source is not None and self.source not in SOURCES:
            raise BehaviourError(f"--source: expected one of {', '.join(SOURCES)}, got {self.source!r}")

    def describe(self) -> str:
        """The selection as the options that make it ('every run' for none)."""
        parts = [f"--phase {p}" for p in self.phases] + [f"--label {x}" for x in self.labels]
        parts += [f"--condition {c}" for c in self.conditions]
        if self.source:
            parts.append(f"--source {self.source}")
        return " ".join(parts) or "every run"


@dataclass(frozen=True)
class RunInfo:
    """One run with trials: its index, label, agent, condition, participant (None for an
    agent's run), source (people or agents), group (what a figure colours it by) and the
    phases it has trials in."""

    run: int
    label: str
    agent: str
    condition: str
    participant: str | None
    source: str
    group: str
    phases: tuple[str, ...]

    @property
    def key(self) -> str:
        """What a table or a figure names the run by: the participant's id (a session, an
        import, a pilot), else the agent's label with the run's index (labels repeat)."""
        return run_key(self.run, self.label, self.participant)


def run_key(run: int, label: str, participant: str | None) -> str:
    """What a table or a figure names a run by: the participant's id, else 'LABEL (run N)'."""
    return participant if participant is not None else f"{label} (run {run})"


def source_of(participant: str | None, participant_source: str | None) -> tuple[str, str]:
    """(source, group) of a run from its Participant (none for an agent's run)."""
    if participant is None:
        return AGENTS, ""
    if isinstance(participant_source, str) and participant_source.startswith(PILOT):
        return AGENTS, participant_source
    return PEOPLE, PEOPLE


def run_table(store: Any, experiment: str) -> list[RunInfo]:
    """Every run of the experiment that has recorded trials, in order of index."""
    uid = experiment_uid(experiment)
    phases = run_phases(store, experiment)  # the trials are read where the rest of fitting reads them
    order = phase_names(store, experiment)
    out = []
    for run, label, agent, condition, participant, participant_source in store.cypher(RUNS_QUERY, {"uid": uid}).rows:
        if int(run) not in phases:
            continue
        source, group = source_of(participant, participant_source)
        out.append(RunInfo(
            int(run), str(label), str(agent), str(condition or ""), None if participant is None else str(participant),
            source, group or str(label), tuple(p for p in order if p in phases[int(run)]),
        ))
    return out


def phase_names(store: Any, experiment: str) -> list[str]:
    """The experiment's phase names, in the spec's order (a name once, if conditions repeat it)."""
    rows = store.cypher(PHASES_QUERY, {"uid": experiment_uid(experiment)}).rows
    return list(dict.fromkeys(str(name) for name, _ in sorted(rows, key=lambda r: (int(r[1]), str(r[0])))))


def _check_names(option: str, given: Iterable[str], known: Sequence[str], what: str, experiment: str) -> None:
    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            shown = ", ".join(known[:20]) + (f", ... ({len(known)} in all)" if len(known) > 20 else "")
            raise BehaviourError(f"{option} {name!r}: experiment {experiment!r} has no {what} of that name "
                                 f"({what}s: {shown or 'none'}){hint}")


def select_runs(store: Any, experiment: str, selection: Selection) -> list[RunInfo]:
    """The runs with trials that `selection` takes, in order; BehaviourError, one line, for an
    experiment without runs with trials, a name the experiment does not have, or a selection
    that takes no run.

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.
    selection
        What to take.

    Returns
    -------
    list of RunInfo
        The runs taken; with `selection.phases`, those with trials in at least one of them.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting.selection import Selection, select_runs
    >>> with open_store(":memory:") as store:
    ...     select_runs(store, "lab", Selection())
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: experiment 'lab': no run with recorded trials
    """
    runs = run_table(store, experiment)
    if not runs:
        where = getattr(store, "location", "")
        raise BehaviourError(f"experiment {experiment!r}: no run with recorded trials" + (
            f" in {where!r}" if where and where != ":memory:" else ""))
    _check_names("--phase", selection.phases, phase_names(store, experiment), "phase", experiment)
    _check_names("--label", selection.labels, list(dict.fromkeys(r.label for r in runs)), "label", experiment)
    conditions = list(dict.fromkeys(r.condition for r in runs if r.condition))
    _check_names("--condition", selection.conditions, conditions, "condition", experiment)
    chosen = [
        r for r in runs
        if (not selection.phases or set(selection.phases) & set(r.phases))
        and (not selection.labels or r.label in selection.labels)
        and (not selection.conditions or r.condition in selection.conditions)
        and (selection.source in (None, ALL) or r.source == selection.source)
    ]
    if not chosen:
        raise BehaviourError(f"experiment {experiment!r}: no run with trials matches {selection.describe()} "
                             f"(runs with trials: {describe_sources([r.source for r in runs])})")
    return chosen


def recorded_runs(store: Any, experiment: str, selection: Any = None) -> list[int]:
    """The indices of an experiment's runs that have trials, in order.

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.
    selection
        A `Selection` (phases, labels, conditions, source): only
        the runs it takes, refusing (BehaviourError, one line) an unknown name or a selection
        that takes none; None: every run with trials (an empty list if there is none).

    Returns
    -------
    list of int
        Run indices.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.fitting import recorded_runs
    >>> with open_store(":memory:") as store:
    ...     recorded_runs(store, "lab")
    []
    """
    if selection is not None:
        return [r.run for r in select_runs(store, experiment, selection)]
    return sorted(run_phases(store, experiment))


def describe_sources(sources: Sequence[str]) -> str:
    """Runs counted by source (`sources`: each run's): '3 of people, 2 of agents' (or one of them)."""
    counts = {s: sum(1 for r in sources if r == s) for s in (PEOPLE, AGENTS)}
    return ", ".join(f"{n} of {s}" for s, n in counts.items() if n)


def refuse_mixed(sources: Sequence[str], selection: Selection, doing: str, experiment: str) -> None:
    """Refuse, in one line, to pool people's runs with agents' (`sources`: each run's) when no
    source was chosen.

    Examples
    --------
    >>> from graphtasks.fitting.selection import Selection, refuse_mixed
    >>> refuse_mixed(["agents", "people"], Selection(source="all"), "--random-effects", "study")  # pooled, as asked
    >>> refuse_mixed(["agents", "people"], Selection(), "--random-effects", "study")
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: experiment 'study': --random-effects would pool 1 people's runs \
with 1 agents' runs (spec agents' runs and pilot sessions); choose --source people or --source agents \
(--source all pools them)
    """
    if selection.source is not None or len(set(sources)) < 2:
        return
    people = sum(1 for s in sources if s == PEOPLE)
    raise BehaviourError(
        f"experiment {experiment!r}: {doing} would pool {people} people's runs with {len(sources) - people} "
        "agents' runs (spec agents' runs and pilot sessions); choose --source people or --source agents "
        "(--source all pools them)"
    )


def fitted_phases(selection: Selection, phases: Sequence[str]) -> tuple[str, ...] | None:
    """The phases a fit under `selection` takes, as recorded on its Fit: None for every phase
    (no phase chosen, or the chosen ones are all of the experiment's `phases`), else the
    chosen names in the experiment's order.

    Examples
    --------
    >>> from graphtasks.fitting.selection import Selection, fitted_phases
    >>> fitted_phases(Selection(phases=("test", "learn")), ["practice", "learn", "test"])
    ('learn', 'test')
    >>> fitted_phases(Selection(phases=("test", "learn")), ["learn", "test"]) is None
    True
    """
    if not selection.phases or set(phases) <= set(selection.phases):
        return None
    order = list(phases)
    return tuple(sorted(set(selection.phases), key=lambda p: order.index(p) if p in order else len(order)))


def phases_text(phases: Sequence[str] | None) -> str:
    """How a table shows the phases a fit took: 'all', or the names joined by '+'."""
    return "all" if not phases else "+".join(phases)


def cv_ranking(records: Sequence[dict[str, Any]], runs: Sequence[int], phases: Sequence[str] | None,
               models: Sequence[str] | None, experiment: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rank models by a stored cross-validation (`graphtasks.fitting.records.recorded_cross_validations`):
    of the plans (folds) over exactly `runs` and `phases` that hold every one of `models` (None:
    the models of the latest plan), the latest; BehaviourError in one line when there is none.

    Returns
    -------
    rows : list of dict
        Per model, best (highest held-out log-likelihood) first (`graphtasks.fitting.cv.cv_rows`).
    plan : dict
        by, folds, seed, score, choices and the uid of each model's node.

    Examples
    --------
    >>> from graphtasks.fitting.selection import cv_ranking
    >>> cv_ranking([], [0, 1], None, ["q"], "lab")
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: experiment 'lab': no cross-validation of q over these runs \
(graphtasks fit cv --models q makes one)
    """
    from .cv import cv_rows

    wanted_runs = sorted(int(r) for r in runs)
    plans: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if sorted(record["runs"]) == wanted_runs and (record["phases"] or None) == (list(phases) if phases else None):
            plans.setdefault(record["plan"], []).append(record)
    latest = sorted(plans.values(), key=lambda rs: max(str(r["created_at"] or "") for r in rs))
    if models is None and latest:
        models = sorted({r["model"] for r in latest[-1]})
    fitting = [rs for rs in latest if set(models or ()) <= {r["model"] for r in rs}]
    if not fitting:
        named = ",".join(models or ())
        stored = "; ".join(f"{', '.join(sorted(r['model'] for r in rs))} by {rs[0]['by']}" for rs in latest)
        raise BehaviourError(f"experiment {experiment!r}: no cross-validation of {', '.join(models or ())} over these "
                             f"runs (graphtasks fit cv --models {named} makes one" +
                             (f"; stored: {stored})" if stored else ")"))
    chosen = {r["model"]: r for r in fitting[-1] if r["model"] in set(models or ())}
    order = [m for m in (models or ()) if m in chosen]
    refuse_mixed_likelihoods({m: (chosen[m]["settings"] or {}).get("fixed") for m in order})
    # one plan: the same runs in the same order, so every model's participants line up
    rows = cv_rows(order, [chosen[m]["heldout"] for m in order], [chosen[m]["participants"] for m in order],
                   chosen[order[0]]["choices"])
    first = chosen[order[0]]
    plan = {"by": first["by"], "folds": first["folds"], "seed": first["seed"], "score": first["score"],
            "choices": first["choices"], "uids": {m: chosen[m]["uid"] for m in order}}
    return rows, plan
