"""GridEnv: gymnasium conformance, dynamics and step order, observations, errors."""

from __future__ import annotations

import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gym_bridge  # noqa: F401  (registers the ids)
from gym_bridge.grid import GRID_OBSERVATIONS, GridEnv, register_grid_cypher_observation
from gym_bridge.grid.family import grid_env_id
from tasks.grid.maps import template_names

N = 11  # small


def _check_clean(env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=False)
    messages = [str(w.message) for w in caught if "alternative render modes" not in str(w.message)]
    assert not messages, messages


# three templates (walls, keys and doors, warps) in the quick run; every one in the full run
CHECKED_QUICKLY = {"four_rooms", "two_step", "s_maze"}


@pytest.mark.parametrize(
    "template", [t if t in CHECKED_QUICKLY else pytest.param(t, marks=pytest.mark.slow) for t in template_names()]
)
@pytest.mark.slow
def test_check_env_every_registered_id(template):
    env = gym.make(grid_env_id(template), render_mode="rgb_array", resolution=64)
    _check_clean(env.unwrapped)
    env = gym.make("graphtasks/Grid-v0", template=template, size="micro", render_mode="ansi")
    _check_clean(env.unwrapped)


@pytest.mark.parametrize("orientation", ["fixed", "variable"])
@pytest.mark.parametrize("obs_type", GRID_OBSERVATIONS.names())
def test_check_env_every_obs_type(obs_type, orientation):
    env = GridEnv(
        "four_rooms_split", "small", obs_type=obs_type, orientation=orientation, resolution=48, render_mode="rgb_array"
    )
    _check_clean(env)


SHAPES = {
    # obs: (fixed shape, variable shape, dtype)
    "onehot": ((N * N,), (N * N * 4,), np.float32),
    "twohot": ((2 * N,), (2 * N + 4,), np.float32),
    "geometric": ((2,), (6,), np.float32),
    "boundary": ((4,), (8,), np.float32),
    "visual": ((64, 64, 3), (64, 64, 3), np.uint8),
    "images": ((32, 32, 3), (32, 32, 3), np.uint8),
    "window": ((64, 64, 3), (64, 64, 3), np.uint8),
    "window_tight": ((64, 64, 3), (64, 64, 3), np.uint8),
    "symbolic": ((N, N, 6), (N, N, 6), np.float32),
    "symbolic_window": ((5, 5, 6), (5, 5, 6), np.float32),
    "symbolic_window_tight": ((3, 3, 6), (3, 3, 6), np.float32),
}


@pytest.mark.parametrize("obs_type", sorted(SHAPES))
def test_observation_shapes_and_dtypes(obs_type):
    for i, orientation in enumerate(["fixed", "variable"]):
        env = GridEnv("four_rooms", "small", obs_type=obs_type, orientation=orientation, resolution=64)
        obs, _ = env.reset(seed=3)
        assert obs.shape == SHAPES[obs_type][i] == env.observation_space.shape
        assert obs.dtype == SHAPES[obs_type][2] == env.observation_space.dtype
        for a in range(3):
            obs, *_ = env.step(a)
            assert env.observation_space.contains(obs)


def test_index_and_ascii_observations():
    env = GridEnv("four_rooms", "small", orientation="variable")
    assert env.observation_space == gym.spaces.Discrete(4 * N * N)
    obs, info = env.reset(seed=0)
    assert obs == info["state"] == 9 * N + 9
    obs, *_ = env.step(1)  # turn right: facing east
    assert obs == 1 * N * N + 9 * N + 9
    env = GridEnv("four_rooms", "small", obs_type="ascii")
    text, _ = env.reset(seed=0)
    lines = text.split("\n")
    assert len(lines) == N and lines[0] == "B" * N and lines[1][1] == "R" and lines[9][9] == "A"


def test_onehot_and_state_index_agree():
    env = GridEnv("four_rooms", "small", obs_type="onehot", orientation="variable")
    obs, info = env.reset(seed=0)
    for action in [1, 2, 2, 0, 2]:
        obs, _, _, _, info = env.step(action)
        assert obs.shape == (4 * N * N,) and obs.argmax() == info["state"] == env.state and obs.sum() == 1


def test_symbolic_channels_and_window_walls():
    env = GridEnv("four_rooms_split", "small", obs_type="symbolic")
    obs, _ = env.reset(seed=0)
    assert obs[8, 8, 0] == 1 and obs[..., 0].sum() == 1  # agent
    assert obs[2, 2, 1] == 1.0  # reward
    assert obs[2, 8, 2] == 1 and obs[2, 5, 3] == 1 and obs[8, 2, 5] == 1  # key, door, warp
    assert np.array_equal(obs[..., 4], env.compiled.wall.astype(np.float32))  # walls
    env = GridEnv("four_rooms_split", "small", obs_type="symbolic_window")
    obs, _ = env.reset(seed=0)
    # the agent at (8, 8): the window covers rows 6..10, cols 6..10 (row 10 and col 10 are the outer wall)
    assert np.array_equal(obs[..., 4], env.compiled.wall[6:11, 6:11].astype(np.float32))
    assert obs[2, 2, 0] == 1 and 0 < obs[..., 4].sum() < 25  # not all ones (reference bug)
    env = GridEnv("empty", "small", obs_type="symbolic_window", agent_start=(1, 1))
    obs, _ = env.reset(seed=0)
    assert obs[0, :, 4].tolist() == [1.0] * 5  # off the grid counts as wall
    env = GridEnv("empty", "small", obs_type="symbolic", visible_walls=False)
    obs, _ = env.reset(seed=0)
    assert obs[..., 4].sum() == 0


def test_symbolic_shows_orientation_in_variable_mode():
    env = GridEnv("empty", "small", obs_type="symbolic", orientation="variable")
    first, _ = env.reset(seed=0)
    turned, *_ = env.step(1)
    assert first[9, 9, 0] != turned[9, 9, 0] and turned[..., 0].sum() > 0


def test_boundary_rays_and_observing_changes_nothing():
    env = GridEnv("two_rooms", "small", obs_type="boundary", agent_start=(6, 5))
    obs, _ = env.reset(seed=0)
    # door at (5, 5) north of the agent is closed: the northern ray stops there
    assert obs[0] == 0.0
    assert obs[2] == pytest.approx(3 / N)  # rows 7, 8, 9 south of the agent
    assert env.keys_held == 0 and (5 * N + 5) in env.grid_state.doors  # observing opened nothing
    env = GridEnv("empty", "small", obs_type="boundary", orientation="variable")
    obs, _ = env.reset(seed=0)  # at (9, 9) facing north: ahead 8, right 0, behind 0, left 8
    assert obs[:4] == pytest.approx([8 / N, 0, 0, 8 / N]) and obs[4:].tolist() == [1, 0, 0, 0]
    obs, *_ = env.step(1)  # facing east: ahead 0 (wall), right 0, behind 8, left 8
    assert obs[:4] == pytest.approx([0, 0, 8 / N, 8 / N]) and obs[4:].tolist() == [0, 1, 0, 0]


def test_doors_need_and_use_up_a_key():
    env = GridEnv("two_rooms", "small", agent_start=(6, 5))
    env.reset(seed=0)
    env.step(0)
    assert env.agent_pos == (6, 5)  # door closed, no key
    objects = {"rewards": {(1, 5): 1.0}, "keys": [[6, 5], [6, 4]], "doors": {(5, 5): "h"}}  # keys as lists
    env = GridEnv("two_rooms", "small", agent_start=(7, 5), objects=objects)
    env.reset(seed=0)
    env.step(0)  # onto (6, 5): key picked up
    env.step(3)  # onto (6, 4): second key
    env.step(1)
    assert env.keys_held == 2 and env.agent_pos == (6, 5)
    env.step(0)  # through the door: uses one key
    assert env.agent_pos == (5, 5) and env.keys_held == 1
    env.step(2)
    env.step(0)  # the door stays open
    assert env.agent_pos == (5, 5) and env.keys_held == 1


def test_rewards_collected_once_and_terminate_flags():
    objects = {"rewards": {(9, 8): [0.5, True, False], (9, 7): 2.0}}
    env = GridEnv("empty", "small", objects=objects, terminate_on_reward=False)
    env.reset(seed=0)
    _, r, term, *_ = env.step(3)
    assert (r, term) == (0.5, False)
    _, r, term, *_ = env.step(1)
    _, r, term, *_ = env.step(3)
    assert (r, term) == (0.0, False)  # collected once
    _, r, term, *_ = env.step(3)
    assert (r, term) == (2.0, False)  # terminate_on_reward=False
    env = GridEnv("empty", "small", objects=objects)
    env.reset(seed=0)
    env.step(3)
    _, r, term, *_ = env.step(3)
    assert (r, term) == (2.0, True)


def test_bumping_a_wall_on_a_reward_collects_it_and_manual_collect():
    env = GridEnv("empty", "small", agent_start=(1, 1))
    env.reset(seed=0)
    _, r, term, *_ = env.step(0)  # bump north, still on the reward
    assert (r, term) == (1.0, True)
    env = GridEnv("empty", "small", agent_start=(1, 2), manual_collect=True, use_noop=True)
    assert env.action_space.n == 6
    env.reset(seed=0)
    _, r, term, *_ = env.step(3)
    assert (r, term, env.agent_pos) == (0.0, False, (1, 1))
    _, r, term, *_ = env.step(4)  # no-op
    assert (r, term) == (0.0, False)
    _, r, term, *_ = env.step(5)  # collect
    assert (r, term) == (1.0, True)


def test_step_order_reward_then_key_then_warp():
    objects = {"rewards": {(9, 8): [1.0, True, False]}, "keys": [(9, 8)], "warps": {(9, 8): (1, 1)}}
    env = GridEnv("empty", "small", objects=objects)
    env.reset(seed=0)
    _, r, term, _, info = env.step(3)
    assert r == 1.0 and not term and env.keys_held == 1 and env.agent_pos == (1, 1) and info["state"] == N + 1


def test_time_penalty_is_a_cost_and_negative_is_an_error():
    env = GridEnv("empty", "small", time_penalty=0.1)
    env.reset(seed=0)
    assert env.step(0)[1] == pytest.approx(-0.1)
    env = GridEnv("empty", "small", time_penalty=0.1, agent_start=(1, 2))
    env.reset(seed=0)
    assert env.step(3)[1] == pytest.approx(0.9)
    with pytest.raises(ValueError, match="time_penalty: expected a non-negative number"):
        GridEnv("empty", "small", time_penalty=-0.1)


def test_episode_length_truncates():
    env = GridEnv("empty", "small", episode_length=5)
    env.reset(seed=0)
    flags = [env.step(2)[3] for _ in range(5)]
    assert flags == [False] * 4 + [True]
    env = GridEnv("empty", "small", episode_length=None)
    env.reset(seed=0)
    assert not any(env.step(2)[3] for _ in range(500))


def test_random_start_uses_the_seed():
    env = GridEnv("empty", "small", random_start=True)
    starts = [env.reset(seed=s)[1]["state"] for s in range(20)]
    again = [env.reset(seed=s)[1]["state"] for s in range(20)]
    assert starts == again and len(set(starts)) > 5
    assert all(not env.compiled.wall.reshape(-1)[s] for s in starts)


def test_stochasticity_replaces_actions_from_the_seed():
    env = GridEnv("empty", "small", stochasticity=1.0)
    env.reset(seed=1)
    cells = {env.step(0)[4]["state"] for _ in range(50)}
    assert len(cells) > 3  # always 'north' would stop at the wall


def _trajectory(env, seed, steps=300):
    out = []
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for a in rng.integers(0, env.action_space.n, steps):
        obs, r, te, tr, info = env.step(int(a))
        out.append((np.asarray(obs).tobytes() if not isinstance(obs, str) else obs, r, te, tr, info["state"]))
        if te or tr:
            obs, info = env.reset()
    return out


@pytest.mark.parametrize("obs_type", ["index", "symbolic", "visual"])
@pytest.mark.slow
def test_same_seed_same_trajectory(obs_type):
    def make():
        return GridEnv(
            "four_rooms_split", "small", obs_type=obs_type, stochasticity=0.3, random_start=True, resolution=32
        )
    assert _trajectory(make(), 7) == _trajectory(make(), 7)
    assert _trajectory(make(), 7) != _trajectory(make(), 8)


@pytest.mark.parametrize("obs_type", GRID_OBSERVATIONS.names())
def test_pickling_mid_episode(obs_type):
    env = GridEnv(
        "four_rooms_split", "small", obs_type=obs_type, orientation="variable", stochasticity=0.2, resolution=32
    )
    env.reset(seed=5)
    for a in [1, 2, 2, 0]:
        env.step(a)
    copy = pickle.loads(pickle.dumps(env))
    for a in [2, 2, 1, 2, 0, 2, 2, 2]:
        one, two = env.step(a), copy.step(a)
        assert np.array_equal(np.asarray(one[0]), np.asarray(two[0])) and one[1:4] == two[1:4]


def test_rendering_colours_and_agent_triangle():
    env = GridEnv("four_rooms", "small", render_mode="rgb_array", resolution=110)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (110, 110, 3) and frame.dtype == np.uint8
    cell = 10  # 110 / 11
    assert tuple(frame[5, 5]) in {(165, 165, 165), (125, 125, 125)}  # outer wall
    assert tuple(frame[cell + 5, cell + 5]) == (30, 80, 230)  # the blue reward at (1, 1)
    env.step(3)  # move west to (9, 8): the triangle points west
    frame = env.render()
    y, x0 = 9 * cell, 8 * cell
    row = frame[y + 5, x0 : x0 + cell]
    black = np.flatnonzero((row == 0).all(axis=1))
    assert black.size and black.min() < cell / 2 - 1  # the tip reaches the west half at mid height
    env.step(0)  # north: at mid height the triangle is wide, at the top narrow
    frame = env.render()
    top = (frame[8 * cell + 3, x0 : x0 + cell] == 0).all(axis=1).sum()
    bottom = (frame[8 * cell + 7, x0 : x0 + cell] == 0).all(axis=1).sum()
    assert bottom > top
    text = GridEnv("four_rooms", "small", render_mode="ansi")
    text.reset(seed=0)
    assert text.render().splitlines()[9][9] == "A"


def test_visual_observation_equals_render():
    env = GridEnv("four_rooms_split", "small", obs_type="visual", render_mode="rgb_array", resolution=64)
    obs, _ = env.reset(seed=0)
    for a in [3, 3, 3, 3, 3, 3]:
        obs, *_ = env.step(a)
        assert np.array_equal(obs, env.render())


def test_custom_cypher_observation_of_cells():
    register_grid_cypher_observation(
        "test_row_col",
        "MATCH (c:Cell) WHERE c.task = $task "
        "RETURN c.index, c.row * 1.0, c.col * 1.0, CASE WHEN c.wall THEN 1.0 ELSE 0.0 END",
        low=0.0,
        high=16.0,
    )
    env = GridEnv("four_rooms", "small", obs_type="test_row_col")
    obs, _ = env.reset(seed=0)
    assert obs.tolist() == [9.0, 9.0, 0.0]
    obs, *_ = env.step(0)
    assert obs.tolist() == [8.0, 9.0, 0.0]
    _check_clean(env)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"template": "five_rooms"}, "template: unknown grid template 'five_rooms'"),
        ({"size": "huge"}, "size: template 'four_rooms' has sizes micro, small, large, not 'huge'"),
        ({"obs_type": "pixels"}, "obs_type: unknown grid observation type 'pixels'"),
        ({"orientation": "free"}, "orientation: expected 'fixed' or 'variable'"),
        ({"stochasticity": 1.5}, "stochasticity: expected a probability"),
        ({"agent_start": (0, 0)}, "agent_start: (0, 0) is not a free cell"),
        ({"objects": {"rewards": {(0, 0): 1}}}, "objects.rewards[(0, 0)]: cell (0, 0) is a wall"),
        ({"objects": {"coins": []}}, "objects: unknown object kind(s) coins"),
        ({"objects": {"doors": {(1, 1): "x"}}}, "door orientation must be 'h' or 'v'"),
        ({"episode_length": 0}, "episode_length: expected a positive integer"),
        ({"use_noop": "yes"}, "use_noop: expected True or False"),
        ({"resolution": 3}, "resolution: expected an integer"),
        ({"render_mode": "human"}, "render_mode: expected one of"),
    ],
)
def test_bad_parameters_give_clear_errors(kwargs, message):
    with pytest.raises(Exception) as info:
        GridEnv(**kwargs)
    assert message in str(info.value)


def test_reset_options():
    env = GridEnv("empty", "small")
    _, info = env.reset(seed=0, options={"agent_pos": (2, 3)})
    assert info["state"] == 2 * N + 3
    _, info = env.reset(options={"objects": {"rewards": {(2, 4): 3.0}}, "agent_pos": (2, 3)})
    assert env.step(1)[1:3] == (3.0, True)
    _, info = env.reset()
    assert info["state"] == 9 * N + 9  # back to the template's start and objects
    with pytest.raises(ValueError, match="reset options: unknown key"):
        env.reset(options={"start": 1})
    with pytest.raises(ValueError, match="action: expected 0..3"):
        env.step(7)


def test_custom_cypher_observation_per_state_in_variable_mode():
    # orientation as a feature: one row per (orientation, cell) state, built with UNWIND
    register_grid_cypher_observation(
        "test_heading",
        "MATCH (c:Cell) WHERE c.task = $task UNWIND [0, 1, 2, 3] AS o RETURN o * 121 + c.index, o * 1.0",
        low=0.0,
        high=3.0,
    )
    env = GridEnv("four_rooms", "small", obs_type="test_heading", orientation="variable")
    obs, _ = env.reset(seed=0)
    assert obs.tolist() == [0.0]
    obs, *_ = env.step(0)  # turn left: facing west
    assert obs.tolist() == [3.0]
    with pytest.raises(ValueError, match="expected 121 \\(one per cell\\)"):
        GridEnv("four_rooms", "small", obs_type="test_heading")  # per-state rows need variable mode


def test_custom_cypher_observation_errors():
    register_grid_cypher_observation(
        "test_gappy", "MATCH (c:Cell) WHERE c.task = $task AND c.row > 0 RETURN c.index, 1.0"
    )
    with pytest.raises(ValueError, match="no complete row for cell"):
        GridEnv("four_rooms", "small", obs_type="test_gappy")


def test_ascii_with_list_format_rewards_and_hidden_rewards():
    objects = {"rewards": {(1, 1): [1.0, True, True], (1, 2): [-1.0, True, False], (1, 3): [5.0, False, True]}}
    env = GridEnv("empty", "small", obs_type="ascii", objects=objects)
    text, _ = env.reset(seed=0)
    assert text.split("\n")[1][:5] == "BRL  "  # the hidden reward at (1, 3) is not shown


# a key at (1, 2), a warp from (1, 3) onto the closed door at (1, 4)
WARP_ONTO_DOOR = {"keys": [(1, 2)], "warps": {(1, 3): (1, 4)}, "doors": {(1, 4): "v"}}


def test_bumping_a_wall_on_a_closed_door_keeps_the_key():
    """neuro-nav uses a key only when moving into a closed door (check_target of the new cell)."""
    env = GridEnv("empty", "small", agent_start=(2, 2), objects=WARP_ONTO_DOOR, obs_type="ascii")
    env.reset(seed=0)
    env.step(0)  # onto the key
    text, *_ = env.step(1)  # east onto the warp: carried onto the closed door
    assert env.agent_pos == (1, 4) and env.keys_held == 1 and text.split("\n")[1][4] == "D"
    text, *_ = env.step(0)  # bump the wall to the north while on the door
    assert env.agent_pos == (1, 4) and env.keys_held == 1 and text.split("\n")[1][4] == "D"
    env.step(1)  # east off the door (moving out of a door cell needs nothing) ...
    assert env.agent_pos == (1, 5) and env.keys_held == 1
    env.step(3)  # ... and back west into it: now the key opens it
    assert env.agent_pos == (1, 4) and env.keys_held == 0


def test_ascii_draws_objects_over_the_agent_like_neuro_nav():
    """neuro-nav's make_ascii_obs marks the agent first and the objects after it."""
    objects = {"rewards": {(9, 8): 1.0}, "keys": [(2, 2)]}
    env = GridEnv("empty", "small", obs_type="ascii", render_mode="ansi", agent_start=(9, 8), objects=objects,
                  manual_collect=True, use_noop=True)
    text, _ = env.reset(seed=0)
    assert text.split("\n")[9][8] == "R" and "A" not in text  # standing on an uncollected reward
    assert env.render().split("\n")[9][8] == "R"
    text, *_ = env.step(3)  # west: an empty cell shows the agent
    assert text.split("\n")[9][7] == "A" and text.split("\n")[9][8] == "R"


def test_no_time_penalty_pays_plus_zero_in_both_envs():
    """A step that earns nothing pays 0.0, not -0.0 (which prints as '-0.0' in logs and tables)."""
    from gym_bridge.vector import GridVectorEnv

    env = GridEnv("empty", "small")
    env.reset(seed=0)
    reward = env.step(0)[1]
    assert reward == 0.0 and math.copysign(1.0, reward) == 1.0
    venv = GridVectorEnv(3, "empty", "small")
    venv.reset(seed=0)
    rewards = venv.step(np.zeros(3, dtype=np.int64))[1]
    assert not np.signbit(rewards).any()
