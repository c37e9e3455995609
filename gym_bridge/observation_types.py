"""Observation types as objects: one class per type, single and batched observe side by side.

Each family has one `ObservationRegistry`; built-in types and the ones users add (including
types made from a Cypher query) live in the same registry and are used the same way by the
single env and the vector env. An env makes one instance per environment, from the
family's compiled form, so a type precomputes its static part once (tables, pictures, query
results) and pays per step only for what changes.

A family fixes what its `state` and `batch` arguments are (a state index for graph tasks,
a dataclass of position, direction and objects left for grids, ...): see the family's
`observations` module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
from gymnasium import spaces

from graphstore import GraphStore
from graphstore.errors import GraphtasksError, did_you_mean
from graphstore.registry import Registry

CompiledT = TypeVar("CompiledT")
IMAGE_SHAPE = (32, 32, 3)


class UnknownObservationType(GraphtasksError, ValueError):
    """An `obs_type` no registry knows."""


class ObservationType(ABC, Generic[CompiledT]):
    """One observation type of one family.

    Subclasses set `name`, compute `space` (one copy's space) in `__init__`, and implement
    `observe` (one env's state) and `observe_batch` (the vector env's states of every copy:
    the same observations, stacked). The two must agree bit for bit; the family's
    equivalence tests check every registered type.

    Parameters
    ----------
    compiled : compiled task
        The compiled task of the family (`CompiledGraphTask`, `GridRules`, `CompiledWorld`, ...).
    store : GraphStore or str, optional
        The store the task came from, for types that read more of it.

    Examples
    --------
    Every family's types are instances made by its registry:

    >>> import tasks
    >>> from gym_bridge import compile_task
    >>> from gym_bridge.graph import GRAPH_OBSERVATIONS
    >>> onehot = GRAPH_OBSERVATIONS.make("onehot", compile_task(tasks.build("neuronav/graph/linear")))
    >>> onehot.name, onehot.space.shape, onehot.observe(2).tolist()
    ('onehot', (6,), [0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    """

    name: ClassVar[str]
    space: spaces.Space

    def __init__(self, compiled: CompiledT, store: GraphStore | str | None = None) -> None:
        self.compiled = compiled

    @abstractmethod
    def observe(self, state: Any) -> Any:
        """The observation of one env's current state (new data: the caller may keep it).

        Parameters
        ----------
        state : object
            The env's state (the family's own: a state index, a grid state, ...).

        Returns
        -------
        object
            The observation, in `space`.
        """

    @abstractmethod
    def observe_batch(self, batch: Any) -> Any:
        """The observations of every copy of a vector env, stacked along the first axis.

        Parameters
        ----------
        batch : object
            The vector env's states of every copy.

        Returns
        -------
        object
            One observation per copy, stacked.
        """


class TableObservation(ObservationType[CompiledT]):
    """A type whose observation is a fixed row per index (a state, an observation name):
    `table` holds the rows (read-only), or is None when the observation is the index itself.
    Both envs gather from it; the single env returns a copy of the row (the user may keep it)."""

    table: np.ndarray | None = None

    def observe(self, state: int) -> Any:
        return state if self.table is None else self.table[state].copy()

    def observe_batch(self, batch: np.ndarray) -> np.ndarray:
        return batch.copy() if self.table is None else self.table[batch]


T = TypeVar("T", bound=type[ObservationType])


class ObservationRegistry(Registry[type[ObservationType]]):
    """The observation types of one family, by name (a `graphstore.registry.Registry`).

    Each family holds one (graph tasks: `gym_bridge.graph.GRAPH_OBSERVATIONS`); an env's
    ``obs_type`` is looked up here, so a type a user registers is available to the single and
    the vector env alike, and an unknown name is one clear error listing the known ones.

    Parameters
    ----------
    family : str
        The family's name, used in error messages.

    Examples
    --------
    >>> from gym_bridge import ObservationRegistry
    >>> from gym_bridge.graph import GRAPH_OBSERVATIONS
    >>> GRAPH_OBSERVATIONS.names()
    ['index', 'onehot', 'images']
    >>> GRAPH_OBSERVATIONS.get("onehots")
    Traceback (most recent call last):
    ...
    gym_bridge.observation_types.UnknownObservationType: obs_type: unknown graph observation type 'onehots'...
    >>> len(ObservationRegistry("demo"))
    0
    """

    def __init__(self, family: str) -> None:
        super().__init__(f"{family} observation type", error=UnknownObservationType)
        self.family = family

    def unknown(self, name: str) -> str:  # a method, not a lambda: a family (and its registry) pickles
        known = list(dict.keys(self))
        return (f"obs_type: unknown {self.family} observation type {name!r}{did_you_mean(str(name), known)}; "
                f"choose from {', '.join(known)}")

    def register(self, cls: T, *, replace: bool = False) -> T:  # type: ignore[override]
        """Make `obs_type=cls.name` available (usable as a class decorator).

        Parameters
        ----------
        cls : type
            An `ObservationType` subclass with a non-empty `name`.
        replace : bool, optional
            Replace a registered type of the same name (otherwise a ValueError).

        Returns
        -------
        type
            `cls` itself.
        """
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{cls.__name__}: an observation type needs a non-empty `name`")
        super().register(name, cls, replace=replace or dict.get(self, name) is cls)
        return cls

    def unregister(self, name: str) -> None:
        self.pop(name, None)

    def get(self, name: str) -> type[ObservationType]:  # type: ignore[override]
        return self.lookup(name)

    def make(self, name: str, compiled: Any, store: GraphStore | str | None = None) -> ObservationType:
        """An instance of type `name` for one env's compiled task.

        Parameters
        ----------
        name : str
            The type's name (an env's ``obs_type``).
        compiled : compiled task
            One env's compiled task.
        store : GraphStore or str, optional
            The store the task came from.

        Returns
        -------
        ObservationType
            The observation type, made for the task.
        """
        return self.lookup(name)(compiled, store)

    def __bool__(self) -> bool:
        return True  # a family's registry, even empty (it was an object, always true)


def state_images(n_states: int, seed: int = 0) -> np.ndarray:
    """One fixed, distinct 32x32x3 image per state: smooth random colour fields plus noise.

    Made from a fixed seed (no download); the same state always gets the same image.
    """
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(n_states, 4, 4, 3)).astype(np.float32)
    smooth = coarse.repeat(8, axis=1).repeat(8, axis=2)
    noise = rng.normal(0.0, 24.0, size=(n_states, *IMAGE_SHAPE))
    return np.clip(smooth + noise, 0, 255).astype(np.uint8)
