"""`graphtasks tasks copy`, `tasks show` and `schema` through the real command line."""

from __future__ import annotations

import json

import pytest

import tasks
from graphstore import SCHEMA
from graphstore.ladybug_store import LadybugStore

from .cli_helpers import run_cli
from .conftest import open_bolt, wipe

IDS = ["rewardgym/two-step", "neuronav/graph/t_graph", "rewardgym/hcp"]


@pytest.fixture
def filled_embedded(tmp_path):
    path = str(tmp_path / "src.lbug")
    with LadybugStore(path) as store:
        for task_id in IDS:
            store.put(tasks.build(task_id))
    return path


def bolt_env(monkeypatch, server):
    monkeypatch.setenv("GRAPHTASKS_NEO4J_USER", server.user)
    monkeypatch.setenv("GRAPHTASKS_NEO4J_PASSWORD", server.password)
    if server.database:
        monkeypatch.setenv("GRAPHTASKS_NEO4J_DATABASE", server.database)


def test_copy_embedded_to_bolt_and_back(filled_embedded, bolt_server, tmp_path, capsys, monkeypatch):
    bolt_env(monkeypatch, bolt_server)
    target = open_bolt(bolt_server)
    wipe(target)
    try:
        code, out, err = run_cli(["tasks", "copy", "--from", filled_embedded, "--to", bolt_server.uri, IDS[0], IDS[1]],
                                 capsys)
        assert code == 0, err
        assert f"copied    {IDS[0]}" in out and "2 of 2" in out
        assert sorted(t.task_id for t in target.list()) == sorted(IDS[:2])
        assert target.get(IDS[0]) == tasks.build(IDS[0])

        code, out, _ = run_cli(["tasks", "copy", "--from", filled_embedded, "--to", bolt_server.uri, "--all"],
                               capsys)
        assert code == 0
        assert f"unchanged {IDS[0]}" in out and f"copied    {IDS[2]}" in out and "1 of 3" in out

        back = str(tmp_path / "back.lbug")
        code, out, _ = run_cli(["tasks", "copy", "--from", bolt_server.uri, "--to", back, "--all"], capsys)
        assert code == 0 and "3 of 3" in out
        with LadybugStore(back) as store:
            for task_id in IDS:
                assert store.get(task_id) == tasks.build(task_id)
    finally:
        wipe(target)
        target.close()


def test_copy_missing_task_writes_nothing(filled_embedded, tmp_path, capsys):
    target = str(tmp_path / "t.lbug")
    code, out, err = run_cli(["tasks", "copy", "--from", filled_embedded, "--to", target, IDS[0], "no/such/task"],
                             capsys)
    assert code == 2
    assert "no/such/task" in err
    with LadybugStore(target) as store:
        assert store.list() == []


def test_copy_needs_ids_or_all(filled_embedded, tmp_path, capsys):
    code, _, err = run_cli(["tasks", "copy", "--from", filled_embedded, "--to", str(tmp_path / "x.lbug")],
                           capsys)
    assert code == 2 and "--all" in err


def test_show_summarises_a_task(filled_embedded, capsys):
    code, out, err = run_cli(["--store", filled_embedded, "tasks", "show", "rewardgym/two-step"], capsys)
    assert code == 0, err
    assert "states      7" in out
    assert "0:first stage        action 0: 1:second stage A p=0.7, 2:second stage B p=0.3" in out
    assert "reachable   7 of 7" in out
    code, out, _ = run_cli(["--store", filled_embedded, "tasks", "show", "rewardgym/hcp", "--format", "json"],
                           capsys)
    summary = json.loads(out)
    assert summary["terminal"] == ["1:guessed higher", "2:guessed lower"]
    assert summary["conditions"] == ["loss", "neutral", "win"]
    assert summary["stochastic"] == []
    assert [r["kind"] for r in summary["rewards"]] == ["probabilistic", "probabilistic"]


def test_show_unknown_task_names_it(filled_embedded, capsys):
    code, _, err = run_cli(["--store", filled_embedded, "tasks", "show", "no/such"], capsys)
    assert code == 2 and "no/such" in err


def test_schema_lists_every_type(capsys):
    code, out, _ = run_cli(["schema", "--format", "csv"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "kind,type,property,value type,required,meaning"
    for label in SCHEMA.nodes:
        assert any(line.startswith(f"node,{label},") for line in lines), label
    for rel in SCHEMA.rels:
        assert any(line.startswith(f"relationship,{rel},") for line in lines), rel
    assert ",,p,float,yes," in out
