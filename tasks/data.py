"""Where the project's data files are, and reading them with errors that name the file."""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from graphstore.errors import GraphtasksError


class TaskFileError(GraphtasksError, ValueError):
    """A task definition file cannot be read; the message names the file (and field)."""


@lru_cache(maxsize=1)
def data_dir() -> Path:
    """The `data/` folder: installed as the `graphtasks.data` resource package, or the checkout's."""
    try:  # installed: a namespace package whose search location is the data folder
        spec = importlib.util.find_spec("graphtasks.data")
    except ModuleNotFoundError:
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        root = Path(location)
        if root.is_dir() and any(p.suffix == ".json" for p in root.rglob("*.json")):
            return root
    checkout = Path(__file__).resolve().parents[1] / "data"
    if not checkout.is_dir():
        raise TaskFileError(
            "graphtasks' data files are missing: reinstall the package (pip install .) or run from a checkout"
        )
    return checkout


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
