"""Writing output files whole or not at all.

A command that fails half-way (a full disk, a missing folder, a bad path) must not leave a
truncated file where the user expects a result, nor destroy the file that was there.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import CommandError


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_output(path: str | os.PathLike[str], data: str | bytes, option: str = "--output") -> None:
    """Write `data` to `path` through a temporary file in the same folder, renamed over it at the end.

    Special files (a device such as /dev/null, a pipe) are written directly: renaming over
    them would replace the device. Errors name the path and the option that gave it.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if target.is_dir():
            raise CommandError(f"{option} {target}: is a directory; give a file name")
        if target.exists() and not target.is_file():
            with open(target, "wb") as out:
                out.write(payload)
            return
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _default_mode()
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(payload)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, mode)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CommandError(f"{option} {target}: cannot write: {exc.strerror or exc}") from None
