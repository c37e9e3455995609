"""Colour on the command line: errors red, warnings yellow, table headers bold, on a terminal only.

The rules are https://no-color.org's and https://force-color.org's: text is coloured only
for a stream whose `isatty()` is true (TERM not ``dumb``); never with `--no-color` (which
sets NO_COLOR for the command and its workers) or a non-empty NO_COLOR; a non-empty
FORCE_COLOR colours a pipe or a file too, NO_COLOR still winning. This module imports nothing
of the library, so `graphtasks` can colour its error lines before (or without) loading a
command (`graphtasks` with no command stays fast).
"""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

# SGR codes of the three styles the command line uses.
STYLES = {"error": "31", "warning": "33", "header": "1"}
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def colour_wanted(stream: TextIO | None) -> bool:
    """Whether text written to `stream` may be coloured.

    Parameters
    ----------
    stream : file object or None
        Where the text goes (sys.stdout, sys.stderr, ...).

    Returns
    -------
    bool
        False with a non-empty NO_COLOR (`--no-color` sets it); else True with a non-empty
        FORCE_COLOR; else whether `stream` is a terminal (and TERM is not ``dumb``).

    Examples
    --------
    >>> import io
    >>> colour_wanted(io.StringIO())  # a file or a pipe: never, unless FORCE_COLOR
    False
    """
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def paint(text: str, style: str, stream: TextIO | None) -> str:
    """`text` in `style` (``"error"``, ``"warning"`` or ``"header"``) when `stream` takes colour.

    Parameters
    ----------
    text : str
        The text, without escape sequences of its own.
    style : str
        A key of STYLES.
    stream : file object or None
        Where it will be written (`colour_wanted` decides).

    Returns
    -------
    str
        The text, wrapped in the style's escape sequences or as given.

    Examples
    --------
    >>> import io
    >>> paint("graphtasks: error: no such task", "error", io.StringIO())
    'graphtasks: error: no such task'
    """
    if not text or not colour_wanted(stream):
        return text
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m"


def error_line(message: str, stream: TextIO | None = None) -> str:
    """The command line's one error line for `message`: `graphtasks: error: ...`, red on a terminal.

    Parameters
    ----------
    message : str
        What is wrong, on one line.
    stream : file object, optional
        Where the line goes (default: sys.stderr, looked up per call).

    Returns
    -------
    str
        The line, without its newline.

    Examples
    --------
    >>> import io
    >>> error_line("run: --seed: expected a whole number", io.StringIO())
    'graphtasks: error: run: --seed: expected a whole number'
    """
    return paint(f"graphtasks: error: {message}", "error", sys.stderr if stream is None else stream)


def warning_line(message: str, stream: TextIO | None = None) -> str:
    """The command line's one warning line: `graphtasks: warning: ...`, yellow on a terminal.

    Escape sequences in `message` (gymnasium colours its own warnings) are dropped, and a
    message of several lines is joined into one.

    Parameters
    ----------
    message : str
        The warning.
    stream : file object, optional
        Where the line goes (default: sys.stderr).

    Returns
    -------
    str
        The line, without its newline.

    Examples
    --------
    >>> import io
    >>> warning_line("--max-steps is deprecated", io.StringIO())
    'graphtasks: warning: --max-steps is deprecated'
    """
    text = " ".join(part.strip() for part in ANSI.sub("", message).splitlines() if part.strip())
    return paint(f"graphtasks: warning: {text}", "warning", sys.stderr if stream is None else stream)


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
    """`warnings.showwarning` for the command line: each warning as one `warning_line`."""
    stream = sys.stderr if file is None else file
    try:
        stream.write(warning_line(str(message), stream) + "\n")
    except (OSError, ValueError):  # stderr gone: a warning is not worth failing for
        pass
