"""Fixtures of the ConceptNet / Room tests: a temp store per test, a real HTTP server on
127.0.0.1 that answers like the ConceptNet API (paged JSON-LD) and injects faults, and
writers of small dumps in the real 5-column gzip format."""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from ingest.conceptnet_snapshot import snapshot_path

CONTEXT = ["http://api.conceptnet.io/ld/conceptnet5.7/context.ld.json"]


@pytest.fixture(autouse=True)
def temp_store(tmp_path, monkeypatch):
    path = tmp_path / "store.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(path))
    return str(path)


def snapshot_edges() -> list[dict[str, Any]]:
    edges = json.loads(snapshot_path().read_text(encoding="utf-8"))["edges"]
    return [{k: v for k, v in e.items() if k != "query"} for e in edges]


def _matches(uri: str, prefix: str) -> bool:
    return uri == prefix or uri.startswith(prefix + "/")


class FakeConceptNet(ThreadingHTTPServer):
    """Serves /query like api.conceptnet.io; `faults` is consumed one per request."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """Quiet: clients that hang up early are part of the tests, and a handler thread still
        running after the test must not print into a later test's captured stderr."""

    def __init__(self, edges: list[dict[str, Any]]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.edges = edges
        self.faults: list[str] = []  # '502', '429', 'slow', 'broken', 'drop', 'ok'
        self.fail_from: dict[int, str] = {}  # offset -> fault served every time that page is asked
        self.log: list[str] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def page(self, query: dict[str, str]) -> dict[str, Any]:
        offset, limit = int(query.get("offset", 0)), int(query.get("limit", 50))
        hits = [
            e
            for e in self.edges
            if ("rel" not in query or e["rel"]["@id"] == query["rel"])
            and ("start" not in query or _matches(e["start"]["@id"], query["start"]))
            and ("end" not in query or _matches(e["end"]["@id"], query["end"]))
            and (
                "node" not in query
                or _matches(e["start"]["@id"], query["node"])
                or _matches(e["end"]["@id"], query["node"])
            )
        ]
        hits.sort(key=lambda e: (-e["weight"], e["@id"]))
        base = {k: v for k, v in query.items() if k not in ("offset", "limit")}
        def url(off: int) -> str:
            return "/query?" + urlencode({**base, "offset": off, "limit": limit}, safe="/")

        out: dict[str, Any] = {
            "@context": CONTEXT,
            "@id": "/query?" + urlencode(base, safe="/"),
            "edges": hits[offset : offset + limit],
        }
        more = offset + limit < len(hits)
        if more or offset > 0:
            view = {
                "@id": url(offset),
                "@type": "PartialCollectionView",
                "firstPage": url(0),
                "paginatedProperty": "edges",
            }
            if more:
                view["comment"] = "There are more results. Follow the 'nextPage' link for more."
                view["nextPage"] = url(offset + limit)
            if offset > 0:
                view["previousPage"] = url(max(0, offset - limit))
            out["view"] = view
        return out


class _Handler(BaseHTTPRequestHandler):
    server: FakeConceptNet

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        srv = self.server
        parsed = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        with srv.lock:
            srv.log.append(self.path)
            fault = srv.faults.pop(0) if srv.faults else srv.fail_from.get(int(query.get("offset", 0)), "ok")
        if parsed.path != "/query":
            return self._send(404, b'{"error": "not found"}')
        if fault in ("502", "503"):
            return self._send(int(fault), b"<html>Bad Gateway</html>", "text/html")
        if fault == "429":
            return self._send(429, b'{"error": "rate limited"}', extra={"Retry-After": "0.01"})
        if fault == "slow":
            time.sleep(0.6)
        if fault == "hang":  # a page that takes long: the test kills the client meanwhile
            time.sleep(20)
        body = json.dumps(srv.page(query)).encode()
        if fault == "broken":
            return self._send(200, body[: len(body) // 2])
        if fault == "drop":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:100])
            self.close_connection = True
            return
        self._send(200, body)

    def _send(
        self, code: int, body: bytes, ctype: str = "application/ld+json", extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def conceptnet_server():
    server = FakeConceptNet(snapshot_edges())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def dump_row(edge: dict[str, Any]) -> str:
    info = {k: edge[k] for k in ("dataset", "license", "sources", "weight", "surfaceText") if k in edge}
    return (
        "\t".join([edge["@id"], edge["rel"]["@id"], edge["start"]["@id"], edge["end"]["@id"], json.dumps(info)]) + "\n"
    )


def filler_rows(n: int) -> list[str]:
    """Rows the default filter drops: other relations and other languages."""
    rows = []
    for i in range(n):
        if i % 3 == 0:
            rows.append(f"/a/[/r/IsA/,/c/en/x{i}/,/c/en/y{i}/]\t/r/IsA\t/c/en/x{i}\t/c/en/y{i}\t{{\"weight\": 1.0}}\n")
        elif i % 3 == 1:
            rows.append(
                f"/a/[/r/AtLocation/,/c/fr/x{i}/,/c/en/y{i}/]\t/r/AtLocation\t/c/fr/x{i}\t/c/en/y{i}\t"
                '{"weight": 1.0}\n'
            )
        else:
            rows.append(
                f"/a/[/r/AtLocation/,/c/en/x{i}/,/c/de/y{i}/]\t/r/AtLocation\t/c/en/x{i}\t/c/de/y{i}\t"
                '{"weight": 1.0}\n'
            )
    return rows


def write_dump(path: Path, edges: list[dict[str, Any]], filler: int = 0) -> Path:
    rows = [dump_row(e) for e in edges]
    extra = filler_rows(filler)
    mixed: list[str] = []
    step = max(1, len(extra) // max(1, len(rows)))
    for i, row in enumerate(rows):  # interleave so batches and checkpoints fall mid-file
        mixed.extend(extra[i * step : (i + 1) * step])
        mixed.append(row)
    mixed.extend(extra[len(rows) * step :])
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(mixed)
    return path


def run_cli(argv: list[str]) -> int:
    """graphtasks' main, in this process."""
    from graphtasks import cli

    return cli.main(argv)
