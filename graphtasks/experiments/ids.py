"""The ids of experiment records, built so that no two records can share one.

A record's uid is a path: `experiment/<name>`, `<experiment>/run/<i>`, `<run>/<phase>/<episode>`,
`<experiment>/<condition>/phase/<i>`, `<experiment>/model/<model>/<hash>`, ... Names are the
user's (an experiment called `coll/c`, a condition `c`), so every name that goes into a path
is escaped first: `%` as `%25` and `/` as `%2F`. Then `experiment/coll%2Fc/phase/0` (the
experiment `coll/c`) and `experiment/coll/c/phase/0` (condition `c` of the experiment `coll`)
are different records, and so are their IRIs in the RDF view, which are made from the uids.
A name without `%` or `/` is its own escape, so the uids of such experiments are the same as
before escaping existed; stores with names that had them are brought up to date by
`migrate_record_ids`.
"""

from __future__ import annotations


def part(name: str) -> str:
    """A user's name as one segment of a record uid (see the module docstring).

    Examples
    --------
    >>> from graphtasks.experiments.ids import part
    >>> part("coll/c"), part("50%"), part("plain name")
    ('coll%2Fc', '50%25', 'plain name')
    """
    return name.replace("%", "%25").replace("/", "%2F")


def experiment_uid(name: str) -> str:
    return f"experiment/{part(name)}"


def phase_uid(experiment: str, condition: str, index: int) -> str:
    """A phase of `experiment` (its uid) as runs in `condition` go through it ("": no conditions)."""
    return f"{experiment}/phase/{index}" if not condition else f"{experiment}/{part(condition)}/phase/{index}"


def run_uid(experiment: str, index: int) -> str:
    return f"{experiment}/run/{index}"


def episode_uid(run: str, phase_index: int, index: int) -> str:
    return f"{run}/{phase_index}/{index}"


def trial_uid(episode: str, step: int) -> str:
    return f"{episode}/{step}"


def probe_uid(run: str, phase_index: int) -> str:
    return f"{run}/probe/{phase_index}"


def model_uid(experiment: str, model: str, digest: str) -> str:
    return f"{experiment}/model/{part(model)}/{digest}"


def fit_uid(run: str, model: str, digest: str, method: str = "mle") -> str:
    """A fit of `model` to `run`; a hierarchical fit's part has its method and group's digest."""
    if method == "mle":
        return f"{run}/fit/{part(model)}/{digest}"
    return f"{run}/fit/{part(model)}/{part(method)}/{digest}"


def group_fit_uid(experiment: str, model: str, method: str, digest: str) -> str:
    """A hierarchical fit of `model` to a set of runs of `experiment` (the set is in `digest`)."""
    return f"{experiment}/group-fit/{part(model)}/{part(method)}/{digest}"


def participant_uid(experiment: str, participant: str) -> str:
    return f"{experiment}/participant/{part(participant)}"


def chunk_uid(experiment: str, digest: str) -> str:
    """A record chunk's uid: its experiment's and its content hash (the same file, the same uid)."""
    return f"{experiment}/chunk/{digest[:32]}"
