"""The Room task is ready on first use: a store without ConceptNet AtLocation knowledge gets the
bundled snapshot from the knowledge provider (graphstore.providers), said once on one line;
a second make, or a second process racing the first, adds nothing; `load_knowledge=False`
opts out."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

import gymnasium as gym
import pytest

import gym_bridge  # noqa: F401  (registers graphtasks/Room-v0)
from graphstore import open_store
from graphstore.providers import (
    ENTRY_POINT_GROUP,
    KnowledgeProvider,
    UnknownKnowledgeProvider,
    ensure_knowledge,
    knowledge_provider,
    register_knowledge_provider,
)
from gym_bridge.params import LoadError
from gym_bridge.room.env import RoomEnv
from ingest.conceptnet_dump import ingest_dump
from ingest.conceptnet_snapshot import ATLOCATION_SNAPSHOT, SNAPSHOT_ASSERTIONS
from tasks.room import KNOWLEDGE_PROVIDER, RoomKnowledgeError

LINE = ("graphtasks: the store has no ConceptNet AtLocation knowledge; "
        f"loading the bundled snapshot ({SNAPSHOT_ASSERTIONS} assertions) ...")
REPO = Path(__file__).resolve().parents[2]


def stored(location: str) -> tuple[int, int, int]:
    """(AtLocation assertions, distinct keys among them, IngestJob nodes) in the store."""
    with open_store(location, "r") as s:
        keys = [r[0] for r in s.cypher("MATCH ()-[e:ASSERTS]->() WHERE e.relation = 'AtLocation' RETURN e.key").rows]
        jobs = s.cypher("MATCH (j:IngestJob) RETURN count(j)").rows[0][0]
    return len(keys), len(set(keys)), jobs


@pytest.mark.slow
def test_first_make_loads_the_snapshot_and_says_so_once(temp_store, capsys):
    env = gym.make("graphtasks/Room-v0", store=temp_store)  # the store does not even exist yet
    err = capsys.readouterr().err
    assert err.splitlines() == [LINE]
    assert stored(temp_store) == (SNAPSHOT_ASSERTIONS, SNAPSHOT_ASSERTIONS, 1)
    (_, _), info = env.reset(seed=0)
    assert info["question_text"] == ("Jennifer's cat", "AtLocation")  # the same room as after `ingest snapshot`

    again = gym.make("graphtasks/Room-v0", store=temp_store, room_size="big")
    assert capsys.readouterr().err == ""  # nothing to say, nothing loaded
    assert stored(temp_store) == (SNAPSHOT_ASSERTIONS, SNAPSHOT_ASSERTIONS, 1)
    assert len(again.unwrapped.heads) > 10


def test_opting_out_leaves_the_store_alone_and_says_how_to_load(temp_store, capsys):
    with pytest.raises(RoomKnowledgeError, match="graphtasks ingest snapshot"):
        RoomEnv(store=temp_store, load_knowledge=False)
    assert capsys.readouterr().err == ""
    assert stored(temp_store)[0] == 0
    with pytest.raises(ValueError, match="load_knowledge"):
        RoomEnv(store=temp_store, load_knowledge="no")


def test_other_atlocation_knowledge_is_not_topped_up(temp_store, tmp_path, capsys):
    """A store that holds AtLocation assertions, none of them about the room's objects, is the
    user's choice: the error says what to load instead of mixing the snapshot in."""
    dump = tmp_path / "other.csv.gz"
    with gzip.open(dump, "wt") as f:
        f.write("/a/[/r/AtLocation/,/c/en/quark/,/c/en/proton/]\t/r/AtLocation\t/c/en/quark\t/c/en/proton\t"
                '{"weight": 2.0, "dataset": "/d/test"}\n')
    with open_store(temp_store) as s:
        ingest_dump(s, dump)
    with pytest.raises(RoomKnowledgeError, match="holds no AtLocation assertions for its objects"):
        RoomEnv(store=temp_store)
    assert "loading" not in capsys.readouterr().err
    assert stored(temp_store)[0] == 1


def test_a_store_opened_read_only_is_not_written(temp_store):
    graph = _stored_room(temp_store)  # a store with the task and no knowledge
    with open_store(temp_store, "r") as s:
        with pytest.raises(LoadError, match="has no ConceptNet AtLocation knowledge and was opened read-only"):
            RoomEnv(task=graph, store=s)


def _stored_room(location: str):
    """The room/small TaskGraph, put into the store (the env would put it as a writer itself)."""
    import tasks

    graph = tasks.build("room/small")
    with open_store(location) as s:
        s.put(graph)
    return graph


RACER = """
import sys, time
from pathlib import Path
go = Path(sys.argv[2])
import gymnasium as gym, gym_bridge
Path(sys.argv[3]).touch()
while not go.exists():
    time.sleep(0.005)
env = gym.make("graphtasks/Room-v0", store=sys.argv[1])
print(len(env.unwrapped.heads))
"""


@pytest.mark.slow
def test_two_processes_on_a_fresh_store_load_it_once(tmp_path):
    """Both make the env at the same moment on a store that does not exist: writers take turns,
    the second finds the knowledge there; one line, one load, no assertion twice."""
    location, go = str(tmp_path / "fresh.lbug"), tmp_path / "go"
    env = {**os.environ, "GRAPHTASKS_STORE": location}
    readies = [tmp_path / f"ready{i}" for i in range(2)]
    racers = [subprocess.Popen([sys.executable, "-c", RACER, location, str(go), str(r)], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in readies]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in readies):
        assert time.monotonic() < deadline and all(p.poll() is None for p in racers), "a racer did not start"
        time.sleep(0.01)
    go.touch()
    outs = [p.communicate(timeout=120) for p in racers]
    assert [p.returncode for p in racers] == [0, 0], [err for _, err in outs]
    assert [out.strip() for out, _ in outs] == ["10", "10"]
    lines = [line for _, err in outs for line in err.splitlines() if line.startswith("graphtasks:")]
    assert lines == [LINE]
    assert stored(location) == (SNAPSHOT_ASSERTIONS, SNAPSHOT_ASSERTIONS, 1)


def test_the_provider_is_registered_by_entry_point_and_loads_idempotently(temp_store):
    names = {e.name: e.value for e in entry_points(group=ENTRY_POINT_GROUP)}
    assert names.get(KNOWLEDGE_PROVIDER) == "ingest.conceptnet_snapshot:ATLOCATION_SNAPSHOT"
    assert knowledge_provider(KNOWLEDGE_PROVIDER) is ATLOCATION_SNAPSHOT
    said: list[str] = []
    assert ensure_knowledge(temp_store, KNOWLEDGE_PROVIDER, said.append) == SNAPSHOT_ASSERTIONS
    assert ensure_knowledge(temp_store, KNOWLEDGE_PROVIDER, said.append) == 0
    with open_store(temp_store) as s:  # loading again adds nothing, even when asked to
        assert ATLOCATION_SNAPSHOT.load(s) == 0
    assert said == [LINE]
    with pytest.raises(UnknownKnowledgeProvider, match="did you mean 'conceptnet-atlocation'"):
        knowledge_provider("conceptnet-atlocatoin")


def test_the_entry_point_is_declared_for_a_fresh_install():
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert declared == {KNOWLEDGE_PROVIDER: "ingest.conceptnet_snapshot:ATLOCATION_SNAPSHOT"}


def test_a_provider_registered_at_run_time(temp_store):
    calls: list[str] = []
    provider = register_knowledge_provider(KnowledgeProvider(
        "test-facts", "test facts", "three facts", present=lambda s: bool(calls), load=lambda s: calls.append("x") or 3,
    ))
    try:
        said: list[str] = []
        assert ensure_knowledge(temp_store, "test-facts", said.append) == 3
        assert ensure_knowledge(temp_store, "test-facts", said.append) == 0
        assert said == ["graphtasks: the store has no test facts; loading three facts ..."] and calls == ["x"]
    finally:
        from graphstore import providers

        providers._PROVIDERS.pop(provider.name)
