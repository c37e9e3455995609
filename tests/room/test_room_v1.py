"""Room v1 (room-env 3.0.6 RoomEnv-v1): its configurations as graphs that export back with the
same content hash, the single env equal to room-env's recorded replays (tests/data/room_env/
v1_trajectories.json, MIT, recorded by record_v1.py), the vector env equal copy by copy to the
single env, and both in gymnasium and in experiments."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gym_bridge  # noqa: F401  (registers graphtasks/RoomV1-v0)
import tasks
from graphstore import open_store
from graphtasks.experiments import parse_spec, run_experiment
from gym_bridge.loading import load_task_graph
from gym_bridge.room.v1_env import RoomV1Env, RoomV1VectorEnv, compile_room_v1
from tasks.data import TaskFileError
from tasks.room.v1_config import config_hash, config_to_graph, graph_to_config
from tasks.room.v1_family import SIZES, read_config

RECORDED = Path(__file__).resolve().parents[1] / "data" / "room_env" / "v1_trajectories.json"


@pytest.mark.parametrize("size", SIZES)
def test_every_configuration_exports_back_with_the_same_hash(size: str) -> None:
    config = read_config(size)
    graph = tasks.build(f"room/v1/{size}")
    assert graph_to_config(graph) == config and list(graph_to_config(graph)) == list(config)
    assert config_hash(graph_to_config(graph)) == config_hash(config)
    assert tasks.family_of(graph).name == "roomv1"


def test_the_stored_graph_exports_the_same_configuration() -> None:
    graph = tasks.build("room/v1/s")
    with open_store(":memory:") as store:
        store.put(graph)
        assert store.content_hash("room/v1/s") == graph.content_hash()
        back = load_task_graph("room/v1/s", store)
        assert config_hash(graph_to_config(back)) == config_hash(read_config("s"))
        rows = store.cypher(
            "MATCH (p:DesPerson)-[:HAS_STEP]->(s:CycleStep)-[:PUTS_AT]->(l:DesLocation) "
            "WHERE p.task = $t AND p.name = 'brittany' RETURN s.position, l.name ORDER BY s.position",
            {"t": "room/v1/s"},
        ).rows
        assert [loc for _, loc in rows] == [loc for _, loc in read_config("s")["components"]["brittany"]]


def test_a_configuration_that_exhausts_a_location_is_refused() -> None:
    config = copy.deepcopy(read_config("xxs"))
    config["resources"]["circus"] = 0
    with pytest.raises(TaskFileError, match="at time 0, 1 objects are at 'circus', which holds 0"):
        config_to_graph(config, "user/room-v1", "broken")
    del config["last_timestep"]
    with pytest.raises(TaskFileError, match="not a room-env v1 configuration"):
        config_to_graph(config, "user/room-v1", "broken")


def test_the_env_replays_room_env_s_recorded_episodes() -> None:
    """Six settings (sizes xxs..l; question_prob below 1; random people and questions), two
    episodes each: the same observations, questions, rewards and ends for the same answers."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert "MIT" in recorded["source"]
    for case in recorded["cases"]:
        s = case["settings"]
        env = RoomV1Env(tasks.build(f"room/v1/{s['des_size']}"), question_prob=s["question_prob"],
                        allow_random_human=s["allow_random_human"], allow_random_question=s["allow_random_question"])
        for e, episode in enumerate(case["episodes"]):
            obs, _ = env.reset(seed=s["seed"]) if e == 0 else env.reset()  # room-env seeds once
            assert list(env.decode(obs)) == episode["first"], (s, e)
            for k, (answer, reward, observation, question, done) in enumerate(episode["steps"]):
                obs, r, terminated, truncated, _ = env.step(env.compiled.locations.index(answer))
                assert (list(env.decode(obs)), r, terminated, truncated) == ([observation, question], reward, done,
                                                                             False), (s, e, k)


def test_each_vector_copy_is_the_single_env_with_its_session_seed() -> None:
    task = compile_room_v1(tasks.build("room/v1/xxs"))
    venv = RoomV1VectorEnv(3, task=task, question_prob=0.8, allow_random_question=True)
    obs, info = venv.reset(seed=1)
    singles = []
    for i in range(3):
        env = RoomV1Env(task, question_prob=0.8, allow_random_question=True)
        first, _ = env.reset(seed=int(venv.session_seeds[i]))
        assert all(np.array_equal(first[k], obs[k][i]) for k in first)
        singles.append(env)
    rng = np.random.default_rng(0)
    for _ in range(2 * 128 + 3):  # past the end: NEXT_STEP's reset step, then a second episode
        actions = rng.integers(0, venv.single_action_space.n, 3)
        obs, reward, terminated, _, info = venv.step(actions)
        for i, env in enumerate(singles):
            if env.t >= env.compiled.until:  # the copy resets this step: reward 0, the first observation
                one, _ = env.reset()
                r, term = 0.0, False
            else:
                one, r, term, _, _ = env.step(int(actions[i]))
            assert all(np.array_equal(one[k], obs[k][i]) for k in one) and (r, term) == (reward[i], terminated[i])


def test_gymnasium_conformance_and_an_experiment() -> None:
    env = gym.make("graphtasks/RoomV1-v0", task="room/v1/xs")
    check_env(env.unwrapped)
    assert env.unwrapped.n_states == 8 * 2 + 1  # a Q table row per (person, object) question, and none
    spec = parse_spec("""
[experiment]
name = "room-v1"
tasks = ["room/v1/xxs"]
seeds = 1

[[agents]]
name = "q"
params = { lr = 0.5, epsilon = 0.05 }

[[agents]]
name = "random"

[[phases]]
name = "episodes"
episodes = 4
""")
    rows = [r for r in run_experiment(spec, workers=1).rows if "episode" in r and r.get("step") is None]
    returns = {label: [r["return"] for r in rows if r["label"] == label] for label in {r["label"] for r in rows}}
    assert len(rows) == 8 and all(len(v) == 4 for v in returns.values())
    assert np.mean(returns["q"][1:]) > np.mean(returns["random"]) + 30  # Q learns where each question's object is


def test_a_users_configuration_file_and_the_picture(tmp_path) -> None:
    config = copy.deepcopy(read_config("xxs"))
    config["last_timestep"] = 16
    path = tmp_path / "des-config-mine-v1.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    (graph,) = tasks.read_file(path, family="roomv1")
    assert graph.task_id == "user/room/v1/des-config-mine-v1" and graph_to_config(graph) == config
    env = RoomV1Env(graph)
    env.reset(seed=0)
    assert sum(1 for _ in iter(lambda: env.step(0)[2], True)) == 15  # the 16th step ends it
    from gym_bridge.room.v1_render import draw_task

    picture = draw_task(tasks.build("room/v1/xxs"))
    assert picture.counts["people"] == 4 and picture.legend == ["circus", "cupboard", "desk"]
