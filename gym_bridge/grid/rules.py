"""The rules of one grid env as cell-indexed tables, and the state observation types read.

`GridRules` is what `GridEnv` and `GridVectorEnv` both run on: the compiled grid plus the
env's options (orientation, extra actions, penalty, noise, start, the objects episodes
start with), checked once and turned into move tables and object slots. Neither env
reads the other's insides: both are built from `grid_rules(...)` with the same arguments.

Cells are indices `row * n + col`; a state is `orientation * n * n + cell` in variable
orientation mode and the cell in fixed mode. Objects are numbered per kind in slot order
(sorted cells): the vector env keeps one column per slot and copy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping

import numpy as np

import tasks
from graphstore import GraphStore, TaskGraph
from tasks import GridObjects, objects_from_dict
from tasks.grid.maps import grid_task_id

from ..loading import load_stored
from ..params import (
    check_bool,
    check_choice,
    check_episode_length,
    check_probability,
    check_store,
    check_time_penalty,
    check_type,
    named,
)
from .compiled import CompiledGrid, compile_grid, compile_grid_from_store

ORIENTATIONS = ("fixed", "variable")


def load_compiled_grid(task: str | TaskGraph | CompiledGrid, store: GraphStore | str | None = None) -> CompiledGrid:
    """A compiled grid: a built-in id is put into the store on first use, then read back by query."""
    if isinstance(task, CompiledGrid):
        return task
    if isinstance(task, TaskGraph):
        return compile_grid(task)
    if not isinstance(task, str) or not task:
        raise ValueError(f"task: expected a grid task id such as 'neuronav/grid/four_rooms/small', got {task!r}")
    return load_stored(task, store, compile_grid_from_store)


@dataclass(frozen=True, eq=False)
class ObjectSlots:
    """The objects an episode starts with, by cell index and in slot order (sorted cells).

    `reward_terminates` has the env's `terminate_on_reward` applied where a reward has no
    flag of its own. Warps and markers never change during an episode.
    """

    source: GridObjects  # the (row, col) form the painter draws
    rewards: tuple[int, ...]
    reward_value: tuple[float, ...]
    reward_visible: tuple[bool, ...]
    reward_terminates: tuple[bool, ...]
    keys: tuple[int, ...]
    doors: tuple[int, ...]
    door_orientation: tuple[str, ...]
    warps: dict[int, int]  # cell -> target cell

    @classmethod
    def build(cls, objects: GridObjects, n: int, terminate_on_reward: bool) -> ObjectSlots:
        rewards = sorted((r * n + c, info) for (r, c), info in objects.rewards.items())
        doors = sorted((r * n + c, o) for (r, c), o in objects.doors.items())
        return cls(
            source=objects,
            rewards=tuple(cell for cell, _ in rewards),
            reward_value=tuple(float(v) for _, (v, _, _) in rewards),
            reward_visible=tuple(bool(visible) for _, (_, visible, _) in rewards),
            reward_terminates=tuple(terminate_on_reward if t is None else bool(t) for _, (_, _, t) in rewards),
            keys=tuple(sorted(r * n + c for r, c in objects.keys)),
            doors=tuple(cell for cell, _ in doors),
            door_orientation=tuple(o for _, o in doors),
            warps={r * n + c: tr * n + tc for (r, c), (tr, tc) in objects.warps.items()},
        )

    @property
    def reward_bounds(self) -> tuple[float, float]:
        """Lowest and highest visible reward value, with 0 and 1 always inside (symbolic spaces)."""
        values = [v for v, visible in zip(self.reward_value, self.reward_visible) if visible]
        return min([0.0, *values]), max([1.0, *values])

    @property
    def hot(self) -> set[int]:
        """Cells where a step may do more than move: every object cell."""
        return set(self.rewards) | set(self.keys) | set(self.doors) | set(self.warps)


@dataclass(frozen=True, eq=False)
class GridRules:
    """One grid env's rules: the compiled grid, the options, and the tables both envs step.

    Make it with `grid_rules(...)`, which checks every argument. The derived tables are
    plain lists (the single env's per-step look-ups) and arrays (the vector env's).
    """

    compiled: CompiledGrid
    variable: bool
    use_noop: bool
    manual_collect: bool
    stochasticity: float
    random_start: bool
    terminate_on_reward: bool
    time_penalty: float
    visible_walls: bool
    episode_length: int
    resolution: int
    agent_start: int | None  # a cell, or None for the stored START
    objects: ObjectSlots

    @property
    def n(self) -> int:
        return self.compiled.n

    @property
    def n_cells(self) -> int:
        return self.compiled.n_cells

    @property
    def n_states(self) -> int:
        return self.n_cells * (4 if self.variable else 1)

    @property
    def n_moves(self) -> int:
        """Movement actions: 0 N, 1 E, 2 S, 3 W (fixed) or 0 left, 1 right, 2 forward (variable)."""
        return 3 if self.variable else 4

    @property
    def n_actions(self) -> int:
        return self.n_moves + int(self.use_noop) + int(self.manual_collect)

    @property
    def noop(self) -> int:
        """The no-op action, or -1."""
        return self.n_moves if self.use_noop else -1

    @property
    def collect(self) -> int:
        """The collect action (manual_collect), or -1."""
        return self.n_moves + int(self.use_noop) if self.manual_collect else -1

    @property
    def start(self) -> int:
        """The cell an episode starts in without random_start or reset options."""
        return self.compiled.start if self.agent_start is None else self.agent_start

    @property
    def neg_penalty(self) -> float:
        """What a step earns before rewards: -time_penalty, and 0.0 (never -0.0) without one."""
        return -self.time_penalty if self.time_penalty else 0.0

    @cached_property
    def free(self) -> tuple[int, ...]:
        return tuple(int(i) for i in np.flatnonzero(~self.compiled.wall.reshape(-1)))

    @cached_property
    def rc(self) -> tuple[tuple[int, int], ...]:
        """(row, col) of every cell index."""
        return tuple(divmod(i, self.n) for i in range(self.n_cells))

    @cached_property
    def ahead(self) -> list[list[int]]:
        """ahead[d][cell]: the cell one step in compass direction d (walls and the edge: the same cell)."""
        nn = self.n_cells
        move = self.compiled.move.copy()
        stay = np.arange(nn).repeat(4).reshape(nn, 4)
        move[move < 0] = stay[move < 0]  # wall cells: stay (never used)
        return [move[:, d].tolist() for d in range(4)]

    @cached_property
    def move(self) -> list[list[int]]:
        """move[action][cell] in fixed mode: the four directions, then no-op and collect (stay)."""
        identity = list(range(self.n_cells))
        return self.ahead + [identity] * (int(self.use_noop) + int(self.manual_collect))

    def state_of(self, cell: int, orientation: int) -> int:
        return cell + orientation * self.n_cells if self.variable else cell

    def cell(self, value: Any, name: str) -> int:
        """A (row, col) argument as a free cell's index, or a ValueError naming `name`."""
        try:
            if any(isinstance(v, (bool, str)) for v in value):
                raise TypeError
            r, c = (int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected a cell (row, col), got {value!r}") from None
        n = self.n
        if not (0 <= r < n and 0 <= c < n) or self.compiled.wall[r, c]:
            raise ValueError(f"{name}: ({r}, {c}) is not a free cell of the {n}x{n} grid {self.compiled.task_id!r}")
        return r * n + c

    def object_slots(self, objects: Mapping[str, Any] | None, name: str) -> ObjectSlots:
        """Objects given as a mapping (see `tasks.objects_from_dict`) as slots; None: the stored ones."""
        if objects is None:
            return ObjectSlots.build(self.compiled.objects, self.n, self.terminate_on_reward)
        walls = [(int(r), int(c)) for r, c in np.argwhere(self.compiled.wall)]
        return ObjectSlots.build(objects_from_dict(objects, self.n, walls, name), self.n, self.terminate_on_reward)

    def with_objects(self, objects: ObjectSlots) -> GridRules:
        return dataclasses.replace(self, objects=objects)


def grid_rules(
    template: str = "four_rooms",
    size: str = "small",
    orientation: str = "fixed",
    use_noop: bool = False,
    manual_collect: bool = False,
    stochasticity: float = 0.0,
    random_start: bool = False,
    agent_start: tuple[int, int] | None = None,
    objects: Mapping[str, Any] | None = None,
    terminate_on_reward: bool = True,
    time_penalty: float = 0.0,
    visible_walls: bool = True,
    episode_length: int | None = 100,
    resolution: int = 256,
    store: GraphStore | str | None = None,
    task: str | TaskGraph | CompiledGrid | None = None,
) -> GridRules:
    """Check the grid env arguments (one clear error per bad one) and build the rules."""
    check_type("template", template, (str,), "a template name such as 'four_rooms'")
    check_type("size", size, (str,), "a size name such as 'small'")
    check_type("task", task, (str, TaskGraph, CompiledGrid, type(None)), "a grid task id, a TaskGraph or None")
    check_store(store)
    check_choice("orientation", orientation, ORIENTATIONS)
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or not 16 <= resolution <= 4096:
        raise ValueError(f"resolution: expected an integer number of pixels in 16..4096, got {resolution!r}")
    if agent_start is not None and not (isinstance(agent_start, (tuple, list)) and len(agent_start) == 2):
        raise TypeError(f"agent_start: expected a cell (row, col) or None, got {agent_start!r}")
    check_type("objects", objects, (Mapping, type(None)), "a mapping of object kinds to cells or None")
    flags = {
        name: check_bool(name, value)
        for name, value in (
            ("use_noop", use_noop), ("manual_collect", manual_collect), ("random_start", random_start),
            ("terminate_on_reward", terminate_on_reward), ("visible_walls", visible_walls),
        )
    }
    noise = check_probability("stochasticity", stochasticity)
    penalty = check_time_penalty(time_penalty)
    length = check_episode_length(episode_length)
    if task is None:
        tasks.grid.maps.layout(template, size)  # a clear error naming what exists
        task = grid_task_id(template, size)
    with named("task"):
        compiled = load_compiled_grid(task, store)
    rules = GridRules(
        compiled=compiled,
        variable=orientation == "variable",
        stochasticity=noise,
        time_penalty=penalty,
        episode_length=length,
        resolution=int(resolution),
        agent_start=None,
        objects=ObjectSlots.build(compiled.objects, compiled.n, flags["terminate_on_reward"]),
        **flags,
    )
    if agent_start is not None:
        rules = dataclasses.replace(rules, agent_start=rules.cell(agent_start, "agent_start"))
    if objects is not None:
        rules = rules.with_objects(rules.object_slots(objects, "objects"))
    return rules


@dataclass(eq=False)
class GridState:
    """One single env's dynamic state: where the agent is and looks, and what objects remain.

    Observation types read it; only `GridEnv` changes it.
    """

    rules: GridRules
    slots: ObjectSlots
    pos: int = 0
    orientation: int = 0
    keys_held: int = 0
    rewards: dict[int, tuple[float, bool]] = field(default_factory=dict)  # left: cell -> (value, terminates)
    keys: set[int] = field(default_factory=set)  # keys left on the grid
    doors: dict[int, str] = field(default_factory=dict)  # closed doors: cell -> orientation

    def restore(self, slots: ObjectSlots) -> None:
        """Every object of `slots` in place, no key held."""
        self.slots = slots
        self.rewards = dict(zip(slots.rewards, zip(slots.reward_value, slots.reward_terminates)))
        self.keys = set(slots.keys)
        self.doors = dict(zip(slots.doors, slots.door_orientation))
        self.keys_held = 0

    @property
    def index(self) -> int:
        return self.rules.state_of(self.pos, self.orientation)

    def present(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rewards left, keys left and doors closed as one-copy rows in slot order (as `GridBatch`)."""
        slots = self.slots
        return (
            np.array([[c in self.rewards for c in slots.rewards]], dtype=bool).reshape(1, -1),
            np.array([[c in self.keys for c in slots.keys]], dtype=bool).reshape(1, -1),
            np.array([[c in self.doors for c in slots.doors]], dtype=bool).reshape(1, -1),
        )


@dataclass(eq=False)
class GridBatch:
    """The vector env's dynamic state, one entry (row) per copy; objects in slot order."""

    rules: GridRules
    pos: np.ndarray  # int64 (N,)
    orientation: np.ndarray  # int64 (N,); fixed mode: the last move (pictures show it)
    keys_held: np.ndarray  # int64 (N,)
    rewards_left: np.ndarray  # bool (N, rewards)
    keys_left: np.ndarray  # bool (N, keys)
    doors_closed: np.ndarray  # bool (N, doors)

    @property
    def index(self) -> np.ndarray:
        return self.pos + self.orientation * self.rules.n_cells if self.rules.variable else self.pos

    def present(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.rewards_left, self.keys_left, self.doors_closed
