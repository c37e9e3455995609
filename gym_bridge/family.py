"""`Family`: everything of one task family in one object.

A family (graph tasks and rewardGym, neuro-nav grids, POGE worlds, the Room task, or one a
user adds) is declared once, in its own package's `family` module, and registered in the
one explicit list of `gym_bridge.families`. The object names where each part lives:

- its task catalogue and builders (the `tasks` layer, which also adds the family's node and
  relationship types to the schema through `Schema.add_node` / `add_rel`);
- its loader, which turns what a user passes as `task=` into the compiled form;
- its compiled form, a documented dataclass that the single env and the vector env both
  consume (neither reads the other's private attributes);
- its env and vector env classes (as gymnasium entry points) and its gym ids;
- its observation types (an `ObservationRegistry`);
- its command-line and benchmark modules and its docs page.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from .observation_types import ObservationRegistry


@dataclass(frozen=True)
class GymId:
    """One registered gymnasium id and the constructor arguments it fixes."""

    id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def load_entry_point(entry_point: str) -> Any:
    """'package.module:Name' -> the object."""
    module, _, name = entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Family:
    """One task family, all of it; see the module docstring.

    `make_env(task_id, store=None, **kwargs)` makes the env for one of the family's task
    ids (the ids starting with one of `prefixes`); `episode_length` names the env
    constructor's parameter that holds its episode length, whose default becomes every gym
    id's `max_episode_steps`.
    """

    name: str
    prefixes: tuple[str, ...]
    env: str
    make_env: Callable[..., gym.Env]
    episode_length: str
    gym_ids: Callable[[], Iterable[GymId]]
    vector_env: str | None = None
    observations: ObservationRegistry | None = None
    compiled: type | None = None
    load: Callable[..., Any] | None = None
    catalogs: tuple[str, ...] = ()
    cli: str | None = None
    bench: str | None = None  # 'module:function' that adds the family's rows to benchmarks/run_all.py
    docs: str = ""
    description: str = ""

    def env_class(self) -> type[gym.Env]:
        return load_entry_point(self.env)

    def episode_limit(self) -> int | None:
        """The default of the env's episode-length parameter (None: no limit)."""
        default = inspect.signature(self.env_class()).parameters[self.episode_length].default
        return default if isinstance(default, int) and default > 0 else None

    def runs(self, task_id: str) -> bool:
        return any(task_id.startswith(prefix) for prefix in self.prefixes)

    def register(self) -> None:
        """Register the family's gym ids (ids already registered are left alone)."""
        limit = self.episode_limit()
        for gym_id in self.gym_ids():
            if gym_id.id in gym.registry:
                continue
            gym.register(
                gym_id.id,
                entry_point=self.env,
                vector_entry_point=self.vector_env,
                kwargs=dict(gym_id.kwargs),
                max_episode_steps=limit,
            )
