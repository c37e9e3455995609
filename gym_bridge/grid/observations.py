"""Grid observation types: one class each, in one registry (`GRID_OBSERVATIONS`).

A type is made from the env's `GridRules` and gives one copy's observation from a
`GridState` (`observe`, the single env) and every copy's from a `GridBatch`
(`observe_batch`, the vector env), side by side, bit for bit the same
(tests/vector/test_grid_vector_env.py checks every registered type).

Speed: a type whose observation is a row per state sets `table` (for the objects present
now); the single env then copies a row and the vector env gathers rows, the fastest path.
A type that depends on the objects left refreshes its table or picture in
`objects_changed` (the single env calls it when a reward, key or door goes, which is
rare), and its batched twin starts from the observation with every object present and
undoes, per copy, the part of each object that is gone: N copies can be in 2^objects
configurations, so a table per configuration would not scale.

Users add types as classes (`GRID_OBSERVATIONS.register`), with
`register_grid_observation(name, builder)` (a function returning a space and a table per
cell or per state) or from a Cypher query (`register_grid_cypher_observation`).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, Callable, ClassVar

import numpy as np
from gymnasium import spaces

import tasks
from graphstore import GraphStore

from ..loading import with_store
from ..observation_types import ObservationRegistry, ObservationType, state_images
from .compiled import CompiledGrid
from .render import GridPainter, ObjectView, cell_edges
from .rules import GridBatch, GridRules, GridState, ObjectSlots

GRID_OBSERVATIONS = ObservationRegistry("grid")
ASCII_CHARSET = " ABRLKDW\n"
SYMBOLIC_CHANNELS = ("agent", "reward", "key", "door", "wall", "warp")
SYMBOLIC_CACHE_CONFIGS = 4  # object configurations whose symbolic tables the single env keeps
GridBuilder = Callable[[CompiledGrid, "GraphStore | str | None"], tuple[spaces.Box, np.ndarray]]


class GridObservation(ObservationType[GridRules]):
    """Base of the grid types.

    `table` holds one read-only row per state for the objects present now (None: the type
    builds each observation in `observe`). `is_index` types are the state index itself.
    `shows_look`: the observation shows where the agent looks, so the vector env tracks
    it in fixed mode too (the last move).

    A new grid observation subclasses it, sets its `name` and `space` (and `table`, unless it
    overrides `observe` and `observe_batch`), and registers with `GRID_OBSERVATIONS`; both grid
    envs then offer it as an ``obs_type``.

    Parameters
    ----------
    rules : GridRules
        The env's rules (the compiled grid and its settings).
    store : GraphStore or str, optional
        The store the task came from.

    Examples
    --------
    >>> from gym_bridge.grid import GRID_OBSERVATIONS, GridSettings, grid_rules
    >>> rules = grid_rules(GridSettings("four_rooms", "micro", store=":memory:"))
    >>> onehot = GRID_OBSERVATIONS.make("onehot", rules)
    >>> onehot.name, onehot.space.shape, int(onehot.table[5].argmax())
    ('onehot', (49,), 5)
    """

    table: np.ndarray | None = None
    is_index: ClassVar[bool] = False
    shows_look: ClassVar[bool] = False

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        self.rules = rules

    def observe(self, state: GridState) -> Any:
        if self.is_index:
            return state.index
        assert self.table is not None, f"{type(self).__name__} builds observations per step: override observe"
        return self.table[state.index].copy()

    def observe_batch(self, batch: GridBatch) -> Any:
        if self.is_index:
            return batch.index.copy()
        assert self.table is not None, f"{type(self).__name__}: override observe_batch"
        return self.table[batch.index]

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        """The single env's objects changed (taken, opened, or a reset with other objects).

        Parameters
        ----------
        state : GridState
            The env's state after the change.
        doors_changed : bool
            A door opened or closed (or a reset changed them).
        """

    def check_objects(self, slots: ObjectSlots) -> None:
        """Refuse objects a reset would pass that this env's space cannot show (ValueError).

        Parameters
        ----------
        slots : ObjectSlots
            The objects a reset would start with.
        """

    def use_table(self, space: spaces.Box, table: np.ndarray) -> None:
        """Set the space and the per-state table, checking every row lies in the space.

        Parameters
        ----------
        space : gymnasium.spaces.Box
            The observation space of one env.
        table : numpy.ndarray
            One row per state.
        """
        table = np.ascontiguousarray(table, dtype=space.dtype)
        if not (np.all(table >= space.low) and np.all(table <= space.high)):
            raise ValueError(f"obs_type {self.name!r}: a state's observation is outside the declared space")
        table.flags.writeable = False
        self.space = space
        self.table = table

    def _states(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every state's cell, orientation, row and column."""
        rules = self.rules
        states = np.arange(rules.n_states)
        cells, orient = states % rules.n_cells, states // rules.n_cells
        return cells, orient, cells // rules.n, cells % rules.n

    def _orientation_columns(self, orient: np.ndarray) -> np.ndarray:
        """Variable mode: a one-hot of the orientation after the features; fixed mode: none."""
        if self.rules.variable:
            return np.eye(4, dtype=np.float32)[orient]
        return np.zeros((orient.size, 0), np.float32)


# -- fixed rows per state -------------------------------------------------------------------------------
@GRID_OBSERVATIONS.register
class Index(GridObservation):
    """The state index (Discrete)."""

    name = "index"
    is_index = True

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        self.space = spaces.Discrete(rules.n_states)


@GRID_OBSERVATIONS.register
class Onehot(GridObservation):
    """One float per state, 1 at the current one."""

    name = "onehot"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        ns = rules.n_states
        self.use_table(spaces.Box(0.0, 1.0, (ns,), np.float32), np.eye(ns, dtype=np.float32))


@GRID_OBSERVATIONS.register
class Twohot(GridObservation):
    """One-hot row and one-hot column (then the orientation in variable mode)."""

    name = "twohot"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        _, orient, rows, cols = self._states()
        eye = np.eye(rules.n, dtype=np.float32)
        table = np.concatenate([eye[rows], eye[cols], self._orientation_columns(orient)], axis=1)
        self.use_table(spaces.Box(0.0, 1.0, (table.shape[1],), np.float32), table)


@GRID_OBSERVATIONS.register
class Geometric(GridObservation):
    """Row and column scaled to 0..1 (then the orientation in variable mode)."""

    name = "geometric"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        _, orient, rows, cols = self._states()
        scaled = np.stack([rows, cols], 1).astype(np.float32) / max(rules.n - 1, 1)
        table = np.concatenate([scaled, self._orientation_columns(orient)], axis=1)
        self.use_table(spaces.Box(0.0, 1.0, (table.shape[1],), np.float32), table)


@GRID_OBSERVATIONS.register
class Images(GridObservation):
    """A fixed random 32x32 RGB image per state."""

    name = "images"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        self.use_table(spaces.Box(0, 255, (32, 32, 3), np.uint8), state_images(rules.n_states))


# -- types that depend on the objects left ------------------------------------------------------------
@GRID_OBSERVATIONS.register
class Boundary(GridObservation):
    """Rays N, E, S, W (variable mode: ahead, right, behind, left, then the orientation):
    passable cells before a wall, the edge or a closed door, divided by n."""

    name = "boundary"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        self.space = spaces.Box(0.0, 1.0, (8 if rules.variable else 4,), np.float32)
        self.fraction = (np.arange(rules.n + 1) / rules.n).astype(np.float32)  # k cells -> k / n
        self.eye = np.eye(4, dtype=np.float32)
        self._layout(rules.objects)
        every_door = np.ones((1, len(rules.objects.doors)), dtype=bool)
        self.table = self._table(every_door)

    def _layout(self, slots: ObjectSlots) -> None:
        """Wall rays per cell and, per door slot, where each ray meets that door (n: it does not)."""
        rules, n = self.rules, self.rules.n
        wall = rules.compiled.wall
        self.slots = slots
        door_slot = {cell: k for k, cell in enumerate(slots.doors)}
        self.wall_rays = np.zeros((rules.n_cells, 4), dtype=np.int64)
        self.door_rays = np.full((len(door_slot), rules.n_cells, 4), n, dtype=np.int64)
        for cell in rules.free:
            r, c = divmod(cell, n)
            for d, (dr, dc) in enumerate(tasks.grid.maps.DIRECTIONS):
                k, rr, cc = 0, r + dr, c + dc
                while 0 <= rr < n and 0 <= cc < n and not wall[rr, cc]:
                    slot = door_slot.get(rr * n + cc)
                    if slot is not None and self.door_rays[slot, cell, d] == n:
                        self.door_rays[slot, cell, d] = k
                    k, rr, cc = k + 1, rr + dr, cc + dc
                self.wall_rays[cell, d] = k

    def _values(self, cells: np.ndarray, orient: np.ndarray, closed: np.ndarray) -> np.ndarray:
        """The observation of each (cell, orientation) row; `closed` is (rows or 1, doors)."""
        rays = self.wall_rays[cells]
        if len(self.door_rays):
            blocked = np.where(closed.T[:, :, None], self.door_rays[:, cells], self.rules.n).min(axis=0)
            rays = np.minimum(rays, blocked)
        values = self.fraction[rays]
        if not self.rules.variable:
            return values
        order = (orient[:, None] + np.arange(4)) & 3  # ahead, right, behind, left
        return np.concatenate([np.take_along_axis(values, order, axis=1), self.eye[orient]], axis=1)

    def _table(self, closed: np.ndarray) -> np.ndarray:
        cells, orient, _, _ = self._states()
        table = np.ascontiguousarray(self._values(cells, orient, closed))
        table.flags.writeable = False
        return table

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        if state.slots is not self.slots:
            self._layout(state.slots)
        elif not doors_changed:
            return
        self.table = self._table(state.present()[2])

    def observe_batch(self, batch: GridBatch) -> np.ndarray:
        return self._values(batch.pos, batch.orientation, batch.doors_closed)


class SymbolicObservation(GridObservation):
    """(side, side, 6) float arrays, channels agent, reward (its value), key, door, wall, warp;
    the whole grid (`radius` 0) or a window of `radius` cells around the agent (off-grid
    cells look like wall). The agent channel is 1, or (orientation + 1) / 4 in variable mode.

    The single env keeps one table of per-state observations per object configuration
    (a few, least recently used go first); the batch zeroes gone objects' entries of the
    every-object table.
    """

    radius: ClassVar[int] = 0
    LAYER_CHANNELS = ((0, 1), (1, 2), (2, 3))  # (present() layer, channel): rewards, keys, doors

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        n, radius = rules.n, self.radius
        self.side = side = n if radius == 0 else 2 * radius + 1
        low = np.zeros((side, side, 6), np.float32)
        high = np.ones((side, side, 6), np.float32)
        self.bounds = rules.objects.reward_bounds
        low[..., 1], high[..., 1] = self.bounds
        self.space = spaces.Box(low, high, (side, side, 6), np.float32)
        self._tables: OrderedDict[tuple, np.ndarray] = OrderedDict()
        slots = rules.objects
        self.full = self._build(slots, set(slots.rewards), set(slots.keys), set(slots.doors))
        self.table = self.full
        visible = np.flatnonzero(np.array(slots.reward_visible, dtype=bool))
        # (layer, slots shown, their cells); invisible rewards never appear, so never change
        self.layers: list[tuple[int, Any, np.ndarray]] = [
            (0, visible, np.array(slots.rewards, dtype=np.int64)[visible]),
            (1, slice(None), np.array(slots.keys, dtype=np.int64)),
            (2, slice(None), np.array(slots.doors, dtype=np.int64)),
        ]

    def _build(self, slots: ObjectSlots, rewards: set[int], keys: set[int], doors: set[int]) -> np.ndarray:
        """Per-state observations with these objects present."""
        rules, radius = self.rules, self.radius
        n, nn = rules.n, rules.n_cells
        width = n + 2 * radius
        base = np.zeros((width, width, 6), np.float32)
        inner = base[radius : radius + n, radius : radius + n]
        if rules.settings.visible_walls:
            base[..., 4] = 1.0  # off-grid padding looks like wall
            inner[..., 4] = rules.compiled.wall
        rc = rules.rc
        for cell, value, visible in zip(slots.rewards, slots.reward_value, slots.reward_visible):
            if visible and cell in rewards:
                inner[rc[cell] + (1,)] = value
        for cell in keys:
            inner[rc[cell] + (2,)] = 1.0
        for cell in doors:
            inner[rc[cell] + (3,)] = 1.0
        for cell in slots.warps:
            inner[rc[cell] + (5,)] = 1.0
        states = np.arange(rules.n_states)
        cells, orient = states % nn, states // nn
        rows, cols = cells // n, cells % n
        agent = (orient + 1) / 4.0 if rules.variable else np.ones(len(states))
        if radius == 0:
            table = np.repeat(base[None], len(states), axis=0)
            table[states, rows, cols, 0] = agent
        else:
            side = 2 * radius + 1
            crops = np.lib.stride_tricks.sliding_window_view(base, (side, side), axis=(0, 1))  # (.., .., 6, side, side)
            table = np.ascontiguousarray(crops[rows, cols].transpose(0, 2, 3, 1))
            table[:, radius, radius, 0] = agent
        table.flags.writeable = False
        return table

    def check_objects(self, slots: ObjectSlots) -> None:
        low, high = slots.reward_bounds
        if low < self.bounds[0] or high > self.bounds[1]:
            raise ValueError(
                f"reset options: objects: reward values {low}..{high} fall outside the symbolic observation's "
                f"bounds {self.bounds}; pass these objects to the constructor instead"
            )

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        key = (state.slots, tuple(sorted(state.rewards)), tuple(sorted(state.keys)), tuple(sorted(state.doors)))
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = self._build(state.slots, set(state.rewards), state.keys, set(state.doors))
            if len(self._tables) > SYMBOLIC_CACHE_CONFIGS:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        self.table = table

    def observe_batch(self, batch: GridBatch) -> np.ndarray:
        pos, radius, n = batch.pos, self.radius, self.rules.n
        obs = self.full[batch.index]
        rows, cols = np.divmod(pos, n)
        present = batch.present()
        for layer, channel in self.LAYER_CHANNELS:
            _, shown, object_cells = self.layers[layer]
            if not object_cells.size:
                continue
            gone = ~present[layer][:, shown]
            if not gone.any():
                continue
            copy, k = np.nonzero(gone)
            i, j = np.divmod(object_cells[k], n)
            if radius:
                i, j = i + radius - rows[copy], j + radius - cols[copy]
                inside = (i >= 0) & (i < self.side) & (j >= 0) & (j < self.side)
                copy, i, j = copy[inside], i[inside], j[inside]
            obs[copy, i, j, channel] = 0.0
        return obs

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_tables"] = OrderedDict()  # rebuilt on the next change of objects
        return state


@GRID_OBSERVATIONS.register
class Symbolic(SymbolicObservation):
    """The whole grid as (n, n, 6) channels."""

    name = "symbolic"
    radius = 0


@GRID_OBSERVATIONS.register
class SymbolicWindow(SymbolicObservation):
    """The 5x5 cells around the agent as (5, 5, 6) channels."""

    name = "symbolic_window"
    radius = 2


@GRID_OBSERVATIONS.register
class SymbolicWindowTight(SymbolicObservation):
    """The 3x3 cells around the agent as (3, 3, 6) channels."""

    name = "symbolic_window_tight"
    radius = 1


@GRID_OBSERVATIONS.register
class Ascii(GridObservation):
    """The map as text, one line per row: B wall, A agent, R / L reward above / below 0, K key,
    D closed door, W warp. neuro-nav's drawing order: the agent first, then rewards, keys,
    doors and warps over it (an object on the agent's cell hides the agent)."""

    name = "ascii"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        n = rules.n
        self.length = n * n + n - 1
        self.space = spaces.Text(max_length=self.length, min_length=self.length, charset=ASCII_CHARSET)
        self.at = np.array([r * (n + 1) + c for r, c in rules.rc], dtype=np.int64)  # cell -> character position
        self.at_list = self.at.tolist()
        static = ["B" if rules.compiled.wall[r, c] else " " for r, c in rules.rc]
        text = "\n".join("".join(static[r * n : (r + 1) * n]) for r in range(n))
        self.static = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        self._layout(rules.objects)
        every = [np.ones((1, len(cells)), bool) for cells in self._cells]
        self._base = self._text(self.draw(every[0], every[1], every[2], None)[0])

    def _layout(self, slots: ObjectSlots) -> None:
        self.slots = slots
        self._cells = (slots.rewards, slots.keys, slots.doors)
        visible = np.array(slots.reward_visible, dtype=bool)
        reward_chars = np.array([ord("R" if v > 0 else "L") for v in slots.reward_value], np.uint8)
        rewards, keys, doors = (np.array(c, dtype=np.int64) for c in self._cells)
        # later layers win on a shared cell: rewards, keys, doors (then the static warps)
        self.layers: list[tuple[Any, np.ndarray, np.ndarray]] = [
            (np.flatnonzero(visible), self.at[rewards[visible]], reward_chars[visible]),
            (slice(None), self.at[keys], np.full(keys.size, ord("K"), np.uint8)),
            (slice(None), self.at[doors], np.full(doors.size, ord("D"), np.uint8)),
        ]
        self.warps = self.at[np.array(sorted(slots.warps), dtype=np.int64)]

    def draw(self, rewards: np.ndarray, keys: np.ndarray, doors: np.ndarray, agent: np.ndarray | None) -> np.ndarray:
        """Character codes (copies, length) of maps with these objects present and the agent at `agent`."""
        count = rewards.shape[0]
        chars = np.empty((count, self.length), dtype=np.uint8)
        chars[:] = self.static
        if agent is not None:
            chars[np.arange(count), self.at[agent]] = ord("A")
        for (shown, where, codes), present in zip(self.layers, (rewards, keys, doors)):
            if where.size:
                chars[:, where] = np.where(present[:, shown], codes, chars[:, where])
        chars[:, self.warps] = ord("W")
        return chars

    @staticmethod
    def _text(chars: np.ndarray) -> list[str]:
        return list(chars.tobytes().decode("ascii"))

    def text(self, state: GridState) -> str:
        """The map of one env's state (render('ansi') draws the same)."""
        self.objects_changed(state, True)
        return self.observe(state)

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        if state.slots is not self.slots:
            self._layout(state.slots)
        self._base = self._text(self.draw(*state.present(), None)[0])

    def observe(self, state: GridState) -> str:
        chars = self._base
        i = self.at_list[state.pos]
        old = chars[i]
        if old != " ":  # an object on the agent's cell hides the agent
            return "".join(chars)
        chars[i] = "A"
        text = "".join(chars)
        chars[i] = old
        return text

    def observe_batch(self, batch: GridBatch) -> tuple[str, ...]:
        chars = self.draw(*batch.present(), batch.pos)
        return tuple(chars.view(f"S{self.length}").reshape(-1).astype(f"U{self.length}").tolist())


def object_view(state: GridState) -> ObjectView:
    """The objects of one env's state in the painter's (row, col) terms."""
    rc, slots = state.rules.rc, state.slots
    visible = dict(zip(slots.rewards, slots.reward_visible))
    return ObjectView(
        {rc[c]: (v, visible[c], t) for c, (v, t) in state.rewards.items()},
        {rc[c] for c in state.keys},
        {rc[c]: o for c, o in state.doors.items()},
    )


def painter_for(rules: GridRules, slots: ObjectSlots) -> GridPainter:
    """The painter of a grid with these (static) markers and warps."""
    return GridPainter(rules.n, rules.compiled.wall, dict(slots.source.markers), dict(slots.source.warps))


def _flat_pixels(mask: np.ndarray, y0: int, x0: int, res: int) -> np.ndarray:
    """Flat byte positions in a (res, res, 3) image of the mask's pixels placed at (y0, x0)."""
    ys, xs = np.nonzero(mask)
    base = ((ys + y0) * res + (xs + x0)) * 3
    return (base[:, None] + np.arange(3)[None, :]).reshape(-1).astype(np.intp)


def _padded(index_lists: list[np.ndarray]) -> np.ndarray:
    """Rows of unequal length as one matrix, each row padded by repeating its first entry."""
    width = max(len(a) for a in index_lists)
    out = np.empty((len(index_lists), width), dtype=np.intp)
    for row, a in zip(out, index_lists):
        row[: len(a)] = a
        row[len(a) :] = a[0]
    return out


class PictureObservation(GridObservation):
    """RGB pictures at `resolution`: the whole grid (`radius` 0) or the cells around the agent,
    with the agent as a black triangle pointing where it looks.

    Single env: the picture (or the window at each cell) for the objects present now, cached
    by the painter per configuration, with the agent's pixels set. Batch: the every-object
    picture, with the blocks of cells whose objects differ in a copy pasted over it.
    """

    radius: ClassVar[int] = 0
    shows_look = True

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        n, res = rules.n, rules.settings.resolution
        self.res = res
        self.space = spaces.Box(0, 255, (res, res, 3), np.uint8)
        self.side = n if self.radius == 0 else 2 * self.radius + 1
        self.edges = np.array(cell_edges(self.side, res))
        self.slots = rules.objects
        self.painter = painter_for(rules, rules.objects)
        if self.radius == 0:
            edges = cell_edges(n, res)
            self._agent_px = [
                [
                    _flat_pixels(
                        self.painter.mask(edges[r + 1] - edges[r], edges[c + 1] - edges[c], o), edges[r], edges[c], res
                    )
                    for o in range(4)
                ]
                for r, c in rules.rc
            ]
        else:
            low, high = self.edges[self.radius], self.edges[self.radius + 1]
            masks = [self.painter.mask(high - low, high - low, o) for o in range(4)]
            self._center_px = [_flat_pixels(mask, low, low, res) for mask in masks]
        self._setup_batch()
        self._view = self.full_view
        self._refresh()

    # -- the single env ------------------------------------------------------------------------------
    def _refresh(self) -> None:
        if self.radius == 0:
            self._picture = self.painter.full(self.res, self._view)
        else:
            self._windows = self.painter.window_table(self._view)

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        new, old = state.slots.source, self.slots.source
        if new.markers != old.markers or new.warps != old.warps:
            self.painter = painter_for(self.rules, state.slots)  # markers and warps are the painter's static layer
        self.slots = state.slots
        self._view = object_view(state)
        self._refresh()

    def observe(self, state: GridState) -> np.ndarray:
        if self.radius == 0:
            image = self._picture.copy()
            image.reshape(-1)[self._agent_px[state.pos][state.orientation]] = 0
            return image
        base = self._windows.get(state.pos)
        if base is None:
            base = self.painter.window(self.rules.rc[state.pos], self.radius, self.res, self._view)
        image = base.copy()
        image.reshape(-1)[self._center_px[state.orientation]] = 0
        return image

    # -- the vector env ------------------------------------------------------------------------------
    def _setup_batch(self) -> None:
        rules, slots = self.rules, self.rules.objects
        self.full_view = ObjectView(
            {rules.rc[c]: (v, visible, t) for c, v, visible, t in zip(
                slots.rewards, slots.reward_value, slots.reward_visible, slots.reward_terminates
            )},
            {rules.rc[c] for c in slots.keys},
            {rules.rc[c]: o for c, o in zip(slots.doors, slots.door_orientation)},
        )
        # cells that hold something drawn: each gets a code per copy, one bit per object there
        visible = [c for c, shown in zip(slots.rewards, slots.reward_visible) if shown]  # invisible: never drawn
        self.object_cells = np.array(sorted(set(visible) | set(slots.keys) | set(slots.doors)), np.int64)
        where = {int(c): x for x, c in enumerate(self.object_cells)}
        self.members: list[tuple[int, np.ndarray, np.ndarray, int]] = []  # (layer, slots, object-cell index, bit)
        drawn = (slots.reward_visible, [True] * len(slots.keys), [True] * len(slots.doors))
        for layer, bit, layer_cells in ((0, 1, slots.rewards), (1, 2, slots.keys), (2, 4, slots.doors)):
            shown_slots = np.array([k for k in range(len(layer_cells)) if drawn[layer][k]], dtype=np.int64)
            if shown_slots.size:
                x = np.array([where[int(layer_cells[k])] for k in shown_slots])
                self.members.append((layer, shown_slots, x, bit))
        self.full_code = np.zeros(self.object_cells.size, dtype=np.int64)
        for _, _, x, bit in self.members:
            self.full_code[x] |= bit
        self.patches: dict[int, np.ndarray] = {}
        self._batch_ready = False

    def _prepare_batch(self) -> None:
        """The vector env's pictures, drawn on first use (the single env never needs them)."""
        res = self.res
        if self.radius == 0:
            self.batch_picture = self.painter.full(res, self.full_view)
            self.agent_px = _padded([px for per_cell in self._agent_px for px in per_cell])  # (cell * 4 + o) -> pixels
        else:
            # windows around every cell with every object present, drawn when a copy first stands there
            self.batch_windows = np.zeros((self.rules.n_cells, res, res, 3), dtype=np.uint8)
            self.drawn = np.zeros(self.rules.n_cells, dtype=bool)
            low, high = self.edges[self.radius], self.edges[self.radius + 1]
            self.centre = (slice(None), slice(low, high), slice(low, high))
            triangles = [self.painter.mask(high - low, high - low, o) for o in range(4)]
            # the agent always stands in the centre cell: keep-masks (1 off the triangle) per orientation
            self.keep = np.repeat(np.stack([~t for t in triangles]).astype(np.uint8)[..., None], 3, axis=3)
        self._batch_ready = True

    def observe_batch(self, batch: GridBatch) -> np.ndarray:
        if not self._batch_ready:
            self._prepare_batch()
        pos, o = batch.pos, batch.orientation
        count = pos.size
        if self.radius == 0:
            obs = np.empty((count, self.res, self.res, 3), dtype=np.uint8)
            obs[:] = self.batch_picture
        else:
            new = pos[~self.drawn[pos]]
            for cell in np.unique(new).tolist() if new.size else ():  # once per cell over the env's life
                r, c = divmod(cell, self.rules.n)
                self.batch_windows[cell] = self.painter.draw_region(
                    r - self.radius, c - self.radius, self.side, self.res, self.full_view
                )
                self.drawn[cell] = True
            obs = self.batch_windows[pos]
        if self.object_cells.size:
            self._paste_differences(batch, obs)
        if self.radius == 0:  # the agent: a black triangle
            obs.reshape(count, -1)[np.arange(count)[:, None], self.agent_px[pos * 4 + o]] = 0
        else:
            centre = obs[self.centre]
            np.multiply(centre, self.keep[o], out=centre)
        return obs

    def _paste_differences(self, batch: GridBatch, obs: np.ndarray) -> None:
        present = batch.present()
        shown = [present[layer][:, slots] for layer, slots, _, _ in self.members]
        if all(p.all() for p in shown):  # the usual case: nothing taken or opened in any copy
            return
        code = np.zeros((batch.pos.size, self.object_cells.size), dtype=np.int64)
        for (_, _, x, bit), p in zip(self.members, shown):
            code[:, x] |= p * bit
        differ = code != self.full_code
        if not differ.any():
            return
        n = self.rules.n
        copy, x = np.nonzero(differ)
        i, j = np.divmod(self.object_cells[x], n)
        if self.radius:
            rows, cols = np.divmod(batch.pos[copy], n)
            i, j = i + self.radius - rows, j + self.radius - cols
            inside = (i >= 0) & (i < self.side) & (j >= 0) & (j < self.side)
            copy, x, i, j = copy[inside], x[inside], i[inside], j[inside]
        group = ((x * 8 + code[copy, x]) * self.side + i) * self.side + j
        keys, inverse = np.unique(group, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse, minlength=keys.size))[:-1]
        edges = self.edges
        for key, members in zip(keys.tolist(), np.split(copy[order], bounds)):  # one paste per distinct block
            rest, jj = divmod(key, self.side)
            rest, ii = divmod(rest, self.side)
            obs[members, edges[ii] : edges[ii + 1], edges[jj] : edges[jj + 1]] = self._patch(key, ii, jj)

    def _patch(self, key: int, i: int, j: int) -> np.ndarray:
        patch = self.patches.get(key)
        if patch is None:
            x, code = divmod(key // (self.side * self.side), 8)
            cell = divmod(int(self.object_cells[x]), self.rules.n)
            view = self.full_view
            left = ObjectView(
                {cell: view.rewards[cell]} if code & 1 else {},
                {cell} if code & 2 else set(),
                {cell: view.doors[cell]} if code & 4 else {},
            )
            patch = self.patches[key] = self.painter.cell_block(cell, i, j, self.side, self.res, left)
        return patch

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for cached in ("_windows", "batch_windows", "drawn", "batch_picture", "_picture"):
            state.pop(cached, None)
        state["patches"], state["_batch_ready"] = {}, False
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._refresh()  # cached pictures are redrawn, not pickled


@GRID_OBSERVATIONS.register
class Visual(PictureObservation):
    """The whole grid as an RGB picture."""

    name = "visual"
    radius = 0


@GRID_OBSERVATIONS.register
class Window(PictureObservation):
    """The 5x5 cells around the agent as an RGB picture."""

    name = "window"
    radius = 2


@GRID_OBSERVATIONS.register
class WindowTight(PictureObservation):
    """The 3x3 cells around the agent as an RGB picture."""

    name = "window_tight"
    radius = 1


@GRID_OBSERVATIONS.register
class Distance(GridObservation):
    """Shortest-path distance, in steps over the stored MOVE edges, from the agent's cell to
    each visible reward (slot order: sorted cells); -1 for a reward already taken or out of
    reach. Doors and warps do not shorten or block the path: it is the grid's own geometry.

    Examples
    --------
    >>> from gym_bridge import GridEnv
    >>> env = GridEnv("four_rooms", "small", obs_type="distance", store=":memory:")
    >>> obs, info = env.reset(seed=0)
    >>> obs, env.agent_pos
    (array([16.], dtype=float32), (9, 9))
    """

    name = "distance"

    def __init__(self, rules: GridRules, store: GraphStore | str | None = None) -> None:
        super().__init__(rules, store)
        self._layout(rules.objects)
        finite = self.cell_table[self.cell_table >= 0]
        high = float(max(finite.max(), 1.0)) if finite.size else 1.0
        self.space = spaces.Box(-1.0, high, (self.shown.size,), np.float32)

    def _layout(self, slots: ObjectSlots) -> None:
        rules = self.rules
        self.slots = slots
        self.shown = np.flatnonzero(np.array(slots.reward_visible, dtype=bool))
        # distances from every cell to a target: breadth-first from the target over MOVE edges reversed
        sources: list[list[int]] = [[] for _ in range(rules.n_cells)]
        move = rules.compiled.move
        for cell in rules.free:
            for target in move[cell].tolist():
                if target != cell:
                    sources[target].append(cell)
        table = np.full((rules.n_cells, self.shown.size), -1.0, dtype=np.float32)
        for column, slot in enumerate(self.shown.tolist()):
            target = slots.rewards[slot]
            table[target, column] = 0.0
            queue = deque([target])
            while queue:
                cell = queue.popleft()
                for before in sources[cell]:
                    if table[before, column] < 0:
                        table[before, column] = table[cell, column] + 1
                        queue.append(before)
        table.flags.writeable = False
        self.cell_table = table

    def check_objects(self, slots: ObjectSlots) -> None:
        if sum(slots.reward_visible) != self.shown.size:
            raise ValueError(
                f"reset options: objects: {sum(slots.reward_visible)} visible rewards, but the distance "
                f"observation has {self.shown.size}; pass these objects to the constructor instead"
            )

    def objects_changed(self, state: GridState, doors_changed: bool) -> None:
        if state.slots is not self.slots:
            self._layout(state.slots)

    def observe(self, state: GridState) -> np.ndarray:
        row = self.cell_table[state.pos].copy()
        rewards = self.slots.rewards
        for column, slot in enumerate(self.shown.tolist()):
            if rewards[slot] not in state.rewards:
                row[column] = -1.0
        return row

    def observe_batch(self, batch: GridBatch) -> np.ndarray:
        rows = self.cell_table[batch.pos]
        return np.where(batch.rewards_left[:, self.shown], rows, np.float32(-1.0))


# -- user types ---------------------------------------------------------------------------------------------
def register_grid_observation(name: str, builder: GridBuilder) -> type[GridObservation]:
    """Add `obs_type=name` for grids: `builder(compiled, store)` returns (space, table) with one row
    per cell (row * n + col) or, for variable orientation, one per state (orientation * n * n + cell)."""
    if name in GRID_OBSERVATIONS and not getattr(GRID_OBSERVATIONS.get(name), "user_type", False):
        raise ValueError(f"observation {name!r}: a built-in grid observation has this name")

    def __init__(self: GridObservation, rules: GridRules, store: GraphStore | str | None = None) -> None:
        GridObservation.__init__(self, rules, store)
        space, table = builder(rules.compiled, store)
        table = np.asarray(table)
        nn = rules.n_cells
        if table.shape[0] == nn:
            table = table[np.arange(rules.n_states) % nn]
        elif not (table.shape[0] == 4 * nn and rules.variable):
            raise ValueError(
                f"observation {name!r}: the builder returned {table.shape[0]} rows, expected {nn} (one per cell)"
                + (f" or {4 * nn} (one per state)" if rules.variable else "")
            )
        self.use_table(space, table)

    cls = type(f"GridObservation_{name}", (GridObservation,), {"name": name, "user_type": True, "__init__": __init__})
    return GRID_OBSERVATIONS.register(cls, replace=True)


def register_grid_cypher_observation(
    name: str, query: str, low: float = -np.inf, high: float = np.inf
) -> type[GridObservation]:
    """A grid observation from a Cypher query run once per environment with `$task` bound.

    The query returns an index first and one feature per further column. Indices below
    n*n are cells (row * n + col; one row per cell, the observation is the agent's
    cell's row); a query that also returns indices n*n..4*n*n-1 gives one row per
    variable-orientation state (orientation * n * n + cell).
    """

    def builder(compiled: CompiledGrid, store: GraphStore | str | None) -> tuple[spaces.Box, np.ndarray]:
        result = with_store(store, lambda s: s.cypher(query, {"task": compiled.task_id}))
        if len(result.columns) < 2:
            raise ValueError(
                f"observation {name!r}: the query must return a cell or state index and at least one feature"
            )
        nn = compiled.n_cells
        indices = [row[0] for row in result.rows]
        for index in indices:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 4 * nn:
                raise ValueError(
                    f"observation {name!r}: first column must be a cell index 0..{nn - 1} or a state index "
                    f"0..{4 * nn - 1}, got {index!r}"
                )
        rows = 4 * nn if any(i >= nn for i in indices) else nn
        table = np.full((rows, len(result.columns) - 1), np.nan, dtype=np.float32)
        for row in result.rows:
            table[row[0]] = [np.nan if v is None else float(v) for v in row[1:]]
        missing = sorted({int(i) for i in np.flatnonzero(np.isnan(table).any(axis=1))})
        if missing:
            what = "cell" if rows == nn else "state"
            raise ValueError(f"observation {name!r}: no complete row for {what}(s) {missing[:10]}")
        lo = np.float32(low if np.isfinite(low) else table.min())
        hi = np.float32(high if np.isfinite(high) else table.max())
        return spaces.Box(lo, hi, (table.shape[1],), np.float32), table

    return register_grid_observation(name, builder)


def grid_observation_types() -> list[str]:
    return GRID_OBSERVATIONS.names()
