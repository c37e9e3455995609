"""POGE tests: every test gets its own on-disk embedded store (GRAPHTASKS_STORE)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "poge"
WORLDS = ("world0", "world1", "world2", "world3", "scaled_world0")


@pytest.fixture(autouse=True)
def isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    location = str(tmp_path / "store.lbug")
    monkeypatch.setenv("GRAPHTASKS_STORE", location)
    return location
