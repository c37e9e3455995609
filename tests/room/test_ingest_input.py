"""ConceptNet ingest against hostile input: a nextPage cycle, a trickling server, a nextPage to another
host (real HTTP servers on 127.0.0.1), and dumps with bad lines, a '|' in a URI, or nothing in them."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from graphstore import open_store
from ingest import IngestError, all_assertions
from ingest.conceptnet_api import ApiClient, RetryPolicy, ingest_api
from ingest.conceptnet_dump import ingest_dump

from .conftest import dump_row, run_cli, snapshot_edges

EDGES = snapshot_edges()[:4]


class Pages(ThreadingHTTPServer):
    """Answers /query?offset=N with `page(server, N)` -> (edges, nextPage) as JSON; logs every path."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """Quiet: clients that hang up early are part of the tests, and a handler thread still
        running after the test must not print into a later test's captured stderr."""

    def __init__(self, page: Callable[[Pages, int], tuple[list[dict[str, Any]], str | None]]):
        super().__init__(("127.0.0.1", 0), _PageHandler)
        self.page = page
        self.log: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _PageHandler(BaseHTTPRequestHandler):
    server: Pages

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.log.append(self.path)
        if self.path.startswith("/trickle"):
            return self._trickle()
        offset = int(parse_qs(urlparse(self.path).query).get("offset", ["0"])[0])
        edges, next_page = self.server.page(self.server, offset)
        view = {"nextPage": next_page} if next_page else {}
        body = json.dumps({"edges": edges, "view": view}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/ld+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _trickle(self) -> None:
        """A valid-looking answer sent one byte every 0.2 s: each read is quick, the whole never ends."""
        self.send_response(200)
        self.send_header("Content-Type", "application/ld+json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(300):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:  # the client hung up: what the deadline should make it do
            pass


@pytest.fixture
def serve() -> Iterator[Callable[..., Pages]]:
    servers: list[Pages] = []

    def start(page: Callable[[Pages, int], tuple[list[dict[str, Any]], str | None]]) -> Pages:
        server = Pages(page)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def client(server: Pages, **retry: Any) -> ApiClient:
    policy = RetryPolicy(**{"max_attempts": 2, "backoff_base": 0.001, "backoff_max": 0.01, "timeout": 5.0, **retry})
    return ApiClient(server.base_url, policy, rate_limit=0)


def query(offset: int) -> str:
    return f"/query?rel=/r/AtLocation&offset={offset}&limit=2"


def test_next_page_cycle_is_detected(serve) -> None:
    server = serve(lambda s, offset: (EDGES[offset : offset + 2], query(2 if offset == 0 else 0)))  # A -> B -> A
    with open_store(":memory:") as store:
        with pytest.raises(IngestError, match=r"offset=2&limit=2: field view.nextPage .*offset=0.* points at a page "
                                              r"fetched earlier in this run; stopping instead of looping"):
            ingest_api(store, page_size=2, client=client(server))
        assert len(server.log) == 2  # A and B, once each
        assert len(all_assertions(store)) == 2  # page A was committed; B, whose link loops, was not


def test_trickling_answer_ends_at_the_total_deadline(serve) -> None:
    server = serve(lambda s, offset: ([], None))
    api = client(server, max_attempts=1, timeout=1.0)  # each byte comes within 0.2 s: only a total deadline ends it
    with pytest.raises(IngestError, match=r"/trickle: giving up after 1 attempts; last error: Timeout: "
                                          r"the answer took longer than 1 s in total"):
        api.get_json("/trickle")


def test_next_page_to_another_host_is_not_followed(serve) -> None:
    other = serve(lambda s, offset: (EDGES[2:4], None))
    home = serve(lambda s, offset: (EDGES[:2], other.base_url + query(2)))
    with open_store(":memory:") as store:
        with pytest.raises(IngestError, match=rf"nextPage '{other.base_url}.*' leads to another host than "
                                              rf"http://127.0.0.1:{home.server_address[1]}; not followed"):
            ingest_api(store, page_size=2, client=client(home))
        assert other.log == []
        r = ingest_api(store, page_size=2, client=client(home), restart=True, allow_other_hosts=True)
        assert r.done and r.pages == 2 and len(other.log) == 1
        assert len(all_assertions(store)) == 4


def test_cli_follows_another_host_only_when_told(serve, capsys) -> None:
    other = serve(lambda s, offset: (EDGES[2:4], None))
    home = serve(lambda s, offset: (EDGES[:2], other.base_url + query(2)))
    argv = ["ingest", "api", "--base-url", home.base_url, "--page-size", "2", "--rate-limit", "0", "--no-progress"]
    assert run_cli(argv) != 0
    assert "leads to another host" in capsys.readouterr().err and other.log == []
    assert run_cli(argv + ["--allow-other-hosts"]) == 0
    assert "2 pages" in capsys.readouterr().out and len(other.log) == 1


# -- dumps ------------------------------------------------------------------------------------
GOOD = [dump_row(e) for e in EDGES]
PIPE = "/a/[x]\t/r/AtLocation\t/c/en/a|b\t/c/en/kitchen\t{\"weight\": 1.0}\n"
SHORT = "only\ttwo columns\n"
BAD_JSON = "/a/[y]\t/r/AtLocation\t/c/en/cup\t/c/en/table\t{oops\n"


def write(path: Path, lines: list[str]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(lines)
    return path


def test_pipe_in_a_concept_uri_is_a_clear_error(tmp_path: Path) -> None:
    dump = write(tmp_path / "d.csv.gz", GOOD[:2] + [PIPE])
    message = r"d\.csv\.gz, line 3: column 3 \(start\): concept URI '/c/en/a\|b' contains '\|'"
    with open_store(":memory:") as store, pytest.raises(IngestError, match=message):
        ingest_dump(store, dump)


def test_bad_lines_stop_the_job_unless_skipped(tmp_path: Path) -> None:
    dump = write(tmp_path / "d.csv.gz", [GOOD[0], SHORT, GOOD[1], PIPE, GOOD[2], BAD_JSON, GOOD[3]])
    with open_store(":memory:") as store:
        with pytest.raises(IngestError, match=r"d\.csv\.gz, line 2: expected 5 tab-separated columns, found 2"):
            ingest_dump(store, dump)
        assert all_assertions(store) == {}
        r = ingest_dump(store, dump, skip_bad_lines=True)
        assert r.done and r.bad_lines == 3 and r.rows_kept == 4 and len(all_assertions(store)) == 4
        assert [m.split(":")[0] for m in r.bad_messages] == [f"{dump}, line {n}" for n in (2, 4, 6)]


def test_cli_reports_skipped_lines_with_file_and_line(tmp_path: Path, capsys) -> None:
    dump = write(tmp_path / "d.csv.gz", [GOOD[0], SHORT, GOOD[1], PIPE])
    assert run_cli(["ingest", "dump", str(dump), "--no-progress"]) != 0
    assert f"{dump}, line 2: expected 5 tab-separated columns" in capsys.readouterr().err
    assert run_cli(["ingest", "dump", str(dump), "--no-progress", "--skip-bad-lines"]) == 0
    out, err = capsys.readouterr()
    assert "4 lines read, 2 rows kept, 2 new assertions" in out and "2 bad lines skipped" in out
    assert f"skipped: {dump}, line 2: expected 5" in err and f"skipped: {dump}, line 4: column 3 (start)" in err


@pytest.mark.parametrize("content", [b"", gzip.compress(b"")], ids=["zero bytes", "empty gzip stream"])
def test_empty_dump_is_an_error(tmp_path: Path, content: bytes) -> None:
    dump = tmp_path / "empty.csv.gz"
    dump.write_bytes(content)
    with open_store(":memory:") as store:
        message = r"empty\.csv\.gz: (empty file \(0 bytes\)|no lines); expected a ConceptNet"
        with pytest.raises(IngestError, match=message):
            ingest_dump(store, dump)
        assert store.cypher("MATCH (j:IngestJob) RETURN count(j)").rows[0][0] == 0  # nothing recorded as done
