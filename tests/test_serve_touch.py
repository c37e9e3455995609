"""A person on a touch screen, in a real browser: Debian's headless Chromium with touch emulation
(CDP `Emulation.setTouchEmulationEnabled`, taps sent with `Input.dispatchTouchEvent`) plays a
two-step study of a `graphtasks serve` process; the page is cross-origin isolated, an attention
check is failed once and then passed, the window loses focus once and a paste happens during a
trial. Then the store holds every trial with its telemetry, timer resolution and input, the
dashboard and the exports show the quality flags, a grid's arrows are tapped, and every screen
passes axe-core's WCAG 2 A/AA rules (axe-core vendored in tests/vendor/axe-core/).

With GRAPHTASKS_SCREENSHOTS=DIR set, the new screens are saved in DIR (docs/images/participants/).
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver  # noqa: E402 - tests.test_serve_browser skips or fails without Chromium first
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from tests.test_serve import RESEARCHER, TWO_STEP_STUDY, get, post
from tests.test_serve import serve as serve  # the fixture
from tests.test_serve_browser import CHROMIUM, DRIVER, Player, shots_dir
from tests.test_serve_room import room_store as room_store  # the fixture

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"

STUDY = TWO_STEP_STUDY.format(episodes=1, timeout=0).replace(
    'tasks = ["rewardgym/two-step"]', 'tasks = ["rewardgym/two-step", "neuronav/grid/two_step/micro", "room/small"]'
).replace("feedback_ms = 150", "feedback_ms = 300").replace("episodes = 1\n", "episodes = 1\nmax_steps = 30\n") + """
[[study.attention_checks]]
after_trial = 2
question = "To show that you read this, choose 'Blue'."
options = ["Red", "Blue", "Green"]
answer = 1
"""

STIMULI_STUDY = """
[experiment]
name = "pictures"
tasks = ["rewardgym/two-step"]
seeds = 1

[[phases]]
name = "main"
episodes = 1

[study]
stimuli = "daw2011"
"""


@pytest.fixture
def touch_browser():
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,900",
                     "--disable-gpu", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    yield driver
    driver.quit()


def tap(driver: Any, css: str, index: int = 0) -> None:
    """A finger's tap at the middle of the `index`-th element matching `css`."""
    x, y = driver.execute_script(
        "const r = document.querySelectorAll(arguments[0])[arguments[1]].getBoundingClientRect();"
        "return [r.left + r.width / 2, r.top + r.height / 2];", css, index)
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def axe_violations(driver: Any) -> list[str]:
    """axe-core's WCAG 2 A and AA violations of the page as it is now: rule, and the first element."""
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE.read_text(encoding="utf-8"))
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}})"
        ".then((r) => done(r.violations.map((v) => v.id + ': ' + v.nodes[0].html)), (e) => done(['axe: ' + e]));")
    return list(found)


def ready(driver: Any) -> None:
    end = time.monotonic() + 20
    while driver.execute_script("const m = document.getElementById('screen'); return m && m.dataset.ready;") != "1":
        assert time.monotonic() < end, "the screen does not listen"
        time.sleep(0.01)


@pytest.mark.slow  # Chromium: ~15 s
def test_a_person_plays_a_two_step_study_on_a_touch_screen(serve, touch_browser, room_store, tmp_path):
    driver = touch_browser
    server = serve(STUDY, store=room_store)  # the Room task's ConceptNet snapshot is in the store
    shots = shots_dir(tmp_path)
    player = Player(driver, shots)
    checked: dict[str, list[str]] = {}  # each screen's axe violations

    def check(kind: str) -> None:
        if kind not in checked:
            checked[kind] = axe_violations(driver)

    driver.get(server.url + "/?PROLIFIC_PID=touch-person")
    assert driver.execute_script("return matchMedia('(pointer: coarse)').matches") is True
    assert driver.execute_script("return self.crossOriginIsolated") is True
    check("start")
    tap(driver, "#start")
    choices = attention = 0
    while True:
        kind = player.next_screen()
        if kind not in ("feedback", "fixation", "done", "consent"):  # consent's buttons listen at once
            ready(driver)
        check(kind)
        if kind == "consent":
            tap(driver, "button.agree")
        elif kind == "text":
            player.shoot("touch-text")
            tap(driver, "button.continue")
        elif kind == "check":
            tap(driver, "button.choice", 0)  # "F and J": right
        elif kind == "attention":
            player.shoot("attention" if attention == 0 else "attention-again")
            tap(driver, "button.choice", 0 if attention == 0 else 1)  # "Red" (wrong), then "Blue"
            attention += 1
        elif kind == "choice":
            if choices == 1:  # the window loses focus for a moment, and something is pasted
                driver.execute_script("window.dispatchEvent(new Event('blur'));")
                time.sleep(0.05)
                driver.execute_script("window.dispatchEvent(new Event('focus'));"
                                      "document.dispatchEvent(new Event('paste'));")
            if choices == 0:
                player.shoot("touch-choice")
            tap(driver, "button.option", choices % 2)
            choices += 1
        elif kind == "done":
            break
    assert attention == 2 and choices == 6  # 2 practice and 1 main round of two choices
    resolution = float(driver.find_element(By.ID, "screen").get_attribute("data-resolution"))

    # the second session's task is a grid: its arrows are buttons, one tap moves north; the
    # third's the Room task: its answers are buttons, one tap answers
    for task, button in (("grid", "button.arrow-up"), ("room", "button.answer")):
        driver.execute_script("localStorage.clear();")
        driver.get(server.url + "/")
        tap(driver, "#start")
        player = Player(driver, shots)
        while (kind := player.next_screen()) != task:
            if kind != "consent":
                ready(driver)
            if kind == "consent":
                tap(driver, "button.agree")
            elif kind == "check":
                tap(driver, "button.choice", 0)
            else:
                tap(driver, "button.continue")
        ready(driver)
        check(task)
        player.shoot(f"touch-{task}")
        tap(driver, button, 2 if task == "room" else 0)
        player.next_screen()

    # the dashboard: the flags, sortable
    link = post(server.url + "/researcher/link", {}, headers={"Authorization": f"Bearer {RESEARCHER}"})[1]["link"]
    driver.get(server.url + link)
    driver.get(server.url + "/researcher?sort=n_flags&desc=1")
    check("dashboard")
    page = driver.page_source
    assert "failed_checks" in page and "automation" in page and "with quality flags" in page
    first, *others = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert "too_fast,failed_checks,automation" in first and len(others) == 2  # most flags first
    assert not any("failed_checks" in row for row in others)
    wide = driver.execute_script("return document.documentElement.scrollWidth") + 40
    driver.set_window_size(max(wide, 900), 800)  # the whole table in the picture, no column cut
    driver.save_screenshot(str(shots / "dashboard-flags.png"))
    status, sessions = get(server.url + "/researcher/sessions.csv", headers={"Authorization": f"Bearer {RESEARCHER}"})
    rows = list(csv.DictReader(io.StringIO(sessions)))
    two_step = next(r for r in rows if r["trials"] == "6")
    assert "failed_checks" in two_step["flags"] and "automation" in two_step["flags"]
    assert two_step["attention_failures"] == "1" and two_step["attention_failed_twice"] == "0"
    assert two_step["pastes"] == "1" and two_step["blurs"] == "1" and two_step["inputs"] == "touch"
    assert two_step["isolated"] == "True" and two_step["webdriver"] == "True"
    status, trials_csv = get(server.url + "/researcher/trials.csv", headers={"Authorization": f"Bearer {RESEARCHER}"})
    assert "timer_resolution_ms" in trials_csv.splitlines()[0] and ",touch," in trials_csv
    server.stop()

    # a study with a stimulus set: each option is its picture, the label its alt text (and its name)
    pictures = serve(STIMULI_STUDY, name="stimuli.toml", store=tmp_path / "stimuli.lbug")
    driver.execute_script("localStorage.clear();")
    driver.get(pictures.url + "/")
    tap(driver, "#start")
    assert Player(driver, shots).next_screen() == "choice"
    ready(driver)
    images = driver.execute_script(
        "return [...document.querySelectorAll('button.option img')].map((i) => "
        "[i.alt, i.complete && i.naturalWidth > 0, i.closest('button').getAttribute('aria-label')]);")
    assert images == [["green ring", True, "green ring (key F)"], ["green triangle", True, "green triangle (key J)"]]
    checked["choice-images"] = axe_violations(driver)
    driver.save_screenshot(str(shots / "touch-stimuli.png"))
    pictures.stop()

    assert {k: v for k, v in checked.items() if v} == {}  # axe-core: no WCAG 2 A/AA violation on any screen
    assert {"start", "consent", "text", "check", "attention", "choice", "feedback", "done", "grid", "room",
            "dashboard"} <= set(checked)
    with open_store(server.store, "r") as store:
        trials = store.cypher(
            "MATCH (r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) WHERE r.owner = $uid "
            "RETURN r.index, t.input, t.timer_resolution_ms, t.isolated, t.rt, t.shown_ms, t.pressed_ms, t.blurs, "
            "t.away_ms, t.pastes, t.key_repeats, t.hidden, t.webdriver, t.key "
            "ORDER BY r.index, e.phase_index, e.index, t.step", {"uid": experiment_uid("two-step people")}).rows
        events = store.cypher(
            "MATCH (r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE e.kind = 'attention_check' "
            "RETURN e.kind, e.check, e.answer, e.passed, e.attempt, "
            "e.trial, e.input ORDER BY e.uid").rows
    assert len(trials) == 8 and [t[1] for t in trials] == ["touch"] * 8  # 6 two-step choices, a move, an answer
    assert all(t[2] == resolution and 0 < t[2] < 0.1 for t in trials)  # finer than an isolated page's 100 us
    assert all(t[3] is True and t[4] > 0 and t[6] - t[5] == pytest.approx(t[4]) for t in trials)
    assert [t[7] for t in trials[:6]] == [0, 1, 0, 0, 0, 0] and trials[1][8] > 0  # the blur, on the second trial
    assert [t[9] for t in trials[:6]] == [0, 1, 0, 0, 0, 0] and all(t[10] == 0 and t[11] == 0 for t in trials)
    assert [t[13] for t in trials[:6]] == [["f", "j"][i % 2] for i in range(6)] and trials[6][13] == "ArrowUp"
    assert trials[7][13] == "c"  # the Room's third answer, on its key
    assert events == [["attention_check", 0, 0, False, 1, 2, "touch"], ["attention_check", 0, 1, True, 2, 2, "touch"]]
