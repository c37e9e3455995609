"""`open_store` takes a path or a URI: an open store passed where a location is expected was
turned into a new database file named after its repr ("LadybugStore(':memory:')") in the
working folder; now it is refused in one line and nothing is written."""

from __future__ import annotations

import os

import pytest

from graphstore import open_store


def test_an_open_store_is_not_taken_for_a_location(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store(":memory:") as store:
        with pytest.raises(TypeError, match=r"^open_store: location must be a path or a URI, got LadybugStore"):
            open_store(store)  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []
