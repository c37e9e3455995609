"""The neuro-nav grid family: 18 templates in four sizes, objects, 13+ observation types."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from tasks.data import data_dir
from tasks.grid_tasks import PREFIX

from ..family import Family, GymId
from .compiled import CompiledGrid
from .observations import GRID_OBSERVATIONS
from .rules import load_compiled_grid


def make_env(task: str, store: Any = None, **kwargs: Any) -> gym.Env:
    from .env import GridEnv

    return GridEnv(task=task, store=store, **kwargs)


def grid_env_id(template: str) -> str:
    """'four_rooms' -> 'graphtasks/GridFourRooms-v0'."""
    return "graphtasks/Grid" + "".join(part.capitalize() for part in template.split("_")) + "-v0"


def gym_ids() -> list[GymId]:
    """The generic `graphtasks/Grid-v0` (pass template=, size=) and one id per built-in template."""
    templates = sorted(path.stem for path in (data_dir() / "neuronav" / "grids").glob("*.txt"))
    return [GymId("graphtasks/Grid-v0")] + [GymId(grid_env_id(name), {"template": name}) for name in templates]


GRID = Family(
    name="grid",
    prefixes=(PREFIX,),
    env="gym_bridge.grid.env:GridEnv",
    vector_env="gym_bridge.grid.vector_env:make_grid_vector_env",
    make_env=make_env,
    episode_length="episode_length",
    gym_ids=gym_ids,
    observations=GRID_OBSERVATIONS,
    compiled=CompiledGrid,
    load=load_compiled_grid,
    catalogs=("neuronav/grid",),
    cli="graphtasks.commands.grid_cmd",
    bench="benchmarks.run_all:grid_cases",
    docs="docs/grid.md",
    description="neuro-nav grid worlds: cells, walls, rewards, keys, doors, warps; pictures, symbols, distances",
)
