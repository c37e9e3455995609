"""PogeEnv: reference dynamics, the fixed bugs, gymnasium conventions, slips, pickling, determinism."""

from __future__ import annotations

import pickle
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from conftest import DATA, WORLDS
from gymnasium.utils.env_checker import check_env

import gym_bridge  # noqa: F401  registers graphtasks/Poge-v0
from graphstore import open_store
from gym_bridge.poge.env import PogeEnv
from gym_bridge.vector import PogeVectorEnv

UP, DOWN, LEFT, RIGHT = range(4)


@pytest.mark.parametrize("world", [w if w == "world1" else pytest.param(w, marks=pytest.mark.slow) for w in WORLDS])
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"is_partially_obs": False, "indicate_slip": True, "indicate_wall": True},
        {"obs_type": "onehot", "indicate_slip": True, "render_mode": "rgb_array"},
        {"force_determinism": True, "render_mode": "ansi"},
    ],
)
@pytest.mark.slow
def test_check_env_clean(world: str, kwargs: dict) -> None:
    env = gym.make("graphtasks/Poge-v0", world=f"poge/{world}", **kwargs)
    check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.slow
def test_gym_make_with_builtin_id_and_file(isolated_store: str) -> None:
    env = gym.make("graphtasks/Poge-v0", world="poge/world1", is_partially_obs=False)
    check_env(env.unwrapped)
    with open_store(isolated_store) as store:
        assert "poge/world1" in store  # a built-in world is put into the store on first use
    from_file = gym.make("graphtasks/Poge-v0", world=str(DATA / "world1.txt"), is_partially_obs=False)
    assert from_file.unwrapped.observation_names == env.unwrapped.observation_names
    assert gym.make("graphtasks/Poge-v0").unwrapped.task_id == "poge/world0"


def test_world3_partially_observable_runs_and_goal_is_observed_by_its_symbol() -> None:
    env = PogeEnv("poge/world3", is_partially_obs=True, force_determinism=True)
    env.reset(seed=0)
    # (4, 9) is the goal; its abstraction symbol is G (the reference crashed with KeyError('G'))
    env.reset(options={"tile": (3, 9)})
    obs, reward, terminated, truncated, info = env.step(DOWN)
    assert env.tile == (4, 9)
    assert (reward, terminated, truncated) == (100.0, True, False)
    assert info["observation"] == "G" == env.observation_names[obs]


def test_vocabulary_only_holds_observations_that_can_occur() -> None:
    plain = PogeEnv("poge/world0", is_partially_obs=False)
    assert len(plain.observation_names) == 13  # one per floor state: no slip or wall entries
    forced = PogeEnv("poge/world0", is_partially_obs=False, force_determinism=True, indicate_slip=True)
    assert not any("_slip_" in n for n in forced.observation_names)
    env = PogeEnv("poge/world0", is_partially_obs=False, indicate_slip=True, indicate_wall=True)
    rng = np.random.default_rng(1)
    seen = {env.reset(seed=1)[0]}
    for a in rng.integers(0, 4, 300_000).tolist():
        obs, _, terminated, truncated, info = env.step(a)
        assert env.observation_names[obs] == info["observation"]
        seen.add(obs)
        if terminated or truncated:
            seen.add(env.reset()[0])
    assert seen == set(range(len(env.observation_names)))


@pytest.mark.parametrize(
    "tile, action, expected",
    [
        ((2, 5), UP, {(1, 5): 0.75, (2, 4): 0.25}),  # 1-up-[up:0.75, left:0.25]
        ((1, 5), LEFT, {(1, 4): 0.8, (1, 5): 0.1, (2, 5): 0.1}),  # 2-left-[left:0.8, up:0.1 (wall), down:0.1]
        ((1, 3), DOWN, {(1, 3): 0.7, (1, 4): 0.3}),  # 3-down-[down:0.7 (wall), right:0.3]
    ],
)
def test_slip_frequencies_follow_the_rule(tile, action, expected) -> None:
    env = PogeEnv("poge/world0", is_partially_obs=False)
    env.reset(seed=42)
    counts: Counter = Counter()
    draws = 100_000
    for _ in range(draws):
        env.reset(options={"tile": tile})
        env.step(action)
        counts[env.tile] += 1
    assert set(counts) == set(expected)
    for where, p in expected.items():
        assert abs(counts[where] / draws - p) < 0.01, (where, counts[where] / draws, p)


def observed_after(env: PogeEnv, tile: tuple[int, int], action: int, times: int = 200) -> set[str]:
    env.reset(seed=3)
    names = set()
    for _ in range(times):
        env.reset(options={"tile": tile})
        names.add(env.step(action)[4]["observation"])
    return names


def test_slip_and_wall_observations() -> None:
    env = PogeEnv("poge/world0", indicate_slip=True, indicate_wall=True)
    assert observed_after(env, (1, 5), LEFT) == {"1", "1_slip_up_wall", "1_slip_down"}


def test_fully_observable_ignores_indicate_slip_like_the_reference() -> None:
    """The reference (README: the flag is ignored when fully observable) never appends `_slip_`
    to a (row, col) observation; walls are still marked."""
    env = PogeEnv("poge/world0", is_partially_obs=False, indicate_slip=True, indicate_wall=True)
    assert observed_after(env, (1, 5), LEFT) == {"(1,4)", "(1,5)_wall", "(2,5)"}
    assert not any("_slip_" in name for name in env.observation_names)
    venv = PogeVectorEnv(2, "poge/world0", is_partially_obs=False, indicate_slip=True)
    assert list(venv.observation_names) == list(PogeEnv("poge/world0", is_partially_obs=False).observation_names)


def test_doors_rewards_terminal_and_penalty() -> None:
    env = PogeEnv("poge/world1", is_partially_obs=False, force_determinism=True, step_penalty=0.5)
    env.reset(seed=0)
    assert env.tile == (2, 7)
    assert env.step(LEFT)[1] == -0.5 and env.step(LEFT)[1] == -0.5
    env.step(LEFT)  # (2, 5) -> through the door (2, 4) -> (2, 3) in one step
    assert env.tile == (2, 3)
    assert env.step(LEFT)[1] == 1.0  # 'a' at (2, 2)
    env.step(RIGHT)
    assert env.step(LEFT)[1] == -0.5  # one-time reward already collected: the penalty
    assert env.step(UP)[1] == -0.5 and env.tile == (1, 2)
    assert env.step(UP)[1] == -0.5 and env.tile == (1, 2)  # wall: no move
    env.reset()
    env.step(LEFT)
    obs, reward, terminated, truncated, info = env.step(UP)  # T at (1, 6)
    assert (env.tile, reward, terminated, truncated) == ((1, 6), -100.0, True, False)


def test_rewards_every_entry_without_one_time_rewards() -> None:
    env = PogeEnv("poge/world1", is_partially_obs=False, force_determinism=True, one_time_rewards=False)
    env.reset(seed=0, options={"tile": (2, 3)})
    assert [env.step(a)[1] for a in (LEFT, RIGHT, LEFT)] == [1.0, 0.0, 1.0]


def test_toggle_flips_stochastic_behaviour() -> None:
    env = PogeEnv("poge/world3", is_partially_obs=False)
    env.reset(seed=0)
    assert env.tile == (4, 2) and env.stochastic
    env.step(LEFT)
    env.step(DOWN)
    env.step(RIGHT)  # onto '@' at (5, 2)
    assert env.tile == (5, 2) and not env.stochastic
    for _ in range(50):  # rule 2-up would slip right/left; with slips off, up is up
        env.step(UP)
        assert env.tile == (4, 2)
        env.step(DOWN)  # rule 1-down would never go down; off: down onto '@' again, slips back on
        assert env.tile == (5, 2) and env.stochastic
        env.step(UP)  # 2-up-[right:0.85 (a wall: stay), left:0.15]
        assert env.tile in ((5, 2), (5, 1)) and env.stochastic
        env.reset(options={"tile": (5, 1)})
        env.step(RIGHT)
        assert not env.stochastic
    env.reset()
    assert env.stochastic  # reset turns stochastic behaviour back on


def test_truncation_is_reported_as_truncated() -> None:
    env = PogeEnv("poge/world0", max_ep_len=5)
    env.reset(seed=0)
    flags = [env.step(RIGHT)[2:4] for _ in range(5)]  # a wall on the right of the start
    assert flags == [(False, False)] * 4 + [(False, True)]


def test_same_seed_same_trajectory_and_pickling() -> None:
    def run(env: PogeEnv, actions: list[int]) -> list:
        out = []
        for a in actions:
            obs, reward, terminated, truncated, info = env.step(a)
            out.append((obs, reward, terminated, truncated, info["observation"]))
            if terminated or truncated:
                out.append(env.reset()[0])
        return out

    actions = np.random.default_rng(5).integers(0, 4, 5_000).tolist()
    a = PogeEnv("poge/world1", indicate_slip=True)
    b = PogeEnv("poge/world1", indicate_slip=True)
    a.reset(seed=11)
    b.reset(seed=11)
    assert run(a, actions) == run(b, actions)
    c = pickle.loads(pickle.dumps(a))
    assert run(a, actions) == run(c, actions)
    d = PogeEnv("poge/world1", indicate_slip=True)
    d.reset(seed=12)
    assert run(d, actions) != run(b, actions)


def test_onehot_matches_index() -> None:
    env = PogeEnv("poge/world2", obs_type="onehot", indicate_wall=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (len(env.observation_names),) and obs.sum() == 1.0
    assert env.observation_names[int(obs.argmax())] == info["observation"]
    obs2, *_, info2 = env.step(RIGHT)
    assert env.observation_names[int(obs2.argmax())] == info2["observation"]
    obs2[0] = 7.0  # the caller's copy: the next observation is unaffected
    assert env.step(LEFT)[0].max() == 1.0


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"obs_type": "pixels"}, "obs_type"),
        ({"max_ep_len": 0}, "max_ep_len"),
        ({"world": "missing/world.txt"}, "no world file"),
        ({"world": "poge/nope"}, "'poge/nope' not found"),
        ({"goal_reward": "x"}, "goal_reward"),
    ],
)
def test_bad_arguments_say_what_was_expected(kwargs: dict, words: str) -> None:
    with pytest.raises((ValueError, KeyError), match=words):
        PogeEnv(**kwargs)


def test_reset_starts_on_a_tile_unreachable_from_the_start() -> None:
    """world2's (1, 31) and (1, 32) lie behind the goal: no episode from `E` reaches them, but
    POGE's env observes them (it has an observation for every tile but walls and doors), so a
    reset may put the player there; from there the goal is one step left."""
    env = PogeEnv("poge/world2", is_partially_obs=False, indicate_wall=True, force_determinism=True)
    obs, info = env.reset(seed=0, options={"tile": (1, 32)})
    assert env.tile == (1, 32) and info["observation"] == "(1,32)" == env.observation_names[obs]
    assert env.step(UP)[4]["observation"] == "(1,32)_wall"
    obs, reward, terminated, truncated, info = env.step(LEFT)
    assert (env.tile, info["observation"], reward, terminated) == ((1, 31), "(1,31)", 0.0, False)
    assert env.step(LEFT)[1:3] == (100.0, True) and env.tile == (1, 30)
    venv = PogeVectorEnv(3, "poge/world2", is_partially_obs=False, indicate_wall=True, force_determinism=True)
    assert list(venv.observation_names) == list(env.observation_names)
    obs_v, _ = venv.reset(seed=0, options={"tile": (1, 32)})
    assert obs_v.tolist() == [env.observation_names.index("(1,32)")] * 3


@pytest.mark.parametrize(
    "tile, words",
    [
        ((0, 0), r"tile \(0, 0\) is a wall: the player cannot stand on it"),
        ((1, 30), r"tile \(1, 30\) is a goal: it ends the episode"),
        ((5, 1), r"tile \(5, 1\) is off the map \(rows 0..4, columns 0..33\)"),
        ((-1, 3), r"off the map"),
        ("a", r"'tile' must be \(row, col\)"),
    ],
)
def test_reset_refuses_tiles_no_episode_can_start_on_in_one_line(tile: object, words: str) -> None:
    env = PogeEnv("poge/world2")
    with pytest.raises(ValueError, match=words) as caught:
        env.reset(seed=0, options={"tile": tile})
    assert "\n" not in str(caught.value)


def test_reset_refuses_doors_and_terminal_tiles() -> None:
    env = PogeEnv("poge/world1", is_partially_obs=False)
    with pytest.raises(ValueError, match=r"\(2, 4\) is a door: the player cannot stand on it"):
        env.reset(seed=0, options={"tile": (2, 4)})
    with pytest.raises(ValueError, match=r"\(1, 6\) is a terminal: it ends the episode"):
        env.reset(seed=0, options={"tile": (1, 6)})


@pytest.mark.parametrize("world", ["world1", "world2", "world3"])
def test_every_tile_an_episode_can_start_on_is_accepted_and_seen_by_its_name(world: str) -> None:
    """Experiments draw starts from `start_tiles`; the env takes each, showing the tile's name."""
    import tasks
    from gym_bridge.poge.family import start_tiles

    env = PogeEnv(f"poge/{world}", is_partially_obs=False, indicate_wall=True)
    env.reset(seed=0)
    tiles = start_tiles(tasks.build(f"poge/{world}"))
    assert len(tiles) == sum(kind in ("floor", "start", "toggle") for kind in env.compiled.kinds)
    for tile in tiles:
        obs, info = env.reset(options={"tile": tile})
        assert env.tile == tile and info["observation"] == f"({tile[0]},{tile[1]})" == env.observation_names[obs]
