"""The POGE family: partially observable gridworlds from world files, with slip rules."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.poge.family import POGE as POGE_TASKS

from ..family import Family, GymId
from ..keys import KeyMap
from ..screens import ArrowKeyGrid
from ..starts import CellStarts
from ..text import PictureText
from ..views import AgentView, action_count, discrete_size
from .compiled import STARTABLE, CompiledWorld
from .env import PogeEnv, load_compiled_world
from .observations import POGE_OBSERVATIONS


def make_env(task: str | TaskGraph, store: Any = None, **kwargs: Any) -> gym.Env:
    return PogeEnv(world=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """`graphtasks/Poge-v0`: `world=` a world file path or a stored world id (default 'poge/world0')."""
    return [GymId("graphtasks/Poge-v0")]


def start_tiles(graph: TaskGraph) -> list[tuple[int, int]]:
    """The tiles an episode can start on: every tile the player can stand on without ending the
    episode, reachable from the world's start or not (the env's reset option `tile` takes them all)."""
    return sorted(
        (int(p["row"]), int(p["col"])) for _, p in graph.nodes("Tile") if p["kind"] in STARTABLE
    )


def index_sizes(env: gym.Env) -> tuple[int, int]:
    return discrete_size(env.observation_space), action_count(env)


# An agent of POGE sees the observation, not the state: the world is partially observable.
OBSERVATION_INDEX = AgentView(
    "index",
    state=lambda obs, info: int(obs),
    sizes=index_sizes,
    env_settings={"obs_type": "index"},
    description="the observation index (what the player sees of its tile)",
)

POGE = Family(
    tasks=POGE_TASKS,
    env="gym_bridge.poge.env:PogeEnv",
    gym_entry="gym_bridge.poge.env:make_for_gymnasium",
    vector_env="gym_bridge.poge.vector_env:make_poge_vector_env",
    task_argument="world",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    observations=POGE_OBSERVATIONS,
    compiled=CompiledWorld,
    load=load_compiled_world,
    starts=CellStarts("tile", start_tiles),
    views=(OBSERVATION_INDEX,),
    cli="graphtasks.commands.poge_cmd",
    picture="gym_bridge.poge.render:draw_task",
    keys=KeyMap(  # actions 0-3: up, down, left, right
        keys={"up": 0, "w": 0, "down": 1, "s": 1, "left": 2, "a": 2, "right": 3, "d": 3},
        legend="Move with the arrow keys or W, A, S, D to the goal.",
    ),
    screen=ArrowKeyGrid(  # actions 0-3: up, down, left, right; the text picture's P is the player
        keys=("ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"), agent="P",
        colours={"#": "#3b3b3b", " ": "#f2f2f2", "G": "#6acc64", "T": "#d65f5f", "D": "#8c613c"},
        legend="Move with the arrow keys to the green goal. Red squares end the round; brown ones are doors.",
    ),
    text=PictureText(  # the text picture, the player's square and the four moves
        moves=("go up", "go down", "go left", "go right"), agent="P",
        legend="A map: P is you, # is a wall, G is the goal, T ends the round, D is a door.",
        intro="You move on a map of squares. Reach the goal G.",
    ),
    bench="benchmarks.run_all:poge_cases",
    docs="docs/poge.md",
)
