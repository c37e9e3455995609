"""`graphtasks serve` on a public address (issue 43): a cap on the connections one client holds,
and a rate limit on the sessions one client starts, per client address; behind a proxy the
client is the one its X-Forwarded-For names, but only when the server is told to trust it.

Real server processes on 127.0.0.1 and real sockets. Loopback is 127.0.0.0/8: clients bound to
127.0.0.2 and 127.0.0.3 are two other addresses, as two people's machines are.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphstore import open_store
from tests.test_serve import GRID_STUDY, RESEARCHER
from tests.test_serve_guard import launch, launched, stop  # noqa: F401 - launched is a fixture

ONE, OTHER = "127.0.0.2", "127.0.0.3"  # two clients' addresses
START = b'{"params": {}}'


def ask(port: int, method: str, path: str, body: bytes | None = None, source: str = "127.0.0.1",
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One request from the address `source`."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        given = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body, {**given, **(headers or {})})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        connection.close()


def held(port: int, source: str, n: int, head: bytes = b"") -> list[socket.socket]:
    """`n` connections from `source` that send `head` and then nothing."""
    sockets = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
        if head:
            s.sendall(head)
        sockets.append(s)
    return sockets


def answer_of(s: socket.socket) -> bytes:
    """What the server sends on `s` until it closes it."""
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    return data


def sessions_stored(store: Path) -> tuple[int, int]:
    with open_store(store, "r") as s:
        participants = s.cypher("MATCH (p:Participant) RETURN count(p)").rows[0][0]
        runs = s.cypher("MATCH (r:Run) WHERE r.agent = 'participant' RETURN count(r)").rows[0][0]
    return int(participants), int(runs)


def test_a_client_past_its_connections_is_refused_while_another_is_served(tmp_path, launched):  # noqa: F811
    """One address holds 5 connections that send nothing: its 6th is answered 429 (Retry-After)
    and closed at once, while another address is served; when one of the 5 closes, the first
    address is served again."""
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    process, url, _ = launch(study, tmp_path / "store.lbug", "--max-client-connections", "5")
    launched.append(process)
    port = int(url.rsplit(":", 1)[1])
    five = held(port, ONE, 5)
    time.sleep(0.3)  # the server has taken them
    sixth = held(port, ONE, 1, b"GET /api/study HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")[0]
    began = time.monotonic()
    refused = answer_of(sixth)
    took = time.monotonic() - began
    sixth.close()
    head, _, body = refused.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 429 "), refused[:300]
    assert b"\r\nRetry-After: 1\r\n" in head and b"Content-Security-Policy" in head, head
    assert "too many connections from this address" in json.loads(body)["error"]
    assert took < 5, took  # refused, not held until a time-out
    # another address is served meanwhile, and the first one's five are still open
    status, _, text = ask(port, "GET", "/api/study", source=OTHER)
    assert status == 200, text
    for s in five:
        s.setblocking(False)
        try:
            assert s.recv(1) != b"", "the server closed a connection under the cap"
        except BlockingIOError:
            pass
    five[0].close()
    time.sleep(0.3)
    assert ask(port, "GET", "/api/study", source=ONE)[0] == 200  # room again: served
    for s in five[1:]:
        s.close()
    out = stop(process)
    assert "Traceback" not in out, out[-2000:]


@pytest.mark.slow
def test_session_starts_past_the_rate_are_answered_429_and_write_nothing(tmp_path, launched):  # noqa: F811
    """--start-rate 3: an address starts three sessions, the fourth is answered 429 with
    Retry-After (20 s: one start every 60/3 s) and the store holds three Participants and Runs;
    another address still starts one, and the researcher's token is not counted."""
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    store = tmp_path / "store.lbug"
    process, url, _ = launch(study, store, "--start-rate", "3")
    launched.append(process)
    port = int(url.rsplit(":", 1)[1])
    assert [ask(port, "POST", "/api/start", START, ONE)[0] for _ in range(3)] == [200] * 3
    for _ in range(2):
        status, head, text = ask(port, "POST", "/api/start", START, ONE)
        assert status == 429, text
        assert 18 <= int(head["retry-after"]) <= 20, head
        assert "too many sessions started from this address" in json.loads(text)["error"]
        assert "content-security-policy" in head
    status, head, text = ask(port, "POST", "/api/start", START, OTHER)
    assert status == 200, text
    status, _, text = ask(port, "POST", "/api/start", START, ONE, {"Authorization": f"Bearer {RESEARCHER}"})
    assert status == 200, text  # the researcher (a pilot) is not counted
    status, _, text = ask(port, "GET", "/researcher/sessions", None, ONE, {"Authorization": f"Bearer {RESEARCHER}"})
    assert len(json.loads(text)["sessions"]) == 5
    stop(process)
    assert sessions_stored(store) == (5, 5)


@pytest.mark.slow
def test_behind_a_trusted_proxy_the_forwarded_client_is_limited(tmp_path, launched):  # noqa: F811
    """--trusted-proxy 127.0.0.1: every connection comes from the proxy, and each request counts
    for the client its X-Forwarded-For names (the last address in it that is not the proxy):
    requests under way and sessions started are limited per forwarded client. Without the
    setting the header is ignored, and said so in one line."""
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    store = tmp_path / "store.lbug"
    process, url, _ = launch(study, store, "--trusted-proxy", "127.0.0.1", "--max-client-connections", "2",
                             "--start-rate", "2")
    launched.append(process)
    port = int(url.rsplit(":", 1)[1])
    person, another = "203.0.113.5", "198.51.100.7"

    def via(client: str, spoofed: str = "") -> dict[str, str]:
        return {"X-Forwarded-For": f"{spoofed}{client}", "X-Forwarded-Proto": "https"}

    # two requests of one client under way (their bodies still arriving): its third is refused
    partial = (f"POST /api/s/0/consent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Content-Length: 40\r\nX-Forwarded-For: {person}\r\n\r\n{{").encode()
    pending = held(port, "127.0.0.1", 2, partial)
    time.sleep(0.3)
    status, head, text = ask(port, "GET", "/api/study", headers=via(person))
    assert status == 429 and head["retry-after"] == "1", text
    assert "too many requests from this address" in text
    assert ask(port, "GET", "/api/study", headers=via(another))[0] == 200  # the proxy's other clients pass
    for s in pending:
        s.close()
    time.sleep(0.3)
    # sessions started per forwarded client; an address the client wrote in front does not help it
    starts = [ask(port, "POST", "/api/start", START, headers=via(person, f"10.9.8.{i}, "))[0] for i in range(3)]
    assert starts == [200, 200, 429]
    assert ask(port, "POST", "/api/start", START, headers=via(another))[0] == 200
    out = stop(process)
    assert "X-Forwarded-For" not in out, out  # trusted: no word about it
    assert sessions_stored(store) == (3, 3)

    # not trusted: the header is ignored (every request is 127.0.0.1's), and the server says so once
    process, url, _ = launch(study, tmp_path / "other.lbug", "--start-rate", "2")
    launched.append(process)
    port = int(url.rsplit(":", 1)[1])
    starts = [ask(port, "POST", "/api/start", START, headers=via(f"203.0.113.{i}"))[0] for i in range(3)]
    assert starts == [200, 200, 429]
    out = stop(process)
    said = [line for line in out.splitlines() if "X-Forwarded-For" in line]
    assert len(said) == 1 and "--trusted-proxy 127.0.0.1" in said[0], out


@pytest.mark.slow
def test_the_limits_settings_are_checked_in_one_line(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    for args in (["--max-client-connections", "0"], ["--start-rate", "0"], ["--trusted-proxy", "proxy.local"],
                 ["--trusted-proxy", "10.0.0.0/33"]):
        result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "s.lbug"), "serve",
                                 str(study), *args], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and result.stdout == "", (args, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and args[0] in result.stderr, result.stderr
