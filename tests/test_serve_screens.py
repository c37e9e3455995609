"""A family owns its screen: the study server names no family, its pages branch on no family.

How a person plays a family's tasks (a choice screen, an arrow-key grid, a question screen) and
what the screen shows (keys, labels, colours, legends) is declared by the family
(`gym_bridge.Family.screen`); `graphtasks/serve/` reads that declaration and the page picks its
drawing by the kind of screen the server sends. So the server's code and its pages hold no
family's name: a new family playable in the browser is its two folders and nothing in serve/.

The family ids are read from the family tables when the test runs (each family's name and the
kinds its Task nodes carry), so a family added later is covered too.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

import gym_bridge
import tasks
from graphstore import TaskGraph
from graphtasks.serve.app import StudyServer
from graphtasks.serve.study import StudyError, parse_study
from gym_bridge import Family, register_family
from gym_bridge.families import _FAMILIES as BRIDGE_FAMILIES
from gym_bridge.screens import QuestionScreen
from tasks.families import _FAMILIES as TASK_FAMILIES

SERVE = Path(__file__).resolve().parents[1] / "graphtasks" / "serve"


def family_ids() -> set[str]:
    """Every family's name and every kind of task it owns, from both family tables."""
    ids = {f.name for f in gym_bridge.families()} | {f.name for f in tasks.task_families()}
    ids |= {kind for f in tasks.task_families() for kind in f.kinds}
    return ids


def python_names(path: Path, ids: set[str]) -> list[str]:
    """The string constants of a Python file that are a family id (compared, keys of a table, members of a tuple)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids:
            out.append(f"{path.name}:{node.lineno}: {node.value!r}")
    return out


JS_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
JS_STRING = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\]|\\.)*)`")


def script_names(path: Path, ids: set[str]) -> list[str]:
    """A page script's family ids: string literals that are one, and object keys or properties named one
    (`{grid: ...}`, `x.room`): any of these would be a branch on a family."""
    text = JS_COMMENT.sub("", path.read_text(encoding="utf-8"))
    out = []
    for match in JS_STRING.finditer(text):
        value = next(g for g in match.groups() if g is not None)
        if value in ids:
            out.append(f"{path.name}: string {value!r}")
    bare = JS_STRING.sub('""', text)
    for match in re.finditer(r"(?:[{,]\s*([A-Za-z_$][\w$]*)\s*:)|(?:\.([A-Za-z_$][\w$]*))", bare):
        name = match.group(1) or match.group(2)
        if name in ids:
            out.append(f"{path.name}: key or property {name!r}")
    return out


def style_names(path: Path, ids: set[str]) -> list[str]:
    """A style sheet's classes named after a family (`main.room`): a family's own look in the pages."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [f"{path.name}: class {m}" for m in re.findall(r"\.([A-Za-z_][\w-]*)", text) if m in ids]


def test_the_family_ids_are_read_from_the_tables():
    ids = family_ids()
    assert {"graph", "grid", "poge", "room", "roommap", "rewardgym", "decision"} <= ids


def test_the_study_server_names_no_family():
    """No string of serve/*.py is a family id; no string, key or property of its scripts, and no
    class of its style sheet, is one."""
    ids = family_ids()
    found = [hit for path in sorted(SERVE.glob("*.py")) for hit in python_names(path, ids)]
    found += [hit for path in sorted((SERVE / "static").glob("*.js")) for hit in script_names(path, ids)]
    found += [hit for path in sorted((SERVE / "static").glob("*.css")) for hit in style_names(path, ids)]
    assert found == []


def test_the_checks_find_a_family_name(tmp_path):
    """The checks above see a family's name where serve/ used to hold them."""
    ids = family_ids()
    script = tmp_path / "page.js"
    script.write_text('if (def.kind === "grid") draw(); // "room" in a comment is prose\n'
                      "const looks = {poge: 1};\nx.room = 2;\n", encoding="utf-8")
    assert script_names(script, ids) == ["page.js: string 'grid'", "page.js: key or property 'poge'",
                                         "page.js: key or property 'room'"]
    module = tmp_path / "table.py"
    module.write_text('"""The grid."""\nPLAYABLE = ("graph", "grid")\nif kind == "room":\n    pass\n',
                      encoding="utf-8")
    assert python_names(module, ids) == ["table.py:2: 'graph'", "table.py:2: 'grid'", "table.py:3: 'room'"]


def test_every_family_says_whether_people_can_play_it():
    """The screen is a field of the family: those with one are playable, the others are refused
    with the list of those that are."""
    playable = sorted(f.name for f in gym_bridge.families() if f.screen is not None)
    assert playable == ["graph", "grid", "poge", "room"]
    assert {f.screen.page for f in gym_bridge.families() if f.screen is not None} == {"choice", "arrows", "question"}
    study = "[experiment]\nname = 'maps'\ntasks = ['room/v1/xxs']\nseeds = 1\n[[phases]]\nname = 'p'\nepisodes = 1\n"
    with pytest.raises(StudyError, match=r"people cannot play roomv1 tasks yet \(families with screens: "
                                         r"graph, grid, poge, room\)"):
        parse_study(study, "maps.toml")


def test_a_family_added_at_run_time_is_played_on_the_screen_it_declares():
    """A new family playable in the browser is its own declaration: a family added at run time
    (rewardGym's tasks under another prefix, the graph env) with a question screen of its own is
    served, shown and recorded with nothing in serve/ knowing it."""
    graph = gym_bridge.family("graph")
    rewardgym = graph.tasks.catalogues[1]

    def build(task_id: str, name: str, params: dict) -> TaskGraph:
        built = rewardgym.build(task_id, name, params)
        built.task["family"] = "slots-demo"  # its Task node names its own kind
        return built

    slots = dataclasses.replace(
        graph.tasks, name="slots-demo", kinds=("slots-demo",),
        catalogues=(dataclasses.replace(rewardgym, prefix="demo/slots/", kind="slots-demo", build=build),),
        user_files=None,
    )
    screen = QuestionScreen(
        name="slots", answers=lambda env: ["the left machine", "the right machine"],
        read=lambda info: {"observations": [{"text": "Two machines."}], "question": "pays more"},
        ask="Which machine {question}?", title="In front of you:", legend="Answer with a key.",
    )
    extra = Family(tasks=slots, env=graph.env, make_env=graph.make_env, episode_length=graph.episode_length,
                   gym_ids=lambda: [], screen=screen)
    study = ('[experiment]\nname = "slots people"\ntasks = ["demo/slots/two-armed-bandit"]\nseeds = [1]\n'
             '[[phases]]\nname = "play"\nepisodes = 3\n[study]\nkeys = ["q", "p"]\n')
    register_family(extra)
    try:
        server = StudyServer(parse_study(study, "slots.toml"), ":memory:")
        try:
            token = server.start_session({})["token"]
            view = server.view(token)
            assert view["screens"]["demo/slots/two-armed-bandit"] == {
                "kind": "slots", "page": "question", "keys": ["q", "p"],
                "answers": ["the left machine", "the right machine"], "legend": "Answer with a key.",
                "title": "In front of you:", "seen": "{text}", "ask": "Which machine {question}?",
                "right": "Right", "wrong": "Not right", "timed": True,
            }
            position, trials = view["position"], 0
            while not position["done"]:
                assert position["question"] == {"observations": [{"text": "Two machines."}], "question": "pays more"}
                assert position["frame"] is None
                position = server.post_trial(token, {"index": position["trial"], "action": 1})["position"]
                trials += 1
            assert trials == 3
        finally:
            server.close()
    finally:
        BRIDGE_FAMILIES.pop("slots-demo")
        TASK_FAMILIES.pop("slots-demo")
