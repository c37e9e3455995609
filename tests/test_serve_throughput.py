"""The study server under load: group commit keeps every trial, once, in order, and durable
before its answer (a real `graphtasks serve` process on 127.0.0.1, real HTTP, a real store).

50 simulated participants post their choices at once, each as soon as its last answer arrives;
the server writes the trials posted while a transaction is written in the next one. Its last
line says how many trials went into how many transactions.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from tests.test_serve import TWO_STEP_STUDY, Server, serve, start_session  # noqa: F401 - serve is a fixture

NAME = "two-step people"
AGENT_RUNS = 3  # the spec's agent runs (1 agent x 3 seeds) come before the sessions
EPISODES = 18  # main episodes: with the 2 practice ones, 40 trials a session
TRIALS = 2 * (2 + EPISODES)
EXPECTED = [(p, e, s) for p, n in ((0, 2), (1, EPISODES)) for e in range(n) for s in (0, 1)]


class Participant:
    """A page's choices over one kept-alive connection: a post that fails (refused, cut, a 5xx
    while the server restarts) is sent again; `answered` holds the trial indices answered, in order."""

    def __init__(self, server: Server, token: str) -> None:
        self.server, self.token = server, token
        self.answered: list[int] = []
        self.actions: dict[int, int] = {}
        self.conn: http.client.HTTPConnection | None = None
        self.error: BaseException | None = None

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        try:
            self.conn.request(method, path, data, headers)
            response = self.conn.getresponse()
            return response.status, json.loads(response.read())
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise

    def play(self, deadline: float = 300.0) -> None:
        end = time.monotonic() + deadline
        try:
            position = None
            while time.monotonic() < end:
                try:
                    if position is None:
                        status, view = self.call("GET", f"/api/s/{self.token}")
                        position = view["position"] if status == 200 else None
                        continue
                    if position["done"]:
                        return
                    index = position["trial"]
                    action = position["available"][(index // 3) % len(position["available"])]
                    status, answer = self.call("POST", f"/api/s/{self.token}/trial",
                                               {"index": index, "action": action, "rt": 250.0 + index})
                except (OSError, http.client.HTTPException):  # the server is down or restarting
                    time.sleep(0.05)
                    continue
                if status >= 500:
                    time.sleep(0.05)
                    continue
                assert status == 200, answer
                assert answer["index"] == index
                self.answered.append(index)
                self.actions[index] = action
                position = answer["position"]
            raise AssertionError("the session did not finish")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            if self.conn is not None:
                self.conn.close()


def trials_by_run(store: Path) -> dict[int, list[tuple[Any, ...]]]:
    """Each session's stored trials in their order: (phase_index, episode, step, action, rt, uid)."""
    out: dict[int, list[tuple[Any, ...]]] = {}
    with open_store(store, "r") as s:
        for row in s.cypher(
            "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
            "RETURN r.index, e.phase_index, e.index, t.step, t.action, t.rt, t.uid "
            "ORDER BY r.index, e.phase_index, e.index, t.step",
            {"uid": experiment_uid(NAME)},
        ).rows:
            out.setdefault(int(row[0]), []).append(tuple(row[1:]))
    return out


def batches(said: str) -> tuple[int, int]:
    """The trials and transactions of the server's last line."""
    found = re.search(r"every trial answered was written \(([\d,]+) trials? in ([\d,]+) transactions?\)$",
                      said.strip())
    assert found, said
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


def start_players(server: Server, count: int, prefix: str) -> tuple[list[Participant], list[threading.Thread]]:
    players = [Participant(server, start_session(server, pid=f"{prefix}-{i}")) for i in range(count)]
    threads = [threading.Thread(target=p.play) for p in players]
    for t in threads:
        t.start()
    return players, threads


def check_complete(players: list[Participant], runs: dict[int, list[tuple[Any, ...]]]) -> None:
    """Every session complete, each trial stored once, in its order, with what was posted."""
    assert not [p.error for p in players if p.error], [p.error for p in players if p.error][0]
    assert sorted(runs) == list(range(AGENT_RUNS, AGENT_RUNS + len(players)))
    uids = [t[-1] for trials in runs.values() for t in trials]
    assert len(uids) == len(players) * TRIALS == len(set(uids))
    for trials in runs.values():
        assert [t[:3] for t in trials] == EXPECTED
    by_actions = sorted(tuple(p.actions[i] for i in range(TRIALS)) for p in players)
    assert by_actions == sorted(tuple(t[3] for t in trials) for trials in runs.values())
    assert all(trials[i][4] == 250.0 + i for trials in runs.values() for i in range(TRIALS))


@pytest.mark.slow
def test_fifty_participants_at_once_are_written_in_batches_each_trial_once_in_order(serve):  # noqa: F811
    server = serve(TWO_STEP_STUDY.format(episodes=EPISODES, timeout=0))
    players, threads = start_players(server, 50, "load")
    for t in threads:
        t.join()
    said = server.stop()
    assert all(p.answered == list(range(TRIALS)) for p in players if p.error is None)
    check_complete(players, trials_by_run(server.store))
    trials, transactions = batches(said)
    assert trials == 50 * TRIALS
    # one transaction per batch, not per trial: the trials posted while one is written go together
    assert transactions <= trials / 5, said


@pytest.mark.slow
def test_a_server_killed_under_load_had_written_every_trial_it_answered(serve):  # noqa: F811
    """kill -9 with 50 participants posting: at that moment the store holds every trial answered
    (and at most one more per session: the one being written); restarted, the sessions resume
    and finish, each trial stored once and in order."""
    server = serve(TWO_STEP_STUDY.format(episodes=EPISODES, timeout=0))
    tokens_runs = {}
    players, threads = start_players(server, 50, "kill")
    while sum(len(p.answered) for p in players) < 50 * TRIALS // 2 and not any(p.error for p in players):
        time.sleep(0.005)
    server.stop(kill=True)  # kill -9
    answered = {id(p): list(p.answered) for p in players}  # nothing is answered while it is down
    runs = trials_by_run(server.store)
    with open_store(server.store, "r") as s:
        for token_hash, index in s.cypher(
            "MATCH (r:Run) WHERE r.owner = $uid AND r.agent = 'participant' RETURN r.token_hash, r.index",
            {"uid": experiment_uid(NAME)},
        ).rows:
            tokens_runs[token_hash] = int(index)
    from graphtasks.serve.app import digest

    assert sum(map(len, answered.values())) >= 50 * TRIALS // 2
    for p in players:
        stored = runs.get(tokens_runs[digest(p.token)], [])
        acknowledged = answered[id(p)]
        assert acknowledged == list(range(len(acknowledged)))  # answered in order, none twice
        assert len(acknowledged) <= len(stored) <= len(acknowledged) + 1
        assert [t[:3] for t in stored] == EXPECTED[:len(stored)]
        assert [t[3] for t in stored[:len(acknowledged)]] == [p.actions[i] for i in acknowledged]
    server.start()
    for t in threads:
        t.join()
    said = server.stop()
    assert "(50 sessions resumed)" in said, said
    check_complete(players, trials_by_run(server.store))
    trials, transactions = batches(said)
    assert trials <= 50 * TRIALS // 2 + 50 and transactions <= trials / 5, said


def test_a_choice_posted_twice_at_once_is_stored_once_and_answered_twice_alike(serve):  # noqa: F811
    """Two connections post each trial of a session at the same moment (a page's retry racing
    its first post): both are answered, alike, after the trial's commit; it is stored once."""
    server = serve(TWO_STEP_STUDY.format(episodes=EPISODES, timeout=0))
    tokens = [start_session(server, pid=f"twice-{i}") for i in range(10)]
    errors: list[BaseException] = []
    duplicates: list[int] = []

    def session(token: str) -> None:
        try:
            a, b = Participant(server, token), Participant(server, token)
            position = a.call("GET", f"/api/s/{token}")[1]["position"]
            while not position["done"]:
                body = {"index": position["trial"], "action": position["available"][0], "rt": 250.0 + position["trial"]}
                answers: list[Any] = [None, None]
                barrier = threading.Barrier(2)

                def post(k: int, who: Participant, body: dict[str, Any] = body, answers: list[Any] = answers,
                         barrier: threading.Barrier = barrier) -> None:
                    barrier.wait()
                    answers[k] = who.call("POST", f"/api/s/{token}/trial", body)

                pair = [threading.Thread(target=post, args=(k, who)) for k, who in enumerate((a, b))]
                for t in pair:
                    t.start()
                for t in pair:
                    t.join()
                (s1, first), (s2, second) = answers
                assert s1 == s2 == 200, answers
                assert [first.get("duplicate", False), second.get("duplicate", False)].count(True) == 1, answers
                same = ("index", "reward", "position")
                assert {k: first[k] for k in same} == {k: second[k] for k in same}
                duplicates.append(1)
                position = first["position"]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(t,)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(duplicates) == 10 * TRIALS
    said = server.stop()
    runs = trials_by_run(server.store)
    uids = [t[-1] for trials in runs.values() for t in trials]
    assert len(uids) == 10 * TRIALS == len(set(uids))
    assert all([t[:3] for t in trials] == EXPECTED for trials in runs.values())
    assert batches(said)[0] == 10 * TRIALS
