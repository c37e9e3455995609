"""Printing query results for people (aligned tables) and programs (JSON, CSV)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

FORMATS = ("table", "json", "csv")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def render(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table") -> str:
    """The rows as text in `fmt`: 'table' (aligned, with a row count), 'json' (list of objects) or 'csv'."""
    if fmt == "json":
        return json.dumps([dict(zip(columns, row)) for row in rows], indent=2, default=str)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_cell(v) for v in row])
        return buffer.getvalue().rstrip("\n")
    if fmt != "table":
        raise ValueError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    text = [[_cell(v).replace("\n", "\\n") for v in row] for row in rows]
    widths = [len(c) for c in columns]
    for row in text:
        widths = [max(w, len(v)) for w, v in zip(widths, row)]
    line = lambda cells: "  ".join(v.ljust(w) for v, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(columns), line(["-" * w for w in widths])]
    out += [line(row) for row in text]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def add_format_option(parser: Any) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
