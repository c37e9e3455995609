"""gymnasium ids under `graphtasks/`, registered when `gym_bridge` is imported.

Every id's `max_episode_steps` is its env's own default episode length (read from the
constructor's signature, so the two cannot drift apart): wrappers and RL libraries see it, and
gymnasium's TimeLimit truncates at the same step as the env. As in the vector envs, the tighter
limit wins: `gym.make(id, episode_length=500)` also needs `max_episode_steps=500`.
"""

from __future__ import annotations

import importlib
import inspect

import gymnasium as gym

GRAPH_ENTRY = "gym_bridge.graph_env:GraphTaskEnv"
GRAPH_VECTOR_ENTRY = "gym_bridge.vector.graph_vector_env:make_graph_vector_env"  # make_vec(..., "vector_entry_point")
POGE_ENTRY = "gym_bridge.poge_env:PogeEnv"
POGE_VECTOR_ENTRY = "gym_bridge.vector.poge_vector_env:make_poge_vector_env"

# One id per rewardGym task; the generic id takes any stored or built-in task.
REWARDGYM_IDS = {
    "TwoStep-v0": "rewardgym/two-step",
    "HCP-v0": "rewardgym/hcp",
    "MID-v0": "rewardgym/mid",
    "Posner-v0": "rewardgym/posner",
    "RiskSensitive-v0": "rewardgym/risk-sensitive",
    "RobotFactory-v0": "rewardgym/robotfactory",
    "GoNoGo-v0": "rewardgym/gonogo",
    "TwoArmedBandit-v0": "rewardgym/two-armed-bandit",
}


# The constructor parameter that holds each env's own episode length.
LIMIT_PARAMETER = {
    "gym_bridge.graph_env:GraphTaskEnv": "episode_length",
    "gym_bridge.grid_env:GridEnv": "episode_length",
    "gym_bridge.poge_env:PogeEnv": "max_ep_len",
    "gym_bridge.room_env:RoomEnv": "max_step",
}


def episode_limit(entry_point: str) -> int | None:
    """The default of the env's episode-length parameter (None: no limit)."""
    module, name = entry_point.split(":")
    cls = getattr(importlib.import_module(module), name)
    default = inspect.signature(cls).parameters[LIMIT_PARAMETER[entry_point]].default
    return default if isinstance(default, int) and default > 0 else None


def registered_ids() -> list[str]:
    return [env_id for env_id in gym.registry if env_id.startswith("graphtasks/")]


ROOM_ID = "graphtasks/Room-v0"
ROOM_ENTRY = "gym_bridge.room_env:RoomEnv"


def register_room() -> None:
    """The Room memory task; kwargs such as room_size='big' or store=... go to gym.make."""
    if ROOM_ID not in gym.registry:
        gym.register(ROOM_ID, entry_point=ROOM_ENTRY, max_episode_steps=episode_limit(ROOM_ENTRY))


def register_all() -> None:
    register_poge()
    register_room()
    register_grid()
    if "graphtasks/Graph-v0" in gym.registry:
        return
    limit = episode_limit(GRAPH_ENTRY)
    gym.register(
        "graphtasks/Graph-v0", entry_point=GRAPH_ENTRY, vector_entry_point=GRAPH_VECTOR_ENTRY, max_episode_steps=limit
    )
    for env_id, task_id in REWARDGYM_IDS.items():
        gym.register(
            f"graphtasks/{env_id}",
            entry_point=GRAPH_ENTRY,
            vector_entry_point=GRAPH_VECTOR_ENTRY,
            kwargs={"task": task_id},
            max_episode_steps=limit,
        )


def register_poge() -> None:
    """`graphtasks/Poge-v0`: `world=` a world file path or a stored world id (default 'poge/world0')."""
    if "graphtasks/Poge-v0" not in gym.registry:
        gym.register(
            "graphtasks/Poge-v0", entry_point=POGE_ENTRY, vector_entry_point=POGE_VECTOR_ENTRY,
            max_episode_steps=episode_limit(POGE_ENTRY),
        )


GRID_ENTRY = "gym_bridge.grid_env:GridEnv"
GRID_VECTOR_ENTRY = "gym_bridge.vector.grid_vector_env:make_grid_vector_env"


def grid_env_id(template: str) -> str:
    """'four_rooms' -> 'graphtasks/GridFourRooms-v0'."""
    return "graphtasks/Grid" + "".join(part.capitalize() for part in template.split("_")) + "-v0"


def register_grid() -> None:
    """The generic `graphtasks/Grid-v0` (pass template=, size=) and one id per built-in template."""
    from tasks.data import data_dir

    if "graphtasks/Grid-v0" in gym.registry:
        return
    limit = episode_limit(GRID_ENTRY)
    gym.register(
        "graphtasks/Grid-v0", entry_point=GRID_ENTRY, vector_entry_point=GRID_VECTOR_ENTRY, max_episode_steps=limit
    )
    for path in sorted((data_dir() / "neuronav" / "grids").glob("*.txt")):
        gym.register(
            grid_env_id(path.stem), entry_point=GRID_ENTRY, vector_entry_point=GRID_VECTOR_ENTRY,
            kwargs={"template": path.stem}, max_episode_steps=limit,
        )
