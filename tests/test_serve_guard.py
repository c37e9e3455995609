"""`graphtasks serve` says what it does and refuses what it should, in one line (issue 41).

A real server process on 127.0.0.1 and real HTTP, as in tests/test_serve.py: it answers only its
own Host names and its own pages' posts, refuses unknown fields of a start request, keeps the
researcher's token out of URLs, stops on Ctrl-C with one line, refuses a busy port before it
says anything, and reports a full disk in one line while the pages retry (the disk-full test
mounts a small tmpfs, which needs root, as tests/stores/test_disk_full.py does).
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphstore import open_store
from tests.test_serve import (
    GRID_STUDY,
    RESEARCHER,
    TWO_STEP_STUDY,
    Server,
    free_port,
    get,
    post,
    researcher,
    serve,  # noqa: F401 - the fixture
    start_session,
    stored_trials,
)


def raw(server_url: str, method: str, path: str, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One request with exactly these headers (Host included), redirects not followed."""
    host, port = server_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        given = {"Host": f"{host}:{port}", **(headers or {})}
        if body is not None:
            given.setdefault("Content-Type", "application/json")
            given["Content-Length"] = str(len(body))
        for name, value in given.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        text = response.read().decode()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, text
    finally:
        connection.close()


def launch(study: Path, store: Path, *args: str, port: int | None = None) -> tuple[subprocess.Popen, str, list[str]]:
    """`graphtasks serve` with extra arguments; the process, its URL and the lines it printed
    before it answered."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port", str(port), *args],
        env={**os.environ, "GRAPHTASKS_RESEARCHER_TOKEN": RESEARCHER}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )
    assert process.stdout is not None
    lines = []
    while not any(line.startswith("serving ") for line in lines):
        line = process.stdout.readline()
        assert line, f"the server exited: {''.join(lines)}"
        lines.append(line.rstrip("\n"))
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 60
    while True:
        try:
            if get(url + "/")[0] == 200:
                break
        except OSError:
            assert time.monotonic() < end, "the server did not answer"
            time.sleep(0.1)
    return process, url, lines


def stop(process: subprocess.Popen) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    return out or ""


@pytest.fixture
def launched() -> Iterator[list[subprocess.Popen]]:
    processes: list[subprocess.Popen] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.mark.slow
def test_only_its_own_host_and_its_own_pages_posts(serve):  # noqa: F811 - the fixture
    """DNS rebinding and cross-site posts: another Host is refused (400), a post from another
    site's page is refused (403) by its Origin or Sec-Fetch-Site; nothing is written."""
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    token = start_session(server)
    before = (researcher(server), researcher(server, "trials"))
    start = b'{"params": {}}'
    trial = b'{"index": 0, "action": 0}'
    netloc = server.url.removeprefix("http://")
    refused = [
        ("GET", "/", None, {"Host": "rebound.example"}, 400),
        ("GET", f"/api/s/{token}", None, {"Host": f"rebound.example:{server.port}"}, 400),
        ("POST", "/api/start", start, {"Host": "rebound.example"}, 400),
        ("POST", "/api/start", start, {"Origin": "http://evil.example"}, 403),
        ("POST", "/api/start", start, {"Origin": f"http://evil.example:{server.port}"}, 403),
        ("POST", "/api/start", start, {"Origin": "null"}, 403),
        ("POST", "/api/start", start, {"Origin": f"http://localhost:{server.port + 1}"}, 403),  # another port
        ("POST", "/api/start", start, {"Sec-Fetch-Site": "cross-site"}, 403),
        ("POST", "/api/start", start, {"Sec-Fetch-Site": "same-site"}, 403),
        ("POST", f"/api/s/{token}/trial", trial, {"Origin": "https://evil.example"}, 403),
        ("POST", f"/api/s/{token}/consent", b'{"agree": true}', {"Sec-Fetch-Site": "cross-site"}, 403),
    ]
    for method, path, body, headers, expected in refused:
        status, _, text = raw(server.url, method, path, body, headers)
        assert status == expected, (method, path, headers, status, text)
        assert "Traceback" not in text
        if status == 403:
            assert "another site" in text or "Sec-Fetch-Site" in text, text
    assert (researcher(server), researcher(server, "trials")) == before
    # its own names and its own pages pass
    assert raw(server.url, "GET", "/", None, {"Host": f"localhost:{server.port}"})[0] == 200
    for headers in ({"Origin": server.url}, {"Origin": server.url, "Sec-Fetch-Site": "same-origin"},
                    {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {}):
        status, _, text = raw(server.url, "POST", "/api/start", start, headers)
        assert status == 200, (headers, text)
    assert raw(server.url, "POST", f"/api/s/{token}/trial", trial, {"Origin": f"http://{netloc}"})[0] == 200
    assert len(researcher(server)["sessions"]) == 6


@pytest.mark.slow
def test_allowed_host_for_a_deployment_behind_a_proxy(tmp_path, launched):
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    process, url, _ = launch(study, tmp_path / "store.lbug", "--allowed-host", "study.example.org")
    launched.append(process)
    start = b'{"params": {}}'
    # the proxy passes the public name as Host, or rewrites Host to the server's own address
    assert raw(url, "GET", "/", None, {"Host": "study.example.org"})[0] == 200
    assert raw(url, "POST", "/api/start", start, {"Host": "study.example.org",
                                                  "Origin": "https://study.example.org"})[0] == 200
    assert raw(url, "POST", "/api/start", start, {"Origin": "https://study.example.org"})[0] == 200
    assert raw(url, "GET", "/", None, {"Host": "other.example.org"})[0] == 400
    assert raw(url, "POST", "/api/start", start, {"Host": "study.example.org", "Origin": "https://evil.example"}
               )[0] == 403
    stop(process)
    # every address, but no name to answer: refused in one line before anything is said
    for args in (["--host", "0.0.0.0"], ["--allowed-host", "https://study.example.org"],
                 ["--allowed-host", "study.example.org:443"]):
        result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "store.lbug"), "serve",
                                 str(study), "--port", str(free_port()), *args], capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 2 and result.stdout == "", (args, result.stdout)
        assert len(result.stderr.strip().splitlines()) == 1 and "--" in result.stderr, result.stderr


@pytest.mark.slow
def test_a_start_request_with_an_unknown_field_is_refused(serve):  # noqa: F811 - the fixture
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    for body, named in (({"params": {}, "particpant": "x"}, "'particpant'"),
                        ({"params": {"PROLIFIC_PID": "a", "utm_source": "mail"}}, "'utm_source'"),
                        ({"parms": {"PROLIFIC_PID": "a"}}, "'parms'")):
        status, answer = post(server.url + "/api/start", body)
        assert status == 400 and named in answer["error"], (body, answer)
    assert researcher(server)["sessions"] == []
    assert post(server.url + "/api/start", {"params": {"PROLIFIC_PID": "a", "STUDY_ID": "s"}})[0] == 200


@pytest.mark.slow
def test_ctrl_c_stops_the_server_with_one_line(serve):  # noqa: F811 - the fixture
    server = serve(TWO_STEP_STUDY.format(episodes=2, timeout=0))
    start_session(server)
    assert server.process is not None
    server.process.send_signal(signal.SIGINT)
    out, _ = server.process.communicate(timeout=60)
    assert server.process.returncode == 0, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert out.strip().splitlines()[-1] == "stopped: 1 session, every trial answered was written"


def test_a_busy_port_is_refused_before_anything_is_printed(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "graphtasks", "--store", str(tmp_path / "s.lbug"), "serve",
                                 str(study), "--port", str(port)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout == ""  # no address, no dashboard link
    assert result.stderr.strip() == (f"graphtasks: error: serve: port {port} on 127.0.0.1 is in use (another "
                                     f"server?): choose another with --port")
    assert not (tmp_path / "s.lbug").exists()  # nor a store made


@pytest.mark.slow
def test_the_dashboard_key_stays_out_of_urls(tmp_path, launched):
    """The printed dashboard link is a one-time code: it sets an HttpOnly, SameSite=Strict
    cookie and redirects to a clean URL; the token is in no URL, and `?key=` is refused."""
    study = tmp_path / "study.toml"
    study.write_text(TWO_STEP_STUDY.format(episodes=2, timeout=0), encoding="utf-8")
    process, url, lines = launch(study, tmp_path / "store.lbug")
    launched.append(process)
    assert process.stdout is not None
    lines.append(process.stdout.readline().rstrip("\n"))
    dashboard = lines[-1]
    assert dashboard.startswith("researcher dashboard (a one-time link"), lines
    assert RESEARCHER not in "\n".join(lines) and "key=" not in dashboard
    path = dashboard.split(url, 1)[1]
    assert path.startswith("/researcher/login?once=")
    status, headers, _ = raw(url, "GET", path)
    assert status == 303 and headers["location"] == "/researcher"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/researcher" in cookie, cookie
    value = cookie.split(";")[0]
    assert RESEARCHER not in value
    assert raw(url, "GET", "/researcher", None, {"Cookie": value})[0] == 200
    assert raw(url, "GET", "/researcher/sessions", None, {"Cookie": value})[0] == 200
    assert raw(url, "GET", "/researcher", None, {"Cookie": value[:-1] + "0"})[0] == 403
    assert raw(url, "GET", path)[0] == 403  # used up
    status, _, text = raw(url, "GET", "/researcher?key=" + RESEARCHER)
    assert status == 403 and "does not travel in the URL" in text
    # a researcher with the token gets a new link for another browser
    status, _, text = raw(url, "POST", "/researcher/link", b"{}", {"Authorization": f"Bearer {RESEARCHER}"})
    assert status == 200 and "/researcher/login?once=" in text
    assert raw(url, "POST", "/researcher/link", b"{}", {})[0] == 403
    stop(process)


def test_two_step_stages_have_options_of_their_own():
    """The built-in two-step task's screens: "Option A/B" at the first stage, other names at
    each second stage (not "Option A/B" everywhere)."""
    from graphtasks.serve.app import StudyServer
    from graphtasks.serve.study import load_study

    for task in ("rewardgym/two-step", "neuronav/graph/two_step"):
        server = StudyServer(load_study(task, episodes=2), ":memory:")
        try:
            states = server.screens[task]["states"]
        finally:
            server.close()
        choices = [s for s in states.values() if not s["terminal"]]
        labels = [tuple(s["labels"]) for s in choices]
        assert len(choices) >= 3 and len(set(labels)) == len(labels), (task, labels)
        assert len({x for group in labels for x in group}) == sum(len(g) for g in labels)
        assert all(s["labels"] is None for s in states.values() if s["terminal"])
    assert [tuple(s["labels"]) for s in choices][0] == ("Option A", "Option B")


@pytest.mark.slow
def test_pilots_that_wait_have_server_times_that_hold_their_response_times(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(TWO_STEP_STUDY.format(episodes=1, timeout=0), encoding="utf-8")
    store = tmp_path / "pilot.lbug"
    result = subprocess.run(
        [sys.executable, "-m", "graphtasks", "--store", str(store), "serve", str(study), "--port", str(free_port()),
         "--pilot", "1", "--pilot-wait"], capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    with open_store(store, "r") as s:
        rows = s.cypher("MATCH (t:Trial) WHERE t.rt IS NOT NULL RETURN t.rt, t.server_rt").rows
    assert len(rows) == 6
    print("pilot rt, server_rt (ms):", [(round(a), round(b)) for a, b in rows])
    assert all(server_rt >= rt for rt, server_rt in rows), rows


def small_disk(tmp_path: Path, size: str) -> Path:
    target = tmp_path / "disk"
    target.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a {size} tmpfs ({done.stderr.strip()}): the disk-full test needs root "
                    f"(CAP_SYS_ADMIN), as CI (.ci/run) has")
    return target


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_the_server_goes_on(tmp_path):
    disk = small_disk(tmp_path, "64m")
    try:
        study = tmp_path / "study.toml"
        study.write_text(TWO_STEP_STUDY.format(episodes=200, timeout=0), encoding="utf-8")
        server = Server(str(study), disk / "store.lbug").start()
        try:
            token = start_session(server)
            position = get(f"{server.url}/api/s/{token}")[1]["position"]
            answered = 0
            with open(disk / "filler", "wb") as filler:  # leave about 200 kB
                filler.write(b"\0" * (shutil.disk_usage(disk).free - 200_000))
            statuses: list[int] = []
            for _ in range(2000):
                status, answer = post(f"{server.url}/api/s/{token}/trial",
                                      {"index": position["trial"], "action": 0})
                statuses.append(status)
                if status != 200:
                    break
                answered += 1
                position = answer["position"]
            assert statuses[-1] == 507 and "disk is full" in answer["error"], (statuses[-3:], answer)
            assert post(f"{server.url}/api/s/{token}/trial", {"index": position["trial"], "action": 0})[0] == 507
            (disk / "filler").unlink()
            for _ in range(3):  # room again: the same trial goes through, and the next ones
                status, answer = post(f"{server.url}/api/s/{token}/trial", {"index": position["trial"], "action": 0})
                assert status == 200, answer
                answered += 1
                position = answer["position"]
        finally:
            out = server.stop()
        assert "Traceback" not in out, out
        lines = [line for line in out.splitlines() if line.startswith("graphtasks serve:")]
        assert len(lines) == 2, out  # one line when the disk filled, one when it had room again
        assert "the disk is full" in lines[0] and "507" in lines[0] and "room again" in lines[1]
        rows = stored_trials(disk / "store.lbug", "two-step people")
        assert len(rows) == answered and len({r[-1] for r in rows}) == answered  # each answered trial once
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
