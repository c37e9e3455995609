"""PogeVectorEnv against PogeEnv: exact with force_determinism, in distribution with slips."""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import lru_cache

import gymnasium as gym
import numpy as np
import pytest

import gym_bridge  # noqa: F401  registers graphtasks/Poge-v0
import tasks
from gym_bridge.poge import POGE_OBSERVATIONS, PogeEnv, PogeObservation
from gym_bridge.vector import PogeVectorEnv

WORLDS = ("poge/world0", "poge/world1", "poge/world2", "poge/world3")
CONFIGS = [
    {},
    {"is_partially_obs": False, "indicate_wall": True, "step_penalty": 0.5},
    {"obs_type": "onehot", "one_time_rewards": False, "max_ep_len": 9},
]


def copy_row(obs, r, term, trunc, info, i: int) -> tuple:
    """Copy i's part of a batch step, in the form the single-env streams use."""
    return (np.asarray(obs[i]).tolist(), float(r[i]), bool(term[i]), bool(trunc[i]), int(info["state"][i]))


@lru_cache(maxsize=None)
def graph(world: str):
    return tasks.build(world)


def single_state(env: PogeEnv) -> int:
    r, c = env.tile
    return (r * env.world.cols + c) * 2 + int(env.stochastic)


def single_stream(env: PogeEnv, actions: np.ndarray, seed: int) -> list[tuple]:
    """What one NEXT_STEP copy must return, from the single env."""
    env.reset(seed=seed)
    out, ended = [], False
    for a in actions:
        if ended:
            obs, _ = env.reset()
            out.append((np.asarray(obs).tolist(), 0.0, False, False, single_state(env)))
            ended = False
            continue
        obs, r, term, trunc, _ = env.step(int(a))
        out.append((np.asarray(obs).tolist(), float(r), bool(term), bool(trunc), single_state(env)))
        ended = term or trunc
    return out


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("config", CONFIGS)
def test_every_copy_equals_the_single_env_without_slips(world, config):
    kw = dict(force_determinism=True, **config)
    venv = PogeVectorEnv(6, world=graph(world), **kw)
    actions = np.random.default_rng(5).integers(0, 4, (250, 6))
    venv.reset(seed=0)
    got: list[list[tuple]] = [[] for _ in range(6)]
    for row in actions:
        obs, r, term, trunc, info = venv.step(row)
        for i in range(6):
            got[i].append(copy_row(obs, r, term, trunc, info, i))
    for i in range(6):
        assert got[i] == single_stream(PogeEnv(graph(world), **kw), actions[:, i], seed=0), f"copy {i}"
    assert any(step[2] or step[3] for g in got for step in g)  # episodes end, so autoresets are compared too


def test_slip_frequencies_and_rewards_match_the_single_env():
    world = graph("poge/world1")
    single = PogeEnv(world)
    single.reset(seed=0)
    rng = np.random.default_rng(0)
    moves, rewards = defaultdict(Counter), defaultdict(list)
    s = single_state(single)
    for a in rng.integers(0, 4, 150_000).tolist():
        _, r, term, trunc, _ = single.step(a)
        t = single_state(single)
        moves[(s, a)][t] += 1
        rewards[(s, a)].append(r)
        if term or trunc:
            single.reset()
        s = single_state(single)
    venv = PogeVectorEnv(1000, world=world, autoreset_mode="SameStep")
    _, info = venv.reset(seed=0)
    vmoves, vrewards = defaultdict(Counter), defaultdict(list)
    s = info["state"]
    for _ in range(150):
        a = rng.integers(0, 4, 1000)
        _, r, term, trunc, info = venv.step(a)
        t = info["state"]
        if "final_info" in info:  # SAME_STEP: where a copy ended, it arrived at its final state
            t = np.where(term | trunc, info["final_info"]["state"], info["state"])
        for key in zip(s.tolist(), a.tolist(), t.tolist(), r.tolist()):
            vmoves[key[:2]][key[2]] += 1
            vrewards[key[:2]].append(key[3])
        s = info["state"]
    common = [k for k in moves if sum(moves[k].values()) > 300 and sum(vmoves[k].values()) > 300]
    assert len(common) > 20
    slipping = 0
    for key in common:
        n1, n2 = sum(moves[key].values()), sum(vmoves[key].values())
        slipping += len(moves[key]) > 1
        for target in set(moves[key]) | set(vmoves[key]):
            p1, p2 = moves[key][target] / n1, vmoves[key][target] / n2
            p = (moves[key][target] + vmoves[key][target]) / (n1 + n2)
            assert abs(p1 - p2) <= 5 * np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2)) + 1e-9, (key, target, p1, p2)
        r1, r2 = np.array(rewards[key]), np.array(vrewards[key])
        assert abs(r1.mean() - r2.mean()) <= 5 * np.sqrt(r1.var() / n1 + r2.var() / n2) + 1e-9, key
    assert slipping >= 3  # the comparison covers tiles with slip rules


def test_one_time_rewards_are_per_copy_and_per_episode():
    venv = PogeVectorEnv(3, world=graph("poge/world1"), force_determinism=True, max_ep_len=500)
    venv.reset(seed=0)
    assert venv.collected.shape == (3, 6) and not venv.collected.any()
    rng = np.random.default_rng(3)
    for _ in range(400):
        _, _, term, trunc, _ = venv.step(rng.integers(0, 4, 3))
        if venv.collected.any():
            break
    assert venv.collected.any() and not venv.collected.all(axis=0).all()
    venv.reset()
    assert not venv.collected.any()


def test_make_vec_spaces_names_and_tile_option():
    venv = gym.make_vec("graphtasks/Poge-v0", num_envs=4, vectorization_mode="vector_entry_point", world="poge/world1",
                        names_in_info=True)
    single = gym.make("graphtasks/Poge-v0", world="poge/world1").unwrapped
    assert isinstance(venv.unwrapped, PogeVectorEnv)
    assert venv.single_observation_space == single.observation_space and venv.single_action_space == single.action_space
    obs, info = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    for _ in range(50):
        obs, reward, term, trunc, info = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(obs) and reward.dtype == np.float64
        assert info["observation"].tolist() == [single.observation_names[o] for o in obs]
    obs, info = venv.reset(options={"tile": (1, 5)})
    assert (info["state"] // 2 == 1 * 9 + 5).all()
    with pytest.raises(ValueError, match=r"tile \(0, 0\) is a wall: the player cannot stand on it"):
        venv.reset(options={"tile": (0, 0)})


def test_same_seed_same_batch_and_pickled_env_continues_identically():
    import pickle

    def run(venv, actions):
        return [tuple(np.asarray(x).tolist() for x in venv.step(row)[:4]) for row in actions]

    actions = np.random.default_rng(0).integers(0, 4, (60, 16))
    a, b = PogeVectorEnv(16, world=graph("poge/world2")), PogeVectorEnv(16, world=graph("poge/world2"))
    a.reset(seed=3)
    b.reset(seed=3)
    assert run(a, actions[:20]) == run(b, actions[:20])
    clone = pickle.loads(pickle.dumps(a))
    assert run(a, actions[20:]) == run(clone, actions[20:])
    b.reset(seed=4)
    assert run(b, actions) != run(a, actions)


@pytest.mark.parametrize("obs_type", list(POGE_OBSERVATIONS))
def test_every_registered_observation_type_equals_the_single_env(obs_type):
    """Each type's batched observe is its single observe, copy by copy (built-in and user types)."""
    kw = dict(force_determinism=True, indicate_wall=True, obs_type=obs_type)
    venv = PogeVectorEnv(5, world=graph("poge/world1"), **kw)
    actions = np.random.default_rng(3).integers(0, 4, (120, 5))
    venv.reset(seed=0)
    got: list[list[tuple]] = [[] for _ in range(5)]
    for row in actions:
        obs, r, term, trunc, info = venv.step(row)
        for i in range(5):
            got[i].append(copy_row(obs, r, term, trunc, info, i))
    for i in range(5):
        assert got[i] == single_stream(PogeEnv(graph("poge/world1"), **kw), actions[:, i], seed=0), f"copy {i}"


def test_a_user_observation_type_runs_in_both_envs():
    class Parity(PogeObservation):
        """1 on even observation indices: a fixed row per index."""

        name = "parity-test"

        def __init__(self, compiled, store=None):
            super().__init__(compiled, store)
            self.table = (np.arange(len(compiled.observation_names)) % 2 == 0).astype(np.float32)[:, None]
            self.space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)

    POGE_OBSERVATIONS.register(Parity)
    try:
        test_every_registered_observation_type_equals_the_single_env("parity-test")
        with pytest.raises(ValueError, match="unknown POGE observation type 'parity'; did you mean 'parity-test'"):
            PogeEnv(graph("poge/world1"), obs_type="parity")
    finally:
        POGE_OBSERVATIONS.unregister("parity-test")
