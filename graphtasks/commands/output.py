"""Printing query results and listings as aligned tables, JSON or CSV (a table's header bold on a
terminal: `graphtasks.colour`)."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any, Sequence, TextIO

from graphtasks.colour import paint

from .errors import CommandError


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def print_rows(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", out: TextIO | None = None
) -> None:
    out = out or sys.stdout  # looked up per call: a default bound at import would miss redirections
    if fmt == "json":
        json.dump([dict(zip(columns, row)) for row in rows], out, indent=2, default=str)
        out.write("\n")
        return
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
        return
    text = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in text]) for i, c in enumerate(columns)]
    out.write(paint("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(), "header", out) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for row in text:
        out.write("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
    out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def add_format_argument(parser) -> None:
    parser.add_argument(
        "--format", choices=["table", "json", "csv"], default="table", help="output format (default: table)"
    )


MAX_PARAM_DEPTH = 32  # nesting of a JSON parameter value; deeper is refused before parsing


def parse_params(items: Sequence[str] | None, option: str = "--param") -> dict[str, Any]:
    """KEY=VALUE pairs; VALUE is read as JSON when it parses, else kept as text.

    JSON values nested deeper than MAX_PARAM_DEPTH are refused: Python's JSON reader (and the
    stores' value conversion after it) recurse per level and would fail with RecursionError.
    """
    params: dict[str, Any] = {}
    for item in items or ():
        from tasks.data import json_depth  # here: `tasks` loads every family, which a query does not need

        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"{option}: expected KEY=VALUE, got {item!r}")
        depth = json_depth(value)
        if depth > MAX_PARAM_DEPTH:
            raise CommandError(f"{option} {key}: value nested {depth} levels deep; the limit is {MAX_PARAM_DEPTH}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params
