"""The study server: Starlette routes over one store writer and the sessions' envs.

One process writes the store, on one worker thread, in the order requests arrive. A posted
choice is checked and stepped on the event loop (the sessions live in memory) and its records
queued; a committer writes what is queued as one transaction on the store's thread, and the
trials posted meanwhile go in the next (group commit: one transaction per batch, not per trial).
A trial is answered only after its transaction has committed, and a session has at most one
trial queued or being written, so its trials are stepped and committed in order. A restarted
server reads the sessions back from the store and replays each one's recorded actions through
its seeded env.
"""

from __future__ import annotations

import asyncio
import csv
import errno
import hashlib
import hmac
import html
import io
import ipaddress
import json
import math
import re
import secrets
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from graphstore import GraphStore, open_store
from graphstore.errors import GraphStoreError, GraphtasksError, StoreFullError
from graphtasks.experiments.ids import experiment_uid, participant_uid, run_uid
from graphtasks.experiments.observers import COMPLETED, RUNNING
from graphtasks.experiments.records import Records, _joined, _key, record_experiment, record_tasks, run_node
from graphtasks.experiments.runs import Cell
from graphtasks.experiments.spec import AgentSpec
from graphtasks.experiments.spreadsheet import spreadsheet_cell
from graphtasks.experiments.versions import prepare_versions
from gym_bridge import family
from gym_bridge.screens import ScreenError

from .engine import ActionRefused, SessionPlayer, now_ms, screen_event, trial_records
from .quality import QUALITY_COLUMNS, TELEMETRY, session_quality
from .study import Study, StudyError, plural

STATIC = Path(__file__).parent / "static"
LINGER = 0.005  # seconds a batch may wait for the sessions of the last one to post again
MAX_BODY = 4096  # bytes of a posted JSON body
MAX_PARAM = 200  # characters of a URL parameter (participant, study, session id)
URL_PARAMS = {  # Prolific's names, then SONA's and generic ones
    "pid": ("PROLIFIC_PID", "participant", "id", "sona_id"),
    "study": ("STUDY_ID", "study"),
    "session": ("SESSION_ID", "session"),
}
PARTICIPANT = "participant"
START_FIELDS = ("params", "pilot")  # the fields of a start request
TRIAL_FIELDS = ("index", "action", "rt", "shown", "pressed", "key", "timeouts", "resolution", "isolated", "input",
                "telemetry")  # the fields of a posted trial
INPUTS = ("key", "touch", "mouse", "pen")  # what may give a response
ATTENTION_FIELDS = ("check", "answer", "rt", "input")  # the fields of a posted attention-check answer
LOCAL_HOSTS = ("127.0.0.1", "localhost")  # the names of this machine a server on 127.0.0.1 answers to
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
COOKIE = "graphtasks_researcher"  # the dashboard's cookie (HttpOnly, SameSite=Strict, path /researcher)


class SessionReplayError(GraphtasksError, RuntimeError):
    """A recorded session does not replay through its env (the task or the code changed)."""


class Refused(Exception):
    """A request refused with a status and a one-line reason (nothing written)."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.headers = status, reason, headers or {}


@dataclass
class Session:
    token_hash: str
    cell: Cell
    player: SessionPlayer
    run: dict[str, Any]
    participant: dict[str, Any]
    rewards: list[float] = field(default_factory=list)  # per trial, for answers to repeated posts
    sent: float | None = None  # time.monotonic() when the current screen was sent
    quality: tuple[int, int, dict[str, Any]] | None = None  # (trials, events, quality row) last computed


@dataclass
class Staged:
    """A trial stepped, its records not yet committed."""

    session: Session
    records: Records
    answer: dict[str, Any]
    run_before: dict[str, Any]


def assignment(spec: Any, index: int) -> tuple[str, str, int]:
    """The task, condition and seed of the study's session number `index` (from 0; it is run
    `first_run + index` of the experiment, after the spec's agent runs): conditions alternate fastest, then tasks,
    then seeds, so that sessions in any stretch are balanced over conditions and tasks.

    Examples
    --------
    >>> from graphtasks.serve.app import assignment
    >>> from graphtasks.experiments.spec import single_run_spec
    >>> spec = single_run_spec("rewardgym/two-step", "random", seed=7, episodes=1)
    >>> [assignment(spec, k) for k in range(2)]
    [('rewardgym/two-step', '', 7), ('rewardgym/two-step', '', 7)]
    """
    conditions, tasks, seeds = spec.condition_names(), spec.tasks, spec.seeds
    condition = conditions[index % len(conditions)]
    task = tasks[(index // len(conditions)) % len(tasks)]
    seed = seeds[(index // (len(conditions) * len(tasks))) % len(seeds)]
    return task, condition, int(seed)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class StudyServer:
    """A study's sessions and the store they are written to (see the module docstring).

    Parameters
    ----------
    study : Study
        The study to serve.
    store : str or None
        The store location (None: the default store).
    researcher_token : str, optional
        The token of the results and dashboard (default: a new random one).

    Examples
    --------
    >>> from graphtasks.serve.app import StudyServer
    >>> from graphtasks.serve.study import load_study
    >>> server = StudyServer(load_study("rewardgym/two-step", episodes=2), ":memory:")
    >>> token = server.start_session({})["token"]
    >>> server.post_trial(token, {"index": 0, "action": 1, "rt": 512.0})["index"]
    0
    >>> server.close()
    """

    def __init__(self, study: Study, store: str | None, researcher_token: str | None = None) -> None:
        self.study, self.spec = study, study.spec
        self.researcher_token = researcher_token or secrets.token_urlsafe(24)
        self.once: set[str] = set()  # hashes of the unused one-time dashboard codes
        self.uid = experiment_uid(self.spec.name)
        # sessions are the runs after the spec's agent runs (0..n-1, as `graphtasks experiment run` numbers
        # them), so that the agents can run under the study's own name
        self.first_run = study.agent_runs
        self.written = self.transactions = 0  # trials committed by this process, and their transactions
        self.store: GraphStore = open_store(store, "w")
        try:
            self.versions = prepare_versions(self.spec, self.store)
            record_tasks(self.store, self.spec.graphs)
            record_experiment(self.store, self.spec, study.text)
            self.sessions: dict[str, Session] = {}
            self.by_pid: dict[str, list[str]] = {}
            self.resumed = self._resume()
        except BaseException:
            self.store.close()
            raise
        self.screens = self._screens()

    def close(self) -> None:
        self.store.close()

    # -- what the page shows -----------------------------------------------------------------
    def _screens(self) -> dict[str, Any]:
        """Per task version of the study: what the page draws its steps with, as its family's
        screen (`gym_bridge.Family.screen`) describes it: `kind` (the screen's name), `page` (the
        page's drawing: "choice", "arrows" or "question"), the keys and what the drawing shows."""
        out: dict[str, Any] = {}
        for version_id, version in self.versions.items():
            owner = family(version.family)
            if owner.screen is None:
                raise StudyError(f"{version.task_id}: people cannot play {owner.name} tasks (its family declares "
                                 "no screen)")
            try:
                out[version_id] = owner.screen.describe(version.graph, partial(owner.make_env, version.prepared),
                                                        self.study.keys)
            except ScreenError as exc:
                raise StudyError(f"{version.task_id}: {exc}") from None
        return out

    # -- sessions ------------------------------------------------------------------------------
    def _resume(self) -> int:
        """Read the sessions back from the store; replay each one's actions through its env."""
        rows = self.store.cypher(
            "MATCH (p:Participant)-[:PERFORMED]->(r:Run) WHERE r.owner = $uid AND r.agent = $agent "
            "RETURN r.index, r.task, r.label, r.seed, r.condition, r.token_hash, r.status, r.started_at, "
            "r.ended_at, r.consented_at, r.completion_code, p.uid, p.participant_id, p.pid_hash, p.study_hash, "
            "p.session_hash, r.check_attempts, r.checks_passed_at, r.attention_done, r.attention_attempt, "
            "r.attention_failures, r.attention_failed_twice ORDER BY r.index",
            {"uid": self.uid, "agent": PARTICIPANT},
        ).rows
        for (index, task, label, seed, condition, token_hash, status, started, ended, consented, code, p_uid, pid,
             pid_hash, study_hash, session_hash, attempts, passed, *attention) in rows:
            cell = Cell(int(index), task, AgentSpec(PARTICIPANT, label, {}), int(seed), condition or "")
            player = SessionPlayer(self.spec, self.versions, cell)
            run = {**run_node(self.spec, cell, status, None, started, ended), "token_hash": token_hash,
                   "consented_at": consented, "completion_code": code, "check_attempts": attempts,
                   "checks_passed_at": passed,
                   **{k: int(v or 0) for k, v in zip(ATTENTION_RUN, attention)}}
            participant = {"uid": p_uid, "owner": self.uid, "participant_id": pid, "source": "graphtasks serve",
                           "pid_hash": pid_hash, "study_hash": study_hash, "session_hash": session_hash}
            session = Session(token_hash, cell, player, run, participant)
            trials = self.store.cypher(
                "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.uid = $run "
                "RETURN e.phase_index, e.index, t.step, t.state, t.action, t.reward, t.next_state "
                "ORDER BY e.phase_index, e.index, t.step",
                {"run": run_uid(self.uid, int(index))},
            ).rows
            for phase_index, episode, step, state, action, reward, next_state in trials:
                where = (player.phase_index, player.episode, player.step, player.state)
                if where != (phase_index, episode, step, state):
                    raise SessionReplayError(f"session {label} (run {index}): its recorded trial at (phase, "
                                             f"episode, step, state) {(phase_index, episode, step, state)} does not "
                                             f"replay: the env is at {where}")
                done = player.act(int(action))
                if (done.reward, done.next_state) != (reward, next_state):
                    raise SessionReplayError(f"session {label} (run {index}): trial {done.trial} replays to "
                                             f"{(done.reward, done.next_state)}, recorded {(reward, next_state)}")
                session.rewards.append(float(reward))
            self.sessions[token_hash] = session
            if pid_hash:
                self.by_pid.setdefault(pid_hash, []).append(token_hash)
        return len(rows)

    def start_session(self, params: dict[str, Any], pilot: str | None = None) -> dict[str, Any]:
        """A new session (its Run and Participant written); Refused if the participant id has one.
        `pilot`: the label of the agent playing it (pilot mode; the caller checked the researcher token)."""
        hashed: dict[str, str | None] = {}
        known = [n for names in URL_PARAMS.values() for n in names]
        for name in params:
            if name not in known:
                raise Refused(400, f"params: unknown URL parameter {str(name)[:40]!r} (known: {', '.join(known)})")
        for what, names in URL_PARAMS.items():
            value = next((params[n] for n in names if n in params), None)
            if value is not None and (not isinstance(value, str) or not 0 < len(value) <= MAX_PARAM
                                      or not value.isprintable()):
                raise Refused(400, f"{what}: expected a printable id of at most {MAX_PARAM} characters")
            hashed[what] = digest(f"{self.spec.name}\n{value}") if value is not None else None
        pid_hash = hashed["pid"]
        if pid_hash and self.by_pid.get(pid_hash) and not self.study.allow_repeat:
            raise Refused(409, "this participant id has started this study already")
        if len(self.sessions) >= self.study.max_sessions:
            raise Refused(503, f"the study is full ({self.study.max_sessions} sessions)")
        token = secrets.token_urlsafe(32)
        token_hash = digest(token)
        index = max([self.first_run, *(s.cell.index + 1 for s in self.sessions.values())])
        task, condition, seed = assignment(self.spec, index - self.first_run)
        label = f"{'pilot' if pilot else 'p'}-{secrets.token_hex(5)}"
        cell = Cell(index, task, AgentSpec(PARTICIPANT, label, {}), seed, condition)
        player = SessionPlayer(self.spec, self.versions, cell)
        code = self.study.completion_code or secrets.token_hex(4).upper()
        run = {**run_node(self.spec, cell, RUNNING, None, now_ms(), None), "token_hash": token_hash,
               "consented_at": None if self.study.consent else now_ms(), "completion_code": code,
               "check_attempts": 0, "checks_passed_at": None if self.study.checks else now_ms(),
               **dict.fromkeys(ATTENTION_RUN, 0)}
        person = participant_uid(self.uid, label)
        participant = {"uid": person, "owner": self.uid, "participant_id": label,
                       "source": f"pilot: {pilot}" if pilot else "graphtasks serve",
                       "pid_hash": pid_hash, "study_hash": hashed["study"],
                       "session_hash": hashed["session"]}
        self.store.merge_shared(
            [("Run", [run]), ("Participant", [participant])],
            [("HAS_RUN", "Experiment", "Run", [_key(self.uid, run["uid"])]),
             ("PERFORMED", "Participant", "Run", [_key(person, run["uid"])])],
        )
        session = Session(token_hash, cell, player, run, participant)
        self.sessions[token_hash] = session
        if pid_hash:
            self.by_pid.setdefault(pid_hash, []).append(token_hash)
        return {"token": token, "url": f"/s/{token}", "run": index}

    def session(self, token: str) -> Session:
        if not isinstance(token, str) or not 20 <= len(token) <= 100:
            raise Refused(404, "no such session")
        found = self.sessions.get(digest(token))
        if found is None:
            raise Refused(404, "no such session")
        return found

    def view(self, token: str) -> dict[str, Any]:
        """What the page needs: the study's texts, the screens, where the session is."""
        s = self.session(token)
        s.sent = time.monotonic()
        return {
            "study": self.study.page_settings(), "practice": list(self.study.practice), "screens": self.screens,
            "consented": bool(s.run.get("consented_at")), "checked": bool(s.run.get("checks_passed_at")),
            "attention": {"done": int(s.run.get("attention_done") or 0),
                          "attempt": int(s.run.get("attention_attempt") or 0)},
            "position": s.player.position(), **self._end(s),
        }

    def _end(self, s: Session) -> dict[str, Any]:
        if not s.player.done:
            return {}
        code = str(s.run.get("completion_code") or "")
        redirect = self.study.redirect.replace("{code}", code) if self.study.redirect else ""
        return {"code": code, "redirect": redirect}

    def consent(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        s = self.session(token)
        if body.get("agree") is not True:
            raise Refused(400, "agree: expected true")
        if not s.run.get("consented_at"):
            run = {**s.run, "consented_at": now_ms()}
            self.store.merge_shared([("Run", [run])])
            s.run = run
        return {"ok": True}

    def answer_checks(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """One attempt at the comprehension checks: all right (the trials may start) or not;
        the attempt is counted on the Run either way."""
        s = self.session(token)
        checks = self.study.checks
        answers = body.get("answers")
        if set(body) != {"answers"} or not isinstance(answers, list) or len(answers) != len(checks):
            raise Refused(400, f"answers: expected a list of {len(checks)} option numbers")
        for i, (given, (_, options, _)) in enumerate(zip(answers, checks)):
            _integer(given, f"answers[{i}]", 0, len(options) - 1)
        if not s.run.get("consented_at"):
            raise Refused(409, "consent has not been given")
        if s.run.get("checks_passed_at"):
            return {"passed": True}
        passed = all(given == right for given, (_, _, right) in zip(answers, checks))
        run = {**s.run, "check_attempts": int(s.run.get("check_attempts") or 0) + 1,
               "checks_passed_at": now_ms() if passed else None}
        self.store.merge_shared([("Run", [run])])
        s.run = run
        return {"passed": passed}

    def answer_attention(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """One answer to the session's next attention check (`study.attention_checks`, in order),
        recorded as a StudyEvent and counted on the Run. A wrong first answer is asked again
        (`again`); a second wrong answer is recorded as failed twice and the session goes on.
        Nothing is refused or ended for a wrong answer: the flags show it to the researcher."""
        s = self.session(token)
        unknown = sorted(str(k) for k in body if k not in ATTENTION_FIELDS)
        if unknown:
            raise Refused(400, f"unknown field {unknown[0][:40]!r} (fields: {', '.join(ATTENTION_FIELDS)})")
        checks = self.study.attention_checks
        if not checks:
            raise Refused(409, "this study has no attention checks")
        number = _integer(body.get("check"), "check", 0, len(checks) - 1)
        after, _, options, right = checks[number]
        answer = _integer(body.get("answer"), "answer", 0, len(options) - 1)
        rt = _number(body.get("rt"), "rt", 0, 3.6e6)
        given_input = _choice(body.get("input"), "input", INPUTS)
        done = int(s.run.get("attention_done") or 0)
        if number < done:  # answered already (a repeated post): nothing changes
            return {"check": number, "passed": None, "again": False, "duplicate": True}
        if number > done or after > s.player.trial:
            raise Refused(409, f"check: attention check {number} is not due (the session is at check {done}, "
                               f"trial {s.player.trial})")
        attempt = int(s.run.get("attention_attempt") or 0) + 1
        passed = answer == right
        again = not passed and attempt < 2
        run = {**s.run, "attention_failures": int(s.run.get("attention_failures") or 0) + (not passed),
               "attention_failed_twice": int(s.run.get("attention_failed_twice") or 0) + (not passed and not again),
               "attention_done": done + (not again), "attention_attempt": attempt if again else 0}
        events = (int(s.run.get("attention_failures") or 0) + done  # this session's answers so far: the wrong
                  - int(s.run.get("attention_failed_twice") or 0))  # ones and the checks passed
        uid = f"{s.run['uid']}/event/{events}"
        event = {"uid": uid, "owner": self.uid, "kind": "attention_check", "at": now_ms(), "trial": s.player.trial,
                 "check": number, "answer": answer, "passed": passed, "attempt": attempt, "rt": rt,
                 "input": given_input}
        self.store.merge_shared([("Run", [run]), ("StudyEvent", [event])],
                                [("HAS_EVENT", "Run", "StudyEvent", [_key(run["uid"], uid)])])
        s.run = run
        return {"check": number, "passed": passed, "again": again}

    def record_screen(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """A screen the page showed besides the trials (instructions, a phase's banner, a break),
        with its onset and duration by the page's clock, recorded as a StudyEvent of the Run
        (`engine.screen_event`; a repeated post is the same event)."""
        s = self.session(token)
        try:
            event = screen_event(s.run["uid"], self.uid, s.player, body)
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        self.store.merge_shared([("StudyEvent", [event])],
                                [("HAS_EVENT", "Run", "StudyEvent", [_key(s.run["uid"], event["uid"])])])
        return {"ok": True}

    def post_trial(self, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """Check a posted choice, step the env, commit the Trial, answer with the next screen.
        A trial posted again (same index) changes nothing and gets the same answer."""
        staged = self.stage_trial(token, body)
        if isinstance(staged, Staged):
            self.write([staged])
            return staged.answer
        return staged

    def stage_trial(self, token: str, body: dict[str, Any]) -> Staged | dict[str, Any]:
        """A posted choice checked and stepped, its records made but not written (`write` commits
        them, with others: one transaction for the trials of several sessions); or, for a trial
        posted again, the answer it had."""
        s = self.session(token)
        received = time.monotonic()
        index = _integer(body.get("index"), "index", 0, 10**9)
        if index < s.player.trial:  # a repeated post: stepped already (the caller waits for its commit)
            return {"index": index, "reward": s.rewards[index], "duplicate": True,
                    "position": s.player.position(), **self._end(s)}
        if index > s.player.trial:
            raise Refused(409, f"index: the session is at trial {s.player.trial}, got {index}")
        if not s.run.get("consented_at"):
            raise Refused(409, "consent has not been given")
        if not s.run.get("checks_passed_at"):
            raise Refused(409, "the comprehension checks have not been passed")
        if s.player.done:
            raise Refused(409, "the session is finished")
        action = _integer(body.get("action"), "action", 0, 10**6)
        if action not in s.player.available:
            raise Refused(400, f"action: {action} is not available (actions: {list(s.player.available)})")
        browser = {
            "rt": _number(body.get("rt"), "rt", 0, 3.6e6),
            "shown_ms": _number(body.get("shown"), "shown", 0, 1e12),
            "pressed_ms": _number(body.get("pressed"), "pressed", 0, 1e12),
            "key": _short(body.get("key"), "key"),
            "timeouts": _integer(body.get("timeouts", 0), "timeouts", 0, 10**6),
            "server_rt": round((received - s.sent) * 1000, 3) if s.sent is not None else None,
            "received_at": now_ms(),
            "timer_resolution_ms": _number(body.get("resolution"), "resolution", 0, 1000),
            "isolated": _flag(body.get("isolated"), "isolated"),
            "input": _choice(body.get("input"), "input", INPUTS),
            **_telemetry(body.get("telemetry")),
        }
        unknown = set(body) - set(TRIAL_FIELDS)
        if unknown:
            raise Refused(400, f"unknown field {sorted(map(str, unknown))[0][:40]!r}")
        before = s.run
        try:
            step = s.player.act(action)
        except ActionRefused as exc:
            raise Refused(400, f"action: {exc}") from None
        run = {**s.run, "status": COMPLETED, "ended_at": now_ms()} if s.player.done else s.run
        records = trial_records(self.spec, s.cell, s.player, step, run, browser)
        s.run = run
        s.rewards.append(step.reward)
        s.sent = time.monotonic()
        answer = {"index": index, "reward": step.reward, "state": step.next_state, "terminated": step.terminated,
                  "position": s.player.position(), **self._end(s)}
        return Staged(s, records, answer, before)

    def write(self, staged: list[Staged]) -> None:
        """Commit staged trials in one transaction; if that fails, their sessions go back to
        where the store has them (their committed trials replayed), and the error is raised."""
        try:
            self.store.merge_shared(*_joined([t.records for t in staged]))
            self.written, self.transactions = self.written + len(staged), self.transactions + 1
        except BaseException:
            for t in reversed(staged):
                t.session.run = t.run_before
            for session in {id(t.session): t.session for t in staged}.values():
                session.player = self._replayed(session)
                del session.rewards[session.player.trial:]
            raise

    def _replayed(self, s: Session) -> SessionPlayer:
        player = SessionPlayer(self.spec, self.versions, s.cell)
        for phase_index, episode, step, state, action, *_ in self.store.cypher(
            "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.uid = $run "
            "RETURN e.phase_index, e.index, t.step, t.state, t.action ORDER BY e.phase_index, e.index, t.step",
            {"run": s.run["uid"]},
        ).rows:
            player.act(int(action))
        return player

    # -- researchers -----------------------------------------------------------------------------
    def researcher(self, key: str | None, cookie: str | None = None) -> None:
        """Refused (403) unless `key` is the researcher token (an `Authorization: Bearer` header)
        or `cookie` is the dashboard's cookie (set by a one-time link)."""
        if key and hmac.compare_digest(key.encode(), self.researcher_token.encode()):
            return
        if cookie and hmac.compare_digest(cookie.encode(), self.cookie_value().encode()):
            return
        raise Refused(403, "a researcher token is needed (an Authorization: Bearer header, or the dashboard's cookie "
                           "from the one-time link the server printed)")

    def cookie_value(self) -> str:
        """The dashboard cookie's value: derived from the researcher token (it outlives a restart
        with the same token), and not the token itself."""
        return hmac.new(self.researcher_token.encode(), b"graphtasks dashboard cookie", hashlib.sha256).hexdigest()

    def one_time_link(self) -> str:
        """A new one-time dashboard path, `/researcher/login?once=CODE`: opened once, it sets the
        dashboard's cookie and is used up."""
        code = secrets.token_urlsafe(24)
        self.once.add(digest(code))
        return f"/researcher/login?once={code}"

    def use_once(self, code: str | None) -> None:
        """Use up a one-time code; Refused (403) if it is not one or was used."""
        hashed = digest(code) if isinstance(code, str) and 0 < len(code) <= 100 else None
        if hashed is None or hashed not in self.once:
            raise Refused(403, "this dashboard link is not valid or was used already: ask the server for a new one "
                               "(POST /researcher/link with the token) or restart it")
        self.once.discard(hashed)

    def overview(self) -> list[dict[str, Any]]:
        """One row per session: where it is, and its quality flags and their numbers
        (`graphtasks.serve.quality.session_quality`; recomputed from the store for the sessions
        that have posted since the last overview)."""
        sessions = sorted(self.sessions.values(), key=lambda x: x.cell.index)
        stale = [s for s in sessions if s.quality is None or s.quality[:2] != self._progress(s)]
        if stale:
            by_run: dict[str, list[dict[str, Any]]] = {s.run["uid"]: [] for s in stale}
            names = ("rt", "key", "action", "input", "timer_resolution_ms", "isolated", *TELEMETRY)
            for uid, *values in self.store.cypher(
                "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.uid IN $runs "
                "RETURN r.uid, " + ", ".join(f"t.{n}" for n in names)
                + " ORDER BY r.uid, e.phase_index, e.index, t.step",
                {"runs": list(by_run)},
            ).rows:
                by_run[uid].append(dict(zip(names, values)))
            for s in stale:  # keyed by the trials read: one staged but not yet committed is read next time
                rows = by_run[s.run["uid"]]
                due = sum(after <= len(rows) for after, *_ in self.study.attention_checks)
                s.quality = (len(rows), self._progress(s)[1], session_quality(rows, s.run, due))
        out = []
        for s in sessions:
            assert s.quality is not None
            out.append({"run": s.cell.index, "participant": s.participant["participant_id"], "seed": s.cell.seed,
                        "condition": s.cell.condition, "status": s.run["status"], "trials": s.player.trial,
                        "consented": bool(s.run.get("consented_at")), "started_at": s.run.get("started_at"),
                        "ended_at": s.run.get("ended_at"), **s.quality[2]})
        return out

    @staticmethod
    def _progress(s: Session) -> tuple[int, int]:
        return s.player.trial, int(s.run.get("attention_failures") or 0) + int(s.run.get("attention_done") or 0)

    def sessions_csv(self) -> str:
        """The sessions and their quality flags as CSV (the dashboard's table)."""
        rows = self.overview()
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(SESSION_COLUMNS)
        writer.writerows([spreadsheet_cell(r[c]) for c in SESSION_COLUMNS] for r in rows)
        return out.getvalue()

    def trials_csv(self) -> str:
        rows = self.store.cypher(
            "MATCH (p:Participant)-[:PERFORMED]->(r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
            "WHERE r.owner = $uid RETURN r.index, p.participant_id, e.phase, e.index, t.step, t.state, t.action, "
            "t.reward, t.next_state, " + ", ".join(f"t.{c}" for c in TRIAL_BROWSER) + " "
            "ORDER BY r.index, e.phase_index, e.index, t.step",
            {"uid": self.uid},
        ).rows
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["run", "participant", "phase", "episode", "step", "state", "action", "reward", "next_state",
                         *TRIAL_BROWSER])
        writer.writerows([spreadsheet_cell(v) for v in row] for row in rows)
        return out.getvalue()


ATTENTION_RUN = ("attention_done", "attention_attempt", "attention_failures", "attention_failed_twice")
TRIAL_BROWSER = ("rt", "key", "timeouts", "server_rt", "received_at", "shown_ms", "timer_resolution_ms", "isolated",
                 "input", *TELEMETRY)  # the trials CSV's columns of what the browser measured
SESSION_COLUMNS = ("run", "participant", "status", "trials", *QUALITY_COLUMNS, "seed", "condition", "consented",
                   "started_at", "ended_at")  # the dashboard's and sessions.csv's columns: the flags first


def _telemetry(value: Any) -> dict[str, Any]:
    """A trial's telemetry (`quality.TELEMETRY`), checked: an object of known counts, each in range."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Refused(400, "telemetry: expected an object of counts")
    out: dict[str, Any] = {}
    for name, given in value.items():
        if name not in TELEMETRY:
            raise Refused(400, f"telemetry.{str(name)[:40]}: unknown (known: {', '.join(TELEMETRY)})")
        kind, high = TELEMETRY[name]
        if kind is bool:
            out[name] = _flag(given, f"telemetry.{name}")
        elif kind is int:
            out[name] = _integer(given, f"telemetry.{name}", 0, int(high))
        else:
            out[name] = _number(given, f"telemetry.{name}", 0, high)
    return out


def _flag(value: Any, name: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise Refused(400, f"{name}: expected true or false")


def _choice(value: Any, name: str, allowed: Sequence[str]) -> str | None:
    if value is None or value in allowed:
        return value
    raise Refused(400, f"{name}: expected one of {', '.join(allowed)}")


def _integer(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Refused(400, f"{name}: expected a whole number from {low} to {high}")
    return value


def _number(value: Any, name: str, low: float, high: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise Refused(400, f"{name}: expected a number from {low:g} to {high:g}")
    return float(value)


def _short(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= 20 or not value.isprintable():
        raise Refused(400, f"{name}: expected a key name of at most 20 characters")
    return value


# -- HTTP --------------------------------------------------------------------------------------
async def _json_body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise Refused(415, "expected application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise Refused(413, f"a body of at most {MAX_BODY} bytes")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise Refused(413, f"a body of at most {MAX_BODY} bytes")
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        raise Refused(400, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise Refused(400, "expected a JSON object")
    return body


HEADERS = {
    "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    # cross-origin isolation: performance.now() at its full resolution (5 us, not 100 us); every
    # page and asset is this server's own, so same-origin resources need nothing more
    "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
}


class SecurityHeaders:
    """ASGI middleware: every response carries HEADERS (a header the response set itself is kept),
    static files and the refusals of the middleware inside it (a foreign Host's 400) included.

    Parameters
    ----------
    app : ASGI application
        The application whose responses it completes.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in HEADERS.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                given = list(message.get("headers", []))
                names = {name.lower() for name, _ in given}
                message = {**message, "headers": given + [(k, v) for k, v in self.headers if k not in names]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


@dataclass(frozen=True)
class Limits:
    """What one client may hold of the server, and who a client is (see docs/deploy.md).

    Parameters
    ----------
    request_timeout : float
        Seconds in which a request's headers and body must have arrived, counted from the
        connection's start or the end of its last response; a connection still sending (or
        sending nothing) then is closed, so that slow or stalled clients cannot hold the server.
    keep_alive : float
        Seconds an idle connection stays open after a response (uvicorn's timeout_keep_alive).
    max_connections : int
        Connections and requests at once (uvicorn's limit_concurrency): past it, requests are
        answered 503.
    max_header_bytes : int
        Bytes of a request's headers (h11's max_incomplete_event_size): past it, 400.
    client_connections : int
        Connections one client address holds at once (a trusted proxy's own connections are not
        counted), and requests under way for one client address: the next connection is answered
        429 and closed, the next request 429.
    start_rate : int
        Sessions one client address may start per minute, as a token bucket that holds this
        many: that many at once, then one every 60/start_rate seconds. Past it, a start is
        answered 429 with Retry-After and nothing is written. Starts with the researcher token
        (pilots) are not counted.
    trusted_proxies : tuple of str
        Addresses (or networks, 10.0.0.0/8) of reverse proxies whose X-Forwarded-For and
        X-Forwarded-Proto are believed: a request from one counts for the client address its
        X-Forwarded-For names (the last address in it that is not a trusted proxy). None by
        default: then the client is the connection's own address and those headers are ignored.

    Examples
    --------
    >>> from graphtasks.serve.app import Limits
    >>> Limits().request_timeout, Limits(request_timeout=2).keep_alive
    (10.0, 5.0)
    >>> Limits().client_connections, Limits().start_rate, Limits().trusted_proxies
    (100, 120, ())
    >>> Limits(trusted_proxies=("127.0.0.1", "10.0.0.0/8")).trusts("10.1.2.3")
    True
    """

    request_timeout: float = 10.0
    keep_alive: float = 5.0
    max_connections: int = 1000
    max_header_bytes: int = 16_384
    client_connections: int = 100
    start_rate: int = 120
    trusted_proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("request_timeout", "keep_alive"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= 3600):
                raise ServerSetupError(f"serve: --{name.replace('_', '-')}: expected seconds in (0, 3600], got "
                                       f"{value!r}")
        for name, option, low in (("max_connections", "max-connections", 1),
                                  ("max_header_bytes", "max-header-bytes", 1024),
                                  ("client_connections", "max-client-connections", 1),
                                  ("start_rate", "start-rate", 1)):
            value = getattr(self, name)
            if not (isinstance(value, int) and low <= value <= 1_000_000):
                raise ServerSetupError(f"serve: --{option}: expected {low}..1000000, got {value!r}")
        for address in self.trusted_proxies:
            try:
                ipaddress.ip_network(address, strict=False)
            except ValueError:
                raise ServerSetupError(f"serve: --trusted-proxy: expected an IP address or network (127.0.0.1, "
                                       f"10.0.0.0/8), got {address!r}") from None

    def trusts(self, host: str | None) -> bool:
        """Whether `host` (a connection's address) is one of the trusted proxies."""
        if not host or not self.trusted_proxies:
            return False
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # a dual-stack socket's ::ffff:127.0.0.1
        return any(ip in ipaddress.ip_network(a, strict=False) for a in self.trusted_proxies)


def _too_many(reason: str) -> bytes:
    """A whole 429 answer (Retry-After: 1, the security headers) for a connection refused before
    its request was read; the connection closes after it."""
    body = json.dumps({"error": reason}).encode()
    head = ["HTTP/1.1 429 Too Many Requests", "Content-Type: application/json", f"Content-Length: {len(body)}",
            "Retry-After: 1", "Connection: close", *(f"{k}: {v}" for k, v in HEADERS.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


LINGER_REFUSED = 1.0  # seconds a refused connection stays half-open, so that the client reads its 429


def limited_protocol(limits: Limits) -> type:
    """uvicorn's h11 protocol with a deadline on each request and a cap on connections per client.

    A request's headers and body arrive within `limits.request_timeout` seconds of the
    connection's start (or of the end of the connection's last response), or the connection is
    closed; a request that has fully arrived is not timed (the study may take its time to answer
    it). A client address that holds `limits.client_connections` connections already gets a 429
    answer (Retry-After: 1) on its next one, which is then closed before any request on it is
    read; a trusted proxy's connections are not counted (behind it, the requests under way are
    counted per client: see `ClientLimits`).

    Parameters
    ----------
    limits : Limits
        The time-out, the cap and the trusted proxies.

    Returns
    -------
    type
        An asyncio protocol class for uvicorn.Config(http=...); the connections each address
        holds are shared by the connections of that class.

    Examples
    --------
    >>> from graphtasks.serve.app import Limits, limited_protocol
    >>> limited_protocol(Limits()).__name__
    'LimitedProtocol'
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    seconds, cap = limits.request_timeout, limits.client_connections
    held: dict[str, int] = {}  # connections open per client address
    refusal = _too_many(f"too many connections from this address at once (at most {cap}): try again shortly")

    class LimitedProtocol(H11Protocol):
        deadline: asyncio.TimerHandle | None = None
        counted: str | None = None  # the address this connection is counted for
        refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else None
            if host is not None and not limits.trusts(host):
                if held.get(host, 0) >= cap:
                    self._refuse()
                    return
                held[host] = held.get(host, 0) + 1
                self.counted = host
            self._arm()

        def _refuse(self) -> None:
            """The 429, then a half-close: what the client sends meanwhile is read and dropped (not
            answered), and the connection is closed a moment later, so that the client reads the
            answer instead of a reset."""
            self.refused = True
            self.transport.write(refusal)
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(LINGER_REFUSED, self.transport.close)

        def _arm(self) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def data_received(self, data: bytes) -> None:
            if self.refused:
                return
            super().data_received(data)
            if self.conn.their_state is h11.DONE:  # the whole request arrived
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is not h11.DONE:
                self._arm()  # the next request on this connection has its own deadline

        def _expired(self) -> None:
            self.deadline = None
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self.counted is not None:
                left = held.pop(self.counted) - 1
                if left:
                    held[self.counted] = left
                self.counted = None
            super().connection_lost(exc)

    return LimitedProtocol


class StartLimiter:
    """Sessions started per client address: a token bucket per address that holds `per_minute`
    starts and refills at `per_minute` a minute.

    Parameters
    ----------
    per_minute : int
        The bucket's size and its refill per minute.
    clock : callable, optional
        Seconds, monotonic (default time.monotonic).

    Examples
    --------
    >>> from graphtasks.serve.app import StartLimiter
    >>> now = [0.0]
    >>> starts = StartLimiter(2, clock=lambda: now[0])
    >>> [starts.take("203.0.113.5") for _ in range(3)], starts.take("198.51.100.7")
    ([0.0, 0.0, 30.0], 0.0)
    >>> now[0] = 30.0
    >>> starts.take("203.0.113.5"), starts.take("203.0.113.5")
    (0.0, 30.0)
    """

    KEPT = 4096  # addresses kept before those with a full bucket again are forgotten

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.size, self.rate, self.clock = float(per_minute), per_minute / 60.0, clock
        self.buckets: dict[str, tuple[float, float]] = {}  # address: (tokens, when)

    def _level(self, address: str, now: float) -> float:
        tokens, when = self.buckets.get(address, (self.size, now))
        return min(self.size, tokens + (now - when) * self.rate)

    def take(self, address: str) -> float:
        """Take one start for `address`: 0.0 if it may start a session now (counted), else the
        seconds until it may (nothing counted)."""
        now = self.clock()
        tokens = self._level(address, now)
        if tokens < 1.0:
            self.buckets[address] = (tokens, now)
            return (1.0 - tokens) / self.rate
        if len(self.buckets) >= self.KEPT and address not in self.buckets:
            for other in [a for a in self.buckets if self._level(a, now) >= self.size]:
                del self.buckets[other]
        self.buckets[address] = (tokens - 1.0, now)
        return 0.0


class ClientLimits:
    """ASGI middleware: at most `limits.client_connections` requests under way per client address
    (the next is answered 429 with Retry-After: 1). The client is the request's `client`: the
    connection's address, or, from a trusted proxy, the address its X-Forwarded-For names
    (uvicorn's proxy headers). Without trusted proxies, the first request that carries
    X-Forwarded-For is reported in one line: every client behind that proxy counts as the proxy's
    one address.

    Parameters
    ----------
    app : ASGI application
        The application it guards.
    limits : Limits
        The cap and the trusted proxies.
    log : callable
        Where its one line goes.
    """

    def __init__(self, app: Any, limits: Limits, log: Callable[[str], None]) -> None:
        self.app, self.limits, self.log = app, limits, log
        self.under_way: dict[str, int] = {}
        self.said = False
        self.refusal = json.dumps({"error": f"too many requests from this address at once (at most "
                                            f"{limits.client_connections}): try again shortly"}).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        host = str(client[0]) if client else ""
        if not self.said and not self.limits.trusted_proxies and any(k == b"x-forwarded-for"
                                                                     for k, _ in scope["headers"]):
            self.said = True
            self.log(f"graphtasks serve: requests from {host} carry X-Forwarded-For, but no --trusted-proxy is set: "
                     f"every client behind that proxy counts as {host} in the per-client limits (a proxy on this "
                     f"machine: --trusted-proxy 127.0.0.1)")
        if self.under_way.get(host, 0) >= self.limits.client_connections:
            await send({"type": "http.response.start", "status": 429,
                        "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                                    (b"content-length", str(len(self.refusal)).encode())]})
            await send({"type": "http.response.body", "body": self.refusal})
            return
        self.under_way[host] = self.under_way.get(host, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self.under_way.pop(host) - 1
            if left:
                self.under_way[host] = left


class ServerSetupError(GraphtasksError, ValueError):
    """The server cannot start as asked (a port in use, a host it would not answer); one line."""


def allowed_hosts(host: str, allowed: Sequence[str] = ()) -> list[str]:
    """The Host names the server answers: this machine's names for a server on 127.0.0.1 (or
    on every address), the host it listens on otherwise, and the `allowed` names (a deployment
    behind a proxy: the names people use; `*.example.org` allows its subdomains).

    Examples
    --------
    >>> from graphtasks.serve.app import allowed_hosts
    >>> allowed_hosts("127.0.0.1"), allowed_hosts("127.0.0.1", ["study.example.org"])
    (['127.0.0.1', 'localhost'], ['127.0.0.1', 'localhost', 'study.example.org'])
    >>> allowed_hosts("::1"), allowed_hosts("10.0.0.5")
    (['127.0.0.1', 'localhost', '[::1]'], ['10.0.0.5'])
    """
    for name in allowed:
        if not re.fullmatch(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", name) or ".." in name:
            raise ServerSetupError(f"serve: --allowed-host: expected a host name without scheme or port "
                                   f"(study.example.org or *.example.org), got {name!r}")
    if host in WILDCARD_HOSTS and not allowed:
        raise ServerSetupError(f"serve: --host {host or repr(host)} listens on every address: name the host names "
                               f"people reach it by with --allowed-host (requests for other names are refused)")
    if host in (*LOCAL_HOSTS, "::1", *WILDCARD_HOSTS):
        base: tuple[str, ...] = (*LOCAL_HOSTS, "[::1]") if ":" in host else LOCAL_HOSTS
    else:
        base = (f"[{host}]" if ":" in host else host,)  # an IPv6 address is [bracketed] in a Host header
    return list(dict.fromkeys([*(h.lower() for h in base), *(a.lower() for a in allowed)]))


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), checked before the server says anything: a port in use
    is one line (ServerSetupError), not uvicorn's error after the server's address was printed."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        raise ServerSetupError(f"serve: --host {host!r}: not an address of this machine ({exc})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a port in TIME_WAIT is free
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServerSetupError(f"serve: port {port} on {host} is in use (another server?): choose another "
                                   f"with --port") from None
        raise ServerSetupError(f"serve: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def cross_site(request: Request, allowed: Sequence[str] = ()) -> None:
    """Refused (403) if a browser says the request comes from another site: its `Origin` is not
    this server's (the request's Host, or one of the `allowed` names of a proxied deployment),
    or, without an Origin, its `Sec-Fetch-Site` is not same-origin. Programs that send neither
    (the pilot, curl) pass: they carry no one's cookies or session."""
    origin = request.headers.get("origin")
    if origin is not None:
        try:
            parts = urlsplit(origin)
            name = (parts.hostname or "").lower()
        except ValueError:
            parts, name = None, ""
        if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
            if parts.netloc.lower() == request.headers.get("host", "").lower():
                return
            if any(name == a or (a.startswith("*.") and name.endswith(a[1:])) for a in allowed):
                return
        raise Refused(403, f"a request from another site (Origin {origin[:80]!r}) is refused: this server "
                           f"answers its own pages only")
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        raise Refused(403, f"a {site[:20]!r} request is refused (Sec-Fetch-Site): this server answers its own "
                           f"pages only")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def make_app(server: StudyServer, hosts: Sequence[str] = LOCAL_HOSTS, allowed: Sequence[str] = (),
             log: Callable[[str], None] = _stderr, limits: Limits | None = None) -> Starlette:
    """The Starlette application of a study server.

    Parameters
    ----------
    server : StudyServer
        The sessions and the store.
    hosts : sequence of str, optional
        The Host names it answers (others get 400): see `allowed_hosts`.
    allowed : sequence of str, optional
        The names of a proxied deployment (`--allowed-host`), accepted as a post's Origin too.
    log : callable, optional
        Where one-line reports go (a full disk, and when the store is written again).
    limits : Limits, optional
        The requests under way and the sessions started per client address (default `Limits()`).

    Returns
    -------
    Starlette
        The application: SecurityHeaders (on every response) around ClientLimits around
        TrustedHostMiddleware around the routes.

    Examples
    --------
    >>> from graphtasks.serve.app import StudyServer, allowed_hosts, make_app
    >>> from graphtasks.serve.study import load_study
    >>> server = StudyServer(load_study("rewardgym/two-step", episodes=2), ":memory:")
    >>> app = make_app(server, allowed_hosts("127.0.0.1"))
    >>> app.user_middleware[-1].kwargs["allowed_hosts"]
    ['127.0.0.1', 'localhost']
    >>> [m.cls.__name__ for m in app.user_middleware]
    ['SecurityHeaders', 'ClientLimits', 'TrustedHostMiddleware']
    >>> server.close()
    """
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="study")  # the one thread of store and envs
    full: list[bool] = []  # [True] while the disk is full (said once, and once again when writes go through)
    limits = limits or Limits()
    starts = StartLimiter(limits.start_rate)

    async def on_thread(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    def answer(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                if request.method == "POST":  # every request that writes is a POST
                    cross_site(request, allowed)
                result = await fn(request)
            except ClientDisconnect:  # the client left (or was cut off) before its body arrived: no one to answer
                return Response(status_code=400, headers=HEADERS)
            except Refused as exc:
                return JSONResponse({"error": exc.reason}, exc.status, headers={**HEADERS, **exc.headers})
            except StoreFullError as exc:  # nothing was kept; the page retries until there is room
                if not full:
                    full.append(True)
                    log(f"graphtasks serve: {' '.join(str(exc).split())}; posts are answered 507 until there is "
                        f"room (the pages retry them)")
                return JSONResponse({"error": "the server's disk is full: nothing was recorded; try again"}, 507,
                                    headers=HEADERS)
            except GraphStoreError as exc:  # the store could not be written: nothing was kept
                log(f"graphtasks serve: {' '.join(str(exc).split())}")
                return JSONResponse({"error": "the server could not write its store: nothing was recorded; try "
                                              "again"}, 503, headers=HEADERS)
            if full and request.method == "POST":
                full.clear()
                log("graphtasks serve: the disk has room again; posts are recorded")
            if isinstance(result, Response):
                result.headers.update(HEADERS)
                return result
            return JSONResponse(result, headers=HEADERS)
        return endpoint

    async def start(request: Request) -> Any:
        key = key_of(request)
        if not (key and hmac.compare_digest(key.encode(), server.researcher_token.encode())):  # pilots: not counted
            wait = starts.take(request.client.host if request.client else "")
            if wait:
                seconds = math.ceil(wait)
                raise Refused(429, f"too many sessions started from this address (at most {limits.start_rate} a "
                                   f"minute): try again in {plural(seconds, 'second')}", {"Retry-After": str(seconds)})
        body = await _json_body(request)
        unknown = sorted(str(k) for k in body if k not in START_FIELDS)
        if unknown:
            raise Refused(400, f"unknown field {unknown[0][:40]!r} (fields: {', '.join(START_FIELDS)})")
        params = body.get("params", {})
        if not isinstance(params, dict) or len(params) > 20:
            raise Refused(400, "params: expected an object of URL parameters")
        pilot = body.get("pilot")
        if pilot is not None:
            server.researcher(key_of(request))
            if not any(pilot == a.label for a in server.spec.agents):
                raise Refused(400, "pilot: expected the label of one of the spec's agents")
        return await on_thread(server.start_session, params, pilot)

    async def state(request: Request) -> Any:  # sessions in memory are read and stepped on the event loop
        return server.view(request.path_params["token"])

    async def consent(request: Request) -> Any:
        body = await _json_body(request)
        return await on_thread(server.consent, request.path_params["token"], body)

    # Group commit. A posted choice is checked and stepped here, on the event loop (memory only,
    # well under a millisecond), and queued; one committer writes the queue on the store's thread,
    # one transaction per batch: the trials posted while a batch is written go in the next. Each
    # post is answered when its own batch has committed. A session has at most one trial queued or
    # being written: its next post waits for it (its trials stay in order, and a batch that failed
    # has put its sessions back before any of them steps again).
    queue: list[tuple[Staged, asyncio.Future[None]]] = []
    writing: dict[str, asyncio.Future[None]] = {}  # each session's last trial not yet committed
    committer: list[asyncio.Task[None]] = []

    wanted: set[str] = set()  # the sessions of the last batch that have not posted again
    arrived = asyncio.Event()  # set when the last of them has

    async def commit() -> None:
        """Write what is staged, in batches: the trials staged while a batch is written go in the next.
        Before a batch is taken, the sessions answered by the last one get up to LINGER seconds to
        post again (a participant's next choice often follows at once), so that batches stay whole
        instead of splitting into groups that take turns."""
        expected: set[str] = set()
        while True:
            wanted.clear()
            wanted.update(expected.difference(staged.session.token_hash for staged, _ in queue))
            if wanted:
                arrived.clear()
                try:
                    await asyncio.wait_for(arrived.wait(), LINGER)
                except asyncio.TimeoutError:
                    pass
                wanted.clear()
            if not queue:
                break
            batch = queue[:]
            del queue[:]
            expected = {staged.session.token_hash for staged, _ in batch}
            try:
                await on_thread(server.write, [staged for staged, _ in batch])
            except Exception as exc:  # every trial of the batch is refused; their sessions were put back
                for _, future in batch:
                    future.set_exception(exc)
            else:
                for _, future in batch:
                    future.set_result(None)
        committer.clear()

    async def checks(request: Request) -> Any:
        body = await _json_body(request)
        return await on_thread(server.answer_checks, request.path_params["token"], body)

    async def attention(request: Request) -> Any:
        body = await _json_body(request)
        return await on_thread(server.answer_attention, request.path_params["token"], body)

    async def screen_shown(request: Request) -> Any:
        body = await _json_body(request)
        return await on_thread(server.record_screen, request.path_params["token"], body)

    async def trial(request: Request) -> Any:
        body = await _json_body(request)
        token = request.path_params["token"]
        hashed = server.session(token).token_hash
        while (pending := writing.get(hashed)) is not None and not pending.done():
            try:  # the session's last trial is being written: this post waits for it
                await asyncio.shield(pending)
            except Exception:  # noqa: BLE001 - that post was answered with the error; this one is checked afresh
                pass
        staged = server.stage_trial(token, body)
        if not isinstance(staged, Staged):  # a repeated post of a committed trial: its answer again
            return staged
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append((staged, future))
        writing[hashed] = future
        if hashed in wanted:
            wanted.discard(hashed)
            if not wanted:
                arrived.set()
        if not committer:
            committer.append(asyncio.create_task(commit()))
        try:
            await asyncio.shield(future)
        finally:
            if writing.get(hashed) is future:
                del writing[hashed]
        staged.session.sent = time.monotonic()  # the next screen's data leaves now (its server_rt starts)
        return staged.answer

    async def about(request: Request) -> Any:
        return {"title": server.study.title or server.spec.name,
                "params": [n for names in URL_PARAMS.values() for n in names]}  # the URL's ids the page sends

    async def landing(request: Request) -> Any:
        return FileResponse(STATIC / "start.html")

    async def page(request: Request) -> Any:
        server.session(request.path_params["token"])
        return FileResponse(STATIC / "session.html")

    def key_of(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else None

    def researcher(request: Request) -> None:
        if "key" in request.query_params:
            raise Refused(403, "the researcher token does not travel in the URL (?key=): send an Authorization: "
                               "Bearer header, or open the one-time dashboard link the server printed")
        server.researcher(key_of(request), request.cookies.get(COOKIE))

    async def sessions(request: Request) -> Any:
        researcher(request)
        return {"experiment": server.spec.name, "sessions": await on_thread(server.overview)}

    async def trials(request: Request) -> Any:
        researcher(request)
        return PlainTextResponse(await on_thread(server.trials_csv), media_type="text/csv")

    async def sessions_table(request: Request) -> Any:
        researcher(request)
        return PlainTextResponse(await on_thread(server.sessions_csv), media_type="text/csv")

    async def login(request: Request) -> Any:
        """A one-time link: the dashboard's cookie, then the dashboard at a clean URL."""
        server.use_once(request.query_params.get("once"))
        response = RedirectResponse("/researcher", 303)
        response.set_cookie(COOKIE, server.cookie_value(), max_age=86_400, path="/researcher", httponly=True,
                            samesite="strict", secure=request.url.scheme == "https")
        return response

    async def link(request: Request) -> Any:
        """A new one-time dashboard link, for a researcher with the token (another browser)."""
        server.researcher(key_of(request))
        return {"link": server.one_time_link()}

    async def dashboard(request: Request) -> Any:
        """The sessions as a table with their quality flags, sorted by the column `?sort=` names
        (`&desc=1`: largest first); each column's heading links to its sort."""
        researcher(request)
        rows = await on_thread(server.overview)
        columns = SESSION_COLUMNS
        by = request.query_params.get("sort", "run")
        if by not in columns:
            raise Refused(400, f"sort: expected a column ({', '.join(columns)})")
        desc = request.query_params.get("desc") == "1"
        present = [r for r in rows if r[by] is not None]
        rows = sorted(present, key=lambda r: (str(type(r[by])), r[by]), reverse=desc) + \
            [r for r in rows if r[by] is None]
        cells = "".join(
            f"<tr{' class=flagged' if r['n_flags'] else ''}>"
            + "".join(f"<td>{html.escape('' if r[k] is None else str(r[k]))}</td>" for k in columns) + "</tr>"
            for r in rows
        )

        def heading(k: str) -> str:
            down = by == k and not desc
            mark = (" \u25bc" if desc else " \u25b2") if by == k else ""
            sort = ("descending" if desc else "ascending") if by == k else "none"
            return (f"<th scope='col' aria-sort='{sort}'><a href='/researcher?sort={k}{'&amp;desc=1' if down else ''}'>"
                    f"{html.escape(k)}{mark}</a></th>")

        head = "".join(heading(k) for k in columns)
        title = html.escape(server.spec.name)
        flagged = sum(bool(r["n_flags"]) for r in rows)
        return HTMLResponse(
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{title}: sessions</title><link rel='stylesheet' href='/static/study.css'></head>"
            f"<body class='dashboard'><main><h1>{title}</h1><p>{plural(len(rows), 'session')}, "
            f"{sum(r['status'] == COMPLETED for r in rows)} completed, "
            f"{plural(sum(r['trials'] for r in rows), 'trial')}; {flagged} with quality flags "
            f"(<a href='/researcher?sort={by}{'&amp;desc=1' if desc else ''}'>refresh</a>)</p>"
            f"<p class='note'>Flags are evidence for your decision, not a verdict: see what each one means in "
            f"docs/participants.md (Data quality). Click a heading to sort. Tables: "
            f"<a href='/researcher/sessions.csv'>sessions.csv</a> (sessions and flags), "
            f"<a href='/researcher/trials.csv'>trials.csv</a>.</p>"
            f"<table><caption>Sessions, sorted by {html.escape(by)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{cells}</tbody></table></main></body></html>"
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "not found"}, 404, headers=HEADERS)

    async def failed(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "the server could not do that; nothing was recorded"}, 500, headers=HEADERS)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": "method not allowed"}, 405, headers=HEADERS)

    routes = [
        Route("/", answer(landing)),
        Route("/api/study", answer(about)),
        Route("/api/start", answer(start), methods=["POST"]),
        Route("/s/{token}", answer(page)),
        Route("/api/s/{token}", answer(state)),
        Route("/api/s/{token}/consent", answer(consent), methods=["POST"]),
        Route("/api/s/{token}/checks", answer(checks), methods=["POST"]),
        Route("/api/s/{token}/trial", answer(trial), methods=["POST"]),
        Route("/api/s/{token}/attention", answer(attention), methods=["POST"]),
        Route("/api/s/{token}/screen", answer(screen_shown), methods=["POST"]),
        Route("/researcher", answer(dashboard)),
        Route("/researcher/sessions", answer(sessions)),
        Route("/researcher/trials.csv", answer(trials)),
        Route("/researcher/sessions.csv", answer(sessions_table)),
        Route("/researcher/login", answer(login)),
        Route("/researcher/link", answer(link), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_allowed, 500: failed,
                                                        Exception: failed},
                    middleware=[Middleware(SecurityHeaders), Middleware(ClientLimits, limits=limits, log=log),
                                Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts), www_redirect=False)])
    app.state.server = server
    return app


def serve(server: StudyServer, host: str = "127.0.0.1", port: int = 8000, announce: Callable[[str], None] = print,
          then: Callable[[str], None] | None = None, sock: socket.socket | None = None,
          allowed: Sequence[str] = (), limits: Limits | None = None) -> None:
    """Run the study server until interrupted (uvicorn), then close the store.

    Parameters
    ----------
    server : StudyServer
        The sessions and the store (closed at the end).
    host, port : str, int
        Where it listens (see `listen_socket`; `sock`, if given, is that socket already bound).
    announce : callable
        Where its lines go: the address, the one-time dashboard link, and "stopped" after Ctrl-C.
    then : callable, optional
        `then(url)` runs on a thread once the server listens (pilot mode), and the server stops
        when it returns; what it raised is raised here.
    sock : socket.socket, optional
        A socket bound to (host, port) by `listen_socket`.
    allowed : sequence of str, optional
        Host names of a proxied deployment (`--allowed-host`), answered besides `host`'s own.
    limits : Limits, optional
        Time-outs and caps on what clients hold, and the trusted proxies (default `Limits()`:
        none; X-Forwarded-For and X-Forwarded-Proto are then ignored).
    """
    import threading

    import uvicorn

    hosts = allowed_hosts(host, allowed)
    sock = sock or listen_socket(host, port)
    shown = "127.0.0.1" if host in WILDCARD_HOSTS else f"[{host}]" if ":" in host else host
    announce(f"serving {server.spec.name!r} at http://{shown}:{port}/ ({plural(server.resumed, 'session')} resumed)")
    if then is None:
        announce(f"researcher dashboard (a one-time link: it sets a cookie in the browser that opens it): "
                 f"http://{shown}:{port}{server.one_time_link()}")
    limits = limits or Limits()
    config = uvicorn.Config(make_app(server, hosts, allowed, limits=limits), host=host, port=port,
                            log_level="warning", access_log=False, server_header=False, http=limited_protocol(limits),
                            proxy_headers=bool(limits.trusted_proxies),  # X-Forwarded-*: believed from these only
                            forwarded_allow_ips=list(limits.trusted_proxies) or None,
                            timeout_keep_alive=math.ceil(limits.keep_alive),
                            limit_concurrency=limits.max_connections,
                            h11_max_incomplete_event_size=limits.max_header_bytes)
    runner = uvicorn.Server(config)
    failed: list[BaseException] = []
    if then is not None:
        def after_start() -> None:
            while not runner.started and not runner.should_exit:
                time.sleep(0.02)
            try:
                then(f"http://{shown}:{port}")
            except BaseException as exc:  # raised in the caller's thread below
                failed.append(exc)
            finally:
                runner.should_exit = True

        threading.Thread(target=after_start, daemon=True).start()
    interrupted = False
    try:
        runner.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stopped on Ctrl-C and raises it again: a normal end
        interrupted = True
    finally:
        sock.close()
        server.close()
    if interrupted:
        batches = (f" ({plural(server.written, 'trial')} in {plural(server.transactions, 'transaction')})"
                   if server.written else "")
        announce(f"stopped: {plural(len(server.sessions), 'session')}, every trial answered was written{batches}")
    if failed:
        raise failed[0]
