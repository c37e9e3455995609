"""People beside agents: a study's sessions and agents' runs on the same task in one figure.

Two-step stay probabilities (after a rewarded or unrewarded, common or rare first transition)
per run, from the store's records (`graphtasks.experiments.records.stay_rows`): the
sessions of a study pooled by where they came from (people, or pilot agents), each agent of
the other experiments by its label (with its experiment and the settings that differ where
two experiments use the same label: they are never merged); bars of the mean over runs with
one standard error.
"""

from __future__ import annotations

import json
from typing import Any

from graphstore import GraphStore
from graphstore.errors import GraphtasksError
from graphtasks.experiments.figures import bars_figure, mean_and_error, require_matplotlib
from graphtasks.experiments.ids import experiment_uid
from graphtasks.experiments.records import stay_rows

PEOPLE = "people"
PARTICIPANT = "participant"  # the agent name of sessions' runs (graphtasks.serve.app)
ORDER = ("rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare")


class CompareError(GraphtasksError, ValueError):
    """An experiment to compare has no two-step trials recorded."""


def stay_table(store: GraphStore, study: str, agents: list[str]) -> dict[tuple[str, str], list[float]]:
    """Per-run stay probabilities by group and by what happened on the trial before.

    Parameters
    ----------
    store : GraphStore
        The store of the records.
    study : str
        The study's experiment name: its sessions are pooled as "people" (pilot sessions as
        "pilot: AGENT"); the runs of its spec's agents (`graphtasks experiment run STUDY.toml`)
        are grouped by their labels.
    agents : list of str
        Other experiments of agents' runs on the task: each agent label is a group. A label
        that two experiments use is never merged: each is named with its experiment and the
        settings that differ ("hybrid (exp-a: w=0.6)").

    Returns
    -------
    dict
        (group, after) -> the stay probability of each run.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.serve.compare import stay_table
    >>> with open_store(":memory:") as store:
    ...     stay_table(store, "no such study", [])
    Traceback (most recent call last):
    ...
    graphtasks.serve.compare.CompareError: 'no such study': no two-step trials recorded
    """
    names = list(dict.fromkeys([study, *agents]))
    runs = {name: _runs(store, name) for name in names}
    groups = _agent_groups(runs)
    out: dict[tuple[str, str], list[float]] = {}
    for name in names:
        rows = stay_rows(store, name)
        if not rows:
            raise CompareError(f"{name!r}: no two-step trials recorded")
        for label, run, after, stay in rows:
            _, agent, source, _ = runs[name].get(run, (label, None, None, {}))
            group = _group(source) if agent == PARTICIPANT else groups.get((name, str(label)), str(label))
            out.setdefault((group, after), []).append(float(stay))
    return out


def _runs(store: GraphStore, name: str) -> dict[int, tuple[str, Any, Any, dict[str, Any]]]:
    """An experiment's runs: index -> (label, agent, where a session came from, settings)."""
    rows = store.cypher(
        "MATCH (r:Run) WHERE r.owner = $uid OPTIONAL MATCH (p:Participant)-[:PERFORMED]->(r) "
        "RETURN r.index, r.label, r.agent, p.source, r.params",
        {"uid": experiment_uid(name)},
    ).rows
    out = {}
    for index, label, agent, source, params in rows:
        settings = json.loads(params) if isinstance(params, str) and params else params
        out[int(index)] = (str(label), agent, source, dict(settings or {}))
    return out


def _agent_groups(runs: dict[str, dict[int, tuple[str, Any, Any, dict[str, Any]]]]) -> dict[tuple[str, str], str]:
    """(experiment, agent label) -> its group's name: the label, or where experiments share a
    label, the label with its experiment and the settings in which the experiments differ."""
    settings: dict[str, dict[str, dict[str, Any]]] = {}  # label -> experiment -> settings
    for name, members in runs.items():
        for label, agent, _, params in members.values():
            if agent != PARTICIPANT:
                settings.setdefault(label, {}).setdefault(name, params)
    out = {}
    for label, by_experiment in settings.items():
        if len(by_experiment) == 1:
            out.update({(name, label): label for name in by_experiment})
            continue
        keys = sorted({k for params in by_experiment.values() for k in params})
        differ = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in by_experiment.values()}) > 1]
        for name, params in by_experiment.items():
            what = ", ".join(f"{k}={_value(params.get(k))}" for k in differ)
            out[(name, label)] = f"{label} ({name}" + (f": {what})" if what else ")")
    return out


def _value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else "none" if value is None else str(value)


def _group(source: Any) -> str:
    return str(source) if isinstance(source, str) and source.startswith("pilot: ") else PEOPLE


def stay_figure(store: GraphStore, study: str, agents: list[str]) -> tuple[Any, dict[tuple[str, str], Any]]:
    """The stay-probability bars of `stay_table`: one bar per group (people, pilots, each agent
    label) in each of the four conditions, the mean over runs with one standard error, on one
    axis from 0 to 1.

    Parameters
    ----------
    store, study, agents
        As `stay_table`.

    Returns
    -------
    (matplotlib.figure.Figure, dict)
        The figure (bars with gid 'bar:GROUP', the legend naming each group with its n) and the
        table plotted: (group, after) -> (mean, standard error, runs).
    """
    table = mean_and_error(stay_table(store, study, agents))
    title = f"{study} beside {', '.join(agents)}" if agents else study
    figure = bars_figure(table, "P(stay)", f"{title}: stay probabilities", ORDER, (0.0, 1.05), 0.5)  # room above 1
    return figure, table


def plot_stay(store: GraphStore, study: str, agents: list[str], path: str) -> dict[tuple[str, str], Any]:
    """Write the stay-probability bars of `stay_figure` to `path` (PNG); the table plotted."""
    plt = require_matplotlib()
    figure, table = stay_figure(store, study, agents)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return table
