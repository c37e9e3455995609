"""Store backends by URI scheme: a registry, as rdflib's plugins are.

A backend is a `GraphStore` subclass named by an entry point string ('module:Class') and
the URI schemes it opens. It is imported only when a location of its scheme is opened, so
a driver (e.g. `neo4j`) is needed only by those who use it. The built-in backends are
registered below; a package adds its own with an entry point in the group
`graphtasks.stores` naming a `StoreBackend`, or at run time with `register_store_backend`.
The path backend (schemes `()`) opens every location that is not a URI.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from .errors import StoreLocationError
from .registry import Registry

ENTRY_POINT_GROUP = "graphtasks.stores"


@dataclass(frozen=True)
class StoreBackend:
    """A store class and the URI schemes it opens (none: the backend of plain paths)."""

    name: str
    store_class: str  # 'package.module:Class', imported on first use
    schemes: tuple[str, ...] = ()
    description: str = ""

    def load(self) -> Any:
        module, _, name = self.store_class.partition(":")
        return getattr(import_module(module), name)


_BACKENDS: Registry[StoreBackend] = Registry(
    "store backend", entries=lambda: entry_points(group=ENTRY_POINT_GROUP),
    load_entry=lambda entry: register_store_backend(entry.load())
)


def register_store_backend(backend: StoreBackend) -> StoreBackend:
    """Add (or replace) a backend; a scheme already taken by another backend is an error."""
    for other in dict.values(_BACKENDS):  # those registered so far (registering reads no entry point)
        taken = set(other.schemes) & set(backend.schemes)
        if other.name != backend.name and (taken or (not backend.schemes and not other.schemes)):
            what = f"scheme {sorted(taken)[0]!r}" if taken else "plain paths"
            raise ValueError(f"store backend {backend.name!r}: {what} already opened by {other.name!r}")
    return _BACKENDS.register(backend.name, backend, replace=True)


def store_backends() -> list[StoreBackend]:
    """Every registered backend: the built-in ones, then those of entry points."""
    return list(_BACKENDS.values())


def backend_for(scheme: str | None) -> StoreBackend:
    """The backend of a URI scheme ('bolt', ...) or of a plain path (None)."""
    for backend in store_backends():
        if (scheme is None and not backend.schemes) or (scheme is not None and scheme.lower() in backend.schemes):
            return backend
    known = sorted(s for b in store_backends() for s in b.schemes)
    raise StoreLocationError(
        f"unknown scheme {scheme!r}; use a path, ':memory:' or one of {', '.join(s + '://' for s in known)}"
    )


register_store_backend(StoreBackend(
    "ladybug", "graphstore.ladybug_store:LadybugStore", (),
    "embedded on-disk LadybugDB (default); ':memory:' for a throwaway store",
))
register_store_backend(StoreBackend(
    "bolt", "graphstore.neo4j_store:Neo4jStore",
    ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"),
    "Neo4j or any Bolt server, through the official neo4j driver",
))
