"""ConceptNet ingest: API (real HTTP server on 127.0.0.1) == dump == snapshot; faults,
resumption after a failure or a kill, idempotence, and error messages."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphstore import open_store
from ingest import IngestError, all_assertions, read_checkpoint
from ingest.conceptnet_api import ApiClient, RetryPolicy, ingest_api
from ingest.conceptnet_dump import ingest_dump, job_id_for
from ingest.conceptnet_snapshot import build_snapshot, ingest_snapshot, snapshot_path

from .conftest import run_cli, snapshot_edges, write_dump

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "roomenv" / "conceptnet-data.json"  # room-env 0.1.5


def fast_client(server, **retry) -> ApiClient:
    policy = RetryPolicy(**{"max_attempts": 4, "backoff_base": 0.001, "backoff_max": 0.01, "timeout": 0.3, **retry})
    return ApiClient(server.base_url, policy, rate_limit=0)


def snapshot_assertions() -> dict:
    with open_store(":memory:") as s:
        ingest_snapshot(s)
        return all_assertions(s)


def count_edges(store) -> int:
    return store.cypher("MATCH ()-[e:ASSERTS]->() RETURN count(e)").rows[0][0]


def test_snapshot_has_the_740_reference_edges_with_concepts_not_senses():
    a = snapshot_assertions()
    assert len(a) == 740
    bus = a["/r/AtLocation|/c/en/bus|/c/en/road"]
    assert bus["start_senses"] == ["n/wn/artifact"] and bus["end_senses"] == ["n/wn/artifact"]
    assert "/r/AtLocation|/c/en/boat|/c/en/body_of_water" in a  # the reference kept only 'river'
    assert all(v["weight"] > 0 for v in a.values())


def test_bundled_snapshot_is_the_normalised_reference():
    built = build_snapshot(json.loads(REFERENCE.read_text()))
    shipped = json.loads(snapshot_path().read_text())
    assert built["edges"] == shipped["edges"]


@pytest.mark.slow
def test_api_paging_equals_snapshot_and_dump(conceptnet_server, tmp_path, temp_store):
    with open_store(temp_store) as s:
        r = ingest_api(s, "/r/AtLocation", page_size=100, client=fast_client(conceptnet_server))
        assert r.done and r.pages == 8 and r.edges_kept == 740 and r.new_assertions == 740
        from_api = all_assertions(s)
    dump = write_dump(tmp_path / "assertions.csv.gz", snapshot_edges(), filler=3000)
    with open_store(tmp_path / "dump.lbug") as s:
        d = ingest_dump(s, dump, batch_size=64)
        assert d.done and d.rows_kept == 740 and d.lines == 3740
        from_dump = all_assertions(s)
    assert from_api == from_dump == snapshot_assertions()


def test_api_survives_502_429_slow_broken_and_dropped_responses(conceptnet_server, temp_store):
    conceptnet_server.faults = ["502", "429", "ok", "slow", "broken", "ok", "drop", "503", "ok"]
    client = fast_client(conceptnet_server)
    with open_store(temp_store) as s:
        r = ingest_api(s, "/r/AtLocation", page_size=200, client=client)
        assert r.done and r.new_assertions == 740
        assert client.retries_made == 6
        assert all_assertions(s) == snapshot_assertions()


def test_start_query_matches_sense_qualified_starts(conceptnet_server, temp_store):
    with open_store(temp_store) as s:
        r = ingest_api(s, "/r/AtLocation", start="/c/en/bus", page_size=5, client=fast_client(conceptnet_server))
        got = all_assertions(s)
    assert r.pages >= 2
    assert "/r/AtLocation|/c/en/bus|/c/en/road" in got
    assert all(k.split("|")[1] == "/c/en/bus" for k in got)  # prefix on path segments: not /c/en/bus_stop


def test_exhausted_retries_fail_clearly_then_resume_without_loss_or_duplicates(conceptnet_server, temp_store):
    conceptnet_server.fail_from = {300: "502"}  # page 4 of 100-edge pages is down
    client = fast_client(conceptnet_server)
    with open_store(temp_store) as s:
        with pytest.raises(IngestError) as err:
            ingest_api(s, "/r/AtLocation", page_size=100, client=client)
        msg = str(err.value)
        assert "offset=300" in msg and "giving up after 4 attempts" in msg and "HTTP 502" in msg and "resume" in msg
        assert count_edges(s) == 300
        job = f"api {conceptnet_server.base_url}/query?rel=%2Fr%2FAtLocation&offset=0&limit=100"
        assert read_checkpoint(s, job)["cursor"].endswith("offset=300&limit=100")
        conceptnet_server.fail_from = {}
        conceptnet_server.log.clear()
        r = ingest_api(s, "/r/AtLocation", page_size=100, client=fast_client(conceptnet_server))
        assert r.resumed and r.pages == 5 and r.new_assertions == 440
        assert not any("offset=0&" in p or "offset=200&" in p for p in conceptnet_server.log)
        assert count_edges(s) == 740
        assert all_assertions(s) == snapshot_assertions()
        again = ingest_api(s, "/r/AtLocation", page_size=100, client=fast_client(conceptnet_server))
        assert again.pages == 0 and count_edges(s) == 740


def test_client_errors_are_not_retried(conceptnet_server):
    client = fast_client(conceptnet_server)
    with pytest.raises(IngestError, match=r"/nothing: HTTP 404"):
        client.get_json("/nothing")
    assert client.attempts_made == 1


def test_backoff_grows_exponentially_with_bounded_seeded_jitter():
    a = ApiClient("http://x", RetryPolicy(backoff_base=1.0, backoff_max=8.0, seed=3))
    b = ApiClient("http://x", RetryPolicy(backoff_base=1.0, backoff_max=8.0, seed=3))
    delays = [a.backoff(i) for i in range(1, 7)]
    assert delays == [b.backoff(i) for i in range(1, 7)]
    for i, d in enumerate(delays, 1):
        ceiling = min(8.0, 2 ** (i - 1))
        assert ceiling / 2 <= d <= ceiling
    assert a.backoff(1, retry_after=5.0) >= 5.0


def test_query_arguments_are_checked():
    with open_store(":memory:") as s:
        with pytest.raises(IngestError, match="page_size"):
            ingest_api(s, "/r/AtLocation", page_size=5000)
        with pytest.raises(IngestError, match="start: expected a URI starting with '/c/'"):
            ingest_api(s, "/r/AtLocation", start="laptop")


def test_dump_merges_senses_and_duplicates_and_filters(tmp_path):
    rows = [
        "/a/[/r/AtLocation/,/c/en/bus/n/wn/artifact/,/c/en/road/n/]\t/r/AtLocation\t/c/en/bus/n/wn/artifact\t/c/en/road/n\t"
        + json.dumps(
            {
                "weight": 2.0,
                "dataset": "/d/wordnet/3.1",
                "license": "cc:by/4.0",
                "sources": [{"@id": "/s/resource/wordnet/rdf/3.1"}],
                "surfaceText": "[[bus]] is located in [[road]]",
            }
        ),
        "/a/[/r/AtLocation/,/c/en/bus/,/c/en/road/]\t/r/AtLocation\t/c/en/bus\t/c/en/road\t"
        + json.dumps(
            {
                "weight": 1.0,
                "dataset": "/d/conceptnet/4/en",
                "license": "cc:by/4.0",
                "sources": [{"@id": "/s/contributor/omcs/x"}],
                "surfaceText": "a bus is on a road",
            }
        ),
        '/a/[/r/AtLocation/,/c/fr/bus/,/c/en/road/]\t/r/AtLocation\t/c/fr/bus\t/c/en/road\t{"weight": 9.0}',
        '/a/[/r/UsedFor/,/c/en/bus/,/c/en/travel/]\t/r/UsedFor\t/c/en/bus\t/c/en/travel\t{"weight": 9.0}',
    ]
    path = tmp_path / "d.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n".join(reversed(rows)) + "\n")
    with open_store(":memory:") as s:
        r = ingest_dump(s, path)
        got = all_assertions(s)
    assert r.rows_kept == 2 and r.new_assertions == 1
    (a,) = got.values()
    assert a["key"] == "/r/AtLocation|/c/en/bus|/c/en/road"
    assert (
        a["weight"] == 2.0
        and a["dataset"] == "/d/wordnet/3.1"
        and a["surface_text"] == "[[bus]] is located in [[road]]"
    )
    assert a["start_senses"] == ["n/wn/artifact"] and a["end_senses"] == ["n"]
    assert len(a["edge_uris"]) == 2 and len(a["sources"]) == 2


def test_dump_provenance_survives_merge_across_batches_and_channels(conceptnet_server, tmp_path):
    edges = snapshot_edges()[:30]
    for i, e in enumerate(edges):
        e.update(dataset="/d/conceptnet/4/en", license="cc:by/4.0", sources=[{"@id": f"/s/contributor/omcs/u{i}"}])
    conceptnet_server.edges = edges
    dump = write_dump(tmp_path / "d.csv.gz", edges, filler=10)
    with open_store(":memory:") as s1, open_store(":memory:") as s2:
        ingest_api(s1, "/r/AtLocation", page_size=7, client=fast_client(conceptnet_server))
        ingest_dump(s2, dump, batch_size=4)
        a1, a2 = all_assertions(s1), all_assertions(s2)
        assert a1 == a2 and len(a1) == 30
        assert all(v["dataset"] == "/d/conceptnet/4/en" and v["sources"] for v in a1.values())
        origin = s1.cypher("MATCH ()-[e:ASSERTS]->() RETURN DISTINCT e.origin, e.fetched_at IS NULL").rows
        assert origin == [[f"api {conceptnet_server.base_url}", False]]


@pytest.mark.parametrize(
    "line, message",
    [
        ("a\tb\tc\n", r"d\.csv\.gz, line 2: expected 5 tab-separated columns, found 3"),
        ("/a/x\t/r/AtLocation\t/c/en/a\t/c/en/b\t{oops\n", r"line 2: column 5 \(JSON info\) is not valid JSON"),
        ('/a/x\t/r/AtLocation\t/c/en/a\t/c/en/b\t{"weight": "heavy"}\n', r"line 2: field 'weight' must be a number"),
    ],
)
def test_dump_errors_name_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "d.csv.gz"
    with gzip.open(path, "wt") as f:
        f.write("/a/ok\t/r/AtLocation\t/c/en/a\t/c/en/b\t{\"weight\": 1.0}\n" + line)
    with open_store(":memory:") as s:
        with pytest.raises(IngestError, match=message):
            ingest_dump(s, path, batch_size=1000)
        assert count_edges(s) == 0  # the failing batch was not committed


KILLER = """
import os, signal, sys
import ingest.conceptnet_dump as dump_mod
from graphstore import open_store
real = dump_mod.commit_batch
calls = [0]
def commit_then_die(*args, **kwargs):
    created = real(*args, **kwargs)
    calls[0] += 1
    if calls[0] == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)
    return created
dump_mod.commit_batch = commit_then_die
store = open_store(sys.argv[1])
dump_mod.ingest_dump(store, sys.argv[2], batch_size=50)
"""


@pytest.mark.slow
def test_killed_dump_run_restarts_where_it_stopped(tmp_path, temp_store):
    dump = write_dump(tmp_path / "d.csv.gz", snapshot_edges(), filler=2000)
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, temp_store, str(dump), "4"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == -9, proc.stderr
    with open_store(temp_store) as s:
        assert count_edges(s) == 200
        cp = read_checkpoint(s, job_id_for(dump, frozenset({"/r/AtLocation"}), frozenset({"en"})))
        assert not cp["done"] and 0 < cp["cursor"] < 2740
        r = ingest_dump(s, dump, batch_size=50)
        assert r.resumed_at == cp["cursor"] and r.new_assertions == 540 and r.done
        assert count_edges(s) == 740
        assert all_assertions(s) == snapshot_assertions()


def test_cli_ingest_commands_print_summaries(conceptnet_server, tmp_path, capsys):
    assert run_cli(["ingest", "snapshot"]) == 0
    assert "740 edges, 740 new assertions" in capsys.readouterr().out
    assert run_cli(["ingest", "snapshot"]) == 0
    assert "already loaded" in capsys.readouterr().out
    assert run_cli(["ingest", "api", "--base-url", conceptnet_server.base_url, "--start", "/c/en/laptop",
                    "--page-size", "3", "--rate-limit", "0", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "summary: 1 queries" in out and "0 new assertions" in out  # already there from the snapshot
    dump = write_dump(tmp_path / "d.csv.gz", snapshot_edges()[:10], filler=5)
    assert run_cli(["ingest", "dump", str(dump), "--no-progress"]) == 0
    assert "15 lines read, 10 rows kept, 0 new assertions" in capsys.readouterr().out
    assert run_cli(["ingest", "dump", str(tmp_path / "missing.gz")]) == 2
    assert "missing.gz: no such file" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("tick", [1, 2, 7])
def test_line_checkpoints_lose_no_row_at_the_boundary(tmp_path, temp_store, monkeypatch, tick):
    """A failure after a line-count checkpoint (not a full batch) resumes on the next line."""
    import ingest.conceptnet_dump as dump_mod

    edges = snapshot_edges()[:40]
    dump = write_dump(tmp_path / "d.csv.gz", edges, filler=40)  # matches and fillers alternate
    monkeypatch.setattr(dump_mod, "CHECKPOINT_LINES", tick)
    real, calls = dump_mod.commit_batch, [0]

    def flaky(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 9:
            raise RuntimeError("injected failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(dump_mod, "commit_batch", flaky)
    with open_store(temp_store) as s:
        with pytest.raises(RuntimeError, match="injected"):
            ingest_dump(s, dump, batch_size=3)
        assert 0 < count_edges(s) < 40
        r = ingest_dump(s, dump, batch_size=3)
        assert r.done and r.resumed_at > 0
        assert count_edges(s) == 40
        expected = {k: v for k, v in snapshot_assertions().items() if k in all_assertions(s)}
        assert len(expected) == 40 and all_assertions(s) == expected


@pytest.mark.parametrize("chunk", [40, 333, 1 << 22])
@pytest.mark.parametrize("skip", [0, 5, 17, 101])
def test_chunked_scan_equals_line_filter(tmp_path, monkeypatch, chunk, skip):
    import ingest.conceptnet_dump as dump_mod

    path = write_dump(tmp_path / "d.csv.gz", snapshot_edges()[:60], filler=90)
    rels, langs = frozenset({"/r/AtLocation", "/r/IsA"}), frozenset({"en"})
    slow = list(dump_mod.filter_rows(dump_mod.open_lines(path), rels, langs, str(path), skip, 10**9))
    monkeypatch.setattr(dump_mod, "CHUNK", chunk)
    fast = list(dump_mod.scan_dump(path, rels, langs, skip, 10**9))
    key = lambda rows: [(n, a.key) for n, a in rows if a is not None]  # noqa: E731
    assert key(fast) == key(slow) and len(key(fast)) > 0
    assert fast[-1] == (150, None) and slow[-1] == (150, None)


def test_chunked_scan_reports_malformed_line(tmp_path, monkeypatch):
    import ingest.conceptnet_dump as dump_mod

    path = tmp_path / "d.csv.gz"
    rows = [dump_row_text(i) for i in range(30)]
    rows[22] = "broken line without tabs\n"
    with gzip.open(path, "wt") as f:
        f.writelines(rows)
    monkeypatch.setattr(dump_mod, "CHUNK", 100)
    with pytest.raises(IngestError, match=r"d\.csv\.gz, line 23: expected 5 tab-separated columns, found 1"):
        list(dump_mod.scan_dump(path, frozenset({"/r/AtLocation"}), frozenset({"en"})))


def dump_row_text(i: int) -> str:
    return f"/a/[/r/AtLocation/,/c/en/a{i}/,/c/en/b{i}/]\t/r/AtLocation\t/c/en/a{i}\t/c/en/b{i}\t{{\"weight\": 1.0}}\n"


API_CLIENT = """
import sys
from graphstore import open_store
from ingest.conceptnet_api import ApiClient, RetryPolicy, ingest_api
store = open_store(sys.argv[1])
ingest_api(store, "/r/AtLocation", page_size=100, client=ApiClient(sys.argv[2], RetryPolicy(timeout=60), rate_limit=0))
"""


@pytest.mark.slow
def test_killed_api_run_restarts_after_its_last_committed_page(conceptnet_server, temp_store):
    import signal
    import time

    conceptnet_server.fail_from = {400: "hang"}
    proc = subprocess.Popen([sys.executable, "-c", API_CLIENT, temp_store, conceptnet_server.base_url],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not any("offset=400&" in p for p in conceptnet_server.log):
            assert proc.poll() is None, proc.stderr.read()
            assert time.time() < deadline, "the client never asked for page 5"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
    conceptnet_server.fail_from = {}
    with open_store(temp_store) as s:
        assert count_edges(s) == 400
        conceptnet_server.log.clear()
        r = ingest_api(s, "/r/AtLocation", page_size=100, client=fast_client(conceptnet_server))
        assert r.resumed and r.pages == 4 and r.new_assertions == 340
        assert all("offset=0&" not in p for p in conceptnet_server.log)
        assert count_edges(s) == 740 and all_assertions(s) == snapshot_assertions()


def test_cli_ingest_status_lists_jobs_and_counts(capsys):
    assert run_cli(["ingest", "snapshot"]) == 0
    assert run_cli(["ingest", "status"]) == 0
    out = capsys.readouterr().out
    assert "done     snapshot atlocation-room-env.json" in out and "AtLocation: 740 assertions" in out
    assert "concepts" in out


@pytest.mark.parametrize(
    "fault, message",
    [
        ("502", "last error: HTTP 502"),
        ("429", "last error: HTTP 429"),
        ("broken", "last error: invalid JSON"),
        ("slow", "last error: (ReadTimeout|ConnectionError)"),
        ("drop", "last error: (ChunkedEncodingError|ConnectionError)"),
    ],
)
def test_each_fault_kind_names_itself_after_the_retry_budget(conceptnet_server, temp_store, fault, message):
    conceptnet_server.fail_from = {0: fault}
    client = fast_client(conceptnet_server, max_attempts=2)
    with open_store(temp_store) as s:
        with pytest.raises(IngestError, match=r"offset=0&limit=50: giving up after 2 attempts; " + message):
            ingest_api(s, "/r/AtLocation", start="/c/en/cat", page_size=50, client=client)
        assert count_edges(s) == 0
    assert client.attempts_made == 2
