"""`graphtasks poge load/show/stats` against a real on-disk store."""

from __future__ import annotations

import argparse

import pytest
from conftest import DATA

from graphstore import open_store
from graphtasks.commands import poge_cmd
from gym_bridge.poge.env import PogeEnv
from tasks.poge import load_world, parse_world


def run(store: str, *argv: str) -> int:
    """The poge command group on a parser with the global --store option, as graphtasks builds it."""
    parser = argparse.ArgumentParser(prog="graphtasks")
    parser.add_argument("--store")
    poge_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["--store", store, *argv])
    return args.func(args)


def test_load_show_stats_and_run(isolated_store: str, capsys: pytest.CaptureFixture) -> None:
    assert run(isolated_store, "poge", "load", str(DATA / "world1.txt"), "--id", "user/poge/rooms") == 0
    assert "user/poge/rooms: stored" in capsys.readouterr().out
    assert run(isolated_store, "poge", "load", str(DATA / "world1.txt"), "--id", "user/poge/rooms") == 0
    assert "unchanged" in capsys.readouterr().out
    assert run(isolated_store, "poge", "show", "user/poge/rooms") == 0
    assert parse_world(capsys.readouterr().out) == load_world(DATA / "world1.txt")
    assert run(isolated_store, "poge", "stats", "user/poge/rooms") == 0
    assert "floor_states: 36" in capsys.readouterr().out
    with open_store(isolated_store) as store:
        tiles = store.cypher(
            "MATCH (t:Tile) WHERE t.task = $id AND t.kind = 'door' RETURN t.row, t.col ORDER BY t.row, t.col",
            {"id": "user/poge/rooms"},
        ).rows
    assert tiles == [[2, 4], [4, 2], [6, 4]]
    env = PogeEnv("user/poge/rooms", is_partially_obs=False)
    assert env.reset(seed=0)[1]["observation"] == "(2,7)"


def test_load_of_a_broken_file_stores_nothing(isolated_store: str, tmp_path, capsys) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("===Layout===\n#####\n#E  #\n#####\n")
    from tasks import TaskFileError

    with pytest.raises(TaskFileError, match=r"bad.txt, line 1, column 1: no goal tile"):
        run(isolated_store, "poge", "load", str(bad))
    with open_store(isolated_store) as store:
        assert store.list() == []


def test_graphtasks_main_routes_poge(isolated_store: str, tmp_path, capsys) -> None:
    """Through `graphtasks.cli.main`."""
    from graphtasks import cli

    bad = tmp_path / "bad.txt"
    bad.write_text("===Layout===\n#####\n#E  #\n#####\n")
    assert cli.main(["--store", isolated_store, "poge", "load", str(bad)]) == 2
    assert "line 1, column 1" in capsys.readouterr().err
    assert cli.main(["--store", isolated_store, "poge", "load", str(DATA / "world0.txt")]) == 0
    assert "user/poge/world0: stored" in capsys.readouterr().out


def test_a_loaded_world_runs_through_make_env(isolated_store: str, capsys) -> None:
    """`graphtasks run user/poge/...` gets a PogeEnv (it once fell through to GraphTaskEnv)."""
    from gym_bridge import make_env

    assert run(isolated_store, "poge", "load", str(DATA / "world0.txt"), "--id", "user/poge/w0") == 0
    env = make_env("user/poge/w0", store=isolated_store, is_partially_obs=False)
    assert isinstance(env, PogeEnv)
    assert env.reset(seed=0)[1]["observation"] == "(3,5)"
