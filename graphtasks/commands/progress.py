"""Progress of the long commands, by one rule.

A command that can take more than two seconds draws a bar (`tqdm.auto`: a text bar in a
terminal, a widget in a Jupyter notebook) of units that move as the work is done (tasks
built, participants fitted, rows written, pages fetched), with the total only where it is
known, so that tqdm's rate and remaining time are those of the work. It draws it only where
someone watches: on a terminal (stderr), or in a Jupyter kernel; never with `--no-progress`,
and never into a pipe, a file or a log, which get the command's output alone.

Every command asks `shown` whether to draw; `add_no_progress` adds the option; `bar` makes
the bar. The fitting library's bars (`graphtasks.fitting.pool`) and the experiments'
`ProgressObserver` are drawn when the command says so (`progress(shown(...))`,
`ProgressObserver(..., disable=not shown(...))`).
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any


def watched(stream: IO[str] | None = None) -> bool:
    """Whether someone watches `stream` (default: stderr): it is a terminal, or this is a
    Jupyter kernel (where `tqdm.auto` draws a widget, and stderr is no terminal).

    Parameters
    ----------
    stream : text stream, optional
        Where the bar would go (default: `sys.stderr` as it is now).

    Returns
    -------
    bool

    Examples
    --------
    >>> import io
    >>> watched(io.StringIO())
    False
    """
    stream = sys.stderr if stream is None else stream
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        pass
    return in_jupyter()


def in_jupyter() -> bool:
    """Whether this process is a Jupyter kernel (as `tqdm.autonotebook` tells one)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython that cannot say: no kernel
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def shown(no_progress: bool | argparse.Namespace = False) -> bool:
    """Whether a command draws its progress: not with `--no-progress`, and only where someone
    watches (`watched`).

    Parameters
    ----------
    no_progress : bool or argparse.Namespace
        The `--no-progress` flag, or the parsed arguments that hold it (absent: False).

    Returns
    -------
    bool

    Examples
    --------
    >>> shown(True)
    False
    """
    if isinstance(no_progress, argparse.Namespace):
        no_progress = bool(getattr(no_progress, "no_progress", False))
    return not no_progress and watched()


def add_no_progress(parser: argparse.ArgumentParser, what: str = "no progress bar") -> None:
    """Add `--no-progress` to `parser` (its help `what`)."""
    parser.add_argument("--no-progress", action="store_true",
                        help=f"{what} (a bar is drawn only on a terminal, or as a widget in Jupyter)")


def bar(total: int | None, desc: str, unit: str, show: bool, **options: Any) -> Any:
    """A progress bar (`tqdm.auto`) of `total` units (None: not known; then no remaining time
    is shown), drawn if `show`; it leaves no line behind when it closes.

    Parameters
    ----------
    total : int or None
        Units to come, where known.
    desc : str
        What is done, before the bar.
    unit : str
        One unit ("task", "fit", "row"): the rate reads `unit/s`.
    show : bool
        Draw it (`shown`).
    **options
        More of tqdm's options (`smoothing=0` where units end in bursts).

    Returns
    -------
    tqdm.auto.tqdm

    Examples
    --------
    >>> with bar(3, "counting", "item", show=False) as counting:
    ...     counting.disable
    True
    """
    from tqdm.auto import tqdm  # a text bar in a terminal, a widget in a notebook

    return tqdm(total=total, desc=desc, unit=unit, disable=not show, leave=False, **options)
