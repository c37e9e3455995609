"""A study exported as a jsPsych 8 experiment: it runs in headless Chromium from a local folder
(file://), and the data it keeps on finish imports back as Trial records whose outcomes are the
server's env's for the same choices (graphtasks.serve.jspsych)."""

from __future__ import annotations

import json
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from graphstore import open_store
from graphtasks.experiments.ids import experiment_uid
from graphtasks.experiments.runs import Cell
from graphtasks.experiments.spec import AgentSpec
from graphtasks.experiments.versions import prepare_versions
from graphtasks.serve.engine import SessionPlayer
from graphtasks.serve.jspsych import JsPsychError, export_jspsych, import_jspsych, read_jspsych
from graphtasks.serve.study import parse_study

STUDY = """
[experiment]
name = "jspsych two-step"
tasks = ["rewardgym/two-step"]
seeds = [3, 4]

[[phases]]
name = "practice"
episodes = 2

[[phases]]
name = "main"
episodes = 4

[study]
title = "Two-step, exported"
instructions = ["Choose with F and J.", "Collect rewards."]
practice = ["practice"]
break_every = 2
feedback_ms = 30
iti_ms = 30
stimuli = "daw2011"
"""


def test_export_writes_a_folder_that_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    study = parse_study(STUDY)
    page = export_jspsych(study, tmp_path / "out", sessions=2)
    html = page.read_text()
    assert "http" not in html.replace('"https://', "")  # no CDN: every script is in the folder
    for src in ("jspsych/jspsych.js", "graphtasks/plugin-graphtasks.js", "graphtasks/study.js"):
        assert f'src="{src}"' in html and (page.parent / src).is_file()
    assert (page.parent / "jspsych" / "LICENSE.txt").read_text().count("MIT") >= 1
    assert len(list((page.parent / "stimuli" / "daw2011").glob("*.svg"))) == 96
    data = json.loads((page.parent / "graphtasks" / "study.js").read_text().split("=", 1)[1].rstrip(";\n"))
    assert [s["seed"] for s in data["sessions"]] == [3, 4]  # the server's assignment of sessions to seeds
    phase = data["sessions"][0]["phases"][1]
    assert phase["name"] == "main" and phase["options"]["0"][0]["image"] == "stimuli/daw2011/green-ring.svg"
    assert len(phase["uniforms"]) % 1024 == 0 and phase["sources"][3]["kind"] == "drifting"


def test_export_refuses_a_grid_task_in_one_line(tmp_path: Path) -> None:
    from graphtasks.serve.study import load_study

    with pytest.raises(JsPsychError, match="jsPsych export plays choice screens of graph tasks; this task is played on "
                                           "the 'arrows' screen"):
        export_jspsych(load_study("neuronav/grid/two_step/micro", episodes=1), tmp_path / "grid")


def test_read_refuses_a_file_of_another_experiment(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps([{"trial_type": "html-keyboard-response", "rt": 300}]))
    with pytest.raises(JsPsychError, match="no rows of a graphtasks export"):
        read_jspsych(path)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.mark.slow
def test_the_export_runs_in_chromium_and_its_data_import_back(tmp_path: Path) -> None:
    if not (CHROMIUM and DRIVER):
        pytest.fail("Chromium and chromedriver are needed (apt-get install chromium chromium-driver)", pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains

    study = parse_study(STUDY)
    page = export_jspsych(study, tmp_path / "export", sessions=2)
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,760",
                     "--disable-gpu", "--no-first-run", "--allow-file-access-from-files"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    shots = os.environ.get("GRAPHTASKS_SCREENSHOTS")
    try:
        driver.set_page_load_timeout(30)
        driver.get(page.as_uri() + "?session=1&participant=js-test")
        screens: list[str] = []
        seq = "0"
        presses = "fjjfffjfjjff"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = driver.execute_script(
                "const b = document.querySelector('.graphtasks');"
                "return b ? [b.dataset.screen, b.dataset.seq, b.dataset.ready || '', b.dataset.finished || ''] : null;"
            )
            if found and found[3] == "1":
                break
            if not found or found[1] == seq or found[2] != "1":
                time.sleep(0.02)
                continue
            kind, seq = found[0], found[1]
            screens.append(kind)
            if shots and kind == "choice" and screens.count("choice") <= 2:
                driver.save_screenshot(str(Path(shots) / f"jspsych-export-stage-{screens.count('choice')}.png"))
            key = presses[len([s for s in screens if s == "choice"]) % len(presses)] if kind == "choice" else " "
            ActionChains(driver).send_keys(key).perform()
        else:
            pytest.fail(f"the export did not finish; screens seen: {screens}")
        data = driver.execute_script("return document.getElementById('graphtasks-data').value;")
        data_csv = driver.execute_script("return document.getElementById('graphtasks-data-csv').value;")
        images = driver.execute_script(
            "return [...document.querySelectorAll('img')].length;")  # the finish screen shows none
        assert images == 0
    finally:
        driver.quit()
    assert screens[:3] == ["instructions", "instructions", "banner"]
    assert screens.count("break") == 1 and screens.count("banner") == 2  # practice banner; practice over
    (tmp_path / "data.json").write_text(data)
    (tmp_path / "data.csv").write_text(data_csv)
    session = read_jspsych(tmp_path / "data.json")
    assert (session.participant, session.slot, session.seed) == ("js-test", 1, 4)
    assert [e["graphtasks"] for e in session.events] == ["instructions", "instructions", "banner", "banner", "break"]
    assert all(e["duration"] > 0 and e["onset"] > 0 for e in session.events)
    fields = ("phase", "phase_index", "episode", "condition", "start_state", "steps")
    assert [[e[k] for k in fields] for e in read_jspsych(tmp_path / "data.csv").episodes] == [
        [e[k] for k in fields] for e in session.episodes]  # csv as jsPsych writes it
    # the browser's outcomes are the server's env's for the same choices (same seed tree and tables)
    cell = Cell(1, "rewardgym/two-step", AgentSpec("participant", "x", {}), 4, "")
    player = SessionPlayer(study.spec, prepare_versions(study.spec), cell)
    for e in session.episodes:
        assert (player.phase_index, player.episode, player.state) == (e["phase_index"], e["episode"],
                                                                      e["start_state"])
        for s in e["steps"]:
            step = player.act(s["action"])
            assert (step.state, step.reward, step.next_state) == (s["state"], s["reward"], s["next_state"])
            assert s["rt"] > 0 and s["key"] in ("f", "j")
    assert player.done
    with open_store(str(tmp_path / "store"), "w") as store:
        rows = import_jspsych(study, [tmp_path / "data.json"], store)
        again = import_jspsych(study, [tmp_path / "data.csv"], store)
        uid = experiment_uid("jspsych two-step (jsPsych)")
        trials = store.cypher(
            "MATCH (p:Participant)-[:PERFORMED]->(r:Run)-[:HAS_EPISODE]->(e:Episode)-[:HAS_TRIAL]->(t:Trial) "
            "WHERE r.owner = $uid RETURN p.participant_id, r.seed, e.phase, e.index, t.step, t.state, t.action, "
            "t.reward, t.next_state, t.rt, t.key ORDER BY e.phase_index, e.index, t.step", {"uid": uid}).rows
        screens = store.cypher("MATCH (r:Run)-[:HAS_EVENT]->(e:StudyEvent) WHERE r.owner = $uid RETURN e.kind, "
                               "e.page, e.trial, e.duration_ms ORDER BY e.onset_ms", {"uid": uid}).rows
    assert rows[0]["status"] == "imported" and again[0]["status"] == "already imported"
    expected = [("js-test", 4, e["phase"], e["episode"], s["step"], s["state"], s["action"], s["reward"],
                 s["next_state"], s["rt"], s["key"]) for e in session.episodes for s in e["steps"]]
    assert [tuple(t) for t in trials] == expected and len(trials) == 12
    # the instructions, banners and the break, as a served session's: StudyEvents with their trials done
    assert [tuple(e[:3]) for e in screens] == [("instructions", 0, 0), ("instructions", 1, 0), ("banner", 0, 0),
                                               ("banner", 0, 4), ("break", 1, 8)]
    assert all(e[3] > 0 for e in screens)


def test_jatos_archive_holds_the_study_and_its_assets(tmp_path: Path) -> None:
    from graphtasks.serve.jatos import export_jatos

    archive = export_jatos(parse_study(STUDY), tmp_path / "study.jzip", sessions=1)
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
        jas = json.loads(z.read([n for n in names if n.endswith(".jas")][0]))
        folder = jas["data"]["dirName"]
        assert f"{folder}/index.html" in names and f"{folder}/jspsych/jspsych.js" in names
        assert 'src="jatos.js"' in z.read(f"{folder}/index.html").decode()
    assert jas["version"] == "3" and jas["data"]["componentList"][0]["htmlFilePath"] == "index.html"
    assert jas["data"]["title"] == "Two-step, exported"
