"""Grid tests: a throwaway store for every test, and the reference layouts."""

from __future__ import annotations

import pytest

from tasks.grid import maps as grid_tasks

from .grid_reference import reference_templates


@pytest.fixture(autouse=True)
def temp_store(tmp_path, monkeypatch):
    """Never touch the user's default store: every test gets its own."""
    path = tmp_path / "store.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(path))
    # template folders a test adds are forgotten after it
    monkeypatch.delenv("GRAPHTASKS_GRID_TEMPLATES", raising=False)
    monkeypatch.setattr(grid_tasks, "_EXTRA_FOLDERS", [])
    return str(path)


@pytest.fixture(scope="session")
def reference():
    return reference_templates()
