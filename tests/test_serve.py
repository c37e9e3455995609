"""`graphtasks serve`: a real server process on 127.0.0.1, real HTTP, a real store.

Every test starts the server as a user does (`python -m graphtasks serve ...`) on a free port,
talks to it over HTTP, and reads the store after stopping it.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid

RESEARCHER = "researcher-token-for-tests-0123456789"

TWO_STEP_STUDY = """
[experiment]
name = "two-step people"
tasks = ["rewardgym/two-step"]
seeds = [11, 12, 13]
record = "steps"

[[agents]]
name = "hybrid"

[[phases]]
name = "practice"
episodes = 2

[[phases]]
name = "main"
episodes = {episodes}

[study]
title = "A two-step task"
consent = "You are invited to take part in a study of decisions.\\n\\nYour choices and response times are recorded."
instructions = ["In each round you choose twice, with the F and J keys.", "Try to win as often as you can."]
practice = ["practice"]
keys = ["f", "j"]
timeout_ms = {timeout}
too_slow_ms = 400
feedback_ms = 150
iti_ms = 100
completion = "Thank you for taking part."
completion_code = "CODE-2S"
redirect = "https://example.org/done?cc={{code}}"

[[study.checks]]
question = "Which keys choose?"
options = ["F and J", "The arrow keys", "The mouse"]
answer = 0
"""

GRID_STUDY = """
[experiment]
name = "grid people"
tasks = ["neuronav/grid/two_step/micro"]
seeds = 1

[[phases]]
name = "walk"
episodes = 2
max_episode_steps = 30

[study]
title = "Find the green squares"
instructions = ["Move with the arrow keys to a green square."]
feedback_ms = 150
iti_ms = 100
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A `graphtasks serve` process and the store it writes."""

    study: str
    store: Path
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> Server:
        self.port = self.port or free_port()
        env = {**os.environ, "GRAPHTASKS_RESEARCHER_TOKEN": RESEARCHER}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graphtasks", "--store", str(self.store), "serve", self.study,
             "--port", str(self.port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.process.stdout.read() if self.process.stdout else ''}")
            try:
                if get(self.url + "/")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("the server did not answer")

    def stop(self, kill: bool = False) -> str:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        out, _ = self.process.communicate(timeout=30)
        return out or ""


@pytest.fixture
def serve(tmp_path) -> Iterator[Any]:
    started: list[Server] = []

    def start(text: str, name: str = "study.toml", store: Path | None = None) -> Server:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        server = Server(str(path), store or tmp_path / "store.lbug").start()
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process is not None and server.process.poll() is None:
            server.stop(kill=True)


def request(url: str, body: Any = None, method: str | None = None, headers: dict[str, str] | None = None,
            raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    head = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, method=method, headers={**head, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            text = res.read().decode()
            status = res.status
    except urllib.error.HTTPError as exc:
        text, status = exc.read().decode(), exc.code
    assert "Traceback" not in text and 'File "' not in text, text
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def get(url: str, **kw: Any) -> tuple[int, Any]:
    return request(url, **kw)


def post(url: str, body: Any, **kw: Any) -> tuple[int, Any]:
    return request(url, body, method="POST", **kw)


def start_session(server: Server, pid: str | None = None, consent: bool = True) -> str:
    status, answer = post(server.url + "/api/start", {"params": {"PROLIFIC_PID": pid} if pid else {}})
    assert status == 200, answer
    token = answer["token"]
    if consent:
        assert post(f"{server.url}/api/s/{token}/consent", {"agree": True})[0] == 200
        if "[[study.checks]]" in Path(server.study).read_text():
            assert post(f"{server.url}/api/s/{token}/checks", {"answers": [0]}) == (200, {"passed": True})
    return token


def play(server: Server, token: str, choose: Any = None, limit: int = 10_000) -> list[dict[str, Any]]:
    """Play a session to its end over HTTP; the answers, in order."""
    status, view = get(f"{server.url}/api/s/{token}")
    assert status == 200, view
    position = view["position"]
    answers: list[dict[str, Any]] = []
    while not position["done"] and len(answers) < limit:
        action = choose(position) if choose else position["available"][position["trial"] % len(position["available"])]
        body = {"index": position["trial"], "action": action, "rt": 400.0 + position["trial"], "shown": 1000.0,
                "pressed": 1400.0 + position["trial"], "key": "f"}
        status, answer = post(f"{server.url}/api/s/{token}/trial", body)
        assert status == 200, answer
        answers.append(answer)
        position = answer["position"]
    return answers


def researcher(server: Server, what: str = "sessions") -> Any:
    path = "/researcher/sessions" if what == "sessions" else "/researcher/trials.csv"
    status, answer = get(server.url + path, headers={"Authorization": f"Bearer {RESEARCHER}"})
    assert status == 200
    return answer


def stored_trials(store: Path, experiment: str) -> list[tuple[Any, ...]]:
    with open_store(store, "r") as s:
        return [tuple(r) for r in s.cypher(
            "MATCH (p:Participant)-[:PERFORMED]->(r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
            "WHERE r.owner = $uid RETURN r.index, e.phase_index, e.index, t.step, t.state, t.action, t.reward, "
            "t.next_state, t.rt, t.uid ORDER BY r.index, e.phase_index, e.index, t.step",
            {"uid": experiment_uid(experiment)},
        ).rows]


# -- the study file ----------------------------------------------------------------------------------


def test_study_file_errors_are_one_line(tmp_path, capsys):
    from graphtasks.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text(TWO_STEP_STUDY.format(episodes=3, timeout=0).replace("iti_ms = 100", "iti_ms = -5"))
    result = subprocess.run([sys.executable, "-m", "graphtasks", "serve", str(bad), "--check"],
                            capture_output=True, text=True)  # a real process: its whole stderr is the one line
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "study.iti_ms: expected milliseconds from 0" in result.stderr
    bad.write_text(TWO_STEP_STUDY.format(episodes=3, timeout=0).replace('practice = ["practice"]',
                                                                         'practice = ["warm-up"]'))
    assert main(["serve", str(bad), "--check"]) == 2  # the same command in this process
    err = capsys.readouterr().err
    assert "study.practice" in err and "phases: practice, main" in err and err.strip().count("\n") == 0
    good = tmp_path / "good.toml"
    good.write_text(GRID_STUDY)
    assert main(["serve", str(good), "--check"]) == 0
    out = capsys.readouterr().out
    assert "study 'grid people': tasks neuronav/grid/two_step/micro; phases walk (2 episodes)" in out


def test_module_examples_run():
    import doctest

    from graphtasks.serve import app, engine, study

    for module in (study, engine, app):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


# -- sessions ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_session_is_recorded_as_a_run_and_replays_through_the_agents_loop(serve, tmp_path):
    """Every trial is in the store as the records of a run; the recorded actions replayed by the
    episode loop agents use (gym_bridge.episodes.play) with the session's seed give the same
    states and rewards."""
    server = serve(TWO_STEP_STUDY.format(episodes=6, timeout=0))
    token = start_session(server, pid="prolific-123")
    answers = play(server, token)
    assert len(answers) == 16  # 8 episodes of two choices
    assert answers[-1]["position"]["done"] and answers[-1]["code"] == "CODE-2S"
    assert answers[-1]["redirect"] == "https://example.org/done?cc=CODE-2S"
    out = server.stop()
    assert "1 session resumed" not in out  # a fresh store resumed nothing
    rows = stored_trials(server.store, "two-step people")
    assert len(rows) == 16 and len({r[-1] for r in rows}) == 16
    assert [r[8] for r in rows] == [400.0 + i for i in range(16)]
    with open_store(server.store, "r") as s:
        run = s.cypher(
            "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run)<-[:PERFORMED]-(p:Participant) WHERE x.name = $n "
            "RETURN r.status, r.agent, r.seed, r.task, p.participant_id, p.pid_hash, r.ended_at, r.token_hash",
            {"n": "two-step people"}).rows
        assert len(run) == 1
        status, agent, seed, task_id, pseudonym, pid_hash, ended, token_hash = run[0]
        assert (status, agent, seed, task_id) == ("completed", "participant", 11, "rewardgym/two-step")
        assert pseudonym.startswith("p-") and "prolific-123" not in json.dumps(run)
        assert len(pid_hash) == 64 and ended and token_hash != token and len(token_hash) == 64
        hashes = s.cypher("MATCH (e:Episode) WHERE e.experiment = $n MATCH (t:Task) WHERE t.uid = e.task_version "
                          "RETURN DISTINCT e.task_hash = t.content_hash", {"n": "two-step people"}).rows
        assert hashes == [[True]]  # linked to the stored task version by its hash
    # the same actions through the agents' episode loop, phase by phase, with the run's seed tree
    from graphtasks.experiments.versions import prepare_versions
    from graphtasks.serve.study import load_study
    from gym_bridge import family
    from gym_bridge.episodes import SeedTree
    from gym_bridge.episodes import play as play_episodes

    study = load_study(server.study)
    versions = prepare_versions(study.spec)
    for phase_index, phase in enumerate(study.spec.phases):
        recorded = [r for r in rows if r[1] == phase_index]
        actions = iter([r[5] for r in recorded])

        class Replay:  # an agent that takes the person's actions
            def begin_episode(self) -> None: ...
            def act(self, state: int, available: Any) -> int: return next(actions)
            def action_probabilities(self, state: int, available: Any) -> list[float]: return [1.0, 1.0]
            def learn(self, *args: Any) -> None: ...

        version = versions[phase.task_id("rewardgym/two-step")]
        env = family(version.family).make_env(version.prepared)
        episodes = play_episodes(env, Replay(), phase.episodes, SeedTree(11).env(phase_index), record_steps=True)
        replayed = [(e.index, i, *step[:4]) for e in episodes for i, step in enumerate(e.steps or [])]
        assert replayed == [r[2:8] for r in recorded]


@pytest.mark.slow
def test_duplicates_reload_and_a_killed_server_lose_nothing(serve):
    server = serve(TWO_STEP_STUDY.format(episodes=4, timeout=0))
    token = start_session(server)
    answers = play(server, token, limit=5)
    body = {"index": 4, "action": 0, "rt": 1.0}
    again = post(f"{server.url}/api/s/{token}/trial", body)  # the page retrying trial 4: same answer, no write
    assert again[0] == 200 and again[1]["duplicate"] and again[1]["reward"] == answers[4]["reward"]
    assert again[1]["position"] == answers[4]["position"]
    assert post(f"{server.url}/api/s/{token}/trial", {**body, "index": 7})[0] == 409  # ahead of the session
    assert get(f"{server.url}/api/s/{token}")[1]["position"]["trial"] == 5  # a reload resumes at the next trial
    assert researcher(server)["sessions"][0]["trials"] == 5
    server.stop(kill=True)  # kill -9
    server.start()
    assert get(f"{server.url}/api/s/{token}")[1]["position"] == answers[4]["position"]
    rest = play(server, token)
    assert len(rest) == 12 - 5 and rest[-1]["position"]["done"]
    assert server.stop().count("1 session resumed") == 1
    rows = stored_trials(server.store, "two-step people")
    assert [(r[1], r[2], r[3]) for r in rows] == [(p, e, s) for p in (0, 1) for e in range(2 if p == 0 else 4)
                                                  for s in (0, 1)]


@pytest.mark.slow
def test_one_participant_id_one_session(serve):
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0).replace("[[study.checks]]", "max_sessions = 2\n\n"
                                                                        "[[study.checks]]"))
    start_session(server, pid="same-person")
    status, answer = post(server.url + "/api/start", {"params": {"PROLIFIC_PID": "same-person"}})
    assert status == 409 and "started this study already" in answer["error"]
    assert len(researcher(server)["sessions"]) == 1
    start_session(server, pid="another-person")
    status, answer = post(server.url + "/api/start", {"params": {"PROLIFIC_PID": "a-third-person"}})
    assert status == 503 and answer["error"] == "the study is full (2 sessions)"
    assert len(researcher(server)["sessions"]) == 2
    server.stop()
    with open_store(server.store, "r") as s:
        values = json.dumps(s.cypher("MATCH (p:Participant) RETURN p.participant_id, p.pid_hash").rows)
    assert "same-person" not in values


@pytest.mark.slow
def test_hostile_input_is_refused_with_nothing_written(serve):
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    mine, theirs = start_session(server), start_session(server)
    play(server, theirs, limit=3)
    before = (researcher(server), researcher(server, "trials"))
    url = f"{server.url}/api/s/{mine}/trial"
    forged = mine[:-1] + ("A" if mine[-1] != "A" else "B")
    cases = [
        (f"{server.url}/api/s/{forged}/trial", {"index": 0, "action": 0}, None, 404),  # a forged token
        (f"{server.url}/api/s/{'x' * 43}/trial", {"index": 0, "action": 0}, None, 404),
        (url, {"index": 3, "action": 0}, None, 409),  # another participant's trial index
        (url, {"index": 0, "action": 2}, None, 400),  # an action that does not exist
        (url, {"index": 0, "action": -1}, None, 400),
        (url, {"index": 0, "action": True}, None, 400),
        (url, {"index": 0, "action": "0"}, None, 400),
        (url, {"index": -1, "action": 0}, None, 400),
        (url, {"index": 0, "action": 0, "rt": float("inf")}, None, 400),
        (url, {"index": 0, "action": 0, "rt": -3}, None, 400),
        (url, {"index": 0, "action": 0, "key": "x" * 500}, None, 400),
        (url, {"index": 0, "action": 0, "state": 5}, None, 400),  # the server, not the page, knows the state
        (url, None, b"{not json", 400),
        (url, None, b"[1, 2]", 400),
        (url, None, b'{"index": 0, "action": 0, "key": "' + b"k" * 10_000 + b'"}', 413),
        (url, None, b"[" * 1900 + b"]" * 1900, 400),  # nested past the JSON parser's depth
    ]
    for target, body, raw, expected in cases:
        status, answer = request(target, body, method="POST", raw=raw)
        assert status == expected, (target, body, raw and raw[:40], status, answer)
        assert isinstance(answer, dict) and "error" in answer
    assert request(url, None, method="POST", raw=b'{"index": 0, "action": 0}',
                   headers={"Content-Type": "text/plain"})[0] == 415
    for path in ("/static/../pyproject.toml", "/static/%2e%2e/app.py", "/static/..%2f..%2fapp.py", "/../../etc/passwd",
                 "/s/../../etc/passwd", "/api/s/..%2f..%2fetc%2fpasswd", "/static/%2e%2e%2f%2e%2e%2fschema.py"):
        status, answer = get(server.url + path)
        assert 400 <= status < 500, (path, status)
        assert "root:" not in str(answer) and "def " not in str(answer)
    assert get(server.url + "/researcher/sessions")[0] == 403
    assert get(server.url + "/researcher/sessions", headers={"Authorization": "Bearer wrong"})[0] == 403
    assert get(server.url + "/researcher?key=" + RESEARCHER[:-1])[0] == 403
    assert get(server.url + "/researcher?key=" + RESEARCHER)[0] == 403  # the token does not travel in URLs
    assert get(server.url + "/researcher", headers={"Authorization": f"Bearer {RESEARCHER}"})[0] == 200
    assert post(f"{server.url}/api/s/{mine}/consent", {"agree": "yes"})[0] == 400
    assert post(server.url + "/api/start", {"params": {"PROLIFIC_PID": "x" * 5000}})[0] in (400, 413)
    assert post(server.url + "/api/start", {"params": {"PROLIFIC_PID": 7}})[0] == 400
    assert (researcher(server), researcher(server, "trials")) == before
    server.stop()
    assert len(stored_trials(server.store, "two-step people")) == 3


@pytest.mark.slow
def test_the_server_binds_to_this_machine_only(serve):
    server = serve(GRID_STUDY)
    listening = []  # (address, port) of the listening TCP sockets, from the kernel's table
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port = local.split(":")
        if state == "0A":  # LISTEN
            listening.append((socket.inet_ntoa(bytes.fromhex(address)[::-1]), int(port, 16)))
    assert ("127.0.0.1", server.port) in listening
    assert ("0.0.0.0", server.port) not in listening


@pytest.mark.slow
def test_simulated_participants_at_once_every_trial_stored_once(serve):
    """20 participants of 50 trials each, at once, over HTTP: every trial stored exactly once."""
    server = serve(TWO_STEP_STUDY.format(episodes=23, timeout=0))
    tokens = [start_session(server, pid=f"load-{i}") for i in range(20)]
    errors: list[BaseException] = []

    def participant(token: str) -> None:
        try:
            assert len(play(server, token)) == 50
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    start = time.monotonic()
    threads = [threading.Thread(target=participant, args=(t,)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    assert not errors, errors[0]
    print(f"{20 * 50} trials in {took:.1f} s: {20 * 50 / took:.0f} trials/s")
    server.stop()
    rows = stored_trials(server.store, "two-step people")
    assert len(rows) == 1000 and len({r[-1] for r in rows}) == 1000
    assert {r[0] for r in rows} == set(range(3, 23))  # after the spec's agent runs 0..2 (1 agent x 3 seeds)


@pytest.mark.slow
def test_graphtasks_fit_fits_the_sessions(serve):
    server = serve(TWO_STEP_STUDY.format(episodes=10, timeout=0))
    for i in range(2):
        play(server, start_session(server, pid=f"fit-{i}"))
    server.stop()
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(server.store), "fit", "run", "two-step people",
         "--model", "hybrid", "--starts", "2", "--format", "json"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    fits = json.loads(result.stdout)
    assert [f["run"] for f in fits] == [3, 4] and all(f["choices"] == 24 for f in fits)
    figure = server.store.parent / "stay.png"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(server.store), "participants", "stay", "two-step people",
         "-o", str(figure)], capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("people (2 runs): rewarded_common ") and figure.read_bytes()[:4] == b"\x89PNG"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(server.store), "participants", "stay", "two-step people",
         "--agents", "nobody", "-o", str(figure)], capture_output=True, text=True,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "graphtasks: error: no recorded experiment 'nobody'; recorded: two-step people"]


def resilient_play(server: Server, token: str, acknowledged: list[int], stop_at: float = 600) -> int:
    """Play a session as the page does: a post that fails (the server is down, a 5xx) is sent
    again until it is answered; the number of trials answered (each counted in `acknowledged`)."""
    end = time.monotonic() + stop_at
    position = None
    while position is None:
        try:
            status, view = get(f"{server.url}/api/s/{token}")
            position = view["position"] if status == 200 else None
        except (OSError, http.client.HTTPException):  # refused, reset, or cut mid-answer by the kill
            time.sleep(0.05)
    answered = 0
    while not position["done"]:
        assert time.monotonic() < end, "the session did not finish"
        body = {"index": position["trial"], "action": position["available"][position["trial"] % 2], "rt": 300.0}
        try:
            status, answer = post(f"{server.url}/api/s/{token}/trial", body)
        except (OSError, http.client.HTTPException):  # refused, reset, cut mid-answer: the server is restarting
            time.sleep(0.05)
            continue
        if status >= 500:
            time.sleep(0.05)
            continue
        assert status == 200, answer
        acknowledged.append(1)
        answered += 0 if answer.get("duplicate") else 1
        position = answer["position"]
    return answered


@pytest.mark.slow
def test_fifty_participants_and_a_killed_server_lose_no_trial(serve):
    """50 simulated participants of 100 trials each at once; the server is killed with -9 half way
    and started again: every trial is stored exactly once, and every answered trial is stored."""
    server = serve(TWO_STEP_STUDY.format(episodes=48, timeout=0))
    tokens = [start_session(server, pid=f"many-{i}") for i in range(50)]
    acknowledged: list[int] = []
    errors: list[BaseException] = []

    def participant(token: str) -> None:
        try:
            resilient_play(server, token, acknowledged)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    start = time.monotonic()
    threads = [threading.Thread(target=participant, args=(t,)) for t in tokens]
    for t in threads:
        t.start()
    while len(acknowledged) < 2500 and not errors:
        time.sleep(0.01)
    before_kill = len(acknowledged)
    server.stop(kill=True)
    server.start()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    assert not errors, errors[0]
    print(f"5000 trials, killed after {before_kill} answers, in {took:.1f} s: {5_000 / took:.0f} trials/s")
    assert "50 sessions resumed" in server.stop()
    rows = stored_trials(server.store, "two-step people")
    assert len(rows) == 5_000 and len({r[-1] for r in rows}) == 5_000
    per_run = {run: [r[1:4] for r in rows if r[0] == run] for run in range(3, 53)}  # after the agent runs 0..2
    expected = [(p, e, s) for p, n in ((0, 2), (1, 48)) for e in range(n) for s in (0, 1)]
    assert all(steps == expected for steps in per_run.values())


@pytest.mark.slow
def test_pilot_mode_plays_the_study_through_the_server(tmp_path):
    """`serve --pilot N`: N of the spec's agents play through the server, recorded as sessions
    whose Participant says pilot; only a researcher may start a pilot session."""
    study = tmp_path / "study.toml"
    study.write_text(TWO_STEP_STUDY.format(episodes=6, timeout=0), encoding="utf-8")
    store = tmp_path / "pilot.lbug"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port", str(free_port()),
         "--pilot", "3", "--pilot-seed", "5"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert [line.split(":")[1].strip() for line in result.stdout.splitlines() if line.startswith("pilot:")] == [
        "run 3", "run 4", "run 5"]  # after the spec's agent runs 0..2
    assert "16 trials" in result.stdout
    with open_store(store, "r") as s:
        rows = s.cypher("MATCH (p:Participant)-[:PERFORMED]->(r:Run) RETURN p.source, r.status, p.participant_id "
                        "ORDER BY r.index").rows
    assert [(src, status) for src, status, _ in rows] == [("pilot: hybrid", "completed")] * 3
    assert all(pid.startswith("pilot-") for _, _, pid in rows)
    assert len(stored_trials(store, "two-step people")) == 48
    server = Server(str(study), store).start()
    try:
        status, answer = post(server.url + "/api/start", {"params": {}, "pilot": "hybrid"})
        assert status == 403  # not without the researcher token
        assert len(researcher(server)["sessions"]) == 3
    finally:
        server.stop()


@pytest.mark.slow
def test_a_session_that_no_longer_replays_stops_the_server_with_one_line(serve):
    """A restart replays every session; a recorded trial its env does not give again (a store
    changed behind the server's back) is named, and the server does not start."""
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    play(server, start_session(server), limit=2)
    server.stop()
    with open_store(server.store, "w") as s:
        uid = s.cypher("MATCH (t:Trial) WHERE t.step = 1 RETURN t.uid").rows[0][0]
        s.merge_shared([("Trial", [{**dict(zip(
            ["uid", "owner", "experiment", "run", "phase_index", "episode", "step", "state", "action", "next_state"],
            s.cypher("MATCH (t:Trial) WHERE t.uid = $u RETURN t.uid, t.owner, t.experiment, t.run, t.phase_index, "
                     "t.episode, t.step, t.state, t.action, t.next_state", {"u": uid}).rows[0])), "reward": 7.0}])])
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(server.store), "serve", server.study, "--port",
         str(free_port())], capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "trial 1 replays to" in lines[0] and "recorded (7.0," in lines[0], result.stderr


@pytest.mark.slow
def test_comprehension_checks_come_before_the_trials(serve):
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    token = start_session(server, consent=False)
    url = f"{server.url}/api/s/{token}"
    assert post(url + "/checks", {"answers": [0]})[0] == 409  # consent first
    assert post(url + "/consent", {"agree": True})[0] == 200
    assert get(url)[1]["study"]["checks"] == [
        {"question": "Which keys choose?", "options": ["F and J", "The arrow keys", "The mouse"]}]  # no answers
    for bad in ({"answers": [3]}, {"answers": [0, 0]}, {"answers": ["0"]}, {"answers": [True]}, {"answer": [0]}):
        assert post(url + "/checks", bad)[0] == 400, bad
    assert post(url + "/checks", {"answers": [1]}) == (200, {"passed": False})
    assert post(url + "/trial", {"index": 0, "action": 0})[0] == 409  # not before the checks are passed
    assert post(url + "/checks", {"answers": [0]}) == (200, {"passed": True})
    assert post(url + "/trial", {"index": 0, "action": 0})[0] == 200
    server.stop()
    with open_store(server.store, "r") as s:
        attempts, passed = s.cypher("MATCH (r:Run) RETURN r.check_attempts, r.checks_passed_at").rows[0]
    assert attempts == 2 and passed


def test_sessions_are_balanced_over_conditions_and_tasks():
    from graphtasks.serve.app import assignment
    from graphtasks.serve.study import parse_study

    study = parse_study("""
[experiment]
name = "balanced"
tasks = ["rewardgym/two-step", "neuronav/graph/two_step"]
seeds = [5, 6]

[[phases]]
name = "main"
episodes = 4

[[conditions]]
name = "short"
phases = { main = { episodes = 2 } }

[[conditions]]
name = "long"
""")
    sessions = [assignment(study.spec, k) for k in range(8)]
    for start in range(0, 8, 4):  # every four sessions: each task in each condition once
        assert sorted(s[:2] for s in sessions[start:start + 4]) == sorted(
            (t, c) for t in study.spec.tasks for c in ("short", "long"))
    assert [s[2] for s in sessions] == [5] * 4 + [6] * 4


PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
         "RU5ErkJggg==")


@pytest.mark.slow
def test_choice_screens_come_from_the_task_graph(serve, tmp_path):
    """A task of one's own needs no page code: its states' names, and the stimulus, colour,
    image and action labels of its task file's `info`, are what the page shows."""
    task = tmp_path / "slots.json"
    task.write_text(json.dumps({
        "name": "slots", "reward_on": "terminal", "start": 0, "graph": {"0": [1, 2], "1": [], "2": []},
        "names": {"0": "choose", "1": "red", "2": "blue"},
        "info": {"0": {"stimulus": "Pick a machine", "colour": "#123456", "action_labels": ["Red", "Blue"],
                       "image": PIXEL}, "1": {"image": "https://elsewhere.example/x.png"}},
        "rewards": {"1": {"kind": "probabilistic", "values": [0, 1], "probs": [0.3, 0.7]},
                    "2": {"kind": "probabilistic", "values": [0, 1], "probs": [0.6, 0.4]}},
    }))
    store = tmp_path / "store.lbug"
    loaded = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(store), "tasks", "load", "--file",
                             str(task)], capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    server = serve('[experiment]\nname = "slots"\ntasks = ["user/slots"]\n\n[[phases]]\nname = "play"\n'
                   'episodes = 3\n', store=store)
    token = start_session(server)
    screens = get(f"{server.url}/api/s/{token}")[1]["screens"]["user/slots"]
    assert screens["kind"] == "choice" and screens["keys"] == ["f", "j"]
    first, red, blue = (screens["states"][k] for k in ("0", "1", "2"))
    assert (first["stimulus"], first["colour"], first["labels"], first["image"]) == (
        "Pick a machine", "#123456", ["Red", "Blue"], PIXEL)
    assert (red["stimulus"], red["image"], red["labels"]) == ("red", None, None)  # no image from elsewhere
    assert blue["colour"] != red["colour"]  # the palette's defaults differ by state
    assert [a["position"]["done"] for a in play(server, token)] == [False, False, True]
