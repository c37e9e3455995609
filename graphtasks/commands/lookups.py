"""Names the command line looks up (agents, recorded experiments), refused in one line naming the closest.

A mistyped name gets `; did you mean 'x'?` from `graphstore.did_you_mean` (difflib), as task
ids, shipped specs, models and reproductions do where they are looked up.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from graphstore.errors import did_you_mean

from .errors import CommandError

MOST_LISTED = 8  # recorded experiments named in full in an error line; more are counted


def squeezed(text: str) -> str:
    """`text` in lower case, letters and digits only: how spellings of a name are compared."""
    return "".join(c for c in text.lower() if c.isalnum())


def one_of(kind: str, known: Iterable[str], listing: str,
           spellings: Mapping[str, Iterable[str]] | None = None) -> Callable[[str], str]:
    """An argparse type: a name among `known`, else one line naming the closest.

    Parameters
    ----------
    kind : str
        What the name is, for the message ("agent").
    known : iterable of str
        The names accepted.
    listing : str
        The command that lists them, for the message.
    spellings : mapping of str to iterable of str, optional
        Other spellings of a name (e.g. its class's name): never accepted, only suggested from,
        so that 'qlearnig' finds the agent 'q' of "Q-learning".

    Returns
    -------
    callable
        str -> str, raising argparse.ArgumentTypeError for an unknown name.

    Examples
    --------
    >>> agent = one_of("agent", ["q", "sarsa", "hybrid"], "graphtasks agents", {"q": ["Q-learning"]})
    >>> agent("hybrid")
    'hybrid'
    >>> agent("qlearnig")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: unknown agent 'qlearnig'; did you mean 'q'? (graphtasks agents lists them)
    """
    names = sorted(known)
    by_spelling = {squeezed(name): name for name in names}
    for name, others in (spellings or {}).items():
        for other in others:
            by_spelling.setdefault(squeezed(other), name)

    def name_of(text: str) -> str:
        if text in names:
            return text
        hint = did_you_mean(text, names)
        if not hint:
            near = difflib.get_close_matches(squeezed(text), list(by_spelling), n=6, cutoff=0.75)
            close = list(dict.fromkeys(by_spelling[spelling] for spelling in near))[:3]
            hint = "; did you mean " + " or ".join(repr(name) for name in close) + "?" if close else ""
        raise argparse.ArgumentTypeError(f"unknown {kind} {text!r:.60}{hint} ({listing} lists them)")

    return name_of


def agent_name() -> Callable[[str], str]:
    """The argparse type of an `--agent` option: a registered agent's name, else one line naming
    the closest, by its name or its class's (so 'qlearning' finds 'q', 'actor-critic' 'ac')."""
    from gym_bridge.agents.registry import AGENT_INFO

    spellings = {}
    for name, info in AGENT_INFO.items():
        cls = info.cls.__name__.removesuffix("Agent")
        module = info.cls.__module__.rpartition(".")[2]  # q_learning: where the class's module is its own
        alone = sum(other.cls.__module__ == info.cls.__module__ for other in AGENT_INFO.values()) == 1
        spellings[name] = [cls] + ([module] if alone and module[0] == cls[0].lower() else [])
    return one_of("agent", AGENT_INFO, "graphtasks agents", spellings)


def unknown_experiment(name: str, names: list[str]) -> str:
    """The line for an experiment name not recorded: the recorded ones (counted when there
    are many) and the nearest names.

    Examples
    --------
    >>> unknown_experiment("smal", ["small", "large"])
    "no recorded experiment 'smal'; recorded: small, large; did you mean 'small'?"
    """
    listed = ", ".join(names) if len(names) <= MOST_LISTED else f"{len(names)} experiments (graphtasks experiment list)"
    return f"no recorded experiment {name!r}; recorded: {listed or 'none'}{did_you_mean(name, names)}"


def recorded_names(store: Any) -> list[str]:
    """The names of the experiments recorded in `store` (agents' runs, studies, imports)."""
    from graphtasks.experiments.records import recorded_experiments

    return [row["experiment"] for row in recorded_experiments(store)]


def require_experiment(store: Any, name: str) -> None:
    """Refuse an experiment `name` not recorded in `store` in one line naming the closest.

    Parameters
    ----------
    store : GraphStore
        The open store.
    name : str
        The experiment's name as typed.

    Raises
    ------
    CommandError
        No experiment of that name: the line names the recorded ones and the nearest.
    """
    from graphtasks.experiments.api import UnknownExperiment, require_recorded

    try:
        require_recorded(store, name)
    except UnknownExperiment:
        raise CommandError(unknown_experiment(name, recorded_names(store))) from None
