"""`make_env(task_id)`: the right environment class for a task id, by family prefix.

Families other than graph tasks add their factory with `register_env_factory`.
"""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym

from .graph_env import GraphTaskEnv
from .poge_env import PogeEnv
from .room_env import RoomEnv

_FACTORIES: dict[str, Callable[..., gym.Env]] = {}


def register_env_factory(prefix: str, factory: Callable[..., gym.Env]) -> None:
    _FACTORIES[prefix] = factory


def make_env(task_id: str, store: Any = None, **kwargs: Any) -> gym.Env:
    for prefix in sorted(_FACTORIES, key=len, reverse=True):
        if task_id.startswith(prefix):
            return _FACTORIES[prefix](task=task_id, store=store, **kwargs)
    return GraphTaskEnv(task=task_id, store=store, **kwargs)


def _poge(task: str, store: Any = None, **kwargs: Any) -> gym.Env:
    return PogeEnv(world=task, store=store, **kwargs)


register_env_factory("poge/", _poge)
register_env_factory("user/poge/", _poge)  # worlds stored by `graphtasks poge load`
register_env_factory(
    "room/",
    lambda task, store=None, **kw: RoomEnv(room_size=task.split("/")[1].split("?")[0], task=task, store=store, **kw),
)
