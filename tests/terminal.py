"""Run a graphtasks command as a person at a terminal would: its stderr a pseudo-terminal (of
160 columns, as tqdm sizes its bar to the terminal), and read back what was drawn there.

tqdm redraws a bar at most every 0.1 s; the command runs with TQDM_MININTERVAL=0 and
TQDM_MINITERS=1 (tqdm's own settings, read from the environment) so that every count the bar
reaches is drawn, whatever the speed of the machine."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import dataclass

COUNTS = re.compile(r"(?P<done>\d+)/(?P<total>\d+|\?)")
EVERY_DRAW = {"TQDM_MININTERVAL": "0", "TQDM_MINITERS": "1"}


@dataclass
class Screen:
    """What a command wrote: stdout, the terminal (stderr) and its exit code."""

    code: int
    out: str
    raw: str

    @property
    def frames(self) -> list[str]:
        """Each drawing of a line on the terminal, in order."""
        return [f.strip() for f in re.split(r"[\r\n]+", self.raw) if f.strip()]

    def counts(self, desc: str) -> list[tuple[int, int | None]]:
        """Every (done, total) the bar `desc` drew, in order (total None: not known)."""
        out = []
        for frame in self.frames:
            if frame.startswith(desc + ":") and (found := COUNTS.search(frame[len(desc) + 1:])):
                out.append((int(found["done"]), None if found["total"] == "?" else int(found["total"])))
        return out

    def moved(self, desc: str) -> list[int]:
        """The counts the bar `desc` drew, each once, in order."""
        return list(dict.fromkeys(done for done, _ in self.counts(desc)))

    def eta_seconds(self, desc: str) -> list[int]:
        """Every remaining time the bar `desc` showed, in seconds."""
        out = []
        for frame in self.frames:
            if frame.startswith(desc + ":"):
                for found in re.finditer(r"<(?P<eta>\d+(?::\d+)+)", frame):
                    seconds = 0
                    for part in found["eta"].split(":"):
                        seconds = seconds * 60 + int(part)
                    out.append(seconds)
        return out


def graphtasks(*argv: str, terminal: bool = True, every_draw: bool = True, timeout: float = 300) -> Screen:
    """Run `python -m graphtasks *argv`; with `terminal`, its stderr is a pseudo-terminal (else a
    pipe, as in a script or a log); with `every_draw`, tqdm draws every count (else at its own
    pace, at most every 0.1 s, as a person sees it)."""
    env = {**os.environ, **(EVERY_DRAW if every_draw else {}), "COLUMNS": "160"}
    command = [sys.executable, "-m", "graphtasks", *argv]
    if not terminal:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        return Screen(done.returncode, done.stdout, done.stderr)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # every writer of the terminal is gone
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                                   env=env, text=True)
        os.close(slave)
        out, _ = process.communicate(timeout=timeout)
        reader.join(timeout=10)
    finally:
        os.close(master)
    return Screen(process.returncode, out, b"".join(chunks).decode("utf-8", "replace"))
