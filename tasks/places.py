"""Places on a map given as data ([row, col]), checked once for the families that have maps
(grid cells, POGE tiles); errors name the field and what the map holds."""

from __future__ import annotations

from typing import Any

from .family import TaskChangeError


def place(value: Any, rows: int, cols: int, where: str, what: str = "cell") -> tuple[int, int]:
    """`value` as (row, col) inside a rows x cols map; TaskChangeError naming `where` otherwise."""
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    if not ok:
        raise TaskChangeError(f"{where}: expected a {what} [row, col], got {value!r}")
    r, c = value
    if not (0 <= r < rows and 0 <= c < cols):
        raise TaskChangeError(f"{where}: {what} [{r}, {c}] is outside the {rows}x{cols} map")
    return r, c


def places(value: Any, rows: int, cols: int, where: str, what: str = "cell") -> list[tuple[int, int]]:
    """A list of places (`place`), each error naming its index."""
    if not isinstance(value, list):
        raise TaskChangeError(f"{where}: expected a list of {what}s [[row, col], ...], got {value!r}")
    return [place(v, rows, cols, f"{where}[{i}]", what) for i, v in enumerate(value)]
