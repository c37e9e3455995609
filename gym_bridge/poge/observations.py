"""POGE observation types: one class each, in one registry (`POGE_OBSERVATIONS`).

A POGE observation is a function of the observation index (an entry of the compiled
world's vocabulary: a tile's abstraction name, with `_slip_<action>` / `_wall` marks). The
single env passes one index, the vector env an array of them. A type whose observation is
a fixed row per index sets `table` (rows per index): both envs then gather from it
directly, the fastest path; `index` sets `table = None` and is the index itself.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from graphstore import GraphStore

from ..observation_types import ObservationRegistry, TableObservation
from .compiled import CompiledWorld

POGE_OBSERVATIONS = ObservationRegistry("POGE")


class PogeObservation(TableObservation[CompiledWorld]):
    """Base of the POGE types: `table` (one row per observation index) or None (the index).

    A new POGE observation subclasses it, sets its `name`, its `space` and (unless it is the
    index itself) its `table` in ``__init__``, and registers with `POGE_OBSERVATIONS`.

    Parameters
    ----------
    compiled : CompiledWorld
        The world the observations are of.
    store : GraphStore or str, optional
        The store the world came from.

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge.poge import POGE_OBSERVATIONS, PogeOptions, compile_world
    >>> world = compile_world(tasks.build("poge/world0"), PogeOptions(is_partially_obs=False))
    >>> onehot = POGE_OBSERVATIONS.make("onehot", world)
    >>> POGE_OBSERVATIONS.names(), onehot.space.shape, int(onehot.observe(world.start_obs).argmax()) == world.start_obs
    (['index', 'onehot'], (13,), True)
    """


@POGE_OBSERVATIONS.register
class Index(PogeObservation):
    """The observation index: a Discrete space over the world's observation vocabulary."""

    name = "index"

    def __init__(self, compiled: CompiledWorld, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        self.space = spaces.Discrete(len(compiled.observation_names))


@POGE_OBSERVATIONS.register
class Onehot(PogeObservation):
    """One float32 per entry of the vocabulary, 1 at the observation."""

    name = "onehot"

    def __init__(self, compiled: CompiledWorld, store: GraphStore | str | None = None) -> None:
        super().__init__(compiled, store)
        n = len(compiled.observation_names)
        self.space = spaces.Box(0.0, 1.0, (n,), np.float32)
        table = np.eye(n, dtype=np.float32)
        table.flags.writeable = False
        self.table = table
