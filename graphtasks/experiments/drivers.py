"""One driver per experiment and store at a time: a second waits its turn, then runs what is left.

Why: two identical `graphtasks experiment run` commands on one store (a user who pressed
enter twice, a job scheduler that retried) each planned every run not yet recorded and played
them all, side by side: twice the memory and, on shared cores, far more than twice the time,
for records that one of them then wrote over the other's. A second driver of an experiment
now waits for the first (saying so) while holding nothing but this lock, and then finds the
runs completed and skips them: two at once cost about one in memory and time.

The lock is a file: `<store>.drivers/<experiment>.lock` beside an embedded store on disk; for
a store on a server (Bolt), a file of this machine's temporary folder named by the server
and the experiment, so twin drivers on one machine wait for each other. Drivers on two
machines against one server are not kept apart: each records the runs it plays, and a run
both played is recorded once (its records are merged). A store in memory is one process's
own. Drivers of different experiments never wait for each other (the store's own lock takes
their writes in turn).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from graphtasks.experiments.drivers import driver_lock
>>> store = str(Path(tempfile.mkdtemp()) / "store.lbug")
>>> with driver_lock(store, "demo"):
...     pass
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from graphstore.errors import GraphtasksError
from graphstore.filelock import lock_timeout

from .chunks import experiment_folder

DRIVERS_SUFFIX = ".drivers"
POLL_SECONDS = 0.1


class ExperimentBusy(GraphtasksError, TimeoutError):
    """Another driver of the experiment kept it longer than the lock timeout allows."""


def driver_lock_path(location: str | None, experiment: str) -> Path | None:
    """Where the driver lock of `experiment` on the store at `location` lives (None: a store in
    memory, or no store)."""
    if location is None or location == ":memory:":
        return None
    if "://" in location:  # a server: this machine's temporary folder, named by server and experiment
        server = hashlib.sha256(location.encode("utf-8")).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / "graphtasks-drivers" / f"{server}-{experiment_folder(experiment)}.lock"
    return Path(location + DRIVERS_SUFFIX) / f"{experiment_folder(experiment)}.lock"


def _holder(fd: int) -> str:
    text = os.pread(fd, 200, 0).decode("utf-8", errors="replace").strip()
    return text or "another process"


def driver_running(location: str | None, experiment: str) -> str | None:
    """Who runs `experiment` on the store at `location` now ('PID 4131 on host'), or None
    when no driver on this machine holds its lock.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphtasks.experiments.drivers import driver_lock, driver_running
    >>> store = str(Path(tempfile.mkdtemp()) / "store.lbug")
    >>> driver_running(store, "demo") is None
    True
    """
    path = driver_lock_path(location, experiment)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return _holder(fd)
            raise
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def driver_lock(
    location: str | None,
    experiment: str,
    on_wait: Callable[[str | None], None] | None = None,
    timeout: float | None = None,
) -> Iterator[None]:
    """Hold the driver lock of `experiment` on the store at `location` for the block.

    Parameters
    ----------
    location : str or None
        The store's path or URI (None or ':memory:': nothing to hold).
    experiment : str
        The experiment's name.
    on_wait : callable, optional
        Told once with a line naming the driver it waits for when it has to wait, and with
        None when its turn comes.
    timeout : float, optional
        Seconds to wait (default: `GRAPHTASKS_LOCK_TIMEOUT` or the CLI's `--lock-timeout`,
        else no limit); then ExperimentBusy names the other driver.

    Returns
    -------
    context manager
        The lock, released at the end of the block (and by the system when the process ends,
        however it ends).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from graphtasks.experiments.drivers import driver_lock
    >>> store = str(Path(tempfile.mkdtemp()) / "store.lbug")
    >>> with driver_lock(store, "demo", on_wait=print):
    ...     "mine"
    'mine'
    """
    path = driver_lock_path(location, experiment)
    if path is None:
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # nobody here may change the store anyway
            yield
            return
        raise
    wait = lock_timeout() if timeout is None else timeout
    start = time.monotonic()
    told = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            holder = _holder(fd)
            if time.monotonic() - start >= wait:
                raise ExperimentBusy(f"experiment {experiment!r} on store {location!r} is being run by {holder}; "
                                     f"gave up waiting after {wait:g} s (raise --lock-timeout, or unset it to wait)")
            if not told and on_wait is not None:
                on_wait(f"waiting for the other driver of experiment {experiment!r} ({holder}) to finish")
            told = True
            time.sleep(POLL_SECONDS)
        if told and on_wait is not None:
            on_wait(None)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"PID {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        except OSError:
            pass  # a full disk: the name only helps a waiting driver say whom it waits for
        yield
    finally:
        os.close(fd)  # releases the lock
