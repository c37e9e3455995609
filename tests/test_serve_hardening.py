"""`graphtasks serve` on a public address (issue 43): stalled clients are cut off while people are
served, every response (static files too) carries the security headers, a value a spreadsheet
would evaluate is written as text, and the server works behind a TLS reverse proxy.

Real server processes on 127.0.0.1 and real sockets, as in tests/test_serve.py; the reverse proxy
is a few lines of asyncio here that do what nginx's `proxy_pass` with the usual `proxy_set_header`
lines does (docs/deploy.md), with a self-signed certificate made by openssl.
"""

from __future__ import annotations

import asyncio
import csv
import http.client
import io
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.experiments.spreadsheet import csv_text, spreadsheet_cell
from tests.test_serve import (
    GRID_STUDY,
    RESEARCHER,
    TWO_STEP_STUDY,
    Server,
    play,
    researcher,
    serve,  # noqa: F401 - the fixture
    start_session,
)
from tests.test_serve_guard import launch, launched, raw, stop  # noqa: F401 - launched is a fixture

SECURITY = ("content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy")


# -- slow clients ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_stalled_clients_are_cut_off_while_a_participant_is_served(tmp_path, launched):  # noqa: F811
    """100 connections that send nothing, half a header, or half a body, and 10 that trickle a
    header byte every half second: all are closed within the request time-out (4 s here; 10 s by
    default) plus slack, while a participant starts a session and plays it meanwhile; the server says nothing
    about the clients it cut off (a traceback each filled its output pipe and stalled it)."""
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    # the stalled clients and the participant share one address: the cap per client is lifted (it is tested in
    # tests/test_serve_limits.py)
    process, url, _ = launch(study, tmp_path / "store.lbug", "--request-timeout", "4", "--max-client-connections",
                             "200")
    launched.append(process)
    port = int(url.rsplit(":", 1)[1])
    heads = [b"", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n",
             b"POST /api/start HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: 400\r\n\r\n{\"params\":"]
    opened = time.monotonic()
    stalled = []
    for i in range(100):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(heads[i % 3])
        stalled.append(s)
    trickling = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(10)]
    header = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200

    # a participant is served while they are open
    served = time.monotonic()

    class Participant(threading.Thread):
        trials = 0
        error: BaseException | None = None

        def run(self) -> None:
            try:
                server = Server(str(study), tmp_path / "store.lbug", port)
                self.trials = len(play(server, start_session(server)))
            except BaseException as exc:  # noqa: BLE001 - raised in the test below
                self.error = exc

    participant = Participant()
    participant.start()
    closed: dict[int, float] = {}
    sockets = stalled + trickling
    for s in sockets:
        s.setblocking(False)
    step = 0
    while len(closed) < len(sockets) and time.monotonic() - opened < 15:
        for i, s in enumerate(sockets):
            if i in closed:
                continue
            try:
                if i >= len(stalled) and step < len(header):
                    s.send(header[step:step + 1])
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:  # reset by the server
                data = b""
            if data == b"":
                closed[i] = time.monotonic() - opened
        step += 1
        time.sleep(0.5)
    participant.join(60)
    for s in sockets:
        s.close()
    assert participant.error is None, participant.error
    assert participant.trials > 0 and time.monotonic() - served < 60
    assert len(closed) == len(sockets), (f"{len(sockets) - len(closed)} of {len(sockets)} still open after 15 s",
                                         sorted(set(range(len(sockets))) - set(closed)))
    print(f"participant: {participant.trials} trials; stalled closed after {min(closed.values()):.1f}-"
          f"{max(closed.values()):.1f} s")
    assert 3 <= min(closed.values()) and max(closed.values()) < 10, sorted(closed.values())
    assert raw(url, "GET", "/api/study")[0] == 200
    out = stop(process)
    assert "Traceback" not in out and "Exception" not in out, out[-2000:]  # a client cut off is not an error


@pytest.mark.slow
def test_limits_are_checked_in_one_line(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    for args in (["--request-timeout", "0"], ["--keep-alive", "nan"], ["--max-connections", "0"]):
        result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "s.lbug"), "serve",
                                 str(study), *args], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and result.stdout == "", (args, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and args[0] in result.stderr, result.stderr


# -- headers -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_response_carries_the_security_headers(serve):  # noqa: F811 - the fixture
    server = serve(GRID_STUDY)
    port = server.url.rsplit(":", 1)[1]
    for method, path, headers, status in [
        ("GET", "/static/study.css", {}, 200),
        ("GET", "/static/study.js", {}, 200),
        ("GET", "/static/no-such-file.js", {}, 404),
        ("GET", "/", {}, 200),
        ("GET", "/api/study", {}, 200),
        ("GET", "/", {"Host": f"rebound.example:{port}"}, 400),
    ]:
        got, head, _ = raw(server.url, method, path, None, headers)
        assert got == status, (path, got)
        missing = [name for name in SECURITY if name not in head]
        assert not missing, (path, missing)
        assert "default-src 'self'" in head["content-security-policy"]
        assert head["x-content-type-options"] == "nosniff"


# -- spreadsheet injection ---------------------------------------------------------------------------


FORMULAS = ["=1+2", "+1+2", "-1+2", "@SUM(A1)", "=HYPERLINK(\"x\")", "+cmd|'/C calc'!A0"]


def test_cells_a_spreadsheet_would_evaluate_are_written_as_text():
    assert [spreadsheet_cell(v) for v in FORMULAS] == ["'" + v for v in FORMULAS]
    assert [spreadsheet_cell(v) for v in ("\t=1", "\r=1", "a=1", "-3", "+2.5", "-1e-3", "", None)] == [
        "'\t=1", "'\r=1", "a=1", "-3", "+2.5", "-1e-3", "", None]
    assert [spreadsheet_cell(v) for v in (-3, -0.5, 2, True)] == [-3, -0.5, 2, True]
    rows = [{"key": v, "reward": -1.5} for v in FORMULAS]
    for delimiter in (",", "\t"):
        read = list(csv.DictReader(io.StringIO(csv_text(rows, ("key", "reward"), delimiter)), delimiter=delimiter))
        assert [r["key"] for r in read] == ["'" + v for v in FORMULAS]
        assert {r["reward"] for r in read} == {"-1.5"}  # a negative number stays a number


@pytest.mark.slow
def test_posted_keys_reach_the_csv_as_text_and_the_store_raw(serve, tmp_path):  # noqa: F811 - the fixture
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    token = start_session(server, pid="=1+2")
    keys = iter(FORMULAS * 10)
    position = json.loads(raw(server.url, "GET", f"/api/s/{token}")[2])["position"]
    while not position["done"]:
        body = {"index": position["trial"], "action": position["available"][0], "rt": 400.0, "shown": 1000.0,
                "pressed": 1400.0, "key": next(keys)}
        code, _, text = raw(server.url, "POST", f"/api/s/{token}/trial", json.dumps(body).encode())
        assert code == 200, text
        position = json.loads(text)["position"]
    table = list(csv.DictReader(io.StringIO(researcher(server, "trials"))))
    assert [r["key"] for r in table] == ["'" + k for k, _ in zip(FORMULAS * 10, table)]
    assert all(not r[c].startswith("'") for r in table for c in ("rt", "reward", "step", "server_rt"))
    assert all(float(r["rt"]) == 400.0 and float(r["reward"]) in (0.0, 1.0) for r in table)
    server.stop()
    with open_store(server.store, "r") as store:
        stored = [r[0] for r in store.cypher("MATCH (t:Trial) RETURN t.key ORDER BY t.received_at").rows]
    assert stored[:len(FORMULAS)] == FORMULAS  # the store keeps the raw value
    result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(server.store), "experiment", "export",
                             "two-step people", "--trials"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    exported = list(csv.DictReader(io.StringIO(result.stdout)))
    assert exported and not any(v.startswith(tuple("=+@")) for r in exported for v in r.values()), exported[:2]


# -- behind a TLS reverse proxy ----------------------------------------------------------------------


PUBLIC = "study.example.org"


def self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    f"/CN={PUBLIC}", "-addext", f"subjectAltName=DNS:{PUBLIC},IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    return cert, key


class ReverseProxy(threading.Thread):
    """TLS on 127.0.0.1, each request passed to the server over HTTP with the Host the client sent
    and X-Forwarded-For / X-Forwarded-Proto, as nginx's example in docs/deploy.md does."""

    def __init__(self, upstream: int, cert: Path, key: Path) -> None:
        super().__init__(daemon=True)
        self.upstream, self.port = upstream, 0
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")[:-2]
            kept = [line for line in lines[1:] if line.split(":")[0].lower() not in ("connection", "x-forwarded-for",
                                                                                    "x-forwarded-proto")]
            client = writer.get_extra_info("peername")[0]
            head = "\r\n".join([lines[0], *kept, f"X-Forwarded-For: {client}", "X-Forwarded-Proto: https",
                                "Connection: close", "", ""]).encode("latin-1")
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
            up_writer.write(head)

            async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()

            body = asyncio.ensure_future(pipe(reader, up_writer))
            await pipe(up_reader, writer)
            body.cancel()
            up_writer.close()
        finally:
            writer.close()

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=self.context))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()


@pytest.fixture
def proxy(tmp_path) -> Iterator[Any]:
    proxies: list[ReverseProxy] = []

    def start(upstream: int) -> tuple[ReverseProxy, ssl.SSLContext]:
        cert, key = self_signed(tmp_path)
        p = ReverseProxy(upstream, cert, key)
        p.start()
        assert p.ready.wait(30)
        proxies.append(p)
        return p, ssl.create_default_context(cafile=str(cert))

    yield start
    for p in proxies:
        p.loop.call_soon_threadsafe(p.loop.stop)


def through(p: ReverseProxy, context: ssl.SSLContext, method: str, path: str, body: Any = None,
            host: str = PUBLIC, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One HTTPS request to the proxy, as a browser at https://{host}/ sends it."""
    connection = http.client.HTTPSConnection("127.0.0.1", p.port, context=context, timeout=30)
    try:
        data = json.dumps(body).encode() if body is not None else None
        given = {"Host": host}
        if data is not None:
            given.update({"Content-Type": "application/json", "Origin": f"https://{host}",
                          "Sec-Fetch-Site": "same-origin"})
        given.update(headers or {})
        connection.request(method, path, data, given)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        connection.close()


@pytest.mark.slow
def test_a_study_behind_a_tls_reverse_proxy(tmp_path, launched, proxy):  # noqa: F811 - launched is a fixture
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    process, url, _ = launch(study, tmp_path / "store.lbug", "--allowed-host", PUBLIC, "--trusted-proxy", "127.0.0.1")
    launched.append(process)
    p, context = proxy(int(url.rsplit(":", 1)[1]))
    status, head, _ = through(p, context, "GET", "/")
    assert status == 200 and "content-security-policy" in head
    status, head, _ = through(p, context, "GET", "/static/study.js")
    assert status == 200 and "content-security-policy" in head
    # a session played through the proxy
    status, _, text = through(p, context, "POST", "/api/start", {"params": {"PROLIFIC_PID": "p1"}})
    assert status == 200, text
    token = json.loads(text)["token"]
    assert through(p, context, "POST", f"/api/s/{token}/consent", {"agree": True})[0] == 200
    position = json.loads(through(p, context, "GET", f"/api/s/{token}")[2])["position"]
    trials = 0
    while not position["done"]:
        body = {"index": position["trial"], "action": position["available"][trials % len(position["available"])],
                "rt": 500.0, "shown": 1000.0, "pressed": 1500.0, "key": "ArrowUp"}
        status, _, text = through(p, context, "POST", f"/api/s/{token}/trial", body)
        assert status == 200, text
        position = json.loads(text)["position"]
        trials += 1
    assert trials > 0
    # a foreign Host through the proxy, and a post from another site, are refused
    assert through(p, context, "GET", "/", host="evil.example")[0] == 400
    assert through(p, context, "POST", "/api/start", {"params": {}}, host="evil.example")[0] == 400
    assert through(p, context, "POST", "/api/start", {"params": {}},
                   headers={"Origin": "https://evil.example"})[0] == 403
    # the dashboard's cookie is Secure: the server trusts the proxy's X-Forwarded-Proto (--trusted-proxy)
    status, _, text = through(p, context, "POST", "/researcher/link", headers={"Authorization": f"Bearer {RESEARCHER}"},
                              body={})
    assert status == 200, text
    status, head, _ = through(p, context, "GET", json.loads(text)["link"])
    assert status == 303 and "secure" in head["set-cookie"].lower(), head
    stop(process)
    with open_store(tmp_path / "store.lbug", "r") as store:
        assert store.cypher("MATCH (t:Trial) RETURN count(t)").rows[0][0] == trials
