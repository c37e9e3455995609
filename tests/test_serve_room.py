"""The Room task served to people: its question screen (what the room shows, the question, the
candidate answers with their keys) comes from the env's observation; the answers are recorded
as the trials of a Room run and replay after a restart.

A real `graphtasks serve` process on 127.0.0.1, real HTTP, a real store with the ConceptNet
snapshot the Room task is built from.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphtasks.serve.study import StudyError, parse_study
from tests.test_serve import get, play, post, start_session, stored_trials
from tests.test_serve import serve as serve  # the fixture

ROOM_STUDY = """
[experiment]
name = "room people"
tasks = ["room/small"]
seeds = [3]
record = "steps"

[[phases]]
name = "questions"
episodes = 1
max_steps = 8

[study]
title = "Where is it?"
instructions = ["People put their things somewhere. Remember where, and answer where a thing is."]
feedback_ms = 100
"""

LOCATIONS = ["building", "city", "desk", "garage", "house", "lap", "office", "park", "table", "tree"]


@pytest.fixture
def room_store(tmp_path: Path) -> Path:
    store = tmp_path / "store.lbug"
    result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(store), "ingest", "snapshot"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return store


@pytest.mark.slow
def test_a_room_session_is_played_on_its_question_screens(serve, room_store):
    server = serve(ROOM_STUDY, store=room_store)
    token = start_session(server, pid="room-1")
    status, view = get(f"{server.url}/api/s/{token}")
    assert status == 200
    screen = view["screens"]["room/small"]
    assert screen["kind"] == "room" and screen["answers"] == LOCATIONS + ["I don't know"]
    assert screen["keys"] == list("abcdefghijk")  # eleven answers: letters
    position = view["position"]
    question = position["question"]
    assert position["available"] == list(range(11)) and position["frame"] is None
    assert [set(o) for o in question["observations"]] == [{"head", "tail"}]  # one agent in the small room
    assert question["question"].count("'s ") == 1
    url = f"{server.url}/api/s/{token}/trial"
    for bad in ({"index": 0, "action": 11}, {"index": 0, "action": -1}, {"index": 0, "action": "tree"}):
        assert post(url, bad)[0] == 400  # not one of the answers: nothing written
    asked = [(position["state"], question["question"])]
    answers = play(server, token, choose=lambda p: p["trial"] % 11, limit=3)
    asked += [(a["position"]["state"], a["position"]["question"]["question"]) for a in answers]
    server.stop()
    assert len(stored_trials(room_store, "room people")) == 3
    server.start()  # the session replays through its seeded room and goes on
    answers = play(server, token, choose=lambda p: p["trial"] % 11)
    asked += [(a["position"]["state"], a["position"]["question"]["question"]) for a in answers[:-1]]
    assert len(answers) == 5 and answers[-1]["position"]["done"]
    assert "1 session resumed" in server.stop()
    rows = stored_trials(room_store, "room people")
    assert [(r[3], r[4], r[5]) for r in rows] == [(step, state, step % 11) for step, (state, _) in enumerate(asked)]
    assert all(r[6] in (0.0, 1.0) for r in rows) and [r[8] for r in rows] == [400.0 + i for i in range(8)]
    import gymnasium as gym

    import gym_bridge  # noqa: F401  (registers the ids)

    env = gym.make("graphtasks/Room-v0", room_size="small", store=str(room_store))
    assert all(env.unwrapped.decode_head(state) == text for state, text in asked)  # the screen asked the state
    env.close()


def test_a_room_study_is_checked_when_loaded():
    study = parse_study(ROOM_STUDY, "room.toml")
    assert study.spec.tasks == ("room/small",) and study.spec.phases[0].max_steps == 8
    with pytest.raises(StudyError, match=r"study.keys: a key is listed twice"):
        parse_study(ROOM_STUDY + 'keys = ["a", "A"]\n', "room.toml")
