"""`graphtasks bench` measures compile time from the Bolt store as well as the embedded one."""

from __future__ import annotations

import json
from urllib.parse import quote

from graphtasks.cli import main

from .conftest import BoltServer, open_bolt, wipe


def test_bench_compiles_every_case_from_both_stores(bolt_server: BoltServer, tmp_path, monkeypatch, capsys):
    with open_bolt(bolt_server) as store:
        wipe(store)
    if bolt_server.database:
        monkeypatch.setenv("GRAPHTASKS_NEO4J_DATABASE", bolt_server.database)
    scheme, rest = bolt_server.uri.split("://", 1)
    uri = f"{scheme}://{quote(bolt_server.user, safe='')}:{quote(bolt_server.password, safe='')}@{rest}"
    out = tmp_path / "bench.json"
    args = ["bench", "--families", "graph,grid", "--sizes", "2", "--budget", "0.01", "--repeats", "1", "--no-memory"]
    assert main(args + ["--bolt", uri, "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "compile ms (embedded / bolt)" in printed
    assert bolt_server.password not in printed and bolt_server.password not in out.read_text()
    payload = json.loads(out.read_text())
    assert set(payload["stores"]) == {"embedded", "bolt"} and payload["notes"] == []
    for row in payload["rows"]:
        assert "error" not in row, row
        assert row["compile_ms"]["embedded"] > 0 and row["compile_ms"]["bolt"] > 0, row["case"]
    with open_bolt(bolt_server) as store:  # the benchmark put what it compiled into the server
        assert "neuronav/grid/four_rooms/large" in {t.task_id for t in store.list()}
        wipe(store)
