"""Observation builders for graph tasks: a name -> a space and a per-state table.

A builder runs once when the environment is made (static part); `step` only indexes
the table (and copies the row: every observation is new data the user may keep).
Users add builders with `register_observation` or from a Cypher query returning one row
per state (`register_cypher_observation`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from gymnasium import spaces

from graphstore import GraphStore

from .compile import CompiledGraphTask
from .loading import with_store

IMAGE_SHAPE = (32, 32, 3)
Builder = Callable[[CompiledGraphTask, "GraphStore | str | None"], tuple[spaces.Space, "np.ndarray | None"]]
_BUILDERS: dict[str, Builder] = {}


def register_observation(name: str, builder: Builder) -> None:
    """Make `obs_type=name` available; `builder(compiled, store)` returns (space, table or None for index)."""
    _BUILDERS[name] = builder


def observation_types() -> list[str]:
    return sorted(_BUILDERS)


def build_observation(name: str, compiled: CompiledGraphTask, store: GraphStore | str | None = None):
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(
            f"obs_type: unknown observation type {name!r}; choose from {', '.join(observation_types())}"
        ) from None
    space, table = builder(compiled, store)
    if table is not None:
        table = np.ascontiguousarray(table, dtype=space.dtype)
        table.flags.writeable = False
        if not all(space.contains(row) for row in table):
            raise ValueError(f"obs_type {name!r}: a state's observation is outside the declared space")
    return space, table


def _index(compiled: CompiledGraphTask, store: Any) -> tuple[spaces.Space, None]:
    return spaces.Discrete(compiled.n_states), None


def _onehot(compiled: CompiledGraphTask, store: Any) -> tuple[spaces.Space, np.ndarray]:
    n = compiled.n_states
    return spaces.Box(0.0, 1.0, (n,), np.float32), np.eye(n, dtype=np.float32)


def state_images(n_states: int, seed: int = 0) -> np.ndarray:
    """One fixed, distinct 32x32x3 image per state: smooth random colour fields plus noise.

    Made from a fixed seed (no download); the same state always gets the same image.
    """
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(n_states, 4, 4, 3)).astype(np.float32)
    smooth = coarse.repeat(8, axis=1).repeat(8, axis=2)
    noise = rng.normal(0.0, 24.0, size=(n_states, *IMAGE_SHAPE))
    return np.clip(smooth + noise, 0, 255).astype(np.uint8)


def _images(compiled: CompiledGraphTask, store: Any) -> tuple[spaces.Space, np.ndarray]:
    return spaces.Box(0, 255, IMAGE_SHAPE, np.uint8), state_images(compiled.n_states)


register_observation("index", _index)
register_observation("onehot", _onehot)
register_observation("images", _images)


def register_cypher_observation(name: str, query: str, low: float = -np.inf, high: float = np.inf) -> None:
    """An observation from a Cypher query run once per environment with `$task` bound to the task id.

    The query returns the state index in its first column and one feature per further column.
    """

    def builder(compiled: CompiledGraphTask, store: GraphStore | str | None):
        result = with_store(store, lambda s: s.cypher(query, {"task": compiled.task_id}))
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
        lo = np.float32(low if np.isfinite(low) else table.min())
        hi = np.float32(high if np.isfinite(high) else table.max())
        return spaces.Box(lo, hi, (table.shape[1],), np.float32), table

    register_observation(name, builder)
