"""The decision tasks (data/decision/): each is built, stored, run by gymnasium and in an
experiment spec, and has the structure its paper describes (blocks and reversals, training
pairs and a test without feedback, the Iowa card sequence, walks within 1..100, patches that
deplete and travel that takes its steps)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gym_bridge  # noqa: F401  (registers the ids)
import tasks
from graphstore import open_store
from graphtasks.experiments import parse_spec, run_experiment
from graphtasks.experiments.decision import harvest_rewards, mvt_harvests, patch_states
from gym_bridge import GraphTaskEnv

DECISION = tasks.builtin_ids("decision")


def test_the_catalogue_lists_every_decision_task() -> None:
    assert DECISION == [f"decision/{name}" for name in (
        "horizon", "iowa-gambling", "patch-foraging", "probabilistic-selection", "restless-bandit", "reversal-learning",
        "reversal-learning-criterion")]


@pytest.mark.parametrize("task_id", DECISION)
def test_each_is_stored_and_read_back_with_the_same_content_hash(task_id: str) -> None:
    graph = tasks.build(task_id)
    assert any(str(year) in graph.task["provenance"]["reference"] for year in range(1976, 2016))  # its paper
    with open_store(":memory:") as store:
        store.put(graph)
        assert store.content_hash(task_id) == graph.content_hash()
        env = GraphTaskEnv(task_id, store=store)
        obs, info = env.reset(seed=0)
        assert env.step(info["available_actions"][0])[4]["state"] != obs  # every first choice leads somewhere


def test_every_decision_task_runs_in_one_experiment_spec() -> None:
    spec = parse_spec("""
[experiment]
name = "decision"
tasks = ["decision/reversal-learning", "decision/probabilistic-selection", "decision/iowa-gambling",
         "decision/restless-bandit", "decision/patch-foraging"]
seeds = 1

[[agents]]
name = "q"
params = { beta = 0.1 }

[[phases]]
name = "trials"
episodes = 5
max_steps = 20
""")
    rows = run_experiment(spec, workers=1).rows
    episodes = [r for r in rows if "episode" in r and r.get("step") is None]
    assert {r["task"] for r in episodes} == set(spec.tasks)


def test_reversal_learning_reverses_between_fixed_blocks() -> None:
    graph = tasks.build("decision/reversal-learning", block=10, cycles=3)
    order = tasks.trial_schedule(graph.task["schedule"], np.random.default_rng(0))
    assert order == (["A-better"] * 10 + ["B-better"] * 10) * 3
    env = gym.make("graphtasks/ReversalLearning-v0")
    env.reset(seed=1)
    wins = {"A-better": [], "B-better": []}
    for trial in range(4000):
        condition = "A-better" if trial % 2 else "B-better"
        env.reset(options={"condition": condition})
        wins[condition].append(env.step(0)[1] == 1.0)  # always option A
    assert np.mean(wins["A-better"]) == pytest.approx(0.8, abs=0.03)
    assert np.mean(wins["B-better"]) == pytest.approx(0.2, abs=0.03)


def test_reversal_on_a_criterion_reverses_after_ten_choices_of_the_better_option() -> None:
    from graphtasks.experiments.decision import better_options

    env = GraphTaskEnv(tasks.build("decision/reversal-learning-criterion", p=[1.0, 0.0]))
    env.reset(seed=0)
    paid = []
    for _ in range(14):  # A ten times (then B leads), then A four more times: all worse
        paid.append(env.step(0)[1])
        env.reset()
    assert paid == [1.0] * 10 + [-1.0] * 4
    assert better_options([0] * 14, 10) == ["A-better"] * 10 + ["B-better"] * 4


def test_probabilistic_selection_trains_on_pairs_and_tests_without_feedback() -> None:
    env = GraphTaskEnv(tasks.build("decision/probabilistic-selection"))
    schedule = env.compiled.schedule
    order = tasks.trial_schedule(schedule, np.random.default_rng(0))
    assert len(order) == 6 * 60 + 15 * 6 and set(order[:360]) == {"AB", "CD", "EF"}
    assert len(set(order[360:])) == 15 and all(c.startswith("test-") for c in order[360:])
    _, info = env.reset(seed=0, options={"condition": "CD"})
    assert info["available_actions"] == (2, 3)
    _, info = env.reset(options={"condition": "test-BE"})
    assert info["available_actions"] == (1, 4)
    _, reward, terminated, _, info = env.step(1)
    assert (reward, terminated, info["state"]) == (0.0, True, 7)  # no feedback in the test
    train = tasks.build("decision/probabilistic-selection?test=0")
    assert len(tasks.trial_schedule(train.task["schedule"], np.random.default_rng(0))) == 360


def test_the_iowa_decks_deal_bechara_s_sequence_and_lose_or_win_250_per_ten_cards() -> None:
    env = gym.make("graphtasks/IowaGambling-v0").unwrapped
    net = {}
    for deck in range(4):
        env.reset(seed=0)
        outcomes = []
        for _ in range(40):
            outcomes.append(env.step(deck)[1])
            env.reset()
        net[deck] = [sum(outcomes[i:i + 10]) for i in range(0, 40, 10)]
        if deck == 0:
            assert outcomes[:5] == [100, 100, -50, 100, -200]  # deck A: 100 a card, losses 150 and 300 on cards 3, 5
        assert env.step(deck)[1] == outcomes[0]  # the 41st card is the first again
    assert net == {0: [-250] * 4, 1: [-250] * 4, 2: [250] * 4, 3: [250] * 4}


def test_restless_bandit_pays_whole_numbers_within_1_to_100_and_its_arms_move_apart() -> None:
    env = gym.make("graphtasks/RestlessBandit-v0").unwrapped
    env.reset(seed=3)
    paid = []
    for trial in range(300):
        paid.append(env.step(trial % 4)[1])
        env.reset()
    assert all(float(p).is_integer() and 1 <= p <= 100 for p in paid)
    means = env._sources[1].group.means
    assert means.std() > 1.0 and len(set(paid)) > 40


def test_patch_foraging_depletes_and_travel_takes_its_steps() -> None:
    graph = tasks.build("decision/patch-foraging?travel=2")
    rewards = harvest_rewards(graph)
    assert rewards[:3] == [10.0, 8.5, 7.22] and rewards == sorted(rewards, reverse=True)
    env = GraphTaskEnv(graph, episode_length=None)
    env.reset(seed=0)
    harvests = [env.step(0)[1] for _ in range(3)]
    assert harvests == rewards[:3]
    travel = [env.step(1)[1:3] for _ in range(3)]  # leave, then two travel steps: nothing paid
    assert travel == [(0.0, False)] * 3 and env.state == 0  # a fresh patch
    assert env.step(0)[1] == 10.0
    assert patch_states(graph)[0] == 0
    assert [mvt_harvests(rewards, t) for t in (1, 8)] == [4, 8]  # longer travel, stay longer


def test_tolman_s_maze_is_a_grid_task_with_one_way_to_the_goal_past_blind_alleys() -> None:
    from collections import deque

    env = gym.make("graphtasks/Grid-v0", task="decision/grid/tolman/micro").unwrapped
    assert tasks.family_of(tasks.build("decision/grid/tolman/micro")).name == "grid"
    cells = {(r, c) for r in range(env.n) for c in range(env.n) if not env.compiled.wall[r, c]}
    dist = {(5, 5): 0}
    queue = deque([(5, 5)])
    while queue:
        r, c = queue.popleft()
        for t in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if t in cells and t not in dist:
                dist[t] = dist[(r, c)] + 1
                queue.append(t)
    assert dist[(1, 1)] == 12  # the start is bottom right, the goal box top left
    dead_ends = [cell for cell in cells if sum(t in cells for t in (
        (cell[0] + 1, cell[1]), (cell[0] - 1, cell[1]), (cell[0], cell[1] + 1), (cell[0], cell[1] - 1))) == 1]
    assert sorted(dead_ends) == [(1, 1), (1, 3), (5, 5)]  # the goal box, one blind alley, the start
