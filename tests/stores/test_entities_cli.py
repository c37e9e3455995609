"""`graphtasks entities create / list / groups / classes` through the real command line, embedded and Bolt."""

from __future__ import annotations

import json

import pytest

from graphstore.entities import select
from graphstore.ladybug_store import LadybugStore
from gym_bridge import GraphTaskEnv

from .cli_helpers import run_cli
from .conftest import open_bolt, wipe
from .test_stores_cli import bolt_env

TASK = "neuronav/graph/neighborhood"


@pytest.mark.slow
def test_create_then_list_on_the_embedded_store(tmp_path, capsys):
    store = str(tmp_path / "s.lbug")
    code, out, err = run_cli(
        ["--store", store, "entities", "create", TASK, "--type", "Reward", "--param", "state=[3, 5]",
         "--param", "value=5", "--count", "2", "--group", "bonus"], capsys)
    assert code == 0, err
    assert out.splitlines()[:2] == [f"{TASK}/created/reward/0", f"{TASK}/created/reward/1"]
    assert "created 2 Reward in group 'bonus'" in out
    code, out, err = run_cli(["--store", store, "entities", "list", TASK, "--group", "bonus", "--format", "json"],
                             capsys)
    rows = json.loads(out)
    assert [(r["uid"], r["type"], r["group"], r["properties"]["values"]) for r in rows] == [
        (f"{TASK}/created/reward/0", "Reward", "bonus", [5.0]), (f"{TASK}/created/reward/1", "Reward", "bonus", [5.0])]
    code, out, _ = run_cli(["--store", store, "entities", "list", TASK, "--type", "Reward", "--group", "default",
                            "--format", "csv"], capsys)
    assert out.splitlines()[1].startswith(f"{TASK}/r14,Reward,default,")
    code, out, _ = run_cli(["--store", store, "entities", "groups", TASK, "--format", "json"], capsys)
    assert {r["group"]: r["entities"] for r in json.loads(out)} == {"all": 18, "bonus": 2, "default": 16}
    code, out, _ = run_cli(["--store", store, "entities", "classes", TASK], capsys)
    assert "Reward" in out and "state" in out
    with LadybugStore(store) as opened:
        env = GraphTaskEnv(TASK, store=opened)
    assert env.compiled.reward_value[3] == env.compiled.reward_value[5] == 5.0


def test_errors_name_the_field_and_exit_2(tmp_path, capsys):
    store = str(tmp_path / "s.lbug")
    code, out, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Reward", "--param", "value=1"],
                             capsys)
    assert code == 2 and "'state' is required" in err
    code, out, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Key", "--param", "state=1"],
                             capsys)
    assert code == 2 and "has no entity class 'Key'" in err
    code, out, err = run_cli(["--store", store, "entities", "list", TASK, "--type", "Nope"], capsys)
    assert code == 2 and "unknown entity type 'Nope'" in err


def test_create_on_a_bolt_store(bolt_server, capsys, monkeypatch):
    bolt_env(monkeypatch, bolt_server)
    store = open_bolt(bolt_server)
    wipe(store)
    try:
        code, out, err = run_cli(["--store", bolt_server.uri, "entities", "create", TASK, "--type", "Reward",
                                  "--param", "state=2", "--param", "value=-1", "--group", "traps"], capsys)
        assert code == 0, err
        (entity,) = select(store, TASK, group="traps")
        assert entity.props["values"] == [-1.0]
        code, out, _ = run_cli(["--store", bolt_server.uri, "entities", "list", TASK, "--id", entity.uid],
                               capsys)
        assert entity.uid in out and "(1 row)" in out
    finally:
        wipe(store)
        store.close()


def one_error_line(code: int, err: str, *fragments: str) -> None:
    """The project's convention for bad input (tests/test_cli_errors.py): exit 2, one line."""
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("graphtasks: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.slow
def test_update_and_remove_on_the_embedded_store(tmp_path, capsys):
    store = str(tmp_path / "s.lbug")
    code, out, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Reward", "--param",
                              "state=[3, 5]", "--param", "value=5", "--count", "2", "--group", "bonus"],
                             capsys)
    assert code == 0, err
    with LadybugStore(store) as opened:
        created = opened.content_hash(TASK)
    code, out, err = run_cli(["--store", store, "entities", "update", TASK, "created/reward/0", "--param", "value=7",
                              "--param", "state=4"], capsys)
    assert code == 0, err
    (line,) = out.splitlines()
    with LadybugStore(store) as opened:
        updated = opened.content_hash(TASK)
        assert [e.props["values"] for e in select(opened, TASK, group="bonus")] == [[7.0], [5.0]]
    assert updated != created
    assert line == f"updated 1 Reward (created/reward/0) of {TASK}: value=7, state=4 (content hash {updated})"
    env = GraphTaskEnv(TASK, store=store)
    assert env.compiled.reward_value[[3, 4, 5]].tolist() == [0.0, 7.0, 5.0]
    # the same again: nothing written, and said so
    code, out, err = run_cli(["--store", store, "entities", "update", TASK, f"{TASK}/created/reward/0",
                              "--param", "value=7", "--param", "state=4"], capsys)
    assert code == 0 and out.startswith("unchanged 1 Reward (created/reward/0)") and updated in out
    # by selection
    code, out, err = run_cli(["--store", store, "entities", "update", TASK, "--group", "bonus", "--param", "value=2"],
                             capsys)
    assert code == 0 and out.startswith("updated 2 Reward (created/reward/0, created/reward/1)"), err
    code, out, err = run_cli(["--store", store, "entities", "remove", TASK, "created/reward/1"], capsys)
    assert code == 0, err
    with LadybugStore(store) as opened:
        removed = opened.content_hash(TASK)
        assert [e.uid for e in select(opened, TASK, group="bonus")] == [f"{TASK}/created/reward/0"]
    assert out.splitlines() == [f"removed 1 Reward (created/reward/1) from {TASK} (content hash {removed})"]
    code, out, err = run_cli(["--store", store, "entities", "remove", TASK, "--group", "bonus", "--type", "Reward"],
                             capsys)
    assert code == 0 and out.startswith("removed 1 Reward (created/reward/0)"), err
    code, out, _ = run_cli(["--store", store, "entities", "groups", TASK, "--format", "json"], capsys)
    assert {r["group"]: r["entities"] for r in json.loads(out)} == {"all": 16, "default": 16}


@pytest.mark.slow
def test_update_and_remove_errors_are_one_line_and_write_nothing(tmp_path, capsys):
    store = str(tmp_path / "s.lbug")
    code, _, err = run_cli(["--store", store, "entities", "create", TASK, "--type", "Reward", "--param", "state=3",
                            "--param", "value=5", "--group", "bonus"], capsys)
    assert code == 0, err
    with LadybugStore(store) as opened:
        before = (opened.content_hash(TASK), [e.row() for e in select(opened, TASK)])
    reward = "created/reward/0"
    for argv, fragments in [
        (["update", TASK, "created/reward/9", "--param", "value=1"], ["no entity 'created/reward/9'"]),
        (["update", TASK, reward, "--param", "colour=red"], [f"{TASK}/{reward}", "unknown field(s) colour"]),
        (["update", TASK, reward, "--param", "state=14"], [f"{TASK}/{reward}", "state: state 14", "already has"]),
        (["update", TASK, reward, "--param", "state=99"], ["has no state 99"]),
        (["update", TASK, reward, "--param", "value=big"], [f"{TASK}/{reward}", "values"]),
        (["update", TASK, reward], ["--param", "at least one"]),
        (["update", TASK, reward, "--param", "novalue"], ["--param", "KEY=VALUE"]),
        (["update", TASK, "r14", "--param", "value=1"], [f"{TASK}/r14", "built-in", "copy the task"]),
        (["update", TASK, "s3", "--param", "value=1"], [f"{TASK}/s3", "is a State"]),
        (["update", TASK, reward, "--group", "bonus", "--param", "value=1"], ["not both"]),
        (["update", TASK, "--type", "Nope", "--param", "value=1"], ["unknown entity type 'Nope'"]),
        (["remove", TASK], ["name the entities"]),
        (["remove", TASK, "created/reward/9"], ["no entity 'created/reward/9'"]),
        (["remove", TASK, "--group", "nope"], ["no entity of group 'nope'"]),
        (["remove", TASK, "--type", "State"], ["type 'State'"]),
        (["remove", TASK, "--group", "default"], [f"{TASK}/r14", "built-in"]),
        (["remove", "user/missing", "x"], ["user/missing", "not found"]),
    ]:
        code, out, err = run_cli(["--store", store, "entities", *argv], capsys)
        one_error_line(code, err, *fragments)
        assert out == ""
    with LadybugStore(store) as opened:
        assert (opened.content_hash(TASK), [e.row() for e in select(opened, TASK)]) == before


def test_update_and_remove_on_a_bolt_store(bolt_server, capsys, monkeypatch):
    bolt_env(monkeypatch, bolt_server)
    store = open_bolt(bolt_server)
    wipe(store)
    uri = bolt_server.uri
    try:
        code, out, err = run_cli(["--store", uri, "entities", "create", TASK, "--type", "Reward",
                                  "--param", "state=2", "--param", "value=-1", "--group", "traps"], capsys)
        assert code == 0, err
        code, out, err = run_cli(["--store", uri, "entities", "update", TASK, "--group", "traps",
                                  "--param", "value=-3"], capsys)
        assert code == 0, err
        (entity,) = select(store, TASK, group="traps")
        assert entity.props["values"] == [-3.0] and out.strip().endswith(f"(content hash {store.content_hash(TASK)})")
        assert GraphTaskEnv(TASK, store=store).compiled.reward_value[2] == -3.0
        before = store.content_hash(TASK)
        code, out, err = run_cli(["--store", uri, "entities", "update", TASK, entity.uid, "--param", "state=99"],
                                 capsys)
        one_error_line(code, err, entity.uid, "has no state 99")
        assert store.content_hash(TASK) == before
        code, out, err = run_cli(["--store", uri, "entities", "remove", TASK, entity.uid], capsys)
        assert code == 0 and out.startswith("removed 1 Reward (created/reward/0)"), err
        assert select(store, TASK, group="traps") == [] and store.content_hash(TASK) != before
    finally:
        wipe(store)
        store.close()
