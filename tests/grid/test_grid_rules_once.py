"""The grid's settings and object rules are written once: `GridSettings` (the parameters both envs
take, checked field by field) and `ObjectRule` (doors, keys, rewards, warps over lanes), which the
single env calls for its one lane and the vector env for many, with the same numbers."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np
import pytest

from gym_bridge.grid import GridEnv, GridSettings, GridVectorEnv, Lanes, ObjectRule, grid_rules

N = 11  # the small grids are 11 x 11: cell = row * N + col

KEYS_AND_DOORS = {  # keys on both sides of two doors, near the start; a warp onto a key and one next to a door
    "rewards": {(9, 9): [1.0, True, False], (4, 4): [0.5, True, True]},
    "keys": [(9, 7), (8, 9), (6, 6), (7, 4)],
    "doors": {(8, 8): "h", (9, 5): "v", (5, 5): "h"},
    "warps": {(7, 9): (6, 6), (2, 2): (8, 4)},
}


def lane_row(env: GridEnv, obs: Any, reward: float, term: bool, trunc: bool, state: int) -> tuple:
    """What one step shows of a lane: observation, reward, ends, state, keys held, doors closed, keys left."""
    return (np.asarray(obs).tolist(), float(reward), bool(term), bool(trunc), int(state), env.keys_held,
            tuple(sorted(env.grid_state.doors)), tuple(sorted(env.grid_state.keys)))


@pytest.mark.parametrize("kwargs", [
    {"template": "empty", "objects": KEYS_AND_DOORS, "agent_start": (9, 8), "terminate_on_reward": False},
    {"template": "empty", "objects": KEYS_AND_DOORS, "agent_start": (8, 7), "orientation": "variable",
     "use_noop": True, "obs_type": "symbolic"},
    {"template": "two_rooms", "agent_start": (6, 5), "manual_collect": True, "time_penalty": 0.01},
    {"task": "neuronav/grid/four_rooms_split/small", "obs_type": "onehot", "agent_start": (3, 8)},
])
@pytest.mark.slow
def test_door_key_rule_gives_the_same_trajectories_in_the_single_env_and_every_lane(kwargs: dict[str, Any]) -> None:
    lanes = 8
    venv = GridVectorEnv(lanes, episode_length=60, **kwargs)
    rules = venv.rules
    ahead = np.array(rules.ahead)  # the cell a move would reach, to count the moves a closed door refused
    actions = np.random.default_rng(5).integers(0, venv.n_actions, (400, lanes))
    venv.reset(seed=0)
    got: list[list[tuple]] = [[] for _ in range(lanes)]
    opened = refused = picked = 0
    for row in actions:
        before, held, closed = venv.pos.copy(), venv.keys_held.copy(), venv.doors_closed.copy()
        if not rules.variable:
            moves = row < 4
            target = ahead[np.where(moves, row, 0), before]
            for lane in np.flatnonzero(moves).tolist():
                shut_doors = {c for c, shut in zip(rules.objects.doors, closed[lane]) if shut}
                refused += int(target[lane] in shut_doors and held[lane] == 0)
        obs, reward, term, trunc, info = venv.step(row)
        opened += int((closed & ~venv.doors_closed).sum())
        picked += int((venv.keys_held > held).sum())
        for i in range(lanes):
            doors = tuple(c for c, shut in zip(rules.objects.doors, venv.doors_closed[i]) if shut)
            keys = tuple(c for c, left in zip(rules.objects.keys, venv.keys_left[i]) if left)
            got[i].append((np.asarray(obs[i]).tolist(), float(reward[i]), bool(term[i]), bool(trunc[i]),
                           int(info["state"][i]), int(venv.keys_held[i]), doors, keys))
    assert picked > 0 and opened > 0  # keys were picked up and doors opened with them
    assert rules.variable or refused > 0  # and moves into a closed door without a key were refused
    for i in range(lanes):
        single = GridEnv(episode_length=60, **kwargs)
        single.reset(seed=0)
        expected, ended = [], False
        for action in actions[:, i].tolist():
            if ended:  # the vector env's next step is the reset (NEXT_STEP)
                obs, info = single.reset()
                expected.append(lane_row(single, obs, 0.0, False, False, info["state"]))
                ended = False
                continue
            obs, reward, term, trunc, info = single.step(action)
            expected.append(lane_row(single, obs, reward, term, trunc, info["state"]))
            ended = term or trunc
        assert got[i] == expected, f"lane {i}"


def test_object_rule_picks_up_a_key_opens_a_door_with_it_and_blocks_otherwise() -> None:
    settings = GridSettings("empty", objects={"keys": [(9, 7)], "doors": {(9, 6): "v"}, "rewards": {}},
                            agent_start=(9, 8))
    rules = grid_rules(settings)
    rule = ObjectRule.build(rules.objects, rules.n_cells, rules.collect)
    lanes = Lanes.full(rules.objects, 4)
    lanes.keys_held[:] = [0, 1, 1, 0]
    door, key = 9 * N + 6, 9 * N + 7
    # lane 0: no key, into the door; 1: a key, into the door; 2: a key, already on the door cell; 3: onto the key
    pos = np.array([key, key, door, 9 * N + 8])
    t = np.array([door, door, door, key])
    reward, ended = np.zeros(4), np.zeros(4, dtype=bool)
    changed, opened = rule.step(lanes, np.arange(4), pos, t, np.full(4, 3), reward, ended)
    assert changed and opened
    assert t.tolist() == [key, door, door, key]  # blocked: back where it was; opened: through
    assert lanes.doors_closed[:, 0].tolist() == [True, False, True, True]
    # lane 0, refused, stays on the key cell and what is there applies: it picks that key up (a lane
    # placed there, as here, had not); lane 3 picks up the key it stepped onto
    assert lanes.keys_held.tolist() == [1, 0, 1, 1] and lanes.keys_left[:, 0].tolist() == [False, True, True, False]
    # the single env steps the same rule on its one lane
    env = GridEnv(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)})
    env.reset(seed=0)
    assert env.grid_state.rule is not None and type(env.grid_state.rule) is ObjectRule
    env.step(3)  # west onto the key at (9, 7)
    assert env.keys_held == 1 and env.agent_pos == (9, 7)
    env.step(3)  # into the door with the key: it opens
    assert env.keys_held == 0 and env.agent_pos == (9, 6) and not env.grid_state.doors


BAD = [
    ("template", 5, TypeError),
    ("size", None, TypeError),
    ("orientation", "sideways", ValueError),
    ("use_noop", "yes", ValueError),
    ("manual_collect", 1, ValueError),
    ("stochasticity", 1.5, ValueError),
    ("random_start", None, ValueError),
    ("agent_start", (1, 2, 3), TypeError),
    ("objects", [("keys", (1, 1))], TypeError),
    ("terminate_on_reward", "no", ValueError),
    ("time_penalty", -0.1, ValueError),
    ("visible_walls", 0, ValueError),
    ("max_episode_steps", 0, ValueError),
    ("resolution", 8, ValueError),
    ("store", 3.5, TypeError),
    ("task", 7, TypeError),
]


def test_every_setting_is_covered_by_a_bad_value() -> None:
    assert [name for name, _, _ in BAD] == [f.name for f in dataclasses.fields(GridSettings)]


@pytest.mark.parametrize("name, value, error", BAD)
def test_a_bad_setting_names_its_field_in_one_line(name: str, value: Any, error: type[Exception]) -> None:
    for make in (lambda: GridSettings(**{name: value}), lambda: GridEnv(**{name: value}),
                 lambda: GridVectorEnv(2, **{name: value})):
        with pytest.raises(error) as info:
            make()
        message = str(info.value)
        assert message.startswith(f"{name}: ") and "\n" not in message, message


def test_a_setting_off_the_map_names_its_field() -> None:
    with pytest.raises(ValueError, match=r"^agent_start: \(0, 0\) is not a free cell"):
        grid_rules(GridSettings("four_rooms", agent_start=(0, 0)))
    with pytest.raises(TypeError, match=r"^colour: not a grid env parameter; the parameters are template, size"):
        GridEnv(colour="red")
    with pytest.raises(TypeError, match=r"^'index': only template and size are taken by position"):
        GridEnv("four_rooms", "small", "index")


def test_the_settings_are_one_frozen_declaration_both_envs_read() -> None:
    fields = {f.name: f for f in dataclasses.fields(GridSettings)}
    assert len(fields) == 16
    for env_class in (GridEnv, GridVectorEnv):
        parameters = inspect.signature(env_class).parameters
        for name, f in fields.items():  # the constructors show every field, with its default and type
            assert parameters[name].default == f.default and parameters[name].annotation == f.type, name
    kwargs: dict[str, Any] = {"template": "two_rooms", "time_penalty": 0.25, "use_noop": True, "episode_length": None}
    single, vector = GridEnv(**kwargs), GridVectorEnv(3, **kwargs)
    for name in fields:
        assert getattr(single.settings, name) == getattr(vector.settings, name), name
    assert single.settings.episode_length == 0 and single.settings.time_penalty == 0.25
    assert single.rules.settings is single.settings and single.n_actions == vector.rules.n_actions == 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        single.settings.time_penalty = 1.0  # type: ignore[misc,unused-ignore]
