"""Breaks and instructions are records: each screen the study page shows besides the trials
(instructions, a phase's banner, a break) is a StudyEvent of the session's Run with its onset and
duration by the page's clock (POST /api/s/TOKEN/screen, graphtasks.serve.engine.screen_event)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from graphtasks.serve.app import Refused, StudyServer
from graphtasks.serve.study import parse_study
from tests.test_serve import serve as serve  # the fixture
from tests.test_serve_browser import Player, play_session, shots_dir
from tests.test_serve_browser import browser as browser  # the fixture

STUDY = """
[experiment]
name = "screens"
tasks = ["rewardgym/two-step"]
seeds = [5]

[[phases]]
name = "practice"
episodes = 1

[[phases]]
name = "main"
episodes = 2

[study]
instructions = ["Choose with F and J.", "Win as often as you can."]
practice = ["practice"]
break_every = 1
feedback_ms = 50
iti_ms = 50
"""


def events(store: Any, name: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.cypher(
        "MATCH (r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE r.owner = $uid "
        "RETURN e.kind, e.page, e.trial, e.phase_index, e.onset_ms, e.duration_ms ORDER BY e.onset_ms",
        {"uid": experiment_uid(name)}).rows]


def test_a_screen_is_one_event_with_its_onset_and_duration() -> None:
    server = StudyServer(parse_study(STUDY), ":memory:")
    try:
        token = server.start_session({})["token"]
        for _ in range(2):  # the page's retry of the same post: one event
            assert server.record_screen(token, {"kind": "instructions", "onset": 812.5, "duration": 2400.0,
                                                "page": 1}) == {"ok": True}
        server.post_trial(token, {"index": 0, "action": 0, "rt": 300.0})
        server.record_screen(token, {"kind": "break", "onset": 5000.0, "duration": 9000.25, "page": 1})
        assert events(server.store, "screens") == [("instructions", 1, 0, 0, 812.5, 2400.0),
                                                   ("break", 1, 1, 0, 5000.0, 9000.25)]
        for body, message in (({"kind": "nap", "onset": 1, "duration": 1}, "kind: expected one of"),
                              ({"kind": "break", "onset": -1, "duration": 1}, "onset: expected milliseconds"),
                              ({"kind": "break", "onset": 1, "duration": 1, "mood": 3}, "unknown field 'mood'")):
            with pytest.raises(Refused, match=message):
                server.record_screen(token, body)
    finally:
        server.close()


@pytest.mark.slow
def test_the_page_records_its_instructions_banners_and_breaks(serve, browser, tmp_path) -> None:
    server = serve(STUDY)
    browser.get(server.url + "/")
    player = Player(browser, shots_dir(tmp_path))
    play_session(player, lambda kind, n: "fj"[n % 2], "screens")
    time.sleep(0.3)  # the last screen's post is not awaited by the page
    server.stop()
    with open_store(server.store, "r") as store:
        got = events(store, "screens")
    kinds = [(kind, page, trial, phase) for kind, page, trial, phase, _, _ in got]
    # two instruction pages, the practice's banner, "practice over", a break after the first main round
    assert kinds == [("instructions", 0, 0, 0), ("instructions", 1, 0, 0), ("banner", 0, 0, 0),
                     ("banner", 0, 2, 1), ("break", 1, 4, 1)]
    assert all(duration > 0 for *_, duration in got)
    onsets = [onset for *_, onset, _ in got]
    assert onsets == sorted(onsets) and onsets[0] > 0
