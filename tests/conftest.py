"""Shared fixtures: every test runs against its own real store, never the user's default."""

from __future__ import annotations

from pathlib import Path

import pytest

import tasks
from graphstore import open_store

# Reference data the tests compare against, with its sources and licences (tests/data/README.md).
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def isolated_store_location(tmp_path, monkeypatch):
    """Point the default store at a fresh temporary folder for each test."""
    location = tmp_path / "store.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(location))
    return location


@pytest.fixture
def memory_store():
    with open_store(":memory:") as store:
        yield store


@pytest.fixture(scope="session")
def loaded_store(tmp_path_factory):
    """An on-disk embedded store holding every built-in task (shared, read-only use)."""
    location = tmp_path_factory.mktemp("loaded") / "store.lbug"
    store = open_store(location)
    for task_id in tasks.builtin_ids():
        store.put(tasks.build(task_id))
    yield store
    store.close()
