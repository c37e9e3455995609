"""People in a real browser: Debian's headless Chromium, driven by Selenium, plays a two-step
study and a grid study with the keyboard against a real `graphtasks serve` process; then the
store has every trial with the response times the page measured.

Chromium comes from Debian's packages (`apt-get install chromium chromium-driver`, done by
.ci/run). Without it these tests fail in CI (CI=true) and are skipped on a developer's machine.
With GRAPHTASKS_SCREENSHOTS=DIR set, a screenshot of every screen type is saved in DIR (the
pictures in docs/images/participants/ were made so).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from tests.test_serve import GRID_STUDY, RESEARCHER, TWO_STEP_STUDY, post
from tests.test_serve import serve as serve  # the fixture
from tests.test_serve_room import ROOM_STUDY
from tests.test_serve_room import room_store as room_store  # the fixture

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

if not (CHROMIUM and DRIVER):
    if os.environ.get("CI") == "true":
        pytest.fail("Chromium and chromedriver are missing (.ci/run installs Debian's chromium chromium-driver)",
                    pytrace=False)
    pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)", allow_module_level=True)

if os.environ.get("CI") != "true":
    pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture
def browser():
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,760",
                     "--disable-gpu", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


class Player:
    """Watches the page's screens (each new one has a new data-seq) and answers them."""

    def __init__(self, driver: Any, shots: Path) -> None:
        self.driver, self.shots, self.seq = driver, shots, ""
        self.seen: list[str] = []
        self.texts: list[str] = []
        self.options: dict[str, list[str]] = {}  # each choice screen's stimulus: its options' labels

    def shoot(self, name: str) -> None:
        if not (self.shots / f"{name}.png").exists():
            self.driver.save_screenshot(str(self.shots / f"{name}.png"))

    def key(self, key: str, timeout: float = 20.0) -> None:
        """Press `key` once the screen listens for keys (the page ignores presses before it is shown)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                ready = self.driver.execute_script(
                    "const m = document.getElementById('screen'); return !m || !m.dataset.seq || m.dataset.ready;")
            except WebDriverException:
                ready = None
            if ready is True or ready == "1":
                break
            time.sleep(0.005)
        ActionChains(self.driver).send_keys(key).perform()

    def next_screen(self, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:  # one script: no element that a navigation could make stale
                seq, kind = self.driver.execute_script(
                    "const m = document.getElementById('screen');"
                    "return m ? [m.dataset.seq || '', m.dataset.screen || ''] : ['', ''];")
            except WebDriverException:  # the page is being replaced
                seq = kind = ""
            if seq and seq != self.seq:
                self.seq = seq
                self.seen.append(kind)
                return kind
            time.sleep(0.01)
        raise AssertionError(f"no new screen after {self.seen[-5:]}: {self.driver.find_element(By.ID, 'screen').text}")

    def text(self) -> str:
        return str(self.driver.find_element(By.ID, "screen").text)


def play_session(player: Player, answer: Any, name: str, reload_at: int | None = None) -> str:
    """Play from the landing page to the completion page; `answer(kind, n)` gives the key of the
    n-th choice screen (None: let it time out); right after the key of choice `reload_at` the
    page is reloaded. Returns the completion page's text."""
    driver = player.driver
    player.shoot(f"{name}-start")
    player.key(" ")
    texts = choices = 0
    while True:
        kind = player.next_screen()
        if kind == "consent":
            player.shoot("consent")
            driver.find_element(By.CSS_SELECTOR, "button.agree").click()
        elif kind == "check":  # the first attempt is wrong: the instructions again, then right
            player.shoot("check")
            player.key("1" if "Some answers were not right" in " ".join(player.texts) else "2")
        elif kind == "text":
            body = player.text()
            player.texts.append(body)
            label = ("instructions" if texts < 2 else "practice") if name == "two-step" else f"{name}-instructions"
            if "practice is over" in body:
                label = "practice-over"
            elif "Some answers were not right" in body:
                label = "check-failed"
            elif name == "two-step" and ("choose twice" in body or "win as often" in body):
                label = "instructions"
            player.shoot(label)
            texts += 1
            player.key(" ")
        elif kind in ("choice", "grid"):
            key = answer(kind, choices)
            if kind == "grid":
                player.shoot("grid" if name == "grid" else name)
            else:  # one picture per stimulus: choice-first-stage, choice-second-stage-a, ...
                stimulus = driver.find_element(By.CSS_SELECTOR, ".stimulus").text
                player.options[stimulus] = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".option .label")]
                player.shoot("choice-" + "-".join(stimulus.lower().replace(":", "").split()))
            choices += 1
            if key is not None:
                player.key(key)
                if kind == "choice":
                    time.sleep(0.05)
                    player.shoot("chosen")
                if choices - 1 == reload_at:  # the post may be on its way: the server's record decides
                    driver.refresh()
        elif kind == "room":  # the Room task's question screen
            player.texts.append(player.text())
            player.shoot("room")
            key = answer(kind, choices)
            choices += 1
            player.key(key)
            time.sleep(0.05)
            player.shoot("room-chosen")
        elif kind == "break":  # study.break_every: a break within a phase, until the space bar
            player.texts.append(player.text())
            player.shoot(f"{name}-break" if name != "two-step" else "break")
            player.key(" ")
        elif kind in ("feedback", "fixation", "slow"):
            player.shoot(f"{name}-{kind}" if kind == "feedback" else kind)
        elif kind == "done":
            player.shoot(f"{name}-done")
            return player.text()
        else:
            raise AssertionError(f"unexpected screen {kind!r}: {player.text()}")


def trials_of(store: Path, name: str) -> list[tuple[Any, ...]]:
    with open_store(store, "r") as s:
        return [tuple(r) for r in s.cypher(
            "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
            "RETURN e.phase_index, e.index, t.step, t.state, t.action, t.reward, t.next_state, t.rt, t.key, "
            "t.timeouts, t.shown_ms, t.pressed_ms, t.server_rt ORDER BY e.phase_index, e.index, t.step",
            {"uid": experiment_uid(name)},
        ).rows]


def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("GRAPHTASKS_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.slow  # the quick run plays the grid study in Chromium
def test_a_person_plays_a_two_step_study_in_chromium(serve, browser, tmp_path):
    study = TWO_STEP_STUDY.format(episodes=3, timeout=3000).replace("feedback_ms = 150", "feedback_ms = 400") \
        .replace("iti_ms = 100", "iti_ms = 300").replace("[study]\n", "[study]\nbreak_every = 2\n")
    server = serve(study)
    shots = shots_dir(tmp_path)
    # utm_source: a parameter the page does not send (the server would refuse it)
    browser.get(server.url + "/?PROLIFIC_PID=browser-person&STUDY_ID=s1&SESSION_ID=x1&utm_source=mail")
    player = Player(browser, shots)

    def answer(kind: str, n: int) -> str | None:
        # the first screen of the main phase times out once ("too slow"), then is shown again
        return None if n == 4 else "fj"[(n - (n > 4)) % 2]

    end = time.monotonic() + 10
    while browser.find_element(By.TAG_NAME, "h1").text != "A two-step task":  # the landing page asks the title
        assert time.monotonic() < end, browser.find_element(By.TAG_NAME, "h1").text
        time.sleep(0.02)
    assert browser.title == "A two-step task"
    done = play_session(player, answer, "two-step", reload_at=6)
    assert "CODE-2S" in done and "Return to the study site" in done
    assert browser.find_element(By.CSS_SELECTOR, "a.redirect").get_attribute("href") == \
        "https://example.org/done?cc=CODE-2S"
    slow = player.seen.count("slow")  # once on purpose; a loaded machine may add one
    # instructions, a wrong check, "not right", the instructions again, a right check, practice, practice over;
    # the reload resumed the trials, with no consent, instructions or checks again
    assert player.seen.count("consent") == 1 and player.seen.count("check") == 2 and player.seen.count("text") == 7
    assert slow >= 1 and "fixation" in player.seen and "feedback" in player.seen
    assert player.seen.count("break") == 1  # after two of the main phase's three rounds (practice: two rounds)
    assert "Block 1 of 2 is done." in player.texts[-1]
    browser.get(browser.current_url)  # a reload after the end shows the code again
    assert Player(browser, shots).next_screen() == "done" and "CODE-2S" in browser.page_source
    assert any(t.startswith("Practice: 2 rounds. These let you learn the keys.") for t in player.texts)  # not round(s)
    # each stage's options have names of their own: the first stage's A and B, a second stage's C and D or E and F
    assert player.options["first stage"] == ["Option A", "Option B"]
    seconds = {k: v for k, v in player.options.items() if k.startswith("second stage")}
    assert seconds and all(v in (["Option C", "Option D"], ["Option E", "Option F"]) for v in seconds.values())
    # the dashboard: a one-time link sets its cookie and leads to a clean URL; the token is in no URL
    link = post(server.url + "/researcher/link", {}, headers={"Authorization": f"Bearer {RESEARCHER}"})[1]["link"]
    browser.get(server.url + link)
    assert browser.current_url == server.url + "/researcher" and "1 completed" in browser.page_source
    browser.get(server.url + link)  # used up
    assert "not valid or was used already" in browser.page_source
    browser.get(server.url + "/researcher")  # the cookie still opens the dashboard
    assert "1 completed" in browser.page_source and "1 session," in browser.page_source
    browser.save_screenshot(str(shots / "dashboard.png"))
    server.stop()
    rows = trials_of(server.store, "two-step people")
    assert len(rows) == 10  # 2 practice + 3 main episodes of two choices
    assert [r[4] for r in rows] == [{"f": 0, "j": 1}[r[8]] for r in rows]  # the keys pressed, as actions
    assert set(r[8] for r in rows) == {"f", "j"}
    assert sum(r[9] for r in rows) == slow and rows[4][9] >= 1  # the first main trial's time-out is on it
    for rt, shown, pressed, server_rt in [(r[7], r[10], r[11], r[12]) for r in rows]:
        assert 0 < rt < 3000 and pressed - shown == pytest.approx(rt)
        assert server_rt is None or server_rt > rt  # the server's span holds the browser's


def test_a_person_plays_a_grid_study_with_the_arrow_keys(serve, browser, tmp_path):
    server = serve(GRID_STUDY, name="grid.toml")
    shots = shots_dir(tmp_path)
    browser.get(server.url + "/")
    path = [Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_LEFT, Keys.ARROW_LEFT, Keys.ARROW_UP]
    player = Player(browser, shots)

    restarted: list[threading.Thread] = []

    def answer(kind: str, n: int) -> str:
        if n == 2:  # the tab is closed after two moves and the study's link opened again
            browser.get("about:blank")
            browser.get(server.url + "/")
            assert player.next_screen() == "grid"  # straight back to the session, at its third move
        if n == 4:  # the server is killed; the page posts the fifth move while it is down, and retries
            server.stop(kill=True)
            restarted.append(threading.Thread(target=lambda: (time.sleep(1.0), server.start())))
            restarted[0].start()
        return path[n % len(path)]

    done = play_session(player, answer, "grid")
    restarted[0].join()
    assert player.seen.count("text") == 1  # the instructions, once
    assert "Your completion code" in done
    server.stop()
    rows = trials_of(server.store, "grid people")
    assert [(r[0], r[1], r[2]) for r in rows] == [(0, e, s) for e in range(2) for s in range(6)]
    assert [r[4] for r in rows] == [0, 0, 0, 3, 3, 0] * 2  # north, north, north, west, west, north
    assert [r[3] for r in rows[:6]] == [38, 31, 24, 17, 16, 15] and rows[5][6] == 8 and rows[5][5] > 0
    assert [r[8] for r in rows[:6]] == ["ArrowUp"] * 3 + ["ArrowLeft"] * 2 + ["ArrowUp"]
    # the fifth move reached the restarted server, which had sent no screen of this session: no server_rt
    assert [r[12] is None for r in rows] == [False] * 4 + [True] + [False] * 7
    assert all(r[7] is not None and r[7] > 0 for r in rows)


POGE_STUDY = """
[experiment]
name = "poge people"
tasks = ["poge/world0"]
seeds = 1

[[phases]]
name = "explore"
episodes = 1

[study]
instructions = ["Find the goal with the arrow keys."]
feedback_ms = 150
iti_ms = 100
"""


@pytest.mark.slow  # the quick run plays the grid study in Chromium
def test_a_person_plays_a_poge_world_with_its_own_arrow_mapping(serve, browser, tmp_path):
    """POGE's actions are 0 up, 1 down, 2 left, 3 right (grids': 0 north, 1 east, ...): the keys
    map to each family's own actions."""
    server = serve(POGE_STUDY, name="poge.toml")
    browser.get(server.url + "/")
    up, down, left = Keys.ARROW_UP, Keys.ARROW_DOWN, Keys.ARROW_LEFT
    path = [up, up, left, left, left, left, down, down]
    play_session(Player(browser, shots_dir(tmp_path)), lambda kind, n: path[n], "poge")
    server.stop()
    rows = trials_of(server.store, "poge people")
    assert [r[4] for r in rows] == [0, 0, 2, 2, 2, 2, 1, 1]
    assert [r[5] for r in rows] == [0.0] * 7 + [100.0]  # the goal, reached by the path drawn above


@pytest.mark.slow  # the quick run plays the grid study in Chromium
def test_a_person_answers_the_room_tasks_questions(serve, browser, room_store, tmp_path):
    """The Room task's question screens: what the room shows, the question, the answers with
    their letter keys; each key press is the answer recorded."""
    server = serve(ROOM_STUDY.replace("max_steps = 8", "max_steps = 4").replace("feedback_ms = 100",
                                                                              "feedback_ms = 300")
                   + "break_every = 2\n",
                   name="room.toml", store=room_store)
    browser.get(server.url + "/")
    player = Player(browser, shots_dir(tmp_path))
    keys = "ajck"
    done = play_session(player, lambda kind, n: keys[n], "room")
    assert "Your completion code" in done and player.seen.count("room") == 4
    assert player.seen.count("break") == 1 and "Block 1 is done." in player.texts[3]  # after question 2 of 4
    questions = player.texts[1:3] + player.texts[4:]  # the instructions first, the break after two questions
    assert all("You see:" in t and "Where is " in t and "I don't know" in t for t in questions)
    server.stop()
    rows = trials_of(server.store, "room people")
    assert [r[4] for r in rows] == [0, 9, 2, 10] and [r[8] for r in rows] == list(keys)
    assert all(r[5] in (0.0, 1.0) and r[7] > 0 for r in rows)
