"""The store-backend registry: a scheme picks its backend, a new backend plugs in by registering."""

from __future__ import annotations

import pytest

import tasks
from graphstore import StoreBackend, open_store, register_store_backend, store_backends
from graphstore.backends import _BACKENDS
from graphstore.errors import StoreLocationError
from graphstore.ladybug_store import LadybugStore


class SnapshotStore(LadybugStore):
    """A backend of its own scheme: 'snapshot://PATH' opens the embedded store at PATH."""

    def __init__(self, location: str, read_only: bool = False, **options) -> None:
        super().__init__(location.removeprefix("snapshot://"), read_only=read_only, **options)


def test_the_built_in_backends_and_their_schemes() -> None:
    by_name = {b.name: b for b in store_backends()}
    assert by_name["ladybug"].schemes == ()
    assert {"bolt", "neo4j", "neo4j+s"} <= set(by_name["bolt"].schemes)


def test_a_registered_backend_opens_its_scheme(tmp_path) -> None:
    register_store_backend(StoreBackend("snapshot", f"{__name__}:SnapshotStore", ("snapshot",)))
    try:
        with open_store(f"snapshot://{tmp_path / 'a.lbug'}") as store:
            assert isinstance(store, SnapshotStore)
            store.put(tasks.build("neuronav/graph/linear"))
        with open_store(str(tmp_path / "a.lbug"), "r") as store:  # the same data, through the path backend
            assert "neuronav/graph/linear" in store
    finally:
        _BACKENDS.pop("snapshot")


def test_an_unknown_scheme_names_the_known_ones(tmp_path) -> None:
    with pytest.raises(StoreLocationError, match=r"unknown scheme 'http'.*bolt://"):
        open_store("http://127.0.0.1:1/x")


def test_a_scheme_cannot_be_taken_twice() -> None:
    with pytest.raises(ValueError, match="already opened by 'bolt'"):
        register_store_backend(StoreBackend("other", "x:Y", ("bolt",)))
