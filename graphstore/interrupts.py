"""Ctrl-C held back while a store write finishes.

Why: a KeyboardInterrupt raised half-way through closing an embedded store (its checkpoint,
then the release of its file lock) leaves a database object that is neither open nor closed;
a later opening in the same process can then write while the stale object still holds the
files, and what that object does at exit can undo the later write. Holding SIGINT back for
the second or so a write takes, and raising it right after, keeps every write and every
close whole. Only the main thread receives signals, so elsewhere this does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block with SIGINT held back; a Ctrl-C during it is raised when it ends.

    Examples
    --------
    >>> with interrupts_held():
    ...     total = sum(range(10))
    >>> total
    45
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[tuple[int, FrameType | None]] = []

    def hold(number: int, frame: FrameType | None) -> None:
        received.append((number, frame))

    previous: Any = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and callable(previous):
            previous(*received[0])  # the default handler raises KeyboardInterrupt here
