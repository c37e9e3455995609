"""Grid tests: a throwaway store for every test, and the reference layouts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def temp_store(tmp_path, monkeypatch):
    """Never touch the user's default store: every test gets its own."""
    path = tmp_path / "store.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(path))
    return str(path)


def reference_templates() -> dict:
    """templates.json of the neuro-nav reference (shared/ beside the checkout, or $GRAPHTASKS_REFERENCE)."""
    candidates = [
        Path(os.environ.get("GRAPHTASKS_REFERENCE", "/nonexistent")) / "neuronav" / "templates.json",
        REPO.parent / "shared" / "reference" / "neuronav" / "templates.json",
        Path("/work/shared/reference/neuronav/templates.json"),
    ]
    for path in candidates:
        if path.is_file():
            return json.loads(path.read_text())["grid"]
    raise FileNotFoundError(f"reference templates.json not found; looked in {[str(p) for p in candidates]}")


@pytest.fixture(scope="session")
def reference():
    return reference_templates()
