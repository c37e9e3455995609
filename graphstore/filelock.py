"""A readers-writer lock between processes for one on-disk store: `<store>.lock` beside it.

Why our own lock: LadybugDB allows one read-write process and lets read-only processes
open next to it, but a read-only process then reads without any coordination with the
writer's checkpoints. So every process takes this lock before opening the store: readers
share it, a writer holds it alone.

Everyone waits their turn, with no limit by default: `GRAPHTASKS_LOCK_TIMEOUT` seconds (or
the CLI's `--lock-timeout`) sets one, after which StoreLockedError names the holder. Turns
are fair: a second file, `<store>.lock.queue` (made the first time a process has to wait),
is a queue in front of the lock. A waiting writer holds the queue alone, so readers that
come after it wait behind it instead of overlapping each other for ever; readers pass the
queue together.

A waiting process says so: an `on_wait` callback (`open_store(..., on_wait=...)`) gets a
`LockWait` when the wait starts, about once a second while it lasts, and once with
`done=True` when the lock is got; the same is logged (INFO) on the `graphstore.filelock`
logger.

The writer records its PID in the lock file, so a waiting process can say who holds the
store. Within one process the lock is re-entrant (several store objects on one path).
"""

from __future__ import annotations

import errno
import fcntl
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import LockSettingError, StoreLocationError, StoreLockedError

LOCK_TIMEOUT_ENV_VAR = "GRAPHTASKS_LOCK_TIMEOUT"
NO_LIMIT = math.inf  # the default lock timeout: wait until the store is free
POLL_SECONDS = (0.002, 1.5, 0.05)  # first pause between tries, growth, longest pause
REPORT_SECONDS = 1.0  # a waiting callback hears again about this often

log = logging.getLogger(__name__)
_BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
_NO_LOCK_NEEDED = (errno.EROFS, errno.EACCES, errno.EPERM)  # a read-only disk: nobody here may change the store


def lock_timeout() -> float:
    """Seconds to wait for a store lock: `GRAPHTASKS_LOCK_TIMEOUT`, else no limit (`math.inf`)."""
    text = os.environ.get(LOCK_TIMEOUT_ENV_VAR, "").strip()
    if not text:
        return NO_LIMIT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise LockSettingError(f"{LOCK_TIMEOUT_ENV_VAR}: expected a number of seconds >= 0, got {text!r}")
    return value


@dataclass(frozen=True)
class LockWait:
    """What a process waiting for a store's lock is told (see the module docstring).

    `holder` says who has the store ('PID 41321 (writing)', 'processes reading it', 'a
    process waiting to write to it', 'another process'); `pid` is the writer's PID when known.
    `waited` is seconds waited so far; `done` is True once the lock is got (the last call).
    """

    store: str
    want: str  # "read" or "write to"
    holder: str
    pid: int | None
    waited: float
    done: bool = False

    def __str__(self) -> str:
        if self.done:
            return f"store {self.store!r}: got it to {self.want} after waiting {self.waited:.1f} s"
        return f"store {self.store!r} is locked by {self.holder}; waiting to {self.want} it ({self.waited:.0f} s)"


WaitCallback = Callable[[LockWait], None]


@dataclass
class _Held:
    fd: int
    pid: int
    readers: int = 0
    writers: int = 0


_HELD: dict[str, _Held] = {}  # lock path -> this process's hold on it
_GUARD = threading.Lock()


def lock_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock")


def queue_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".lock.queue")


def _try_flock(fd: int, op: int) -> bool:
    try:
        fcntl.flock(fd, op | fcntl.LOCK_NB)
        return True
    except OSError as exc:
        if exc.errno not in _BUSY:
            raise
        return False


class StoreLock:
    """One hold (shared or exclusive) of a store's lock file; `release` once.

    `timeout`: seconds to wait (None: `lock_timeout()`, from the environment; `math.inf`: no
    limit). `on_wait`: called with a LockWait while this process waits (see the module docstring).
    """

    def __init__(
        self,
        store_path: Path,
        exclusive: bool,
        timeout: float | None = None,
        on_wait: WaitCallback | None = None,
    ) -> None:
        self.path = str(lock_path(store_path))
        self.queue = str(queue_path(store_path))
        self.store = str(store_path)
        self.exclusive = exclusive
        self._released = False
        wait = lock_timeout() if timeout is None else timeout
        with _GUARD:
            held = _HELD.get(self.path)
            if held is not None and held.pid != os.getpid():
                held = None  # inherited through fork: the parent's hold, not ours
            if held is None:
                try:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
                except OSError as exc:
                    if not exclusive and exc.errno in _NO_LOCK_NEEDED:
                        self._released = True  # a store nobody here may change (read-only disk): no lock needed
                        return
                    raise StoreLocationError(f"cannot create the lock file of store {self.store!r}: {exc}") from None
                held = _HELD[self.path] = _Held(fd, os.getpid())
            try:
                if held.writers == 0 and (exclusive or held.readers == 0):
                    # an upgrade of this process's own read hold does not queue: a writer queued
                    # ahead of it would wait for that very hold
                    self._acquire(held.fd, exclusive, wait, on_wait, queue=held.readers == 0)
            except BaseException:
                if held.readers == 0 and held.writers == 0:
                    os.close(held.fd)
                    del _HELD[self.path]
                raise
            if exclusive:
                if held.writers == 0:
                    self._record_pid(held.fd)
                held.writers += 1
            else:
                held.readers += 1

    @staticmethod
    def _record_pid(fd: int) -> None:
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # e.g. a full disk: the PID only helps a waiting process name the holder

    def _open_queue(self, exclusive: bool, create: bool) -> int | None:
        """The queue file's descriptor; None if it does not exist (and `create` is False) or a
        reader may not make it (a read-only disk)."""
        try:
            return os.open(self.queue, os.O_RDWR | (os.O_CREAT if create else 0), 0o666)
        except FileNotFoundError:
            if not create:
                return None
            raise StoreLocationError(f"cannot create the lock queue file of store {self.store!r}") from None
        except OSError as exc:
            if not exclusive and exc.errno in _NO_LOCK_NEEDED:
                return None
            raise StoreLocationError(f"cannot create the lock queue file of store {self.store!r}: {exc}") from None

    def _acquire(self, fd: int, exclusive: bool, wait: float, on_wait: WaitCallback | None, queue: bool) -> None:
        """Join the queue (alone to write, together to read), take the lock, leave the queue.

        The queue file is made the first time a process has to wait (and never removed, so
        every process queues on the same file): until then nobody can be queued ahead."""
        op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        start = time.monotonic()
        deadline = start + wait
        queue_fd = self._open_queue(exclusive, create=False) if queue else None
        if queue and queue_fd is None:
            if _try_flock(fd, op):
                return
            queue_fd = self._open_queue(exclusive, create=True)
        in_queue = queue_fd is None
        pause, growth, longest = POLL_SECONDS
        reported: float | None = None
        try:
            while True:
                if not in_queue:
                    assert queue_fd is not None
                    in_queue = _try_flock(queue_fd, op)
                if in_queue and _try_flock(fd, op):
                    break
                now = time.monotonic()
                if now >= deadline:
                    raise StoreLockedError(self._busy_message(self._holder(fd)[0], exclusive, wait))
                if reported is None or now - reported >= REPORT_SECONDS:
                    reported = now
                    self._report(LockWait(self.store, self._want(exclusive), *self._holder(fd), now - start), on_wait)
                time.sleep(min(pause, deadline - now))
                pause = min(pause * growth, longest)
        finally:
            if queue_fd is not None:
                os.close(queue_fd)  # leaves the queue
        if reported is not None:
            self._report(LockWait(self.store, self._want(exclusive), "", None, time.monotonic() - start, True), on_wait)

    @staticmethod
    def _report(wait: LockWait, on_wait: WaitCallback | None) -> None:
        log.info("%s", wait)
        if on_wait is not None:
            on_wait(wait)

    @staticmethod
    def _want(exclusive: bool) -> str:
        return "write to" if exclusive else "read"

    def _holder(self, fd: int) -> tuple[str, int | None]:
        """Who has the store: the writer (its PID from the lock file), readers, or a writer queued ahead."""
        probe = os.open(self.path, os.O_RDONLY)
        try:
            if not _try_flock(probe, fcntl.LOCK_SH):
                pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
                return (f"PID {pid} (writing)", int(pid)) if pid.isdigit() else ("another process", None)
            if not _try_flock(probe, fcntl.LOCK_EX):
                return "processes reading it", None  # a shared hold succeeded, an exclusive one not: readers
            return "a process waiting to write to it", None  # the lock is free: someone is ahead in the queue
        finally:
            os.close(probe)

    def _busy_message(self, holder: str, exclusive: bool, wait: float) -> str:
        return (
            f"store {self.store!r} is locked by {holder}; gave up waiting to {self._want(exclusive)} it after "
            f"{wait:g} s (raise --lock-timeout or {LOCK_TIMEOUT_ENV_VAR}, or unset it to wait without limit)"
        )

    def release(self) -> None:
        with _GUARD:
            if self._released:
                return
            self._released = True
            held = _HELD[self.path]
            if self.exclusive:
                held.writers -= 1
            else:
                held.readers -= 1
            if self.exclusive and held.writers == 0:
                try:
                    os.ftruncate(held.fd, 0)  # no writer any more: a stale PID would mislead a waiting process
                except OSError:
                    pass
            if held.writers == 0 and held.readers == 0:
                os.close(held.fd)  # closing the last descriptor releases the flock
                del _HELD[self.path]
            elif self.exclusive and held.writers == 0:
                fcntl.flock(held.fd, fcntl.LOCK_SH)  # keep reading: downgrade to shared
