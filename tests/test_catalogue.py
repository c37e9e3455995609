"""The built-in tasks match the reference projects' graphs, rewards and trial structures."""

import json
from collections import Counter

import numpy as np
import pytest

import tasks
from gym_bridge import compile_task
from tests.conftest import TEST_DATA

NEURONAV = json.loads((TEST_DATA / "neuronav" / "templates.json").read_text())["graph"]


@pytest.mark.parametrize("name", sorted(NEURONAV))
def test_neuronav_templates_match_reference(name):
    ref = NEURONAV[name]
    c = compile_task(tasks.build(f"neuronav/graph/{name}"))
    assert c.n_states == ref["num_nodes"] and c.n_actions == ref["action_space_n"]
    assert c.start == ref["agent_start"]
    assert sorted(np.flatnonzero(c.terminal).tolist()) == sorted(ref["terminal_nodes"])
    for node, actions in enumerate(ref["edges_per_node_per_action"]):
        for action, edge in enumerate(actions):
            got = {int(t): p for t, p in zip(c.targets[node, action], c.probs[node, action]) if t >= 0}
            if isinstance(edge, dict):
                want = dict(zip(edge["targets"], edge["probs"]))
            else:
                want = {edge: 1.0}
            assert got == pytest.approx(want), (node, action)
    rewards = {i: v for i, v in enumerate(c.reward_value) if v}
    assert rewards == pytest.approx({int(k): v for k, v in ref["rewards"].items()})


def test_two_step_graph_and_rewards():
    c = compile_task(tasks.build("rewardgym/two-step"))
    assert c.reward_on == "terminal"
    assert dict(zip(c.targets[0, 0].tolist(), c.probs[0, 0].tolist())) == pytest.approx({1: 0.7, 2: 0.3})
    assert dict(zip(c.targets[0, 1].tolist(), c.probs[0, 1].tolist())) == pytest.approx({2: 0.7, 1: 0.3})
    assert [c.reward_specs[i].kind for i in (3, 4, 5, 6)] == ["drifting"] * 4
    assert c.conditions["expected"].overrides == {(0, 0): ((1, 1.0),), (0, 1): ((2, 1.0),)}


def test_parameters_override_defaults_with_stable_ids():
    g = tasks.build("rewardgym/two-step", p_common=0.8)
    assert g.task_id == "rewardgym/two-step?p_common=0.8"
    assert tasks.build("rewardgym/two-step?p_common=0.8") == g
    c = compile_task(g)
    assert c.probs[0, 0].max() == pytest.approx(0.8)
    assert tasks.build("rewardgym/two-step", p_common=0.7).task_id == "rewardgym/two-step"
    with pytest.raises(
        tasks.TaskFileError, match=r"unknown parameter\(s\) p_rare in params; this task takes: borders, p_common, sd"
    ):
        tasks.build("rewardgym/two-step", p_rare=0.2)


@pytest.mark.parametrize(
    "task_id, blocks, block_length",
    [
        ("rewardgym/two-step", 9, 20),
        ("rewardgym/hcp", 8, 8),
        ("rewardgym/posner", 4, 40),
        ("rewardgym/robotfactory", 3, 64),
        ("rewardgym/gonogo", 3, 60),
    ],
)
def test_schedules_reproduce_block_structure(task_id, blocks, block_length):
    graph = tasks.build(task_id)
    order = tasks.trial_schedule(graph.task["schedule"], np.random.default_rng(0))
    assert len(order) == blocks * block_length
    conditions = {props["name"] for _, props in graph.nodes("Condition")}
    assert set(order) <= conditions


def test_posner_blocks_have_increasing_validity():
    order = tasks.trial_schedule(tasks.build("rewardgym/posner").task["schedule"], np.random.default_rng(3))
    validity = [Counter(order[40 * b : 40 * b + 40]) for b in range(4)]
    assert [(v["valid-left"] + v["valid-right"]) / 40 for v in validity] == [0.6, 0.7, 0.8, 0.9]


def test_bad_task_file_names_file_and_field(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"name": "mine", "graph": {"0": [1, 7], "1": []}}))
    with pytest.raises(tasks.TaskFileError, match=r"mine.json: graph: node 0, action 1: target 7 is not a node"):
        tasks.build_from_file(path)
    path.write_text('{"name": "mine",\n "graph": {"0": [1,]}}')
    with pytest.raises(tasks.TaskFileError, match=r"mine.json, line 2, column \d+: invalid JSON"):
        tasks.build_from_file(path)
    path.write_text(
        json.dumps({"name": "mine", "graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "nope", "values": [1]}}})
    )
    with pytest.raises(tasks.TaskFileError, match=r"rewards\[1\]: 'kind' must be one of"):
        tasks.build_from_file(path)
