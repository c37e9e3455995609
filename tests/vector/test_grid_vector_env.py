"""GridVectorEnv against GridEnv: exact per copy without action noise, in distribution with it."""

from __future__ import annotations

from collections import Counter, defaultdict

import gymnasium as gym
import numpy as np
import pytest

import gym_bridge  # noqa: F401  registers the grid ids
from gym_bridge.grid import GRID_OBSERVATIONS, GridEnv, GridVectorEnv

OBJECTS = {  # keys, a door, warps and rewards with their own terminate flags, all near the start
    "rewards": {(9, 9): 1.0, (8, 6): [0.5, True, False], (5, 1): [-1.0, True, True]},
    "keys": [(9, 7), (7, 9), (6, 6)],
    "doors": {(8, 8): "h", (4, 4): "v"},
    "warps": {(9, 5): (1, 1), (2, 2): (8, 4)},
}
CASES = [
    ("four_rooms", {}),
    ("four_rooms_split", {"obs_type": "onehot", "time_penalty": 0.1, "episode_length": 40}),
    ("two_rooms", {"orientation": "variable", "use_noop": True, "obs_type": "twohot"}),
    ("two_step", {"terminate_on_reward": False, "manual_collect": True, "episode_length": 30}),
    ("empty", {"objects": OBJECTS, "agent_start": (9, 8), "episode_length": 60}),
    ("empty", {"objects": OBJECTS, "agent_start": (7, 7), "orientation": "variable", "obs_type": "geometric"}),
]


def copy_row(obs, r, term, trunc, info, i: int) -> tuple:
    """Copy i's part of a batch step, in the form the single-env streams use."""
    return (np.asarray(obs[i]).tolist(), float(r[i]), bool(term[i]), bool(trunc[i]), int(info["state"][i]))


def state_of(env: GridEnv) -> int:
    return env.state


def single_stream(env: GridEnv, actions: np.ndarray) -> list[tuple]:
    env.reset(seed=0)
    out, ended = [], False
    for a in actions:
        if ended:
            obs, _ = env.reset()
            out.append((np.asarray(obs).tolist(), 0.0, False, False, env.state))
            ended = False
            continue
        obs, r, term, trunc, _ = env.step(int(a))
        out.append((np.asarray(obs).tolist(), float(r), bool(term), bool(trunc), env.state))
        ended = term or trunc
    return out


@pytest.mark.parametrize("template, kwargs", CASES)
@pytest.mark.slow
def test_every_copy_equals_the_single_env(template, kwargs):
    venv = GridVectorEnv(8, template, "small", **kwargs)
    actions = np.random.default_rng(2).integers(0, venv.n_actions, (400, 8))
    venv.reset(seed=0)
    got: list[list[tuple]] = [[] for _ in range(8)]
    picked_keys = opened = 0
    for row in actions:
        obs, r, term, trunc, info = venv.step(row)
        picked_keys = max(picked_keys, int(venv.keys_held.max()))
        opened = max(opened, int((~venv.doors_closed).sum()))
        for i in range(8):
            got[i].append(copy_row(obs, r, term, trunc, info, i))
    for i in range(8):
        assert got[i] == single_stream(GridEnv(template, "small", **kwargs), actions[:, i]), f"copy {i}"
    if "objects" in kwargs:
        assert picked_keys > 0 and opened > 0  # the object path was exercised


@pytest.mark.parametrize(
    "task", ["decision/grid/tolman/micro", "decision/grid/tolman/small", "decision/grid/cued_t_maze/left"]
)
@pytest.mark.slow
def test_every_copy_equals_the_single_env_in_the_decision_mazes(task):
    """The mazes of data/decision/grids/ (Tolman's, the cued T-maze) step alike in both envs, random starts
    included."""
    kwargs = {"episode_length": 25, "time_penalty": 0.05}
    venv = GridVectorEnv(8, task=task, **kwargs)
    actions = np.random.default_rng(3).integers(0, venv.n_actions, (300, 8))
    venv.reset(seed=0)
    got: list[list[tuple]] = [[] for _ in range(8)]
    for row in actions:
        obs, r, term, trunc, info = venv.step(row)
        for i in range(8):
            got[i].append(copy_row(obs, r, term, trunc, info, i))
    for i in range(8):
        assert got[i] == single_stream(GridEnv(task=task, **kwargs), actions[:, i]), f"copy {i}"


def picture_size(obs_type: str) -> dict:
    return {"resolution": 40} if obs_type in ("visual", "window", "window_tight") else {}


@pytest.mark.parametrize("orientation", ["fixed", pytest.param("variable", marks=pytest.mark.slow)])
@pytest.mark.parametrize("obs_type", GRID_OBSERVATIONS.names())
def test_every_observation_type_equals_the_single_env_while_objects_go(obs_type, orientation):
    """Each copy loses keys, rewards and doors at its own time; its observation must still be the single env's."""
    objects = {
        **OBJECTS,
        "rewards": {**OBJECTS["rewards"], (7, 8): [2.0, False, False]},
        "keys": [*OBJECTS["keys"], (8, 6)],
    }
    kwargs = dict(objects=objects, agent_start=(9, 8), episode_length=60, obs_type=obs_type, orientation=orientation,
                  terminate_on_reward=False, **picture_size(obs_type))
    venv = GridVectorEnv(8, "empty", "small", **kwargs)
    actions = np.random.default_rng(2).integers(0, venv.n_actions, (240, 8))
    first, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(first)
    got: list[list] = [[] for _ in range(8)]
    configurations = set()
    for row in actions:
        obs, *_ = venv.step(row)
        configurations.update(map(bytes, np.packbits(np.hstack(venv.present_objects()), axis=1)))
        for i in range(8):
            got[i].append(obs[i])
    assert len(configurations) > 8  # copies differ in what is left, so the per-copy path is exercised
    for i in range(8):
        single = GridEnv("empty", "small", **kwargs)
        single.reset(seed=0)
        ended = False
        for t, a in enumerate(actions[:, i].tolist()):
            if ended:
                expected, ended = single.reset()[0], False
            else:
                expected, _, term, trunc, _ = single.step(a)
                ended = term or trunc
            assert np.array_equal(np.asarray(got[i][t]), np.asarray(expected)), f"copy {i}, step {t}"


def test_pictures_and_text_in_same_step_mode_keep_the_final_observation():
    venv = GridVectorEnv(4, "empty", "small", obs_type="ascii", objects={"rewards": {(9, 7): 1.0}}, agent_start=(9, 8))
    venv.reset(seed=0)
    obs, reward, term, _, info = venv.step(np.array([3, 0, 3, 1]))  # copies 0 and 2 reach the reward
    assert term.tolist() == [True, False, True, False] and reward.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert isinstance(obs, tuple) and all(isinstance(text, str) for text in obs)
    assert obs[0].splitlines()[9][7] == "A" and "R" not in obs[0]  # the reward is taken in copy 0 ...
    assert obs[1].splitlines()[9][7] == "R"  # ... and still there in copy 1
    same = GridVectorEnv(4, "empty", "small", obs_type="visual", resolution=32, autoreset_mode="SameStep",
                         objects={"rewards": {(9, 7): 1.0}}, agent_start=(9, 8))
    same.reset(seed=0)
    obs, _, term, _, info = same.step(np.array([3, 0, 3, 1]))
    assert info["_final_obs"].tolist() == term.tolist()
    single = GridEnv(
        "empty", "small", obs_type="visual", resolution=32, objects={"rewards": {(9, 7): 1.0}}, agent_start=(9, 8)
    )
    start, _ = single.reset(seed=0)
    last, *_ = single.step(3)
    assert np.array_equal(info["final_obs"][0], last) and np.array_equal(obs[0], start)
    assert not np.array_equal(obs[0], info["final_obs"][0])


def test_action_noise_and_random_start_match_the_single_env_in_distribution():
    kwargs = dict(stochasticity=0.3, random_start=True, episode_length=20)
    rng = np.random.default_rng(0)
    single = GridEnv("four_rooms", "small", **kwargs)
    single.reset(seed=0)
    moves, starts = defaultdict(Counter), Counter()
    s = single.state
    starts[s] += 1
    for a in rng.integers(0, 4, 60_000).tolist():
        _, _, term, trunc, info = single.step(a)
        moves[(s, a)][info["state"]] += 1
        if term or trunc:
            s = single.reset()[1]["state"]
            starts[s] += 1
        else:
            s = info["state"]
    venv = GridVectorEnv(600, "four_rooms", "small", autoreset_mode="SameStep", **kwargs)
    _, info = venv.reset(seed=0)
    vmoves, vstarts = defaultdict(Counter), Counter(info["state"].tolist())
    s = info["state"]
    for _ in range(100):
        a = rng.integers(0, 4, 600)
        _, _, term, trunc, info = venv.step(a)
        done = term | trunc
        arrived = np.where(done, info["final_info"]["state"], info["state"]) if "final_info" in info else info["state"]
        for key in zip(s.tolist(), a.tolist(), arrived.tolist()):
            vmoves[key[:2]][key[2]] += 1
        vstarts.update(info["state"][done].tolist())
        s = info["state"]
    common = [k for k in moves if sum(moves[k].values()) > 150 and sum(vmoves[k].values()) > 150]
    assert len(common) > 30
    for key in common:
        n1, n2 = sum(moves[key].values()), sum(vmoves[key].values())
        for target in set(moves[key]) | set(vmoves[key]):
            p1, p2 = moves[key][target] / n1, vmoves[key][target] / n2
            p = (moves[key][target] + vmoves[key][target]) / (n1 + n2)
            assert abs(p1 - p2) <= 5 * np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)) + 1e-9, (key, target, p1, p2)
    free = len(single.rules.free)
    assert len(vstarts) == free and len(starts) > free * 0.9  # random starts cover the free cells
    counts = np.array(list(vstarts.values()))
    assert counts.min() > 0.4 * counts.mean()


def test_make_vec_for_grid_ids_and_unsupported_observations():
    venv = gym.make_vec(
        "graphtasks/GridFourRooms-v0", num_envs=3, vectorization_mode="vector_entry_point", obs_type="onehot"
    )
    single = gym.make("graphtasks/GridFourRooms-v0", obs_type="onehot").unwrapped
    assert isinstance(venv.unwrapped, GridVectorEnv)
    assert venv.single_observation_space == single.observation_space
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    for _ in range(20):
        obs, reward, term, trunc, _ = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(obs) and reward.dtype == np.float64
    with pytest.raises(ValueError, match="unknown grid observation type 'pixels'"):
        GridVectorEnv(2, obs_type="pixels")
    with pytest.raises(TypeError, match="colour"):
        GridVectorEnv(2, colour="red")
    pictures = gym.make_vec("graphtasks/GridFourRooms-v0", num_envs=2, vectorization_mode="vector_entry_point",
                            obs_type="window_tight", resolution=24)
    obs, _ = pictures.reset(seed=0)
    assert obs.shape == (2, 24, 24, 3) and pictures.observation_space.contains(obs)
    with pytest.raises(ValueError, match="'objects' is fixed per vector env"):
        venv.reset(options={"objects": {}})
    obs, info = venv.reset(options={"agent_pos": (1, 1)})
    assert info["state"].tolist() == [1 * 11 + 1] * 3


def test_a_door_uses_up_the_key_in_every_copy():
    objects = {"rewards": {(1, 1): 1.0}, "keys": [(9, 7)], "doors": {(8, 7): "h", (8, 6): "h"}}
    venv = GridVectorEnv(3, "empty", "small", objects=objects, agent_start=(9, 8))
    single = GridEnv("empty", "small", objects=objects, agent_start=(9, 8))
    venv.reset(seed=0)
    single.reset(seed=0)
    for action, cell, keys in [(3, (9, 7), 1), (0, (8, 7), 0), (2, (9, 7), 0), (3, (9, 6), 0), (0, (9, 6), 0)]:
        _, _, _, _, info = venv.step(np.full(3, action))
        single.step(action)
        assert single.agent_pos == cell and single.keys_held == keys
        assert info["state"].tolist() == [cell[0] * 11 + cell[1]] * 3 and venv.keys_held.tolist() == [keys] * 3


def test_a_registered_cypher_observation_runs_vectorised():
    from gym_bridge.grid import register_grid_cypher_observation

    register_grid_cypher_observation(
        "test_vector_row_col", "MATCH (c:Cell) WHERE c.task = $task RETURN c.index, c.row * 1.0, c.col * 1.0", 0.0, 16.0
    )
    venv = GridVectorEnv(3, "four_rooms", "small", obs_type="test_vector_row_col")
    obs, _ = venv.reset(seed=0)
    assert obs.tolist() == [[9.0, 9.0]] * 3
    obs, *_ = venv.step(np.array([0, 3, 1]))  # north, west, east (a wall: stays)
    assert obs.tolist() == [[8.0, 9.0], [9.0, 8.0], [9.0, 9.0]]


def test_key_rule_and_ascii_order_match_the_single_env():
    """A key is used only by moving into a closed door; objects hide the agent in ascii (neuro-nav)."""
    objects = {"keys": [(1, 2)], "warps": {(1, 3): (1, 4)}, "doors": {(1, 4): "v"}, "rewards": {(9, 8): 1.0}}
    kw = {"obs_type": "ascii", "objects": objects, "manual_collect": True, "use_noop": True}
    venv = GridVectorEnv(2, "empty", "small", agent_start=(2, 2), **kw)
    obs, _ = venv.reset(seed=0)
    single = GridEnv("empty", "small", agent_start=(2, 2), **kw)
    assert obs[0] == single.reset(seed=0)[0]
    for a in [0, 1, 0, 1, 3]:  # key, warp onto the door, bump the wall on it, off east, back west into it
        obs, *_ = venv.step(np.array([a, 4]))
        expected, *_ = single.step(a)
        assert obs[0] == expected and int(venv.keys_held[0]) == single.keys_held
        if a == 0 and single.agent_pos == (1, 4):
            assert single.keys_held == 1 and bool(venv.doors_closed[0, 0])
    assert single.keys_held == 0 and not venv.doors_closed[0, 0]
    on_reward = GridVectorEnv(1, "empty", "small", agent_start=(9, 8), **kw)
    text = on_reward.reset(seed=0)[0][0]
    assert text.split("\n")[9][8] == "R" and "A" not in text
