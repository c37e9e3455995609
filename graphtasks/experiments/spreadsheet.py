"""Cells of the CSV and TSV files graphtasks writes (exports, the study server's tables), made
safe for a spreadsheet: a value that a spreadsheet would evaluate as a formula is written as
text (OWASP's rule for CSV injection). Parquet keeps every raw value."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_cell(value: Any) -> Any:
    """A CSV or TSV cell that a spreadsheet shows as text, never evaluates: a text value starting
    with = + - @ a tab or a carriage return gets a leading single quote (OWASP's rule for CSV
    injection). Numbers, and text that is a plain number ("-3", "+1.5e2"), are kept as they are;
    parquet keeps every raw value.

    Parameters
    ----------
    value : Any
        The cell.

    Returns
    -------
    Any
        The value, or the quoted text.

    Examples
    --------
    >>> from graphtasks.experiments.spreadsheet import spreadsheet_cell
    >>> [spreadsheet_cell(v) for v in ("=1+2", "@SUM(A1)", "-1+2", "-3", -3, 1.5, "f", None)]
    ["'=1+2", "'@SUM(A1)", "'-1+2", '-3', -3, 1.5, 'f', None]
    """
    if isinstance(value, str) and value.startswith(FORMULA_START) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_text(rows: Iterable[dict[str, Any]], columns: tuple[str, ...], delimiter: str = ",") -> str:
    """The rows as CSV (or TSV with `delimiter="\t"`), each cell through `spreadsheet_cell`."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, delimiter=delimiter, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_cell(v) for k, v in row.items()} for row in rows)
    return text.getvalue()
