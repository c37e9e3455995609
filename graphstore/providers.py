"""Knowledge providers: shared knowledge a task reads from the store, loaded on first use.

Some tasks read knowledge that is not part of any task (the Room task reads ConceptNet
AtLocation assertions). When a store lacks it, the task should not fail on first use, but
the code that reads the task (`tasks`, `gym_bridge`) may not import the code that loads
knowledge (`ingest`): the layers forbid it. So the loader registers itself here, in the
bottom layer, under a name, and the reader asks for the name:

- a `KnowledgeProvider` says what it provides, how to tell whether a store holds it
  (`present`, a read), and how to load it (`load`, idempotent: loading twice adds nothing);
- packages register providers with an entry point in the group `graphtasks.knowledge`
  naming a `KnowledgeProvider` (ingest registers the bundled ConceptNet snapshot), or at
  run time with `register_knowledge_provider`;
- `provide(store, name)` loads the knowledge into a store opened as a writer when it is
  missing, and says so on one line (stderr); `ensure_knowledge(location, name)` first looks
  in a read-only session, so the usual case (the knowledge is there) never takes the
  writer's lock.

Concurrency: writers take the store's lock one at a time, and `provide` looks again under
the lock, so two processes that find a fresh store empty at once load the knowledge once:
the second finds it there and adds nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

from .errors import GraphStoreError, StoreMissingError, did_you_mean
from .registry import Registry

if TYPE_CHECKING:
    from .store import GraphStore

ENTRY_POINT_GROUP = "graphtasks.knowledge"


@dataclass(frozen=True)
class KnowledgeProvider:
    """Shared knowledge and how to load it.

    Parameters
    ----------
    name : str
        The name tasks ask for, e.g. ``'conceptnet-atlocation'``.
    knowledge : str
        What it provides, as in "the store has no <knowledge>".
    source : str
        Where it comes from, as in "loading <source>".
    present : callable
        ``present(store) -> bool``: whether the store holds the knowledge (only reads).
    load : callable
        ``load(store) -> int``: load it into a store opened as a writer; the number of
        items added. Loading what is there already adds nothing.
    """

    name: str
    knowledge: str
    source: str
    present: Callable[[GraphStore], bool]
    load: Callable[[GraphStore], int]


class UnknownKnowledgeProvider(GraphStoreError, KeyError):
    """No provider of that name is registered."""

    def __str__(self) -> str:
        return str(self.args[0])


def _load_entry(entry: EntryPoint) -> None:
    """An entry point's provider, unless one of its name was registered at run time already."""
    if entry.name not in dict.keys(_PROVIDERS):
        try:
            provider = entry.load()
        except ImportError as exc:
            raise GraphStoreError(
                f"knowledge provider {entry.name!r} ({entry.value}) cannot be imported: {exc}"
            ) from exc
        register_knowledge_provider(provider)


def _unknown(name: str, known: list[str]) -> str:
    known = sorted(known)
    return (
        f"no knowledge provider {name!r} (entry point group {ENTRY_POINT_GROUP!r}){did_you_mean(name, known)}; "
        + (f"registered: {', '.join(known)}" if known else
           "none is registered: install the package (`pip install .`, or `pip install -e .` in a checkout)")
    )


_PROVIDERS: Registry[KnowledgeProvider] = Registry(
    "knowledge provider", entries=lambda: entry_points(group=ENTRY_POINT_GROUP), load_entry=_load_entry,
    error=UnknownKnowledgeProvider, message=_unknown,
)


def register_knowledge_provider(provider: KnowledgeProvider) -> KnowledgeProvider:
    """Add (or replace) a provider under its name."""
    if not isinstance(provider, KnowledgeProvider):
        raise TypeError(f"register_knowledge_provider: expected a KnowledgeProvider, got {provider!r}")
    return _PROVIDERS.register(provider.name, provider, replace=True)


def knowledge_providers() -> list[KnowledgeProvider]:
    """Every registered provider: those of the entry points, then those registered at run time."""
    return list(_PROVIDERS.values())


def knowledge_provider(name: str) -> KnowledgeProvider:
    """The provider of that name; UnknownKnowledgeProvider names the registered ones."""
    return _PROVIDERS.lookup(name)


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def provide(store: GraphStore, name: str, say: Callable[[str], None] = say_on_stderr) -> int:
    """Load provider `name`'s knowledge into `store` (open as a writer) unless it is there.

    Says what it loads on one line first (`say`, stderr by default). Returns the number of
    items added: 0 when the store held the knowledge already.
    """
    provider = knowledge_provider(name)
    if provider.present(store):
        return 0
    if getattr(store, "read_only", False):
        raise GraphStoreError(
            f"store {store.location!r} has no {provider.knowledge} and was opened read-only; "
            f"open it as a writer to load {provider.source}"
        )
    say(f"graphtasks: the store has no {provider.knowledge}; loading {provider.source} ...")
    return provider.load(store)


def ensure_knowledge(
    location: GraphStore | str | None, name: str, say: Callable[[str], None] = say_on_stderr
) -> int:
    """`provide` at a location: look in a read-only session first, open a writer only when it is missing.

    A store object is used as it is. A location that holds no store yet is created.
    Returns the number of items added.
    """
    from .store import GraphStore, open_store

    if isinstance(location, GraphStore):
        return provide(location, name, say)
    provider = knowledge_provider(name)
    try:
        with open_store(location, "r") as store:
            if provider.present(store):
                return 0  # the usual case: only read, so many processes can start at once
    except StoreMissingError:
        pass
    with open_store(location, "w") as store:
        return provide(store, name, say)  # looks again: another writer may have loaded it meanwhile
