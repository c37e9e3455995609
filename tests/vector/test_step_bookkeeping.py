"""The shared step bookkeeping of the vector envs, checked against a plain per-copy count.

The base counts steps with a Python int and each copy's episode start, computes truncation
only when some copy can have reached the limit, and checks small batches of actions in
Python: these tests step envs through many episode ends, masked resets and every autoreset
mode and compare each step's flags and elapsed steps with a count kept here copy by copy.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import tasks
from gym_bridge import compile_task
from gym_bridge.grid.vector_env import GridVectorEnv
from gym_bridge.vector import GraphVectorEnv


@pytest.mark.parametrize("mode", list(AutoresetMode))
@pytest.mark.parametrize("n", [1, 5, 40])
def test_truncation_and_elapsed_steps_follow_a_per_copy_count(mode: AutoresetMode, n: int) -> None:
    venv = GridVectorEnv(n, "four_rooms", "small", episode_length=7, autoreset_mode=mode)
    rng = np.random.default_rng(3)
    venv.reset(seed=0)
    steps = np.zeros(n, dtype=np.int64)  # our own count of each copy's steps in its episode
    ended = np.zeros(n, dtype=bool)
    for t in range(300):
        if mode is AutoresetMode.NEXT_STEP:
            restarting = ended.copy()
        else:
            restarting = np.zeros(n, dtype=bool)
        _, reward, terminated, truncated, _ = venv.step(rng.integers(0, 4, n))
        steps += 1
        steps[restarting] = 0
        assert not (terminated[restarting] | truncated[restarting]).any()
        assert (reward[restarting] == 0).all()
        np.testing.assert_array_equal(truncated, (steps >= 7) & ~terminated)
        ended = terminated | truncated
        if mode is AutoresetMode.SAME_STEP:
            steps[ended] = 0
        np.testing.assert_array_equal(venv.elapsed_steps, steps)
        if mode is AutoresetMode.DISABLED and t % 11 == 10:  # copies past the limit walk on until reset
            mask = steps >= 7
            if t % 33 == 32:
                mask |= rng.random(n) < 0.5
            if mask.any():
                venv.reset(options={"reset_mask": mask})
                steps[mask] = 0
                np.testing.assert_array_equal(venv.elapsed_steps, steps)


def test_a_full_reset_restarts_every_count() -> None:
    venv = GraphVectorEnv(3, task=compile_task(tasks.build("neuronav/graph/neighborhood")), episode_length=4)
    venv.reset(seed=0)
    for _ in range(3):
        venv.step(np.zeros(3, dtype=np.int64))
    venv.reset()
    assert venv.elapsed_steps.tolist() == [0, 0, 0]
    for k in range(4):
        truncated = venv.step(np.zeros(3, dtype=np.int64))[3]
        assert truncated.all() == (k == 3)


@pytest.mark.parametrize("n", [3, 64])  # checked in Python, and by one numpy reduction
def test_actions_out_of_range_are_refused_for_small_and_large_batches(n: int) -> None:
    venv = GridVectorEnv(n, "four_rooms", "small")
    venv.reset(seed=0)
    for bad in (-1, 4, 2**40):
        actions = np.zeros(n, dtype=np.int64)
        actions[n - 1] = bad
        with pytest.raises(ValueError, match=r"every action must be in 0\.\.3"):
            venv.step(actions)
    with pytest.raises(ValueError, match="every action must be in"):
        venv.step(np.full(n, -1, dtype=np.int8))
    for dtype in (np.uint8, np.int16, np.dtype(">i8"), np.dtype("<i4")):
        obs = venv.step(np.full(n, 3, dtype=dtype))[0]
        assert obs.shape == (n,)
    venv.step([1] * n)  # a list works too


def test_small_and_large_batches_refuse_the_same_way() -> None:
    small, large = GridVectorEnv(2, "four_rooms", "small"), GridVectorEnv(40, "four_rooms", "small")
    messages = []
    for venv in (small, large):
        venv.reset(seed=0)
        actions = np.zeros(venv.num_envs, dtype=np.int64)
        actions[0], actions[1] = -2, 9
        with pytest.raises(ValueError) as caught:
            venv.step(actions)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == "actions: every action must be in 0..3, got -2..9"
