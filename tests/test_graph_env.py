import pickle
import warnings
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gym_bridge
import tasks
from graphstore import TaskGraph
from gym_bridge import GraphTaskEnv, compile_from_store, compile_task
from gym_bridge.graph import GRAPH_OBSERVATIONS


def rollout(env, seed, steps=300):
    obs, info = env.reset(seed=seed)
    actions = np.random.default_rng(seed).integers(0, env.action_space.n, steps)
    out = [(np.asarray(obs).tolist(), info["state"])]
    for a in actions:
        obs, r, term, trunc, info = env.step(int(a))
        out.append((np.asarray(obs).tolist(), r, term, trunc, info["state"]))
        if term or trunc:
            obs, info = env.reset()
            out.append(("reset", info["state"]))
    return out


GRAPH_TASKS = tasks.builtin_ids("neuronav/graph") + tasks.builtin_ids("rewardgym")


def test_every_builtin_compiles_the_same_from_the_store(loaded_store):
    for task_id in GRAPH_TASKS:
        from_store = compile_from_store(loaded_store, task_id)
        in_memory = compile_task(tasks.build(task_id))
        for name, array in in_memory.arrays().items():
            np.testing.assert_array_equal(array, from_store.arrays()[name], err_msg=f"{task_id}: {name}")
        assert from_store.conditions == in_memory.conditions
        assert from_store.reward_specs == in_memory.reward_specs


GRAPH_ENV_IDS = ["graphtasks/Graph-v0"] + [f"graphtasks/{name}" for name in gym_bridge.graph.family.REWARDGYM_IDS]
# every observation type on Graph-v0 and index on TwoStep-v0; the rest only in the full run
QUICK_CASES = {("graphtasks/TwoStep-v0", "index")}
ENV_CASES = [
    pytest.param(env_id, obs, marks=[] if (env_id, obs) in QUICK_CASES or env_id == "graphtasks/Graph-v0"
                 else [pytest.mark.slow])
    for env_id in GRAPH_ENV_IDS
    for obs in ("index", "onehot", "images")
]


@pytest.mark.parametrize("env_id, obs_type", ENV_CASES)
@pytest.mark.slow
def test_check_env_passes_without_warnings(env_id, obs_type):
    kwargs = {"task": "neuronav/graph/neighborhood"} if env_id == "graphtasks/Graph-v0" else {}
    env = gym.make(env_id, obs_type=obs_type, render_mode="rgb_array", **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("task_id", GRAPH_TASKS)
def test_same_seed_same_trajectory_and_pickling(task_id):
    env = GraphTaskEnv(task_id, stochasticity=0.1)
    first, second = rollout(env, 3), rollout(env, 3)
    assert first == second
    env.reset(seed=5)
    for _ in range(3):
        _, _, term, _, _ = env.step(0)
        if term:
            env.reset()
    clone = pickle.loads(pickle.dumps(env))
    a = [clone.step(i % clone.action_space.n)[:4] for i in range(50) if clone.reset() is not None]
    b = [env.step(i % env.action_space.n)[:4] for i in range(50) if env.reset() is not None]
    assert [(np.asarray(x[0]).tolist(), *x[1:]) for x in a] == [(np.asarray(x[0]).tolist(), *x[1:]) for x in b]


def test_different_seeds_differ_on_a_stochastic_task():
    env = GraphTaskEnv("rewardgym/two-step")
    assert rollout(env, 3) != rollout(env, 4)


def test_two_step_transition_frequencies():
    env = GraphTaskEnv("rewardgym/two-step")
    env.reset(seed=0)
    counts = Counter()
    for _ in range(100_000):
        env.reset()
        _, _, _, _, info = env.step(0)
        counts[info["state"]] += 1
    assert counts[1] / 100_000 == pytest.approx(0.7, abs=0.01)
    assert counts[2] / 100_000 == pytest.approx(0.3, abs=0.01)


def test_three_target_tuple_in_the_environment():
    graph = {0: ([1, 2, 3], 0.7), 1: [], 2: [], 3: []}
    definition = {"name": "tuple3", "reward_on": "terminal", "graph": {str(k): v for k, v in graph.items()}}
    definition["graph"]["0"] = {"targets": [1, 2, 3], "p": 0.7}
    env = GraphTaskEnv(tasks.graph.definitions.build_graph_task("user/tuple3", "user", definition))
    env.reset(seed=1)
    for action in range(3):
        counts = Counter()
        for _ in range(60_000):
            env.reset()
            counts[env.step(action)[4]["state"]] += 1
        for target in (1, 2, 3):
            expected = 0.7 if target == action + 1 else 0.15
            assert counts[target] / 60_000 == pytest.approx(expected, abs=0.01)


def test_conditions_force_edges_and_outcomes():
    env = GraphTaskEnv("rewardgym/two-step")
    env.reset(seed=0)
    for _ in range(200):
        env.reset(options={"condition": "unexpected"})
        assert env.step(0)[4]["state"] == 2
    env.reset(options={"condition": {0: {0: 1}}})
    assert env.step(0)[4]["state"] == 1
    hcp = GraphTaskEnv("rewardgym/hcp")
    hcp.reset(seed=0)
    for outcome in ("win", "loss", "neutral"):
        hcp.reset(options={"condition": outcome})
        _, reward, terminated, _, _ = hcp.step(1)
        assert terminated and reward == {"win": 1.0, "loss": -0.5, "neutral": 0.0}[outcome]
    with pytest.raises(ValueError, match=r"no condition 'jackpot' \(known: loss, neutral, win\)"):
        hcp.reset(options={"condition": "jackpot"})


def test_available_actions_and_unoffered_actions():
    env = GraphTaskEnv("rewardgym/risk-sensitive")
    _, info = env.reset(seed=0, options={"condition": "save-20_risky-40"})
    assert info["available_actions"] == (1, 3)
    obs, reward, terminated, _, info = env.step(0)  # not offered: stay, no reward
    assert (obs, reward, terminated) == (0, 0.0, False)
    _, reward, terminated, _, _ = env.step(1)
    assert terminated and reward == 20.0
    _, info = env.reset()
    assert info["available_actions"] == (0, 1, 2, 3, 4)


def test_skip_nodes_advance_at_reset_and_on_arrival():
    env = GraphTaskEnv("rewardgym/mid")
    _, info = env.reset(seed=0)
    assert info["state"] in (1, 2, 3, 4, 5)
    _, info = env.reset(options={"condition": "big-win"})
    assert info["state"] == 5
    _, reward, terminated, _, _ = env.step(0)
    assert terminated and reward == 5.0


def test_reward_on_arrival_paid_every_arrival():
    env = GraphTaskEnv("neuronav/graph/human_b", episode_length=None)
    env.reset(seed=0)
    env.step(1)  # 0 -> 2
    _, reward, _, _, _ = env.step(1)  # 2 -> 5 (reward 30)
    assert reward == 30.0
    _, reward, terminated, _, _ = env.step(0)  # 5 -> 5 again
    assert reward == 30.0 and not terminated


def test_time_penalty_noop_stochasticity_and_truncation():
    env = GraphTaskEnv("neuronav/graph/ring", time_penalty=0.1, use_noop=True, episode_length=5)
    assert env.action_space.n == 3
    obs, _ = env.reset(seed=0)
    obs2, reward, _, _, info = env.step(2)  # no-op
    assert obs2 == obs and reward == pytest.approx(-0.1) and 2 in info["available_actions"]
    truncated = [env.step(0)[3] for _ in range(4)]
    assert truncated == [False, False, False, True]
    with pytest.raises(ValueError, match=r"time_penalty: expected a non-negative number"):
        GraphTaskEnv("neuronav/graph/ring", time_penalty=-0.1)
    with pytest.raises(ValueError, match=r"stochasticity: expected a probability"):
        GraphTaskEnv("neuronav/graph/ring", stochasticity=2)
    noisy = GraphTaskEnv("neuronav/graph/linear", stochasticity=1.0, episode_length=None)
    noisy.reset(seed=0)
    assert noisy.step(0)[4]["state"] == 1  # the only action, drawn at random, still moves


def test_gym_make_max_episode_steps_truncates():
    env = gym.make("graphtasks/Graph-v0", task="neuronav/graph/ring", max_episode_steps=3)
    env.reset(seed=0)
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]


def test_observation_types_and_images_are_distinct():
    env = GraphTaskEnv("neuronav/graph/neighborhood", obs_type="onehot")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (15,) and obs.dtype == np.float32 and obs[0] == 1.0
    images = GraphTaskEnv("neuronav/graph/neighborhood", obs_type="images")
    obs, _ = images.reset(seed=0)
    assert obs.shape == (32, 32, 3) and obs.dtype == np.uint8
    table = gym_bridge.state_images(15)
    assert len({t.tobytes() for t in table}) == 15
    np.testing.assert_array_equal(table, gym_bridge.state_images(15))
    with pytest.raises(ValueError, match=r"obs_type: unknown graph observation type 'pixels'"):
        GraphTaskEnv("neuronav/graph/neighborhood", obs_type="pixels")


def test_custom_observation_from_cypher():
    gym_bridge.register_cypher_observation(
        "out_degree",
        "MATCH (s:State)-[m:MOVE]->(t:State) WHERE s.task = $task RETURN s.index, count(DISTINCT t) AS degree",
        low=0,
        high=10,
    )
    try:
        env = GraphTaskEnv("neuronav/graph/neighborhood", obs_type="out_degree", episode_length=None)
        obs, _ = env.reset(seed=0)
        assert obs.tolist() == [4.0]
    finally:  # the registry is the process's: later tests in this worker list its names
        GRAPH_OBSERVATIONS.unregister("out_degree")


def test_rendering():
    env = GraphTaskEnv("rewardgym/two-step", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (320, 320, 3) and frame.dtype == np.uint8
    env.step(0)
    assert not np.array_equal(frame, env.render())
    text = GraphTaskEnv("rewardgym/two-step", render_mode="ansi")
    text.reset(seed=0)
    assert "state 0 (first stage)" in text.render() and "p=0.70" in text.render()


def test_a_task_of_another_family_is_refused_clearly():
    with pytest.raises(
        Exception, match=r"task 'poge/world0' \(family 'poge'\) has no State nodes: it is not a graph task"
    ):
        GraphTaskEnv("poge/world0")


def test_task_from_a_store_object_and_from_a_graph(memory_store):
    memory_store.put(tasks.build("rewardgym/hcp"))
    env = GraphTaskEnv("rewardgym/hcp", store=memory_store)
    assert env.compiled.n_states == 3
    assert isinstance(tasks.build("rewardgym/hcp"), TaskGraph)
    with pytest.raises(Exception, match=r"task 'user/none' not found"):
        GraphTaskEnv("user/none", store=memory_store)


def test_a_reward_gym_condition_replaces_the_nodes_actions():
    """rewardGym: a condition's node entry is the node's whole action table for the trial."""
    env = GraphTaskEnv("rewardgym/risk-sensitive")
    _, info = env.reset(seed=0, options={"condition": {0: {1: 2, 3: 4}}})
    assert info["available_actions"] == (1, 3)
    obs, reward, terminated, _, info = env.step(0)  # not offered by the condition: stay, no reward
    assert (obs, reward, terminated, info["state"]) == (0, 0.0, False, 0)
    _, reward, terminated, _, info = env.step(3)
    assert terminated and info["state"] == 4
    # rewardGym's None placeholder (an empty screen side) offers nothing
    _, info = env.reset(options={"condition": {0: {None: None, 4: 5}}})
    assert info["available_actions"] == (4,)
    assert env.step(2)[4]["state"] == 0 and env.step(4)[4]["state"] == 5
    with pytest.raises(ValueError, match="node 0: the entry offers no action"):
        env.reset(options={"condition": {0: {None: None}}})


def test_risk_sensitive_without_a_condition_offers_all_five_options():
    """Documented difference: rewardGym draws a random subset (with replacement); here the whole node."""
    env = GraphTaskEnv("rewardgym/risk-sensitive")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["available_actions"] == (0, 1, 2, 3, 4)
    for action in range(5):
        env.reset()
        assert env.step(action)[4]["state"] == action + 1


@pytest.mark.parametrize("task_id", GRAPH_TASKS)
def test_pictures_keep_states_apart(task_id):
    from gym_bridge.graph.render import GraphRenderer

    renderer = GraphRenderer(compile_task(tasks.build(task_id)), size=400)
    xy = np.array(renderer.positions)
    gaps = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(len(xy)) * 1e9
    assert gaps.min() >= 3 * renderer.radius, f"two states {gaps.min():.0f} px apart"
    frame = np.asarray(renderer.rgb(0))
    assert frame.shape[1] == 400 and frame.shape[2] == 3


def test_pictures_label_states_and_edges():
    from gym_bridge.graph.render import GraphRenderer, _edge_label

    c = compile_task(tasks.build("rewardgym/two-step"))
    assert _edge_label(c, 0, 1) == "a0 (.7), a1 (.3)" and _edge_label(c, 1, 3) == "a0"
    renderer = GraphRenderer(c, size=400)
    assert renderer.label_edges and renderer.names[1] == "second stage A"
    image = np.asarray(renderer.background).astype(int)
    x, y = (round(v) for v in renderer.positions[1])
    r = int(renderer.radius * 0.6)
    inside = image[y - r : y + r, x - r : x + r]
    assert (inside.sum(axis=2) < 200).any()  # the state's index is written in it
    large = GraphRenderer(compile_task(tasks.build("neuronav/graph/neighborhood")), size=400)
    assert not large.label_edges  # 60 edges: states only
