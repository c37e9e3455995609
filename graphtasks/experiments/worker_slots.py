"""The two ends of a pool of forked worker processes, each with its own pipe, shared by the
sweep's workers (`sweep.py`) and `reproduce --all --jobs` (`reproduce.py`): reading what a
worker sent without mistaking a dead worker for a slow one, and stopping every worker."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

STILL_WORKING = object()  # what `received` answers for a worker that sent nothing and is alive


def received(process: Any, connection: Any) -> Any:
    """What `process` sent over `connection`: its message; `STILL_WORKING` while it has sent
    nothing and lives (its pipe and its sentinel can both be ready); None once it died without a
    word (killed, or out of memory)."""
    try:
        message = connection.recv() if connection.poll() else None
    except (EOFError, OSError):
        message = None
    if message is None and process.is_alive():
        return STILL_WORKING
    return message


def stop_workers(slots: Sequence[tuple[Any, Any]]) -> None:
    """Ask every worker of `slots` ((process, connection) pairs) to end, wait two seconds for
    each, and kill any that is still there."""
    for _, connection in slots:
        try:
            connection.send(None)
        except (OSError, ValueError):
            pass
    for process, _ in slots:
        process.join(timeout=2)
        if process.is_alive():
            process.kill()
            process.join()
