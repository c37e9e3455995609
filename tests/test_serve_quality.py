"""Data quality of browser sessions (issue 39): attention checks in a study's `[study]` table,
per-trial telemetry checked and stored with each Trial, per-session quality flags, the
cross-origin isolation headers; in process (a StudyServer over an in-memory store, the ASGI
application called directly). The browser side is tests/test_serve_touch.py."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from graphtasks.serve.app import Refused, StudyServer, make_app
from graphtasks.serve.quality import QUALITY_COLUMNS, Thresholds, session_quality, study_quality
from graphtasks.serve.study import StudyError, parse_study
from tests.test_serve import TWO_STEP_STUDY

ATTENTION = """
[[study.attention_checks]]
after_trial = 2
question = "Choose Blue."
options = ["Red", "Blue"]
answer = 1

[[study.attention_checks]]
after_trial = 4
question = "Choose Red."
options = ["Red", "Blue"]
answer = 0
"""
STUDY = TWO_STEP_STUDY.format(episodes=2, timeout=0) + ATTENTION


@pytest.fixture
def server():
    served = StudyServer(parse_study(STUDY), ":memory:")
    yield served
    served.close()


def begun(server: StudyServer) -> str:
    token = server.start_session({})["token"]
    server.consent(token, {"agree": True})
    server.answer_checks(token, {"answers": [0]})
    return token


def trials(server: StudyServer) -> list[list[Any]]:
    return server.store.cypher(
        "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) RETURN r.index, t.input, t.blurs, "
        "t.away_ms, t.pastes, t.timer_resolution_ms, t.isolated, t.webdriver ORDER BY r.index, e.phase_index, "
        "e.index, t.step").rows


def events(server: StudyServer) -> list[list[Any]]:
    return server.store.cypher("MATCH (r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE e.kind = 'attention_check' "
                               "RETURN r.index, e.check, e.answer, e.passed, e.attempt, e.trial ORDER BY e.uid").rows


def test_attention_checks_are_read_from_the_study_table_and_bad_ones_named():
    study = parse_study(STUDY)
    assert study.attention_checks == ((2, "Choose Blue.", ("Red", "Blue"), 1), (4, "Choose Red.", ("Red", "Blue"), 0))
    assert study.page_settings()["attention_checks"][0] == {"after_trial": 2, "question": "Choose Blue.",
                                                           "options": ["Red", "Blue"]}  # not the answer
    inline = TWO_STEP_STUDY.format(episodes=2, timeout=0).replace(
        "[study]\n", '[study]\nattention_checks = [{after_trial = 20, question = "Pick B", options = ["A", "B"], '
                     'answer = 1}]\n')
    assert parse_study(inline).attention_checks == ((20, "Pick B", ("A", "B"), 1),)
    for bad, said in ((ATTENTION.replace("answer = 1", "answer = 2"), "attention_checks[0].answer"),
                      (ATTENTION.replace("after_trial = 4", "after_trial = 1"), "attention_checks[1].after_trial"),
                      (ATTENTION.replace("after_trial = 2", 'after_trial = "2"'), "attention_checks[0].after_trial"),
                      (ATTENTION.replace('question = "Choose Red."', "prompt = 1"), "attention_checks[1]")):
        with pytest.raises(StudyError, match=re.escape(f"study.toml: study.{said}")):
            parse_study(TWO_STEP_STUDY.format(episodes=2, timeout=0) + bad, "study.toml")


def test_an_attention_check_failed_is_asked_again_and_every_answer_is_an_event(server):
    token, other = begun(server), begun(server)
    for i in range(2):
        server.post_trial(token, {"index": i, "action": 0, "rt": 500.0 + 40 * i})
    with pytest.raises(Refused, match="attention check 1 is not due"):
        server.answer_attention(token, {"check": 1, "answer": 0})
    assert server.answer_attention(token, {"check": 0, "answer": 0, "rt": 800.0, "input": "touch"}) == \
        {"check": 0, "passed": False, "again": True}
    assert server.answer_attention(token, {"check": 0, "answer": 1}) == {"check": 0, "passed": True, "again": False}
    assert server.answer_attention(token, {"check": 0, "answer": 1})["duplicate"] is True  # a repeated post
    for i in range(2, 4):
        server.post_trial(token, {"index": i, "action": 0, "rt": 500.0 + 40 * i})
    # the second check failed twice: recorded, and the session goes on
    assert [server.answer_attention(token, {"check": 1, "answer": 1})["again"] for _ in range(2)] == [True, False]
    server.post_trial(token, {"index": 4, "action": 0, "rt": 700.0})
    run = server.session(token).run
    assert (run["attention_done"], run["attention_failures"], run["attention_failed_twice"]) == (2, 3, 1)
    assert events(server) == [[3, 0, 0, False, 1, 2], [3, 0, 1, True, 2, 2], [3, 1, 1, False, 1, 4],
                              [3, 1, 1, False, 2, 4]]
    row = next(r for r in server.overview() if r["run"] == 3)
    assert row["flags"] == "failed_checks" and (row["attention_failures"], row["attention_failed_twice"]) == (3, 1)
    offline = study_quality(server.store, server.study)  # the same rows from the store alone
    assert [{k: r[k] for k in ("run", "trials", *QUALITY_COLUMNS)} for r in offline] == \
        [{k: r[k] for k in ("run", "trials", *QUALITY_COLUMNS)} for r in server.overview()]
    untouched = next(r for r in server.overview() if r["run"] == 4)
    assert untouched["flags"] == "" and untouched["checks_missed"] == 0
    assert server.view(other)["attention"] == {"done": 0, "attempt": 0}  # a participant's checks are their own


def test_bad_telemetry_is_refused_and_nothing_is_written(server):
    token = begun(server)
    good = {"index": 0, "action": 0, "rt": 420.0, "resolution": 0.005, "isolated": True, "input": "mouse",
            "telemetry": {"blurs": 1, "away_ms": 1200.5, "hidden": 0, "fullscreen_exits": 0, "pastes": 1,
                          "key_repeats": 2, "webdriver": False}}
    for change, said in (({"telemetry": {"blurs": -1}}, "telemetry.blurs"), ({"telemetry": {"clicks": 1}},
                         "telemetry.clicks: unknown"), ({"telemetry": [1]}, "telemetry: expected an object"),
                         ({"telemetry": {"away_ms": float("nan")}}, "telemetry.away_ms"),
                         ({"telemetry": {"webdriver": 1}}, "telemetry.webdriver"), ({"input": "voice"}, "input"),
                         ({"resolution": -0.1}, "resolution"), ({"isolated": "yes"}, "isolated"),
                         ({"mouse_path": []}, "unknown field 'mouse_path'")):
        with pytest.raises(Refused, match=said) as refused:
            server.post_trial(token, {**good, **change})
        assert refused.value.status == 400
    assert trials(server) == [] and server.session(token).player.trial == 0
    with pytest.raises(Refused) as refused:
        server.answer_attention(token, {"check": 0, "answer": 1, "extra": 1})
    assert refused.value.status == 400 and events(server) == []
    with pytest.raises(Refused) as refused:
        server.answer_attention("x" * 43, {"check": 0, "answer": 1})  # no such session
    assert refused.value.status == 404
    server.post_trial(token, good)
    assert trials(server) == [[3, "mouse", 1, 1200.5, 1, 0.005, True, False]]
    assert "timer_resolution_ms" in server.trials_csv().splitlines()[0]
    row = server.overview()[0]
    assert row["flags"] == "automation" and row["pastes"] == 1 and row["resolution_ms"] == 0.005


def test_each_flag_is_raised_at_its_threshold():
    calm = [{"rt": 400.0 + 37 * (i % 7), "key": "fj"[i % 2], "away_ms": 0.0} for i in range(20)]
    assert session_quality(calm, {})["flags"] == ""
    fast = [{**t, "rt": 100.0} if i < 2 else t for i, t in enumerate(calm)]  # 2 of 20: 10 %
    assert session_quality(fast, {})["flags"] == "too_fast"
    assert session_quality(fast[1:], {})["flags"] == ""  # 1 of 19
    away = [{**t, "away_ms": 30_000.0} if i == 5 else t for i, t in enumerate(calm)]
    assert session_quality(away, {})["flags"] == "long_absence" and session_quality(away, {})["away_s"] == 30.0
    same = [{**t, "key": "f"} for t in calm]
    assert session_quality(same, {})["flags"] == "same_key_run" and session_quality(same[:19], {})["flags"] == ""
    assert session_quality(calm, {"attention_done": 0}, due_checks=1)["flags"] == "failed_checks"  # a check skipped
    regular = [{**t, "rt": 500.0 + (i % 2)} for i, t in enumerate(calm)]
    assert session_quality(regular, {})["flags"] == "automation"
    assert session_quality([{**calm[0], "webdriver": True}], {})["flags"] == "automation"
    assert session_quality(calm, {}, thresholds=Thresholds(same_run=2))["flags"] == ""  # f, j alternate


def asgi_get(app: Any, path: str) -> tuple[int, dict[str, str]]:
    """A GET of `path` straight through the ASGI application: the status and the headers."""
    sent: list[dict[str, Any]] = []
    asked: list[bool] = []

    async def receive() -> dict[str, Any]:
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        while not any(m["type"] == "http.response.body" and not m.get("more_body") for m in sent):
            await asyncio.sleep(0.001)  # the client stays until the whole answer has come
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}


def test_every_page_and_asset_is_cross_origin_isolated(server):
    app = make_app(server)
    token = server.start_session({})["token"]
    refused = {"/no/such/page": 404, "/researcher/sessions.csv": 403}  # the flags table: researchers only
    for path in ("/", f"/s/{token}", "/static/study.js", "/static/study.css", "/api/study", *refused):
        status, headers = asgi_get(app, path)
        assert status == refused.get(path, 200), path
        assert headers["cross-origin-opener-policy"] == "same-origin", path
        assert headers["cross-origin-embedder-policy"] == "require-corp", path
        assert headers["cross-origin-resource-policy"] == "same-origin", path


@pytest.mark.slow  # a server process: ~5 s
def test_a_pilot_answers_the_attention_checks_it_meets(tmp_path):
    """`serve --pilot`: the simulated participants answer each attention check as instructed when
    they reach it, so that a pilot's sessions are not flagged for checks they skipped."""
    import subprocess
    import sys

    from graphstore import open_store
    from tests.test_serve import free_port

    study = tmp_path / "study.toml"
    study.write_text(STUDY, encoding="utf-8")
    store = tmp_path / "pilot.lbug"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port", str(free_port()),
         "--pilot", "1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with open_store(store, "r") as s:
        assert s.cypher("MATCH (r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE e.kind = 'attention_check' RETURN e.check, "
                        "e.passed, e.attempt, e.trial ORDER BY e.uid").rows == [[0, True, 1, 2], [1, True, 1, 4]]
        assert s.cypher("MATCH (r:Run) WHERE r.attention_done IS NOT NULL RETURN r.attention_done, "
                        "r.attention_failures").rows == [[2, 0]]


def test_the_flags_of_a_trial_read_while_it_was_being_written_are_recomputed(server):
    """The dashboard may be read between a trial's step and its commit: the flags then lack that
    trial, and the next overview reads it."""
    token = begun(server)
    staged = server.stage_trial(token, {"index": 0, "action": 0, "rt": 420.0, "telemetry": {"pastes": 1}})
    assert server.overview()[0]["flags"] == "" and server.overview()[0]["pastes"] == 0  # not committed yet
    server.write([staged])
    assert server.overview()[0]["flags"] == "automation" and server.overview()[0]["pastes"] == 1
