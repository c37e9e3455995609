"""A study played in a browser through a real reverse proxy over TLS (issue 43): nginx on
127.0.0.1 with a self-signed certificate, configured by the nginx block of docs/deploy.md (read
from the page, so that the documented configuration is the one tested), in front of a
`graphtasks serve` process started as docs/deploy.md says; Debian's headless Chromium plays a grid
study at https://study.example.org through it, and the store holds every trial.

nginx and Chromium come from Debian's packages (`apt-get install nginx-light chromium
chromium-driver`, as .ci/run does). This test does not skip: without them it fails and says so.
"""

from __future__ import annotations

import getpass
import http.client
import os
import re
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.serve.app import digest
from tests.test_serve import GRID_STUDY, RESEARCHER, free_port, post
from tests.test_serve_guard import launch, launched, stop  # noqa: F401 - launched is a fixture
from tests.test_serve_hardening import PUBLIC, self_signed

DEPLOY = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"
SITE = "# /etc/nginx/sites-available/study"  # the first line of the documented nginx configuration
NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/sbin/nginx") if os.access(p, os.X_OK)), None)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
INSTALL = ("run .ci/run's install (apt-get install nginx-light chromium chromium-driver; the test extra for "
           "selenium)")


def documented_site() -> str:
    """The nginx block of docs/deploy.md: the ```text block that starts with SITE."""
    blocks = re.findall(r"^```text\n(.*?)^```$", DEPLOY.read_text(encoding="utf-8"), flags=re.S | re.M)
    sites = [b for b in blocks if b.startswith(SITE)]
    assert len(sites) == 1, f"docs/deploy.md: expected one ```text block starting {SITE!r}, found {len(sites)}"
    return sites[0]


def site_for_test(site: str, https: int, http_port: int, upstream: int, cert: Path, key: Path) -> str:
    """The documented site with this machine's ports and the self-signed certificate; each
    replaced text must be in the page as written (the test fails if the page changes under it)."""
    for old, new in (("listen 443 ssl", f"listen 127.0.0.1:{https} ssl"),
                     ("listen 80;", f"listen 127.0.0.1:{http_port};"),
                     ("http://127.0.0.1:8000;", f"http://127.0.0.1:{upstream};"),
                     (f"/etc/letsencrypt/live/{PUBLIC}/fullchain.pem", str(cert)),
                     (f"/etc/letsencrypt/live/{PUBLIC}/privkey.pem", str(key))):
        assert old in site, f"docs/deploy.md's nginx block no longer has {old!r}"
        site = site.replace(old, new)
    return site


@pytest.fixture
def nginx(tmp_path) -> Iterator[Any]:
    """`start(site)`: nginx in the foreground (daemon off) with `site` inside its http block,
    every file it writes under tmp_path/nginx; stopped (SIGQUIT, then killed) at the end."""
    started: list[subprocess.Popen] = []

    def start(site: str, https: int) -> Path:
        assert NGINX, f"nginx is missing: {INSTALL}"
        home = tmp_path / "nginx"
        temp = ""
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (home / sub).mkdir(parents=True, exist_ok=True)
            temp += f"    {sub}_temp_path {home / sub};\n"
        user = f"user {getpass.getuser()};\n" if os.geteuid() == 0 else ""  # root's workers: not "nobody"
        (home / "nginx.conf").write_text(
            f"{user}worker_processes 1;\nerror_log {home / 'error.log'} info;\npid {home / 'nginx.pid'};\n"
            f"events {{ worker_connections 256; }}\n"
            f"http {{\n    access_log {home / 'access.log'};\n{temp}\n{site}\n}}\n", encoding="utf-8")
        process = subprocess.Popen([NGINX, "-p", str(home), "-c", str(home / "nginx.conf"), "-g", "daemon off;"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        started.append(process)
        end = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                log = (home / "error.log").read_text() if (home / "error.log").exists() else ""
                raise AssertionError(f"nginx exited: {process.stdout.read() if process.stdout else ''}{log}")
            try:
                socket.create_connection(("127.0.0.1", https), timeout=1).close()
                return home
            except OSError:
                assert time.monotonic() < end, "nginx did not listen within 30 s"
                time.sleep(0.1)

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(3)  # SIGQUIT: nginx's graceful stop
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def tls_get(port: int, cert: Path, path: str) -> tuple[int, dict[str, str], str]:
    """One HTTPS request to nginx, as a browser at https://study.example.org/ sends it."""
    context = ssl.create_default_context(cafile=str(cert))
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": PUBLIC})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        connection.close()


def test_a_person_plays_a_study_through_nginx_over_tls(tmp_path, launched, nginx):  # noqa: F811 - a fixture
    tools = (("nginx", NGINX), ("chromium", CHROMIUM), ("chromedriver", DRIVER))
    missing = [name for name, found in tools if not found]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium")
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: {INSTALL}", pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.keys import Keys

    from tests.test_serve_browser import Player, play_session

    study = tmp_path / "study.toml"
    study.write_text(GRID_STUDY, encoding="utf-8")
    store = tmp_path / "store.lbug"
    # the server as docs/deploy.md starts it: on 127.0.0.1, the public name allowed, the proxy trusted
    process, url, _ = launch(study, store, "--allowed-host", PUBLIC, "--trusted-proxy", "127.0.0.1")
    launched.append(process)
    upstream = int(url.rsplit(":", 1)[1])
    cert, key = self_signed(tmp_path)
    https, plain = free_port(), free_port()
    home = nginx(site_for_test(documented_site(), https, plain, upstream, cert, key), https)

    # nginx adds HSTS, the server its own headers; plain HTTP is sent to HTTPS
    status, head, _ = tls_get(https, cert, "/")
    assert status == 200 and "max-age=31536000" in head["strict-transport-security"], head
    assert "default-src 'self'" in head["content-security-policy"]
    connection = http.client.HTTPConnection("127.0.0.1", plain, timeout=30)
    connection.request("GET", "/?PROLIFIC_PID=x", headers={"Host": PUBLIC})
    response = connection.getresponse()
    assert response.status == 301 and response.getheader("location") == f"https://{PUBLIC}/?PROLIFIC_PID=x"
    connection.close()

    # a person at https://study.example.org (resolved to nginx on 127.0.0.1; the certificate is self-signed)
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,760",
                     "--disable-gpu", "--no-first-run", "--ignore-certificate-errors",
                     f"--host-resolver-rules=MAP {PUBLIC} 127.0.0.1"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        address = f"https://{PUBLIC}:{https}"
        driver.get(f"{address}/?PROLIFIC_PID=through-nginx")
        path = [Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_LEFT, Keys.ARROW_LEFT, Keys.ARROW_UP]
        done = play_session(Player(driver, tmp_path), lambda kind, n: path[n % len(path)], "grid")
        assert "Your completion code" in done
        assert driver.current_url.startswith(f"{address}/s/")
        # the dashboard's cookie is Secure: the server believes the trusted proxy's X-Forwarded-Proto
        link = post(url + "/researcher/link", {}, headers={"Authorization": f"Bearer {RESEARCHER}"})[1]["link"]
        driver.get(address + link)
        assert driver.current_url == f"{address}/researcher" and "1 completed" in driver.page_source
        cookies = {c["name"]: c for c in driver.get_cookies()}
        assert cookies["graphtasks_researcher"]["secure"] is True, cookies
    finally:
        driver.quit()
    out = stop(process)
    assert "Traceback" not in out and "X-Forwarded-For" not in out, out[-2000:]
    with open_store(store, "r") as s:
        rows = s.cypher("MATCH (p:Participant)-[:PERFORMED]->(:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->"
                        "(t:Trial) RETURN p.pid_hash, e.index, t.step, t.action, t.key ORDER BY e.index, t.step").rows
    assert [(r[1], r[2]) for r in rows] == [(e, s) for e in range(2) for s in range(6)]
    assert {r[0] for r in rows} == {digest("grid people\nthrough-nginx")}  # the id the page sent, hashed
    assert [r[3] for r in rows] == [0, 0, 0, 3, 3, 0] * 2 and [r[4] for r in rows[:2]] == ["ArrowUp"] * 2
    # every trial went through nginx
    log = (home / "access.log").read_text()
    posted = re.findall(r'"POST /api/s/[^/ ]+/trial HTTP/[\d.]+" (\d+)', log)
    assert posted.count("200") == len(rows), log[-2000:]
    assert re.search(r'"POST /api/start HTTP/[\d.]+" 200', log), log[-2000:]
    assert '"POST /api/start HTTP/2.0"' in log  # the browser spoke HTTP/2 to nginx (listen ... http2)
