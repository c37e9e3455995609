"""Graph-task observation types: one class each, in one registry (`GRAPH_OBSERVATIONS`).

A graph-task observation is a function of the state index. The single env passes one
state, the vector env an array of them. Every built-in type is a fixed row per state
(`table`, computed once when the env is made; `index` has none and is the state itself), so
both envs gather from the same table: the step only indexes it and copies the row (every
observation is new data the user may keep). Users add types as classes, with
`register_observation(name, builder)` (a function returning a space and a table), or from
a Cypher query returning one row per state (`register_cypher_observation`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from gymnasium import spaces

from graphstore import GraphStore

from ..loading import with_store
from ..observation_types import IMAGE_SHAPE, ObservationRegistry, TableObservation, state_images
from .compiled import CompiledGraphTask

GRAPH_OBSERVATIONS = ObservationRegistry("graph")
Builder = Callable[[CompiledGraphTask, "GraphStore | str | None"], tuple[spaces.Space, "np.ndarray | None"]]


class GraphObservation(TableObservation[CompiledGraphTask]):
    """Base of the graph types: `table` (one row per state, read-only) or None (the state index).

    A new observation of graph tasks subclasses it, sets its `name`, calls `use_table` in
    ``__init__`` with its space and one row per state, and registers with
    `GRAPH_OBSERVATIONS`; then ``GraphTaskEnv(..., obs_type=name)`` and the vector env use it.

    Parameters
    ----------
    compiled : CompiledGraphTask
        The task the observations are of.
    store : GraphStore or str, optional
        The store the task came from (for types that read more of it, e.g. images).

    Examples
    --------
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> from gym_bridge import GraphTaskEnv
    >>> from gym_bridge.graph import GRAPH_OBSERVATIONS, GraphObservation
    >>> class Parity(GraphObservation):
    ...     name = "parity"
    ...     def __init__(self, compiled, store=None):
    ...         super().__init__(compiled, store)
    ...         self.use_table(spaces.Discrete(2), np.arange(compiled.n_states) % 2)
    >>> _ = GRAPH_OBSERVATIONS.register(Parity)
    >>> env = GraphTaskEnv("neuronav/graph/linear", store=":memory:", obs_type="parity")
    >>> int(env.reset(seed=0)[0]), int(env.step(0)[0]), env.observation_space
    (0, 1, Discrete(2))
    >>> GRAPH_OBSERVATIONS.unregister("parity")
    """

    def use_table(self, space: spaces.Space, table: np.ndarray | None) -> None:
        """Set the space and the per-state table, checking every row lies in the space.

        Parameters
        ----------
        space : gymnasium.spaces.Space
            The observation space of one env.
        table : numpy.ndarray or None
            One row per state; None: the observation is the state index itself.
        """
        self.space = space
        if table is None:
            self.table = None
            return
        table = np.ascontiguousarray(table, dtype=space.dtype)
        if table.shape[0] != self.compiled.n_states:
            raise ValueError(
                f"obs_type {self.name!r}: {table.shape[0]} rows for {self.compiled.n_states} states"
            )
        table.flags.writeable = False
        if not all(space.contains(row) for row in table):
            raise ValueError(f"obs_type {self.name!r}: a state's observation is outside the declared space")
        self.table = table


@GRAPH_OBSERVATIONS.register
class Index(GraphObservation):
    """The state index (Discrete)."""

    name = "index"

    def __init__(self, compiled: CompiledGraphTask, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        self.use_table(spaces.Discrete(compiled.n_states), None)


@GRAPH_OBSERVATIONS.register
class Onehot(GraphObservation):
    """One float32 per state, 1 at the current one."""

    name = "onehot"

    def __init__(self, compiled: CompiledGraphTask, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        n = compiled.n_states
        self.use_table(spaces.Box(0.0, 1.0, (n,), np.float32), np.eye(n, dtype=np.float32))


@GRAPH_OBSERVATIONS.register
class Images(GraphObservation):
    """A fixed, distinct 32x32 RGB picture per state (`state_images`)."""

    name = "images"

    def __init__(self, compiled: CompiledGraphTask, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        self.use_table(spaces.Box(0, 255, IMAGE_SHAPE, np.uint8), state_images(compiled.n_states))


def register_observation(name: str, builder: Builder) -> type[GraphObservation]:
    """Make `obs_type=name` available from a function: `builder(compiled, store)` returns
    (space, table with one row per state, or None for the state index)."""

    def __init__(self: GraphObservation, compiled: CompiledGraphTask, store: GraphStore | str | None = None) -> None:
        GraphObservation.__init__(self, compiled, store)
        self.use_table(*builder(compiled, store))

    cls = type(f"Built_{name}", (GraphObservation,), {"name": name, "__init__": __init__, "__doc__": builder.__doc__})
    return GRAPH_OBSERVATIONS.register(cls, replace=True)


class CypherObservation(GraphObservation):
    """An observation from a Cypher query, run once per environment with `$task` bound to the
    task id: the state index in the first column, one feature per further column. Subclass it
    with `name` and `query` (and optionally `low`, `high`), or use `register_cypher_observation`."""

    query: str = ""
    low: float = -np.inf
    high: float = np.inf

    def __init__(self, compiled: CompiledGraphTask, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        name = self.name
        result = with_store(store, lambda s: s.cypher(self.query, {"task": compiled.task_id}))
        if len(result.columns) < 2:
            raise ValueError(f"observation {name!r}: the query must return a state index and at least one feature")
        table = np.zeros((compiled.n_states, len(result.columns) - 1), dtype=np.float32)
        seen = set()
        for row in result.rows:
            index = row[0]
            if not isinstance(index, int) or not 0 <= index < compiled.n_states:
                raise ValueError(f"observation {name!r}: first column must be a state index, got {index!r}")
            table[index] = [np.nan if v is None else float(v) for v in row[1:]]
            seen.add(index)
        if len(seen) != compiled.n_states or np.isnan(table).any():
            missing = sorted(set(range(compiled.n_states)) - seen)
            raise ValueError(f"observation {name!r}: no complete row for state(s) {missing or 'with null features'}")
        lo = np.float32(self.low if np.isfinite(self.low) else table.min())
        hi = np.float32(self.high if np.isfinite(self.high) else table.max())
        self.use_table(spaces.Box(lo, hi, (table.shape[1],), np.float32), table)


def register_cypher_observation(
    name: str, query: str, low: float = -np.inf, high: float = np.inf
) -> type[GraphObservation]:
    """Make `obs_type=name` a `CypherObservation` of `query` (see there)."""
    cls = type(f"Cypher_{name}", (CypherObservation,), {"name": name, "query": query, "low": low, "high": high})
    return GRAPH_OBSERVATIONS.register(cls, replace=True)


def observation_types() -> list[str]:
    return GRAPH_OBSERVATIONS.names()


def build_observation(
    name: str, compiled: CompiledGraphTask, store: GraphStore | str | None = None
) -> GraphObservation:
    """An instance of observation type `name` for one env's compiled task."""
    return GRAPH_OBSERVATIONS.make(name, compiled, store)  # type: ignore[return-value]
