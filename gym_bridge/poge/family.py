"""The POGE family: partially observable gridworlds from world files, with slip rules."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..family import Family, GymId
from .compiled import CompiledWorld
from .env import PogeEnv, load_compiled_world
from .observations import POGE_OBSERVATIONS


def make_env(task: str, store: Any = None, **kwargs: Any) -> gym.Env:
    return PogeEnv(world=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """`graphtasks/Poge-v0`: `world=` a world file path or a stored world id (default 'poge/world0')."""
    return [GymId("graphtasks/Poge-v0")]


POGE = Family(
    name="poge",
    prefixes=("poge/", "user/poge/"),  # user/poge/: worlds stored by `graphtasks poge load`
    env="gym_bridge.poge.env:PogeEnv",
    vector_env="gym_bridge.poge.vector_env:make_poge_vector_env",
    make_env=make_env,
    episode_length="max_ep_len",
    gym_ids=gym_ids,
    observations=POGE_OBSERVATIONS,
    compiled=CompiledWorld,
    load=load_compiled_world,
    catalogs=("poge",),
    cli="graphtasks.commands.poge_cmd",
    bench="benchmarks.run_all:poge_cases",
    docs="docs/poge.md",
    description="POGE world files: tiles with abstraction symbols, slip rules, partial observability",
)
