"""A readers-writer lock between processes for one on-disk store: `<store>.lock` beside it.

Why our own lock: LadybugDB allows one read-write process and lets read-only processes
open next to it, but a read-only process then reads without any coordination with the
writer's checkpoints. So every process takes this lock before opening the store: readers
share it, a writer holds it alone. Waiting is bounded (`GRAPHTASKS_LOCK_TIMEOUT` seconds,
default 5, or the CLI's `--lock-timeout`); then StoreLockedError names the holder.

The writer records its PID in the lock file, so a waiting process can say who holds the
store. Within one process the lock is re-entrant (several store objects on one path).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import LockSettingError, StoreLocationError, StoreLockedError

LOCK_TIMEOUT_ENV_VAR = "GRAPHTASKS_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 5.0
POLL_SECONDS = 0.05


def lock_timeout() -> float:
    """Seconds to wait for a store lock: `GRAPHTASKS_LOCK_TIMEOUT`, else the default."""
    text = os.environ.get(LOCK_TIMEOUT_ENV_VAR, "").strip()
    if not text:
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise LockSettingError(f"{LOCK_TIMEOUT_ENV_VAR}: expected a number of seconds >= 0, got {text!r}")
    return value


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


class StoreLock:
    """One hold (shared or exclusive) of a store's lock file; `release` once."""

    def __init__(self, store_path: Path, exclusive: bool, timeout: float | None = None) -> None:
        self.path = str(lock_path(store_path))
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
                    if not exclusive and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                        self._released = True  # a store nobody here may change (read-only disk): no lock needed
                        return
                    raise StoreLocationError(f"cannot create the lock file of store {self.store!r}: {exc}") from None
                held = _HELD[self.path] = _Held(fd, os.getpid())
            try:
                if held.writers == 0 and (exclusive or held.readers == 0):
                    self._acquire(held.fd, exclusive, wait)
            except BaseException:
                if held.readers == 0 and held.writers == 0:
                    os.close(held.fd)
                    del _HELD[self.path]
                raise
            if exclusive:
                if held.writers == 0:
                    os.ftruncate(held.fd, 0)
                    os.pwrite(held.fd, f"{os.getpid()}\n".encode(), 0)
                held.writers += 1
            else:
                held.readers += 1

    def _acquire(self, fd: int, exclusive: bool, wait: float) -> None:
        deadline = time.monotonic() + wait
        op = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        while True:
            try:
                fcntl.flock(fd, op)
                return
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            if time.monotonic() >= deadline:
                raise StoreLockedError(self._busy_message(fd, exclusive, wait))
            time.sleep(POLL_SECONDS)

    def _busy_message(self, fd: int, exclusive: bool, wait: float) -> str:
        want = "write to" if exclusive else "read"
        holder = "another process"
        probe = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            holder = "processes reading it"  # a shared hold succeeded: no writer, only readers
        except OSError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
            if pid.isdigit():
                holder = f"PID {pid} (writing)"
        finally:
            os.close(probe)
        return (
            f"store {self.store!r} is locked by {holder}; gave up waiting to {want} it after {wait:g} s "
            f"(raise --lock-timeout or {LOCK_TIMEOUT_ENV_VAR})"
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
                os.ftruncate(held.fd, 0)  # no writer any more: a stale PID would mislead a waiting process
            if held.writers == 0 and held.readers == 0:
                os.close(held.fd)  # closing the last descriptor releases the flock
                del _HELD[self.path]
            elif self.exclusive and held.writers == 0:
                fcntl.flock(held.fd, fcntl.LOCK_SH)  # keep reading: downgrade to shared

