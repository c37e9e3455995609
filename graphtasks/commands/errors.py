"""The command line's own error: bad arguments, reported as one `graphtasks: error:` line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphstore import GraphtasksError


class CommandError(GraphtasksError):
    """A command-line argument is wrong; the message names the option."""


@contextmanager
def blame(option: str, active: bool = True) -> Iterator[None]:
    """Report a ValueError/TypeError raised while library code takes the values of `option`.

    Library code raises plain ValueError/TypeError for bad parameters (what gymnasium users
    expect); here the values came from the command line, so they are the user's to fix. Only
    active when the user gave such values: with none, the same error is a bug and keeps its
    traceback.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        if not active or isinstance(exc, GraphtasksError):
            raise
        raise CommandError(f"{option}: {exc}") from exc
