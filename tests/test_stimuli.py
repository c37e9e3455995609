"""Stimulus sets of the study pages (`[study] stimuli`, graphtasks.serve.stimuli): the two-step
task's stages and states look distinct (Daw 2011), a bandit's arms get distinct symbols, the
trial payload carries each option's image and label, and the files are well-formed SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import tasks
from graphtasks.serve.app import StudyServer
from graphtasks.serve.stimuli import GLYPHS, STATIC, option_looks, stimulus_files
from graphtasks.serve.study import StudyError, parse_study
from gym_bridge.screens import ChoiceScreen

STUDY = """
[experiment]
name = "stimuli"
tasks = ["{task}"]
seeds = 1

[[phases]]
name = "main"
episodes = 2

[study]
stimuli = "{stimuli}"
"""


def looks(task: str, stimuli: str) -> dict[int, list[dict[str, object]]]:
    graph = tasks.build(task)
    states = ChoiceScreen().describe(graph, lambda: None, ())["states"]
    return option_looks(states, int(graph.task.get("n_actions") or 2), stimuli)


def test_two_step_stages_and_states_are_distinct_as_daw_2011() -> None:
    shown = looks("rewardgym/two-step", "daw2011")
    assert sorted(shown) == [0, 1, 2]  # the first stage and the two second-stage states
    images = [o["image"] for state in shown.values() for o in state]
    assert len(set(images)) == 6  # six options, six pictures
    colours = {s: {str(o["label"]).split()[0] for o in options} for s, options in shown.items()}
    assert colours == {0: {"green"}, 1: {"pink"}, 2: {"blue"}}  # one colour per state, the stage's own
    glyphs = [str(o["label"]).split()[1] for state in shown.values() for o in state]
    assert len(set(glyphs)) == 6 and set(glyphs) <= set(GLYPHS)


@pytest.mark.parametrize("task", ["rewardgym/two-armed-bandit", "rewardgym/risk-sensitive"])
def test_bandits_and_selection_tasks_get_a_distinct_symbol_per_option(task: str) -> None:
    shown = looks(task, "daw2011")
    arms = int(tasks.build(task).task.get("n_actions") or 2)
    images = [o["image"] for options in shown.values() for o in options]
    assert len(images) == arms * len(shown) and len(set(images)) == len(images)  # no two options alike


def test_labels_keep_the_text_and_show_no_picture() -> None:
    shown = looks("rewardgym/two-step", "labels")
    assert shown[1] == [{"label": "Option C", "image": None}, {"label": "Option D", "image": None}]


def test_every_stimulus_file_is_a_small_svg_the_pages_may_load() -> None:
    files = stimulus_files("daw2011")
    assert len(files) == 96
    for path in files:
        root = ET.fromstring(path.read_text())
        assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox") == "0 0 120 120"
        assert path.stat().st_size < 1000 and "http" not in path.read_text().replace("http://www.w3.org/2000/svg", "")
    licence = (STATIC / "LICENSE.md").read_text()
    assert "stimuli/" in licence and "graphtasks" in licence


def test_the_trial_payload_carries_image_and_label() -> None:
    server = StudyServer(parse_study(STUDY.format(task="rewardgym/two-step", stimuli="daw2011")), ":memory:")
    try:
        token = server.start_session({})["token"]
        options = server.view(token)["position"]["options"]
        assert options == [
            {"action": 0, "label": "green ring", "image": "/static/stimuli/daw2011/green-ring.svg"},
            {"action": 1, "label": "green triangle", "image": "/static/stimuli/daw2011/green-triangle.svg"},
        ]
        second = server.post_trial(token, {"index": 0, "action": 0, "rt": 400.0})["position"]
        state = second["state"]
        assert {o["label"].split()[0] for o in second["options"]} == {"pink" if state == 1 else "blue"}
        assert (STATIC / options[0]["image"].removeprefix("/static/")).is_file()
    finally:
        server.close()


def test_a_stimulus_set_is_checked_in_one_line() -> None:
    with pytest.raises(StudyError, match=r"study.stimuli: expected one of labels, daw2011, got 'tibetan'"):
        parse_study(STUDY.format(task="rewardgym/two-step", stimuli="tibetan"))
    with pytest.raises(StudyError, match=r"study.stimuli: daw2011 draws the options of choice screens; "
                                         r"neuronav/grid/two_step/micro is played on the 'arrows' screen"):
        parse_study(STUDY.format(task="neuronav/grid/two_step/micro", stimuli="daw2011"))
