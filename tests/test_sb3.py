"""Stable-Baselines3 on the native vector envs (`gym_bridge.sb3.to_sb3`): SB3's VecEnv API, its
auto-reset rules (compared step for step with SB3's own `DummyVecEnv` over single envs, in each
of gymnasium's autoreset modes), seeding, and PPO learning a tiny grid on the wrapped env.

Stable-Baselines3 is the `sb3` extra (with a CPU torch: .ci/run installs both). Without it
these tests fail in CI (CI=true) and are skipped on a developer's machine.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import gym_bridge  # noqa: F401  (registers the ids)
from gym_bridge.sb3 import _adapter_class, to_sb3

if importlib.util.find_spec("stable_baselines3") is None:
    if os.environ.get("CI") == "true":
        pytest.fail("stable-baselines3 is missing (.ci/run installs torch and the sb3 extra)", pytrace=False)
    pytest.skip("no stable-baselines3 (pip install torch==2.13.0 '.[sb3]': the sb3 extra)", allow_module_level=True)

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MODES = ["NextStep", "SameStep", "Disabled"]
GRID = "graphtasks/GridEmpty-v0"  # 5 x 5 open cells, a reward of 1 ends the episode


def grid(n: int, mode: str = "NextStep", steps: int = 30, **kwargs):
    return gym.make_vec(GRID, num_envs=n, size="micro", max_episode_steps=steps, autoreset_mode=mode, **kwargs)


def two_step(n: int, mode: str = "NextStep"):
    return gym.make_vec("graphtasks/TwoStep-v0", num_envs=n, autoreset_mode=mode)


def rollout(venv, seed: int, steps: int) -> list[tuple]:
    """(obs, rewards, dones, terminal observations) of `steps` steps under seeded random actions."""
    rng = np.random.default_rng(seed)
    venv.seed(seed)
    out: list[tuple] = [(np.asarray(venv.reset()).copy(),)]
    for _ in range(steps):
        obs, rewards, dones, infos = venv.step(rng.integers(0, venv.action_space.n, venv.num_envs))
        finals = [np.asarray(info["terminal_observation"]).tolist() for info in infos if "terminal_observation" in info]
        out.append((np.asarray(obs).copy(), rewards.copy(), dones.copy(), finals))
    return out


def same(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(np.array_equal(np.asarray(u), np.asarray(v)) for u, v in zip(x, y))
        for x, y in zip(a, b)
    )


def test_the_adapter_is_an_sb3_vec_env_with_its_api():
    venv = to_sb3(grid(4, obs_type="onehot"))
    assert isinstance(venv, VecEnv)
    assert venv.num_envs == 4
    assert venv.observation_space == gym.spaces.Box(0.0, 1.0, (49,), np.float32)  # one copy's spaces
    assert venv.action_space == gym.spaces.Discrete(4)
    try:  # SB3's own VecEnv checker, in the releases that have it
        from stable_baselines3.common.vec_env_checker import check_vecenv  # type: ignore[import-not-found]
    except ImportError:
        check_vecenv = None
    if check_vecenv is not None:
        check_vecenv(venv)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (4, 49) and obs.dtype == np.float32
    assert [info["state"] for info in venv.reset_infos] == [40] * 4
    obs, rewards, dones, infos = venv.step(np.array([0, 1, 2, 3]))
    assert obs.shape == (4, 49) and rewards.shape == (4,) and rewards.dtype == np.float32
    assert dones.shape == (4,) and dones.dtype == np.bool_
    assert isinstance(infos, list) and len(infos) == 4
    assert all(info["TimeLimit.truncated"] is False and "state" in info for info in infos)
    # the batch's attributes and methods, per copy
    assert venv.get_attr("episode_length") == [30] * 4
    assert venv.has_attr("episode_length") and not venv.has_attr("no_such_attribute")
    assert [int(s) for s in venv.get_attr("elapsed_steps", indices=[1, 3])] == [1, 1]
    assert venv.env_is_wrapped(gym.Wrapper) == [False] * 4
    venv.set_attr("some_setting", 7)
    assert venv.get_attr("some_setting", indices=2) == [7]
    with pytest.raises(ValueError, match="set it for all of them"):
        venv.set_attr("some_setting", 8, indices=[0])
    venv.close()

    graph = to_sb3(gym.make_vec("graphtasks/Graph-v0", num_envs=3, task="neuronav/graph/t_graph", obs_type="onehot"))
    graph.reset()
    masks = graph.env_method("action_masks")  # what sb3-contrib's MaskablePPO stacks: one row per copy
    assert len(masks) == 3 and np.stack(masks).shape == (3, 2)
    assert graph.env_method("action_masks", indices=[2])[0].tolist() == masks[2].tolist()


@pytest.mark.parametrize("mode", MODES)
def test_auto_reset_matches_sb3_dummy_vec_env_over_single_envs(mode):
    """SB3's own DummyVecEnv over single envs is the reference of SB3's rules; the grid is
    deterministic, so copy i of the native env equals single env i step for step. Actions lean
    up and left (0 and 3), towards the goal, so that episodes both end there and are cut."""
    n, steps = 3, 60
    native = to_sb3(grid(n, mode, steps=8))
    reference = DummyVecEnv([lambda: gym.make(GRID, size="micro", max_episode_steps=8) for _ in range(n)])
    assert native.reset().tolist() == reference.reset().tolist()
    rng = np.random.default_rng(1)
    ended = {"terminated": 0, "truncated": 0}
    for _ in range(steps):
        actions = rng.choice(4, n, p=[0.4, 0.1, 0.1, 0.4])
        obs, rewards, dones, infos = native.step(actions)
        ref_obs, ref_rewards, ref_dones, ref_infos = reference.step(actions)
        assert obs.tolist() == ref_obs.tolist()
        assert rewards.tolist() == ref_rewards.tolist()
        assert dones.tolist() == ref_dones.tolist()
        for info, ref in zip(infos, ref_infos):
            assert info["TimeLimit.truncated"] == ref["TimeLimit.truncated"]
            assert info["state"] == ref["state"]  # the info of the step that ended, not of the reset
            assert ("terminal_observation" in info) == ("terminal_observation" in ref)
            if "terminal_observation" in info:
                assert info["terminal_observation"] == ref["terminal_observation"]
                ended["truncated" if info["TimeLimit.truncated"] else "terminated"] += 1
        assert [i["state"] for i in native.reset_infos] == [i.get("state") for i in reference.reset_infos]
    assert ended["terminated"] > 0 and ended["truncated"] > 0  # both kinds of end were compared


def test_terminal_observation_is_what_the_native_env_returned():
    """Stepping the native NEXT_STEP env by hand: its final observations are the adapter's
    terminal_observation, and the adapter's next observation is the native start observation."""
    n = 4
    native, wrapped = two_step(n), to_sb3(two_step(n))
    start, _ = native.reset(seed=5)
    wrapped.seed(5)
    assert wrapped.reset().tolist() == start.tolist()
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(12):
        actions = rng.integers(0, 2, n)
        obs, reward, terminated, truncated, _ = native.step(actions)
        w_obs, w_reward, w_dones, w_infos = wrapped.step(actions)
        assert w_reward.tolist() == reward.tolist() and w_dones.tolist() == (terminated | truncated).tolist()
        ended = terminated | truncated
        for i in np.flatnonzero(ended):
            assert w_infos[i]["terminal_observation"] == obs[i]
            assert w_infos[i]["TimeLimit.truncated"] == bool(truncated[i] and not terminated[i])
            checked += 1
        if ended.any():  # the native env returns the start observations one step later
            obs, _ = native.reset(options={"reset_mask": ended})
        assert w_obs.tolist() == obs.tolist()
    assert checked >= n  # two-step episodes last 2 to 3 steps


def test_same_seed_same_rollout_in_every_autoreset_mode():
    runs = {mode: rollout(to_sb3(two_step(6, mode)), seed=3, steps=40) for mode in MODES}
    assert same(runs["NextStep"], runs["SameStep"]) and same(runs["NextStep"], runs["Disabled"])
    assert same(rollout(to_sb3(two_step(6)), seed=3, steps=40), runs["NextStep"])
    assert not same(rollout(to_sb3(two_step(6)), seed=4, steps=40), runs["NextStep"])


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_episode_statistics_of_gymnasium_and_sb3_agree(mode):
    """gymnasium's RecordEpisodeStatistics inside the adapter and SB3's VecMonitor outside it."""
    inner = to_sb3(RecordEpisodeStatistics(two_step(4, mode)))
    outer = VecMonitor(to_sb3(two_step(4, mode)))
    episodes: dict[str, list] = {"inner": [], "outer": []}
    rng = np.random.default_rng(0)
    for venv in (inner, outer):
        venv.seed(0)
        venv.reset()
    for _ in range(30):
        actions = rng.integers(0, 2, 4)
        for name, venv in (("inner", inner), ("outer", outer)):
            infos = venv.step(actions)[3]
            episodes[name] += [(float(i["episode"]["r"]), int(i["episode"]["l"])) for i in infos if "episode" in i]
    assert len(episodes["outer"]) >= 30 and episodes["inner"] == episodes["outer"]


def test_dict_observations_in_both_autoreset_modes():
    """Dict observations (the room task): terminal observations are per-copy dicts, the reset rows
    are put into each key's batch, and both modes give the same steps."""
    runs = {}
    for mode in ("NextStep", "SameStep"):
        venv = to_sb3(gym.make_vec("graphtasks/RoomV1-v0", num_envs=3, autoreset_mode=mode))
        venv.seed(0)
        steps = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(150):
            obs, rewards, dones, infos = venv.step(rng.integers(0, 28, 3))
            finals = [info["terminal_observation"] for info in infos if "terminal_observation" in info]
            assert all(set(final) == {"observation", "question"} for final in finals)
            steps.append({**obs, "rewards": rewards, "dones": dones, "finals": finals})
        runs[mode] = steps
    ended = sum(int(step["dones"].sum()) for step in runs["NextStep"][1:])
    assert ended >= 2
    for a, b in zip(runs["NextStep"], runs["SameStep"]):
        assert a.keys() == b.keys()
        for key in a:
            if key == "finals":
                assert [{k: v.tolist() for k, v in f.items()} for f in a[key]] == [
                    {k: v.tolist() for k, v in f.items()} for f in b[key]
                ]
            else:
                assert np.array_equal(a[key], b[key])


def test_options_and_bad_input_refuse_in_one_line():
    venv = to_sb3(gym.make_vec("graphtasks/Graph-v0", num_envs=2, task="neuronav/graph/t_graph"))
    venv.set_options({"start": 1})
    venv.reset()
    assert [info["state"] for info in venv.reset_infos] == [1, 1]
    venv.set_options([{"start": 1}, {"start": 2}])
    with pytest.raises(ValueError, match="one options dict for the batch"):
        venv.reset()
    with pytest.raises(ValueError, match="expected a gymnasium vector env"):
        to_sb3(gym.make(GRID, size="micro"))


def test_without_sb3_it_names_the_extra(monkeypatch):
    _adapter_class.cache_clear()
    monkeypatch.setitem(sys.modules, "stable_baselines3.common.vec_env", None)  # what a missing package gives
    try:
        with pytest.raises(ImportError, match=r"pip install 'graphtasks\[sb3\]'"):
            to_sb3(grid(1))
    finally:
        _adapter_class.cache_clear()
    code = "import sys, gym_bridge, gym_bridge.sb3; assert 'stable_baselines3' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def mean_return(venv, episodes: int, policy=None, seed: int = 1) -> float:
    """Mean return of the first `episodes` episodes that end (random actions without a policy)."""
    rng = np.random.default_rng(seed)
    venv.seed(seed)
    obs = venv.reset()
    returns: list[float] = []
    running = np.zeros(venv.num_envs)
    while len(returns) < episodes:
        actions = rng.integers(0, 4, venv.num_envs) if policy is None else policy.predict(obs)[0]
        obs, rewards, dones, _ = venv.step(actions)
        running += rewards
        returns.extend(running[dones].tolist())
        running[dones] = 0.0
    return float(np.mean(returns[:episodes]))


@pytest.mark.slow  # about 4 s of CPU (3 s of it learning), more on a loaded machine
def test_ppo_learns_on_the_wrapped_native_env():
    """PPO (SB3's, MlpPolicy with one 32-unit layer) on 8 copies of a 5 x 5 grid whose goal pays 1
    within 30 steps: a random policy gets there in under a fifth of its episodes, PPO after
    4,096 steps in nearly all (about 2.5 s of CPU)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: more threads only fight over the cores
    try:
        before, after, seconds, model = learn_and_evaluate()
    finally:
        torch.set_num_threads(threads)
    print(f"PPO on {GRID} micro: mean return {before:.3f} (random) -> {after:.3f} after 4096 steps, "
          f"{seconds:.1f} s CPU")
    assert before < 0.3
    assert after > before + 0.5
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw the adapter's episodes end


def learn_and_evaluate() -> tuple[float, float, float, PPO]:
    started = time.process_time()
    train = VecMonitor(to_sb3(grid(8)))  # SB3's episode statistics: ep_info_buffer
    model = PPO("MlpPolicy", train, n_steps=64, batch_size=128, n_epochs=4, learning_rate=3e-3,
                policy_kwargs={"net_arch": [32]}, seed=0, device="cpu")
    model.learn(4096)
    evaluation = to_sb3(grid(8))
    before, after = mean_return(evaluation, 200), mean_return(evaluation, 200, policy=model)
    return before, after, time.process_time() - started, model


def test_the_docstring_example_runs():
    import doctest

    import gym_bridge.sb3

    result = doctest.testmod(gym_bridge.sb3, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.slow  # a fresh interpreter imports torch and trains PPO again: about 8 s of CPU
def test_the_docs_example_runs():
    """docs/vector.md's SB3 block is not run by tests/test_docs.py (the sb3 extra is optional); it runs here."""
    from tests.test_docs import parse

    blocks = [b for b in parse(REPO / "docs" / "vector.md") if b.lang == "python" and "to_sb3" in b.code]
    assert len(blocks) == 1
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}  # torch's threads: see above
    result = subprocess.run([sys.executable, "-c", blocks[0].code], capture_output=True, text=True, env=env,
                            cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
