"""Run an ArcadeDB server with its Bolt plugin in a process of its own.

The server lives in a JVM (through JPype). A JVM inside a pytest worker does not mix with
the rest of the suite: the JVM raises SIGSEGV on purpose (null checks, safepoints), which
pytest's faulthandler reports as a crash, and tests that fork worker processes would copy
its threads. So the test fixture starts this script, reads one JSON line with the ports,
and closes its stdin to stop the server; the server also stops when the test run dies.

Usage: ``python arcadedb_process.py ROOT PASSWORD DATABASE``
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main(root: str, password: str, database: str) -> int:
    from arcadedb_embedded.server import ArcadeDBServer

    # The JVM writes its logs under ./log of its working directory: keep them in root.
    os.chdir(root)
    os.environ.setdefault("ARCADEDB_JVM_ERROR_FILE", os.path.join(root, "hs_err_pid%p.log"))
    last_error: Exception | None = None
    for _attempt in range(3):  # a free port can be taken between probing and binding
        bolt_port, http_port = _free_port(), _free_port()
        server = ArcadeDBServer(
            root_path=root,
            root_password=password,
            config={
                "host": "127.0.0.1",
                "http_port": http_port,
                "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
                "bolt_port": bolt_port,
            },
        )
        try:
            server.start()
        except Exception as exc:  # noqa: BLE001 - retried with other ports, reported below
            last_error = exc
            time.sleep(0.5)
            continue
        server.create_database(database)
        print(json.dumps({"bolt_port": bolt_port, "http_port": http_port}), flush=True)
        sys.stdin.read()  # returns when the test run closes the pipe or dies
        server.stop()
        return 0
    print(json.dumps({"error": f"ArcadeDB did not start: {last_error}"}), flush=True)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:4]))
