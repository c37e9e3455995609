"""Where episodes start: each family's rule for the start of an experiment phase.

A phase gives its start as data (`start = ...` in a spec): "default" (the task's own start),
"random", `{ random = [...] }` (drawn from a set), one place, or a list of places cycled
through episode by episode. What a place is depends on the family, so each family names its
rule: graph tasks start at a state index, grids at a cell [row, col], POGE worlds at a tile
[row, col], and the Room task has no start to choose. A rule checks a value against a task
version (`parse`) before anything runs, and turns it into each episode's reset options
(`options`), drawing from the generator the run's seed tree gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from graphstore import TaskGraph

Options = dict[str, Any]


class StartError(ValueError):
    """A start value that does not fit the task; the message says what fits, `field` which part
    of the value is wrong ('random' for the set to draw from)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_cell(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_index(v) for v in value)


class StartRule:
    """How one family's tasks are started; subclasses say what a place is.

    A spec's ``start = ...`` is data whose meaning depends on the family (a state index, a
    cell, a tile), so each family's `Family.starts` is a rule: `parse` checks a value against a
    task version before anything runs (a `StartError` naming what fits), and `options` turns
    it into each episode's reset options. Subclasses implement `is_place`, `place`, `option`
    and `random`; `StateStarts` (graph tasks) and `CellStarts` (grids, POGE worlds) are the
    built-in ones.

    Examples
    --------
    >>> import numpy as np
    >>> import tasks
    >>> from gym_bridge.starts import StateStarts
    >>> graph, rule = tasks.build("neuronav/graph/linear"), StateStarts()
    >>> rule.parse([0, 2], graph)
    [0, 2]
    >>> rule.options([0, 2], graph, lambda: np.random.default_rng(0), episodes=3)
    [{'start': 0}, {'start': 2}, {'start': 0}]
    >>> rule.parse(9, graph)
    Traceback (most recent call last):
    ...
    gym_bridge.starts.StartError: state 9 does not exist in neuronav/graph/linear (states 0..5)
    """

    what = "a place"

    def parse(self, value: Any, graph: TaskGraph) -> Any:
        """`value` in its normal form (None, "random", {"random": [places]}, or a list of places),
        checked against `graph`; StartError otherwise.

        Parameters
        ----------
        value : object
            A phase's ``start``: "default" or None, "random", ``{random = [...]}``, a place or a list of places.
        graph : TaskGraph
            The task version it must fit.

        Returns
        -------
        object
            None, "random", ``{"random": [places]}`` or a list of places.
        """
        if value is None or value == "default":
            return None
        if value == "random":
            return "random"
        if isinstance(value, Mapping):
            drawn = value.get("random") if set(value) == {"random"} else None
            if not isinstance(drawn, list) or not drawn:
                raise StartError(f"expected {{ random = [{self.what}s] }} to draw from, got {value!r}")
            try:
                return {"random": [self.place(v, graph) for v in drawn]}
            except StartError as exc:
                raise StartError(str(exc), "random") from None
        places = value if isinstance(value, list) and value and not self.is_place(value) else [value]
        return [self.place(v, graph) for v in places]

    def options(
        self, value: Any, graph: TaskGraph, rng: Callable[[], np.random.Generator], episodes: int
    ) -> list[Options]:
        """Each episode's reset options; `rng()` gives the phase's start-draw generator.

        Parameters
        ----------
        value : object
            A start in its normal form (`parse`'s result).
        graph : TaskGraph
            The task version.
        rng : callable
            ``rng()`` gives the phase's start-draw generator (asked only when drawing).
        episodes : int
            The number of episodes.

        Returns
        -------
        list of dict
            One reset options mapping per episode (empty: the task's own start).
        """
        if value is None:
            return [{} for _ in range(episodes)]
        if value == "random":
            return self.random(graph, rng(), episodes)
        if isinstance(value, Mapping):
            drawn = value["random"]
            picks = rng().integers(0, len(drawn), episodes)
            return [self.option(drawn[k]) for k in picks]
        return [self.option(value[e % len(value)]) for e in range(episodes)]

    # -- what subclasses say -----------------------------------------------------------------
    def is_place(self, value: Any) -> bool:
        raise NotImplementedError

    def place(self, value: Any, graph: TaskGraph) -> Any:
        raise NotImplementedError

    def option(self, place: Any) -> Options:
        raise NotImplementedError

    def random(self, graph: TaskGraph, rng: np.random.Generator, episodes: int) -> list[Options]:
        raise NotImplementedError


@dataclass(frozen=True)
class StateStarts(StartRule):
    """Graph tasks: a state index; "random" draws among the non-terminal states."""

    what = "state"

    def is_place(self, value: Any) -> bool:
        return _is_index(value)

    def place(self, value: Any, graph: TaskGraph) -> int:
        n = graph.count("State")
        if not _is_index(value):
            raise StartError(f"a graph task starts at a state index, got {value!r}")
        if value >= n:
            raise StartError(f"state {value} does not exist in {graph.task_id} (states 0..{n - 1})")
        return int(value)

    def option(self, place: Any) -> Options:
        return {"start": int(place)}

    def random(self, graph: TaskGraph, rng: np.random.Generator, episodes: int) -> list[Options]:
        terminal = {p["index"] for _, p in graph.nodes("State") if p.get("terminal")}
        states = [p["index"] for _, p in graph.nodes("State") if p["index"] not in terminal]
        return [{"start": int(states[k])} for k in rng.integers(0, len(states), episodes)]


@dataclass(frozen=True)
class CellStarts(StartRule):
    """Grids and POGE worlds: a cell [row, col] the agent can stand on, given to reset as
    `key`; "random" is the env's own random start (`random_option`), or drawn among `free`."""

    key: str
    free: Callable[[TaskGraph], Sequence[tuple[int, int]]]
    random_option: Options | None = None
    what = "cell"

    def is_place(self, value: Any) -> bool:
        return _is_cell(value)

    def place(self, value: Any, graph: TaskGraph) -> tuple[int, int]:
        if not _is_cell(value):
            raise StartError(f"expected a cell [row, col], got {value!r}")
        cell = (int(value[0]), int(value[1]))
        if cell not in set(self.free(graph)):
            raise StartError(f"cell {list(cell)} of {graph.task_id} is not one an agent can stand on")
        return cell

    def option(self, place: Any) -> Options:
        return {self.key: tuple(place)}

    def random(self, graph: TaskGraph, rng: np.random.Generator, episodes: int) -> list[Options]:
        if self.random_option is not None:
            return [dict(self.random_option) for _ in range(episodes)]
        free = list(self.free(graph))
        return [{self.key: free[k]} for k in rng.integers(0, len(free), episodes)]


class NoStarts(StartRule):
    """Tasks whose episodes have no start to choose (the Room task)."""

    def parse(self, value: Any, graph: TaskGraph) -> Any:
        if value is None or value == "default":
            return None
        raise StartError(f"{graph.task_id} has no start state to choose")
