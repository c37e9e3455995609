"""`spec.max_episode_steps` of every id is its env's own episode length, and gymnasium's TimeLimit cuts there."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import pytest

import gym_bridge  # noqa: F401  (registers the ids)
from graphstore import open_store
from gym_bridge import families, registered_ids
from ingest.conceptnet_snapshot import ingest_snapshot
from tests.budget import QUICK_GYM_IDS

# The attribute in which each env keeps its own limit (0 or None: no limit).
OWN_LIMIT = {
    "GraphTaskEnv": "episode_length", "GridEnv": "episode_length", "PogeEnv": "max_ep_len", "RoomEnv": "max_step",
    "RoomV1Env": "episode_length", "RoomMapEnv": "max_steps",
}


@pytest.fixture
def room_knowledge() -> None:
    """The Room task needs AtLocation assertions: the bundled snapshot, in this test's own store."""
    with open_store() as store:
        ingest_snapshot(store, None, False)


@pytest.mark.parametrize(
    "env_id", [i if i in QUICK_GYM_IDS else pytest.param(i, marks=pytest.mark.slow) for i in sorted(registered_ids())]
)
def test_spec_limit_is_the_envs_own(env_id: str, request: pytest.FixtureRequest) -> None:
    if "Room" in env_id and "Grid" not in env_id:
        request.getfixturevalue("room_knowledge")
    env = gym.make(env_id)
    try:
        own = getattr(env.unwrapped, OWN_LIMIT[type(env.unwrapped).__name__])
        family = next(f for f in families() if (f.gym_entry or f.env) == gym.spec(env_id).entry_point)
        default = family.episode_limit()  # the env class's default max_episode_steps
        assert default and gym.spec(env_id).max_episode_steps == default
        assert env.spec is not None and env.spec.max_episode_steps == default
        # under make, an id with a gym_entry leaves the length to the TimeLimit alone (so that
        # make's max_episode_steps is the length); the Room tasks' own length is the spec's
        assert not own if family.gym_entry else own == default, (env_id, own)
    finally:
        env.close()


def test_every_env_class_names_its_limit_parameter() -> None:
    classes = {gym.spec(i).entry_point for i in registered_ids()}
    assert classes == {family.gym_entry or family.env for family in families()}
    for family in families():
        assert family.episode_length in inspect.signature(family.env_class()).parameters


# kwargs that lift the env's own limit far past the spec's and an action that never ends the episode,
# so only the TimeLimit wrapper from the spec can stop it.
UNLIMITED: dict[str, tuple[dict[str, Any], int]] = {
    "graphtasks/Graph-v0": ({"episode_length": None, "use_noop": True}, -1),  # -1: the no-op
    "graphtasks/Grid-v0": ({"episode_length": None, "use_noop": True}, -1),
    # world0's start tile has a wall on its right: moving right (3) without slips stays put
    "graphtasks/Poge-v0": ({"max_ep_len": 10**6, "world": "poge/world0", "force_determinism": True}, 3),
    "graphtasks/Room-v0": ({"max_step": 10**6}, 0),
}


@pytest.mark.parametrize("env_id", sorted(UNLIMITED))
def test_time_limit_truncates_at_the_spec_limit(env_id: str, request: pytest.FixtureRequest) -> None:
    if env_id == "graphtasks/Room-v0":
        request.getfixturevalue("room_knowledge")
    kwargs, action = UNLIMITED[env_id]
    env = gym.make(env_id, **kwargs)
    limit = gym.spec(env_id).max_episode_steps
    env.reset(seed=0)
    if action == -1:
        action = env.action_space.n - 1
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env.step(action)
        steps += 1
        assert steps <= limit
    assert (steps, terminated, truncated) == (limit, False, True)
    env.close()

