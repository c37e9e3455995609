"""The grid env's settings, its rules as cell-indexed tables, and the state observation types read.

`GridSettings` is the one declaration of the grid env's parameters (template, size, orientation,
extra actions, penalty, noise, start, objects, ...): both envs take them as keyword arguments and
build it, and it checks each one (an error names the field). `GridRules` is what `GridEnv` and
`GridVectorEnv` both run on: the settings, the compiled grid and the objects episodes start
with, turned into move tables and object slots (`grid_rules(settings)`). `ObjectRule` is the
objects' part of a step (doors, keys, rewards, warps), written once over lanes: the vector env
calls it for the copies that reached an object, the single env for its one lane.

Cells are indices `row * n + col`; a state is `orientation * n * n + cell` in variable
orientation mode and the cell in fixed mode. Objects are numbered per kind in slot order
(sorted cells): the vector env keeps one column per slot and copy, the single env one row.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, Protocol

import numpy as np

import tasks
from graphstore import GraphStore, TaskGraph
from tasks import GridObjects, objects_from_dict
from tasks.grid.maps import grid_task_id

from ..loading import load_stored
from ..params import (
    NOT_GIVEN,
    check_bool,
    check_choice,
    check_episode_length,
    check_probability,
    check_store,
    check_time_penalty,
    check_type,
    episode_steps,
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
class GridSettings:
    """The grid env's parameters, declared once and checked once; both envs build it from their keywords.

    Each field is checked on construction: a bad value raises one ValueError or TypeError whose
    message starts with the field's name. Checks that need the map (that `agent_start` and the
    `objects` are free cells of it) are made by `grid_rules`, naming the field too.

    Parameters
    ----------
    template : str
        A grid template name ('four_rooms', 'two_rooms', ...; `graphtasks grid list`).
    size : str
        The template's size ('micro', 'small', 'large', 'xlarge').
    orientation : str
        'fixed' (actions 0 N, 1 E, 2 S, 3 W) or 'variable' (0 turn left, 1 turn right, 2 forward).
    use_noop : bool
        Add a no-op action after the moves.
    manual_collect : bool
        Add a collect action; a reward is paid only on it.
    stochasticity : float
        The probability that an action is replaced by a uniformly random one.
    random_start : bool
        Start each episode on a random free cell.
    agent_start : (int, int), optional
        The start cell (row, col); None: the map's START.
    objects : mapping, optional
        The objects episodes start with (`tasks.objects_from_dict`'s format); None: the stored ones.
    terminate_on_reward : bool
        A reward without a terminate flag of its own ends the episode.
    time_penalty : float
        A non-negative cost subtracted from every step's reward.
    visible_walls : bool
        Walls appear in the symbolic observations.
    max_episode_steps : int, optional
        Steps before truncation; None (stored as 0): no limit. The one name of an episode's
        length (docs/limits.md); `episode_length`, its old name, is taken with a FutureWarning.
    resolution : int
        Pixels of a picture's side (16..4096).
    store : GraphStore or str, optional
        Where a task id is read (a built-in is put there first); None: the default store.
    task : str, TaskGraph or CompiledGrid, optional
        A grid task; None: the built-in `template` at `size`.

    Examples
    --------
    >>> from gym_bridge.grid import GridSettings
    >>> GridSettings(size="large", time_penalty=0.01).time_penalty
    0.01
    >>> GridSettings(stochasticity=2.0)
    Traceback (most recent call last):
    ...
    ValueError: stochasticity: expected a probability in [0, 1], got 2.0
    """

    template: str = "four_rooms"
    size: str = "small"
    orientation: str = "fixed"
    use_noop: bool = False
    manual_collect: bool = False
    stochasticity: float = 0.0
    random_start: bool = False
    agent_start: tuple[int, int] | None = None
    objects: Mapping[str, Any] | None = None
    terminate_on_reward: bool = True
    time_penalty: float = 0.0
    visible_walls: bool = True
    max_episode_steps: int | None = 100
    resolution: int = 256
    store: GraphStore | str | None = None
    task: str | TaskGraph | CompiledGrid | None = None

    def __post_init__(self) -> None:
        check_type("template", self.template, (str,), "a template name such as 'four_rooms'")
        check_type("size", self.size, (str,), "a size name such as 'small'")
        check_type("task", self.task, (str, TaskGraph, CompiledGrid, type(None)), "a grid task id, a TaskGraph or None")
        check_store(self.store)
        check_choice("orientation", self.orientation, ORIENTATIONS)
        resolution = self.resolution
        whole = isinstance(resolution, (int, np.integer)) and not isinstance(resolution, bool)
        if not whole or not 16 <= resolution <= 4096:
            raise ValueError(f"resolution: expected an integer number of pixels in 16..4096, got {resolution!r}")
        start = self.agent_start
        if start is not None and not (isinstance(start, (tuple, list)) and len(start) == 2):
            raise TypeError(f"agent_start: expected a cell (row, col) or None, got {start!r}")
        check_type("objects", self.objects, (Mapping, type(None)), "a mapping of object kinds to cells or None")
        checked: dict[str, Any] = {
            name: check_bool(name, getattr(self, name))
            for name in ("use_noop", "manual_collect", "random_start", "terminate_on_reward", "visible_walls")
        }
        checked["stochasticity"] = check_probability("stochasticity", self.stochasticity)
        checked["time_penalty"] = check_time_penalty(self.time_penalty)
        checked["max_episode_steps"] = check_episode_length(self.max_episode_steps)
        checked["resolution"] = int(resolution)
        for name, value in checked.items():  # the normalised forms (float, int, bool; no limit: 0)
            object.__setattr__(self, name, value)

    @classmethod
    def from_arguments(cls, positional: tuple[Any, ...], keywords: Mapping[str, Any]) -> GridSettings:
        """The settings from an env's arguments: `template` and `size` by position, any field by name.

        Parameters
        ----------
        positional : tuple
            Up to two values: template, then size.
        keywords : mapping
            Field names to values; those left out take their defaults.

        Returns
        -------
        GridSettings
            The checked settings; an unknown name, or a third positional value, is a TypeError naming it.

        Examples
        --------
        >>> GridSettings.from_arguments(("two_rooms",), {"use_noop": True}).template
        'two_rooms'
        >>> GridSettings.from_arguments((), {"colour": "red"})
        Traceback (most recent call last):
        ...
        TypeError: colour: not a grid env parameter; the parameters are template, size, orientation, ...
        """
        names = [f.name for f in dataclasses.fields(cls)]
        if len(positional) > len(POSITIONAL):
            raise TypeError(
                f"{positional[len(POSITIONAL)]!r}: only {' and '.join(POSITIONAL)} are taken by position; "
                "pass the other settings by name"
            )
        given = dict(zip(POSITIONAL, positional))
        if "episode_length" in keywords:  # the old name, kept working with a warning
            keywords = dict(keywords)
            old = keywords.pop("episode_length")
            length = episode_steps(keywords.pop("max_episode_steps", 100), old, "episode_length", 100)
            check_episode_length(length, "episode_length")  # a bad value is refused under the name given
            keywords["max_episode_steps"] = length
        for name, value in keywords.items():
            if name not in names:
                raise TypeError(f"{name}: not a grid env parameter; the parameters are {', '.join(names)}")
            if name in given:
                raise TypeError(f"{name}: given by position and by name")
            given[name] = value
        return cls(**given)

    @property
    def episode_length(self) -> int:
        """The episode length (0: no limit): `max_episode_steps`, as the kernels read it."""
        return int(self.max_episode_steps or 0)

    @classmethod
    def env_signature(cls, init: Any) -> inspect.Signature:
        """The signature of an env constructor `init(self, [leading,] *positional, [keywords,] **settings)`
        that takes the settings: its own parameters with every field in place of `*positional` (template,
        size) and `**settings` (the others, by name). What `inspect.signature`, gymnasium's `make` and
        the parameter tests read, with each field's annotation and default."""
        kind = inspect.Parameter
        own = list(inspect.signature(init).parameters.values())[1:]  # without self
        leading = [p for p in own if p.kind is kind.POSITIONAL_OR_KEYWORD]
        keywords = [p for p in own if p.kind is kind.KEYWORD_ONLY]
        fields = dataclasses.fields(cls)
        return inspect.Signature([
            *leading,
            *(kind(f.name, kind.POSITIONAL_OR_KEYWORD, default=f.default, annotation=f.type)
              for f in fields if f.name in POSITIONAL),
            *keywords,
            *(kind(f.name, kind.KEYWORD_ONLY, default=f.default, annotation=f.type)
              for f in fields if f.name not in POSITIONAL),
            kind("episode_length", kind.KEYWORD_ONLY, default=NOT_GIVEN),  # max_episode_steps's old name
        ])


POSITIONAL = ("template", "size")  # the fields an env takes by position too: GridEnv("four_rooms", "small")


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
    """One grid env's rules: its settings, the compiled grid, and the tables both envs step.

    Make it with `grid_rules(settings)`, which checks the settings against the map. The derived
    tables are plain lists (the single env's per-step look-ups) and arrays (the vector env's).
    One object for both envs, so the single and the vector env step by the same rules.

    Parameters
    ----------
    settings : GridSettings
        The env's settings.
    compiled : CompiledGrid
        The compiled grid the settings name.
    agent_start : int or None
        `settings.agent_start` as a cell index, or None for the stored START.
    objects : ObjectSlots
        The objects episodes start with, in slot order.

    Examples
    --------
    >>> from gym_bridge.grid import GridSettings, grid_rules
    >>> rules = grid_rules(GridSettings("four_rooms", "micro", store=":memory:"))
    >>> rules.compiled.task_id, rules.n, rules.n_states, rules.n_actions
    ('neuronav/grid/four_rooms/micro', 7, 49, 4)
    >>> grid_rules(GridSettings("four_rooms", "micro", orientation="variable", store=":memory:")).n_states
    196
    """

    settings: GridSettings
    compiled: CompiledGrid
    agent_start: int | None  # settings.agent_start as a cell, or None for the stored START
    objects: ObjectSlots

    @property
    def variable(self) -> bool:
        """Variable orientation: the state holds which way the agent looks."""
        return self.settings.orientation == "variable"

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
        return self.n_moves + int(self.settings.use_noop) + int(self.settings.manual_collect)

    @property
    def noop(self) -> int:
        """The no-op action, or -1."""
        return self.n_moves if self.settings.use_noop else -1

    @property
    def collect(self) -> int:
        """The collect action (manual_collect), or -1."""
        return self.n_moves + int(self.settings.use_noop) if self.settings.manual_collect else -1

    @property
    def start(self) -> int:
        """The cell an episode starts in without random_start or reset options."""
        return self.compiled.start if self.agent_start is None else self.agent_start

    @property
    def neg_penalty(self) -> float:
        """What a step earns before rewards: -time_penalty, and 0.0 (never -0.0) without one."""
        return -self.settings.time_penalty if self.settings.time_penalty else 0.0

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
        return self.ahead + [identity] * (int(self.settings.use_noop) + int(self.settings.manual_collect))

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
            return ObjectSlots.build(self.compiled.objects, self.n, self.settings.terminate_on_reward)
        walls = [(int(r), int(c)) for r, c in np.argwhere(self.compiled.wall)]
        terminate = self.settings.terminate_on_reward
        return ObjectSlots.build(objects_from_dict(objects, self.n, walls, name), self.n, terminate)

    def with_objects(self, objects: ObjectSlots) -> GridRules:
        return dataclasses.replace(self, objects=objects)


def grid_rules(settings: GridSettings) -> GridRules:
    """The rules of a grid env: the map `settings` names, compiled, with the settings checked against it.

    Parameters
    ----------
    settings : GridSettings
        The env's settings (each field already checked on its own).

    Returns
    -------
    GridRules
        The tables both envs step; a start or an object off the map's free cells is a ValueError
        naming `agent_start` or `objects`, a task that cannot be loaded one naming `task` or `store`.

    Examples
    --------
    >>> from graphstore import open_store
    >>> with open_store(":memory:") as store:
    ...     rules = grid_rules(GridSettings("two_rooms", use_noop=True, store=store))
    >>> rules.n, rules.n_actions
    (11, 5)
    """
    task = settings.task
    if task is None:
        tasks.grid.maps.layout(settings.template, settings.size)  # a clear error naming what exists
        task = grid_task_id(settings.template, settings.size)
    with named("task"):
        compiled = load_compiled_grid(task, settings.store)
    rules = GridRules(
        settings=settings,
        compiled=compiled,
        agent_start=None,
        objects=ObjectSlots.build(compiled.objects, compiled.n, settings.terminate_on_reward),
    )
    if settings.agent_start is not None:
        rules = dataclasses.replace(rules, agent_start=rules.cell(settings.agent_start, "agent_start"))
    if settings.objects is not None:
        rules = rules.with_objects(rules.object_slots(settings.objects, "objects"))
    return rules


class ObjectLanes(Protocol):
    """What `ObjectRule.step` changes: per lane (row), keys held and the objects left, in slot order."""

    keys_held: np.ndarray  # int64 (lanes,)
    rewards_left: np.ndarray  # bool (lanes, rewards)
    keys_left: np.ndarray  # bool (lanes, keys)
    doors_closed: np.ndarray  # bool (lanes, doors)


@dataclass(frozen=True, eq=False)
class ObjectRule:
    """The objects' part of a step, written once for both envs (steps 2-6 of `gym_bridge.grid.env`).

    On the cell a lane moved to: a closed door lets it in only if it moved there (never by staying)
    holding a key, which the door uses up (the door stays open); otherwise the lane stays where it
    was. Then a reward left on the cell is paid once and removed (with a collect action, only on
    it), ending the episode by its own flag; a key left there is picked up; a warp moves the lane
    to its target. Build it with `ObjectRule.build`; `step` applies it to any lanes at once.
    """

    reward_slot: np.ndarray  # cell -> reward slot, or -1
    reward_value: np.ndarray  # float (rewards,)
    reward_terminates: np.ndarray  # bool (rewards,)
    key_slot: np.ndarray  # cell -> key slot, or -1
    door_slot: np.ndarray  # cell -> door slot, or -1
    warp: np.ndarray  # cell -> the cell a lane ends on (itself without a warp)
    kinds: np.ndarray  # cell -> the objects it holds: DOOR | REWARD | KEY | WARP bits
    collect: int  # the collect action, or -1 (rewards are paid on arrival)

    @classmethod
    def build(cls, slots: ObjectSlots, n_cells: int, collect: int) -> ObjectRule:
        """The rule's cell tables for `slots` on a grid of `n_cells` cells.

        Parameters
        ----------
        slots : ObjectSlots
            The objects an episode starts with.
        n_cells : int
            Cells of the grid (n * n).
        collect : int
            The collect action, or -1.

        Returns
        -------
        ObjectRule
            The rule, its tables indexed by cell.
        """

        def slot_of(cells: tuple[int, ...]) -> np.ndarray:
            table = np.full(n_cells, -1, dtype=np.int64)
            table[list(cells)] = np.arange(len(cells))
            return table

        warp = np.arange(n_cells, dtype=np.int64)
        for cell, target in slots.warps.items():
            warp[cell] = target
        kinds = np.zeros(n_cells, dtype=np.int64)
        for bit, cells in ((DOOR, slots.doors), (REWARD, slots.rewards), (KEY, slots.keys), (WARP, slots.warps)):
            kinds[list(cells)] |= bit
        return cls(
            reward_slot=slot_of(slots.rewards),
            reward_value=np.array(slots.reward_value, dtype=float),
            reward_terminates=np.array(slots.reward_terminates, dtype=bool),
            key_slot=slot_of(slots.keys),
            door_slot=slot_of(slots.doors),
            warp=warp,
            kinds=kinds,
            collect=collect,
        )

    def step(self, lanes: ObjectLanes, copies: np.ndarray, pos: np.ndarray, t: np.ndarray, actions: np.ndarray,
             reward: np.ndarray, terminated: np.ndarray) -> tuple[bool, bool]:
        """Apply the rule to the lanes `copies`, which moved from `pos` to `t` by `actions`.

        Parameters
        ----------
        lanes : ObjectLanes
            Keys held and objects left per lane; changed in place.
        copies : numpy.ndarray
            The lanes (rows of `lanes` and entries of the arrays below) that reached a cell holding
            an object.
        pos, t, actions : numpy.ndarray
            Every lane's cell before the step, the cell it moved to, and its action. `t` is changed
            in place for `copies`: the cell each ends on (its old cell at a closed door it cannot
            open, a warp's target).
        reward, terminated : numpy.ndarray
            Every lane's reward so far (a reward paid is added) and whether it ended (set by a reward
            paid); changed in place.

        Returns
        -------
        (bool, bool)
            Whether any object went (a reward, a key or a door) and whether a door opened.
        """
        cell = t[copies]
        kinds = _bits(self.kinds.take(cell))  # which parts below can apply
        changed = opened = False
        if kinds & DOOR:
            door = self.door_slot.take(cell)
            at_door = door >= 0
            c, d = copies[at_door], door[at_door]
            closed = lanes.doors_closed[c, d]
            opens = closed & (lanes.keys_held[c] > 0) & (pos[c] != cell[at_door])  # only moving into it uses a key
            if np.count_nonzero(opens):
                lanes.keys_held[c[opens]] -= 1
                lanes.doors_closed[c[opens], d[opens]] = False
                changed = opened = True
            blocked = closed & ~opens
            if np.count_nonzero(blocked):  # those stay where they were, and what is there applies
                back = pos[c[blocked]]
                cell[np.flatnonzero(at_door)[blocked]] = back
                kinds |= _bits(self.kinds.take(back))
        if kinds & REWARD:
            slot = self.reward_slot.take(cell)
            here = slot >= 0
            if self.collect >= 0:
                here &= actions[copies] == self.collect
            c, r = copies[here], slot[here]
            left = lanes.rewards_left[c, r]
            if np.count_nonzero(left):
                c, r = c[left], r[left]
                reward[c] += self.reward_value[r]
                terminated[c] = self.reward_terminates[r]
                lanes.rewards_left[c, r] = False
                changed = True
        if kinds & KEY:
            key = self.key_slot.take(cell)
            at_key = key >= 0
            c, k = copies[at_key], key[at_key]
            left = lanes.keys_left[c, k]
            if np.count_nonzero(left):
                lanes.keys_held[c[left]] += 1
                lanes.keys_left[c[left], k[left]] = False
                changed = True
        if kinds & WARP:
            t[copies] = self.warp.take(cell)
        elif kinds & DOOR:
            t[copies] = cell
        return changed, opened


DOOR, REWARD, KEY, WARP = 1, 2, 4, 8  # ObjectRule.kinds: the objects a cell holds, as bits


def _bits(kinds: np.ndarray) -> int:
    """The bits set in any of `kinds` (a few lanes: a Python loop is cheaper than a ufunc reduction)."""
    if kinds.size > 16:
        return int(np.bitwise_or.reduce(kinds))
    bits = 0
    for value in kinds.tolist():
        bits |= value
    return bits


@dataclass(eq=False)
class Lanes:
    """Keys held and objects left for `count` lanes, every object in place (an `ObjectLanes`)."""

    keys_held: np.ndarray
    rewards_left: np.ndarray
    keys_left: np.ndarray
    doors_closed: np.ndarray

    @classmethod
    def full(cls, slots: ObjectSlots, count: int) -> Lanes:
        return cls(
            keys_held=np.zeros(count, dtype=np.int64),
            rewards_left=np.ones((count, len(slots.rewards)), dtype=bool),
            keys_left=np.ones((count, len(slots.keys)), dtype=bool),
            doors_closed=np.ones((count, len(slots.doors)), dtype=bool),
        )


@dataclass(eq=False)
class GridState:
    """One single env's dynamic state: where the agent is and looks, and what objects remain.

    The objects are one lane (`lane`, rows of one) of the arrays `ObjectRule` changes, as in the
    vector env; `rewards`, `keys` and `doors` are what is left by cell, rebuilt by `objects_went`
    for the observation types that read them. Only `GridEnv` changes it.
    """

    rules: GridRules
    slots: ObjectSlots
    pos: int = 0
    orientation: int = 0
    rewards: dict[int, tuple[float, bool]] = field(default_factory=dict)  # left: cell -> (value, terminates)
    keys: set[int] = field(default_factory=set)  # keys left on the grid
    doors: dict[int, str] = field(default_factory=dict)  # closed doors: cell -> orientation
    lane: Lanes | None = None
    rule: ObjectRule | None = None  # the objects' rule for `slots`

    @property
    def keys_held(self) -> int:
        return 0 if self.lane is None else int(self.lane.keys_held[0])

    def restore(self, slots: ObjectSlots) -> None:
        """Every object of `slots` in place, no key held."""
        if self.rule is None or slots is not self.slots:
            self.rule = ObjectRule.build(slots, self.rules.n_cells, self.rules.collect)
        self.slots = slots
        self.lane = Lanes.full(slots, 1)
        self.objects_went()

    def objects_went(self) -> None:
        """`rewards`, `keys` and `doors` from the lane (after the rule took some)."""
        slots, lane = self.slots, self.lane
        assert lane is not None
        rewards = zip(slots.rewards, slots.reward_value, slots.reward_terminates, lane.rewards_left[0])
        self.rewards = {cell: (value, ends) for cell, value, ends, left in rewards if left}
        self.keys = {cell for cell, left in zip(slots.keys, lane.keys_left[0]) if left}
        doors = zip(slots.doors, slots.door_orientation, lane.doors_closed[0])
        self.doors = {cell: orientation for cell, orientation, closed in doors if closed}

    @property
    def index(self) -> int:
        return self.rules.state_of(self.pos, self.orientation)

    def present(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rewards left, keys left and doors closed as one-copy rows in slot order (as `GridBatch`)."""
        lane = self.lane
        assert lane is not None
        return lane.rewards_left.copy(), lane.keys_left.copy(), lane.doors_closed.copy()


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
