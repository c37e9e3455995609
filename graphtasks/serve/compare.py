"""People beside agents: a study's sessions and agents' runs on the same task in one figure.

Two-step stay probabilities (after a rewarded or unrewarded, common or rare first transition)
per run, from the store's records (`graphtasks.experiments.records.STAY_BY_RUN_QUERY`): the
sessions of a study pooled by where they came from (people, or pilot agents), each agent of
the other experiments by its label; bars of the mean over runs with one standard error.
"""

from __future__ import annotations

from typing import Any

from graphstore import GraphStore
from graphstore.errors import GraphtasksError
from graphtasks.experiments.figures import mean_and_error, plot_bars
from graphtasks.experiments.ids import experiment_uid
from graphtasks.experiments.records import STAY_BY_RUN_QUERY

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
        Other experiments of agents' runs on the task: each agent label is a group.

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
    groups = {  # a session's label -> people (or the pilot agent); an agent run of the study's spec keeps its label
        label: _group(source) if agent == PARTICIPANT else str(label)
        for label, agent, source in store.cypher(
            "MATCH (r:Run) WHERE r.task = $uid OPTIONAL MATCH (p:Participant)-[:PERFORMED]->(r) "
            "RETURN r.label, r.agent, p.source",
            {"uid": experiment_uid(study)},
        ).rows
    }
    out: dict[tuple[str, str], list[float]] = {}
    for name, group_of in [(study, lambda label: groups.get(label, str(label)))] + [
        (a, lambda label: str(label)) for a in agents
    ]:
        rows = store.cypher(STAY_BY_RUN_QUERY, {"experiment": name}).rows
        if not rows:
            raise CompareError(f"{name!r}: no two-step trials recorded")
        for label, _, after, stay in rows:
            out.setdefault((group_of(label), after), []).append(float(stay))
    return out


def _group(source: Any) -> str:
    return str(source) if isinstance(source, str) and source.startswith("pilot: ") else PEOPLE


def plot_stay(store: GraphStore, study: str, agents: list[str], path: str) -> dict[tuple[str, str], Any]:
    """Write the stay-probability bars of `stay_table` to `path` (PNG); the table plotted."""
    table = mean_and_error(stay_table(store, study, agents))
    title = f"{study} beside {', '.join(agents)}" if agents else study
    plot_bars(table, path, "P(stay)", f"{title}: stay probabilities", ORDER, (0.0, 1.0), 0.5)
    return table
