"""`graphtasks view TASK -o task.html`: a self-contained page (no network) that draws every node
and edge of a task, and in headless Chromium shows a clicked node's properties and the Cypher
that reads it (which, run on the store, returns that node)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

import tasks
from graphstore import open_store
from graphtasks.cli import main
from graphtasks.taskview import task_view_html, view_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.mark.parametrize("task_id", ["rewardgym/two-step", "neuronav/graph/neighborhood",
                                     "neuronav/grid/two_step/micro", "poge/world0", "room/small"])
def test_the_page_holds_every_node_and_edge_and_fetches_nothing(task_id: str) -> None:
    graph = tasks.build(task_id)
    data = view_data(graph)
    assert {n["id"] for n in data["nodes"]} == set(graph.graph.nodes) - {""}
    inner = [(s, t) for s, t in graph.graph.edges() if "" not in (s, t)]
    assert sorted((e["source"], e["target"]) for e in data["edges"]) == sorted(inner)
    assert {(link["source"], link["target"]) for link in data["links"]} == set(inner)
    page = task_view_html(graph)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # no script, style or font fetched
    assert "http://" not in page.replace('"http://www.w3.org/2000/svg"', "")
    embedded = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert embedded and json.loads(embedded.group(1))["task"] == task_id


def test_edge_labels_join_the_actions_that_share_a_transition() -> None:
    data = view_data(tasks.build("rewardgym/two-step"))
    texts = {(link["source"], link["target"]): link["text"] for link in data["links"]}
    assert texts[("s0", "s1")] == "a0 (.70), a1 (.30)" and texts[("s1", "s3")] == "a0"
    start = [n["id"] for n in data["nodes"] if n["start"]]
    assert start == ["s0"]


@pytest.fixture
def browser():
    if not (CHROMIUM and DRIVER):
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium and chromedriver are missing (.ci/run installs them)", pytrace=False)
        pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800",
                     "--disable-gpu", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.mark.slow
def test_chromium_shows_a_clicked_nodes_properties_and_its_cypher(tmp_path, capsys, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    store = str(tmp_path / "store.lbug")
    page = tmp_path / "two-step.html"
    assert main(["--store", store, "view", "rewardgym/two-step", "-o", str(page)]) == 0
    assert "13 nodes" in capsys.readouterr().out
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "g.node")) == 13
    assert len(browser.find_elements(By.CSS_SELECTOR, "path.edge")) == 14  # 16 edges; s0's two actions share 2 arrows
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "text.edge-label")]
    assert "a0 (.70), a1 (.30)" in labels
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0  # offline
    browser.find_element(By.CSS_SELECTOR, 'g.node[data-id="s0"] circle').click()
    panel = browser.find_element(By.ID, "panel").text
    assert "State s0 (start)" in panel and '"first stage"' in panel
    cypher = browser.find_element(By.ID, "cypher").text
    assert cypher.startswith("MATCH (n:State) WHERE n.uid = 'rewardgym/two-step/s0'")
    hit = {(e.get_attribute("data-source"), e.get_attribute("data-target"))
           for e in browser.find_elements(By.CSS_SELECTOR, "path.edge.hit")}
    assert hit == {("s0", "s1"), ("s0", "s2")}  # the clicked state's arrows light up
    with open_store(store, "r") as opened:  # the panel's Cypher reads that node from the store
        rows = opened.cypher(cypher.replace("RETURN n", "RETURN n.name")).rows
    assert rows == [["first stage"]]


@pytest.mark.parametrize("page, task_id", [("rewardgym-two-step.html", "rewardgym/two-step"),
                                           ("neuronav-neighborhood.html", "neuronav/graph/neighborhood")])
def test_the_docs_views_show_the_tasks_as_they_are(page: str, task_id: str) -> None:
    """docs/views/ holds pages `graphtasks view` wrote; they still show the built task's nodes and
    edges (else: graphtasks view TASK -o docs/views/PAGE)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "views" / page).read_text(encoding="utf-8")
    shown = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S).group(1))
    now = view_data(tasks.build(task_id))
    assert shown["task"] == task_id
    assert sorted(n["id"] for n in shown["nodes"]) == sorted(n["id"] for n in now["nodes"])
    assert sorted((e["source"], e["target"], e["text"]) for e in shown["edges"]) == sorted(
        (e["source"], e["target"], e["text"]) for e in now["edges"])
