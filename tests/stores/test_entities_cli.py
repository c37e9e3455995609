"""`graphtasks entities create / list / groups / classes` through the real command line, embedded and Bolt."""

from __future__ import annotations

import json

from graphstore.entities import select
from graphstore.ladybug_store import LadybugStore
from gym_bridge import GraphTaskEnv

from .cli_helpers import run_cli
from .conftest import open_bolt, wipe
from .test_stores_cli import bolt_env

TASK = "neuronav/graph/neighborhood"


def test_create_then_list_on_the_embedded_store(tmp_path, capsys, monkeypatch):
    store = str(tmp_path / "s.lbug")
    code, out, err = run_cli(
        ["--store", store, "entities", "create", TASK, "--type", "Reward", "--param", "state=[3, 5]",
         "--param", "value=5", "--count", "2", "--group", "bonus"], capsys, monkeypatch)
    assert code == 0, err
    assert out.splitlines()[:2] == [f"{TASK}/created/reward/0", f"{TASK}/created/reward/1"]
    assert "created 2 Reward in group 'bonus'" in out
    code, out, err = run_cli(["--store", store, "entities", "list", TASK, "--group", "bonus", "--format", "json"],
                             capsys, monkeypatch)
    rows = json.loads(out)
    assert [(r["uid"], r["type"], r["group"], r["properties"]["values"]) for r in rows] == [
        (f"{TASK}/created/reward/0", "Reward", "bonus", [5.0]), (f"{TASK}/created/reward/1", "Reward", "bonus", [5.0])]
    code, out, _ = run_cli(["--store", store, "entities", "list", TASK, "--type", "Reward", "--group", "default",
                            "--format", "csv"], capsys, monkeypatch)
    assert out.splitlines()[1].startswith(f"{TASK}/r14,Reward,default,")
    code, out, _ = run_cli(["--store", store, "entities", "groups", TASK, "--format", "json"], capsys, monkeypatch)
    assert {r["group"]: r["entities"] for r in json.loads(out)} == {"all": 18, "bonus": 2, "default": 16}
    code, out, _ = run_cli(["--store", store, "entities", "classes", TASK], capsys, monkeypatch)
    assert "Reward" in out and "state" in out
    with LadybugStore(store) as opened:
        env = GraphTaskEnv(TASK, store=opened)
    assert env.compiled.reward_value[3] == env.compiled.reward_value[5] == 5.0


def test_errors_name_the_field_and_exit_2(tmp_path, capsys, monkeypatch):
    store = str(tmp_path / "s.lbug")
    code, out, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Reward", "--param", "value=1"],
                             capsys, monkeypatch)
    assert code == 2 and "'state' is required" in err
    code, out, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Key", "--param", "state=1"],
                             capsys, monkeypatch)
    assert code == 2 and "has no entity class 'Key'" in err
    code, out, err = run_cli(["--store", store, "entities", "list", TASK, "--type", "Nope"], capsys, monkeypatch)
    assert code == 2 and "unknown entity type 'Nope'" in err


def test_create_on_a_bolt_store(bolt_server, capsys, monkeypatch):
    bolt_env(monkeypatch, bolt_server)
    store = open_bolt(bolt_server)
    wipe(store)
    try:
        code, out, err = run_cli(["--store", bolt_server.uri, "entities", "create", TASK, "--type", "Reward",
                                  "--param", "state=2", "--param", "value=-1", "--group", "traps"], capsys, monkeypatch)
        assert code == 0, err
        (entity,) = select(store, TASK, group="traps")
        assert entity.props["values"] == [-1.0]
        code, out, _ = run_cli(["--store", bolt_server.uri, "entities", "list", TASK, "--id", entity.uid],
                               capsys, monkeypatch)
        assert entity.uid in out and "(1 row)" in out
    finally:
        wipe(store)
        store.close()
