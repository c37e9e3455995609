"""Bring experiment records written before record ids were escaped up to date.

Earlier versions put names into record uids as they were (`experiment/<name>`), so the
records of an experiment whose name holds `/` or `%` could share uids with another's (see
`graphtasks.experiments.ids`). Names without those characters have the same uids either
way; the records of the others are rewritten here under escaped uids: read whole, written
under the new uids, then the old ones deleted (running it again after an interruption
finishes the job). Records two experiments already overwrote in an older store cannot be told
apart again: such a store keeps what the last writer wrote.
"""

from __future__ import annotations

from typing import Any

from graphstore import SCHEMA, GraphStore
from graphstore.errors import GraphtasksError
from graphstore.schema import quote_name

from .ids import experiment_uid, fit_uid, group_fit_uid, model_uid, participant_uid, phase_uid
from .schema import RECORD_LABELS

RELATIONS = ("HAS_PHASE", "HAS_RUN", "HAS_EPISODE", "IN_PHASE", "HAS_TRIAL", "HAS_PROBE", "HAS_CHUNK", "HOLDS_RUN",
             "PERFORMED", "FITS",
             "OF_MODEL", "HAS_FIT")


class OldRecordIds(GraphtasksError, LookupError):
    """An experiment's records have the uids of an earlier version: `graphtasks experiment migrate`."""


def stale_experiments(store: GraphStore) -> list[tuple[str, str]]:
    """(name, stored uid) of every experiment whose records need new uids."""
    rows = store.cypher("MATCH (x:Experiment) RETURN x.name, x.uid ORDER BY x.name").rows
    return [(name, uid) for name, uid in rows if uid != experiment_uid(name)]


def require_current(store: GraphStore, name: str) -> None:
    """OldRecordIds (one line saying what to run) if `name` was recorded with old uids."""
    for stale, _ in stale_experiments(store):
        if stale == name:
            raise OldRecordIds(
                f"experiment {name!r} in {store.location!r} was recorded by an earlier version whose record ids "
                "could collide; run `graphtasks experiment migrate` (it rewrites the ids, nothing else)"
            )


def _new_uid(label: str, uid: str, props: dict[str, Any], old: str, new: str) -> str:
    if uid == old:
        return new
    rest = uid[len(old) :] if uid.startswith(old + "/") else uid
    if label == "Phase":
        return phase_uid(new, props.get("condition") or "", int(props["index"]))
    if label == "Model":
        return model_uid(new, str(props["name"]), uid.rsplit("/", 1)[1])
    if label == "Participant":
        return participant_uid(new, str(props["participant_id"]))
    if label == "Fit" and "/fit/" in rest:
        run = rest.split("/fit/", 1)[0]
        return fit_uid(new + run, str(props["model"]), uid.rsplit("/", 1)[1], str(props.get("method") or "mle"))
    if label == "GroupFit":
        return group_fit_uid(new, str(props["model"]), str(props["method"]), uid.rsplit("/", 1)[1])
    return new + rest


def migrate_record_ids(store: GraphStore) -> dict[str, int]:
    """Rewrite the records of every experiment recorded with old uids; records moved per experiment.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from graphtasks.experiments.migrate import migrate_record_ids
    >>> with open_store(":memory:") as store:
    ...     migrate_record_ids(store)
    {}
    """
    moved: dict[str, int] = {}
    for name, old in stale_experiments(store):
        new = experiment_uid(name)
        mapping: dict[str, str] = {}
        nodes: list[tuple[str, list[dict[str, Any]]]] = []
        for label in RECORD_LABELS:
            declared = [p.name for p in SCHEMA.nodes[label].properties]
            columns = ", ".join(f"n.{quote_name(p)}" for p in declared)
            rows = store.cypher(f"MATCH (n:{label}) WHERE n.owner = $old RETURN {columns}", {"old": old}).rows
            out = []
            for row in rows:
                props = {k: v for k, v in zip(declared, row) if v is not None}
                mapping[props["uid"]] = uid = _new_uid(label, props["uid"], props, old, new)
                out.append({**props, "uid": uid, "owner": new})
            nodes.append((label, out))
        edges = []
        for rel in RELATIONS:
            declared_rel = SCHEMA.rels[rel]
            for a, b in declared_rel.endpoints:
                rows = store.cypher(
                    f"MATCH (a:{a})-[e:{rel}]->(b:{b}) WHERE a.owner = $old RETURN a.uid, b.uid", {"old": old}
                ).rows
                keyed = []
                for s, t in rows:
                    s, t = mapping.get(s, s), mapping.get(t, t)
                    keyed.append({"s": s, "t": t, "key": f"{s}|{t}"})
                edges.append((rel, a, b, keyed))
        store.merge_shared(nodes, edges)
        store.delete_shared(old, RECORD_LABELS)
        moved[name] = sum(len(rows) for _, rows in nodes)
    return moved
