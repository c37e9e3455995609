"""GridEnv: the neuro-nav grid worlds, run from their stored graphs.

Dynamics (reference step order, reference bugs fixed; see docs/grid.md):
1. with probability `stochasticity` the action is replaced by a uniformly random action
   (drawn from the seeded generator);
2. move: fixed orientation 0 N, 1 E, 2 S, 3 W; variable orientation 0 turn left, 1 turn
   right, 2 forward; then the optional no-op and collect actions. Walls and the edge keep
   the agent in place; a closed door can be entered only with a key, which it uses up
   (the door opens for good); a key is used only by moving into a closed door, never by
   staying on one (after a warp onto it);
3. reward = -time_penalty (a non-negative cost, the convention of every family);
4. a reward on the cell reached is paid once (with manual_collect only on the collect
   action) and removed; the episode ends by its own terminate flag, else by
   terminate_on_reward;
5. a key on the cell is picked up; 6. a warp on the cell moves the agent to its target.
The episode is truncated after `episode_length` steps.

Speed: the compiled move table becomes Python lists; a step does list look-ups and, only
on cells that hold something, the slow path. Observations are rows copied from
precomputed tables or, for the dynamic types, a cached picture/array of the current
objects with the agent stamped in.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import tasks
from graphstore import GraphStore, TaskGraph
from tasks import GridObjects, RandomStream, objects_from_dict
from tasks.grid_tasks import grid_task_id

from .grid_compile import CompiledGrid, compile_grid, compile_grid_from_store
from .loading import load_stored, with_store
from .observation_types import state_images
from .params import (
    RenderModes,
    check_bool,
    check_choice,
    check_episode_length,
    check_probability,
    check_render_mode,
    check_store,
    check_time_penalty,
    check_type,
    named,
)
from .render_grid import GridPainter, ObjectView, cell_edges

OBS_TYPES = (
    "index", "onehot", "twohot", "geometric", "boundary", "visual", "images", "window", "window_tight", "symbolic",
    "symbolic_window", "symbolic_window_tight", "ascii",
)
ORIENTATIONS = ("fixed", "variable")
ASCII_CHARSET = " ABRLKDW\n"
SYMBOLIC_CHANNELS = ("agent", "reward", "key", "door", "wall", "warp")
SYMBOLIC_CACHE_CONFIGS = 4  # object configurations whose symbolic tables are kept
WINDOW_RADIUS = {"window": 2, "window_tight": 1, "symbolic_window": 2, "symbolic_window_tight": 1, "symbolic": 0}

GridBuilder = Callable[[CompiledGrid, "GraphStore | str | None"], tuple[spaces.Box, np.ndarray]]
_GRID_BUILDERS: dict[str, GridBuilder] = {}


def register_grid_observation(name: str, builder: GridBuilder) -> None:
    """Add `obs_type=name` for grids: `builder(compiled, store)` returns (space, table with one row per cell)."""
    if name in OBS_TYPES:
        raise ValueError(f"observation {name!r}: a built-in grid observation has this name")
    _GRID_BUILDERS[name] = builder


def register_grid_cypher_observation(name: str, query: str, low: float = -np.inf, high: float = np.inf) -> None:
    """A grid observation from a Cypher query run once per environment with `$task` bound.

    The query returns an index first and one feature per further column. Indices below
    n*n are cells (row * n + col; one row per cell, the observation is the agent's
    cell's row); a query that also returns indices n*n..4*n*n-1 gives one row per
    variable-orientation state (orientation * n * n + cell).
    """

    def builder(compiled: CompiledGrid, store: GraphStore | str | None):
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

    register_grid_observation(name, builder)


def grid_observation_types() -> list[str]:
    return list(OBS_TYPES) + sorted(_GRID_BUILDERS)


def load_compiled_grid(task: str | TaskGraph | CompiledGrid, store: GraphStore | str | None = None) -> CompiledGrid:
    """A compiled grid: a built-in id is put into the store on first use, then read back by query."""
    if isinstance(task, CompiledGrid):
        return task
    if isinstance(task, TaskGraph):
        return compile_grid(task)
    if not isinstance(task, str) or not task:
        raise ValueError(f"task: expected a grid task id such as 'neuronav/grid/four_rooms/small', got {task!r}")

    return load_stored(task, store, compile_grid_from_store)


def _flat_pixels(mask: np.ndarray, y0: int, x0: int, res: int) -> np.ndarray:
    """Flat byte positions in a (res, res, 3) image of the mask's pixels placed at (y0, x0)."""
    ys, xs = np.nonzero(mask)
    base = ((ys + y0) * res + (xs + x0)) * 3
    return (base[:, None] + np.arange(3)[None, :]).reshape(-1).astype(np.intp)


class GridEnv(gym.Env):
    """A neuro-nav grid world (template x size) as a gymnasium environment; rules in the module docstring.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from gym_bridge import GridEnv
    >>> with open_store(":memory:") as store:
    ...     env = GridEnv("four_rooms", size="small", obs_type="index", store=store)
    >>> obs, info = env.reset(seed=0)
    >>> obs, info["available_actions"]
    (108, (0, 1, 2, 3))
    >>> env.step(0)[0]  # north: from row 9 to row 8 of the 11 x 11 grid
    97
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}
    action_space: spaces.Discrete
    _table: np.ndarray  # observation row per state (empty: observations are built per step)
    _observe: Callable[[], Any]  # this step's observation, set by the observation type

    def __init__(
        self,
        template: str = "four_rooms",
        size: str = "small",
        obs_type: str = "index",
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
        render_mode: str | None = None,
        store: GraphStore | str | None = None,
        task: str | TaskGraph | CompiledGrid | None = None,
    ) -> None:
        check_type("template", template, (str,), "a template name such as 'four_rooms'")
        check_type("size", size, (str,), "a size name such as 'small'")
        check_type("task", task, (str, TaskGraph, CompiledGrid, type(None)), "a grid task id, a TaskGraph or None")
        check_store(store)
        check_choice("obs_type", obs_type, grid_observation_types(), "grid observation")
        check_choice("orientation", orientation, ORIENTATIONS)
        check_render_mode(render_mode, self.metadata["render_modes"])
        if (
            isinstance(resolution, bool)
            or not isinstance(resolution, (int, np.integer))
            or not 16 <= resolution <= 4096
        ):
            raise ValueError(f"resolution: expected an integer number of pixels in 16..4096, got {resolution!r}")
        if agent_start is not None and not (isinstance(agent_start, (tuple, list)) and len(agent_start) == 2):
            raise TypeError(f"agent_start: expected a cell (row, col) or None, got {agent_start!r}")
        check_type("objects", objects, (Mapping, type(None)), "a mapping of object kinds to cells or None")
        self.obs_type = obs_type
        self.orientation = orientation
        self.use_noop = check_bool("use_noop", use_noop)
        self.manual_collect = check_bool("manual_collect", manual_collect)
        self.random_start = check_bool("random_start", random_start)
        self.terminate_on_reward = check_bool("terminate_on_reward", terminate_on_reward)
        self.visible_walls = check_bool("visible_walls", visible_walls)
        self.stochasticity = check_probability("stochasticity", stochasticity)
        self.time_penalty = check_time_penalty(time_penalty)
        self.episode_length = check_episode_length(episode_length)
        self.resolution = int(resolution)
        self.render_mode = render_mode
        if task is None:
            tasks.grid_tasks.layout(template, size)  # a clear error naming what exists
            task = grid_task_id(template, size)
        with named("task"):
            self.compiled = c = load_compiled_grid(task, store)
        n = self.n = c.n
        nn = n * n
        self._variable = orientation == "variable"
        self.n_states = nn * (4 if self._variable else 1)
        n_moves = 3 if self._variable else 4
        self._noop = n_moves if self.use_noop else -1
        self._collect = n_moves + int(self.use_noop) if self.manual_collect else -1
        self.n_actions = n_moves + int(self.use_noop) + int(self.manual_collect)
        self.action_space = spaces.Discrete(self.n_actions)
        self._all_actions = tuple(range(self.n_actions))
        self._free = [int(i) for i in np.flatnonzero(~c.wall.reshape(-1))]
        self._rc = [divmod(i, n) for i in range(nn)]
        move = c.move.copy()
        move[move < 0] = np.arange(nn).repeat(4).reshape(nn, 4)[move < 0]  # wall cells: stay (never used)
        self._dir = [move[:, d].tolist() for d in range(4)]
        identity = list(range(nn))
        self._tab = self._dir + [identity] * (int(self.use_noop) + int(self.manual_collect))
        self._neg_penalty = -self.time_penalty if self.time_penalty else 0.0  # never -0.0
        self.agent_start = None if agent_start is None else self._check_cell(agent_start, "agent_start")
        self.objects = self._check_objects(objects if objects is not None else None, "objects")
        self._reward_bounds = self._bounds(self.objects)
        self._painter: GridPainter | None = None
        self._stream: RandomStream | None = None
        self._episode_objects = self.objects
        self._view: ObjectView | None = None
        self._setup_observation(store)
        self._restore(self.objects)
        self._pos = c.start
        self._o = 0
        self._steps = 0

    # -- parameters ----------------------------------------------------------------------
    def _check_cell(self, value: Any, name: str) -> int:
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

    def _check_objects(self, objects: Mapping[str, Any] | None, name: str) -> GridObjects:
        if objects is None:
            return self.compiled.objects
        walls = [(int(r), int(c)) for r, c in np.argwhere(self.compiled.wall)]
        return objects_from_dict(objects, self.n, walls, name)

    @staticmethod
    def _bounds(objects: GridObjects) -> tuple[float, float]:
        values = [v for v, visible, _ in objects.rewards.values() if visible]
        return min([0.0, *values]), max([1.0, *values])

    # -- objects: the dynamic state ------------------------------------------------------
    def _restore(self, objects: GridObjects) -> None:
        """Put the episode's objects in place (all rewards, keys, closed doors)."""
        n = self.n
        if objects.markers != self._episode_objects.markers or objects.warps != self._episode_objects.warps:
            self._painter = None  # markers and warps belong to the painter's static layer
        default_terminate = self.terminate_on_reward
        self._reward_info = {
            r * n + c: (v, visible, default_terminate if t is None else t)
            for (r, c), (v, visible, t) in objects.rewards.items()
        }
        self._rewards = {cell: (v, t) for cell, (v, _, t) in self._reward_info.items()}
        self._keyset = {r * n + c for r, c in objects.keys}
        self._door_info = {r * n + c: o for (r, c), o in objects.doors.items()}
        self._doors = dict(self._door_info)
        self._warps = {r * n + c: tr * n + tc for (r, c), (tr, tc) in objects.warps.items()}
        self._keys = 0
        self._hot = set(self._rewards) | self._keyset | set(self._doors) | set(self._warps)
        self._episode_objects = objects
        self._objects_changed(doors_changed=True)

    def _objects_changed(self, doors_changed: bool = False) -> None:
        """Refresh the overlays after a reward, key or door went (rare: not on the fast path)."""
        self._hot = set(self._rewards) | self._keyset | set(self._doors) | set(self._warps)
        self._view = None
        kind = self.obs_type
        if kind in ("symbolic", "symbolic_window", "symbolic_window_tight"):
            self._table = self._symbolic_table()
        elif kind == "ascii":
            self._ascii = self._ascii_base()
        elif kind == "boundary" and doors_changed:
            self._table = self._boundary_table()
        elif kind in ("visual", "window", "window_tight"):
            view = self._object_view()
            if kind == "visual":
                self._picture = self._painter_().full(self.resolution, view)
            else:
                self._windows = self._painter_().window_table(view)

    def _object_view(self) -> ObjectView:
        if self._view is None:
            rc = self._rc
            self._view = ObjectView(
                {rc[c]: (v, self._reward_info[c][1], t) for c, (v, t) in self._rewards.items()},
                {rc[c] for c in self._keyset},
                {rc[c]: self._door_info[c] for c in self._doors},
            )
        return self._view

    def _painter_(self) -> GridPainter:
        if self._painter is None:
            c = self.compiled
            self._painter = GridPainter(
                c.n, c.wall, dict(self._episode_objects.markers), dict(self._episode_objects.warps)
            )
        return self._painter

    # -- observations: spaces and static tables ------------------------------------------
    def _setup_observation(self, store: GraphStore | str | None) -> None:
        n, nn, ns = self.n, self.n * self.n, self.n_states
        kind = self.obs_type
        self._table = np.empty(0)
        self._obs_kind = 1  # 0 index, 1 table row, 2 dynamic
        states = np.arange(ns)
        cells, orient = states % nn, states // nn
        rows, cols = cells // n, cells % n
        extra = np.eye(4, dtype=np.float32)[orient] if self._variable else np.zeros((ns, 0), np.float32)
        if kind == "index":
            self._obs_kind = 0
            self.observation_space = spaces.Discrete(ns)
        elif kind == "onehot":
            self._set_table(spaces.Box(0.0, 1.0, (ns,), np.float32), np.eye(ns, dtype=np.float32))
        elif kind == "twohot":
            eye = np.eye(n, dtype=np.float32)
            table = np.concatenate([eye[rows], eye[cols], extra], axis=1)
            self._set_table(spaces.Box(0.0, 1.0, (table.shape[1],), np.float32), table)
        elif kind == "geometric":
            table = np.concatenate([np.stack([rows, cols], 1).astype(np.float32) / max(n - 1, 1), extra], axis=1)
            self._set_table(spaces.Box(0.0, 1.0, (table.shape[1],), np.float32), table)
        elif kind == "boundary":
            self.observation_space = spaces.Box(0.0, 1.0, (8 if self._variable else 4,), np.float32)
        elif kind == "images":
            self._set_table(spaces.Box(0, 255, (32, 32, 3), np.uint8), state_images(ns))
        elif kind in ("visual", "window", "window_tight"):
            self._obs_kind = 2
            res = self.resolution
            self.observation_space = spaces.Box(0, 255, (res, res, 3), np.uint8)
            painter = self._painter_()
            if kind == "visual":
                edges = cell_edges(n, res)
                self._agent_px = [
                    [
                        _flat_pixels(
                            painter.mask(edges[r + 1] - edges[r], edges[c + 1] - edges[c], o), edges[r], edges[c], res
                        )
                        for o in range(4)
                    ]
                    for r, c in self._rc
                ]
                self._observe = self._obs_visual
            else:
                radius = WINDOW_RADIUS[kind]
                edges = cell_edges(2 * radius + 1, res)
                y0, y1 = edges[radius], edges[radius + 1]
                self._center_px = [_flat_pixels(painter.mask(y1 - y0, y1 - y0, o), y0, y0, res) for o in range(4)]
                self._radius = radius
                self._observe = self._obs_window
        elif kind in ("symbolic", "symbolic_window", "symbolic_window_tight"):
            # one table of per-state observations per object configuration, kept (LRU):
            # a step copies a row, like onehot; a taken reward or opened door swaps the table
            radius = WINDOW_RADIUS[kind]
            side = n if radius == 0 else 2 * radius + 1
            low = np.zeros((side, side, 6), np.float32)
            high = np.ones((side, side, 6), np.float32)
            low[..., 1], high[..., 1] = self._reward_bounds
            self.observation_space = spaces.Box(low, high, (side, side, 6), np.float32)
            self._radius = radius
            self._sym_tables: OrderedDict[tuple, np.ndarray] = OrderedDict()
        elif kind == "ascii":
            self._obs_kind = 2
            length = n * n + n - 1
            self.observation_space = spaces.Text(max_length=length, min_length=length, charset=ASCII_CHARSET)
            self._ascii_at = [r * (n + 1) + c for r, c in self._rc]
            self._observe = self._obs_ascii
        else:
            space, cell_table = _GRID_BUILDERS[kind](self.compiled, store)
            cell_table = np.asarray(cell_table)
            if cell_table.shape[0] == nn:
                self._set_table(space, cell_table[cells])
            elif cell_table.shape[0] == 4 * nn and self._variable:
                self._set_table(space, cell_table)
            else:
                raise ValueError(
                    f"observation {kind!r}: the builder returned {cell_table.shape[0]} rows, "
                    f"expected {nn} (one per cell)"
                    + (f" or {4 * nn} (one per state)" if self._variable else "")
                )

    def _set_table(self, space: spaces.Box, table: np.ndarray) -> None:
        table = np.ascontiguousarray(table, dtype=space.dtype)
        if not (np.all(table >= space.low) and np.all(table <= space.high)):
            raise ValueError(f"obs_type {self.obs_type!r}: a state's observation is outside the declared space")
        table.flags.writeable = False
        self.observation_space = space
        self._table = table

    def _boundary_table(self) -> np.ndarray:
        """Rays N, E, S, W (rotated to ahead/right/behind/left in variable mode): passable cells / n."""
        n, nn, wall, doors = self.n, self.n * self.n, self.compiled.wall, self._doors
        rays = np.zeros((nn, 4), np.float32)
        for cell in self._free:
            r, c = self._rc[cell]
            for d, (dr, dc) in enumerate(tasks.grid_tasks.DIRECTIONS):
                k, rr, cc = 0, r + dr, c + dc
                while 0 <= rr < n and 0 <= cc < n and not wall[rr, cc] and rr * n + cc not in doors:
                    k, rr, cc = k + 1, rr + dr, cc + dc
                rays[cell, d] = k / n
        if not self._variable:
            table = rays
        else:
            states = np.arange(self.n_states)
            cells, orient = states % nn, states // nn
            order = (orient[:, None] + np.arange(4)[None, :]) % 4
            table = np.concatenate([rays[cells[:, None], order], np.eye(4, dtype=np.float32)[orient]], axis=1)
        table = np.ascontiguousarray(table, dtype=np.float32)
        table.flags.writeable = False
        return table

    def _symbolic_table(self) -> np.ndarray:
        """Per-state symbolic observations for the objects present now (cached per configuration)."""
        key = (tuple(sorted(self._rewards)), tuple(sorted(self._keyset)), tuple(sorted(self._doors)))
        table = self._sym_tables.get(key)
        if table is not None:
            self._sym_tables.move_to_end(key)
            return table
        n, radius, nn = self.n, self._radius, self.n * self.n
        width = n + 2 * radius
        base = np.zeros((width, width, 6), np.float32)
        inner = base[radius : radius + n, radius : radius + n]
        if self.visible_walls:
            base[..., 4] = 1.0  # off-grid padding looks like wall
            inner[..., 4] = self.compiled.wall
        rc = self._rc
        for cell, (v, visible, _) in self._reward_info.items():
            if visible and cell in self._rewards:
                inner[rc[cell] + (1,)] = v
        for cell in self._keyset:
            inner[rc[cell] + (2,)] = 1.0
        for cell in self._doors:
            inner[rc[cell] + (3,)] = 1.0
        for cell in self._warps:
            inner[rc[cell] + (5,)] = 1.0
        states = np.arange(self.n_states)
        cells, orient = states % nn, states // nn
        rows, cols = cells // n, cells % n
        # the agent channel: 1, or (orientation + 1) / 4 in variable mode
        agent = (orient + 1) / 4.0 if self._variable else np.ones(len(states))
        if radius == 0:
            table = np.repeat(base[None], len(states), axis=0)
            table[states, rows, cols, 0] = agent
        else:
            side = 2 * radius + 1
            crops = np.lib.stride_tricks.sliding_window_view(base, (side, side), axis=(0, 1))  # (.., .., 6, side, side)
            table = np.ascontiguousarray(crops[rows, cols].transpose(0, 2, 3, 1))
            table[:, radius, radius, 0] = agent
        table.flags.writeable = False
        self._sym_tables[key] = table
        if len(self._sym_tables) > SYMBOLIC_CACHE_CONFIGS:
            self._sym_tables.popitem(last=False)
        return table

    def _ascii_base(self) -> list[str]:
        """The text map without the agent. neuro-nav's layers, later ones winning on a shared
        cell: rewards, keys, doors, warps; the agent goes under all of them (`_with_agent`)."""
        n, rc = self.n, self._rc
        rows = [["B" if self.compiled.wall[r, c] else " " for c in range(n)] for r in range(n)]
        for cell, (v, _) in self._rewards.items():
            if self._reward_info[cell][1]:
                rows[rc[cell][0]][rc[cell][1]] = "R" if v > 0 else "L"
        for cell in self._keyset:
            rows[rc[cell][0]][rc[cell][1]] = "K"
        for cell in self._doors:
            rows[rc[cell][0]][rc[cell][1]] = "D"
        for cell in self._warps:
            rows[rc[cell][0]][rc[cell][1]] = "W"
        return list("\n".join("".join(row) for row in rows))

    # -- dynamic observations ------------------------------------------------------------
    def _obs_visual(self) -> np.ndarray:
        image = self._picture.copy()
        image.reshape(-1)[self._agent_px[self._pos][self._o]] = 0  # the agent: black triangle
        return image

    def _obs_window(self) -> np.ndarray:
        pos = self._pos
        base = self._windows.get(pos)
        if base is None:
            base = self._painter_().window(self._rc[pos], self._radius, self.resolution, self._object_view())
        image = base.copy()
        image.reshape(-1)[self._center_px[self._o]] = 0
        return image

    def _obs_ascii(self) -> str:
        chars = self._ascii
        i = self._ascii_at[self._pos]
        old = chars[i]
        if old != " ":  # an object on the agent's cell hides the agent, as in neuro-nav
            return "".join(chars)
        chars[i] = "A"
        text = "".join(chars)
        chars[i] = old
        return text

    def _obs(self, s: int):
        kind = self._obs_kind
        if kind == 1:
            return self._table[s].copy()
        if kind == 0:
            return s
        return self._observe()

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None or self._stream is None:
            self._stream = RandomStream(self.np_random)
        options = options or {}
        unknown = sorted(set(options) - {"agent_pos", "objects", "random_start"})
        if unknown:
            raise ValueError(
                f"reset options: unknown key(s) {', '.join(unknown)}; use agent_pos, objects, random_start"
            )
        objects = self.objects
        if options.get("objects") is not None:
            objects = self._check_objects(options["objects"], "reset options: objects")
            low, high = self._bounds(objects)
            if self.obs_type.startswith("symbolic") and (low < self._reward_bounds[0] or high > self._reward_bounds[1]):
                raise ValueError(
                    f"reset options: objects: reward values {low}..{high} fall outside "
                    "the symbolic observation's bounds "
                    f"{self._reward_bounds}; pass these objects to the constructor instead"
                )
        if (
            objects is not self._episode_objects
            or len(self._rewards) != len(self._reward_info)
            or len(self._keyset) != len(objects.keys)
            or len(self._doors) != len(self._door_info)
            or self._keys
        ):
            self._restore(objects)
        random_start = options.get("random_start", self.random_start)
        if options.get("agent_pos") is not None:
            pos = self._check_cell(options["agent_pos"], "reset options: agent_pos")
        elif check_bool("random_start", random_start):
            pos = self._free[self._stream.below(len(self._free))]
        elif self.agent_start is not None:
            pos = self.agent_start
        else:
            pos = self.compiled.start
        self._pos = pos
        self._o = 0
        self._steps = 0
        return self._obs(pos), {"state": pos, "available_actions": self._all_actions}

    def step(self, action):
        if self.stochasticity and self._stream.uniform() < self.stochasticity:
            action = self._stream.below(self.n_actions)
        elif not 0 <= action < self.n_actions:
            raise ValueError(f"action: expected 0..{self.n_actions - 1}, got {action!r}")
        pos = self._pos
        if self._variable:
            if action == 2:
                t = self._dir[self._o][pos]
            else:
                t = pos
                if action == 0:
                    self._o = (self._o + 3) & 3
                elif action == 1:
                    self._o = (self._o + 1) & 3
        else:
            t = self._tab[action][pos]
            if action < 4:
                self._o = action
        reward = self._neg_penalty
        terminated = False
        if t in self._hot:
            t, reward, terminated = self._interact(pos, t, action, reward)
        self._pos = t
        s = t + self._o * self.n * self.n if self._variable else t
        self._steps += 1
        truncated = not terminated and self._steps == self.episode_length
        kind = self._obs_kind
        if kind == 1:
            obs = self._table[s].copy()
        elif kind == 0:
            obs = s
        else:
            obs = self._observe()
        return obs, reward, terminated, truncated, {"state": s, "available_actions": self._all_actions}

    def _interact(self, pos: int, t: int, action: int, reward: float) -> tuple[int, float, bool]:
        """The slow path: doors, rewards, keys and warps on the cell reached (steps 2-6)."""
        changed = doors_changed = False
        if t in self._doors and t != pos:  # only moving into a closed door uses a key
            if self._keys > 0:
                self._keys -= 1
                del self._doors[t]
                changed = doors_changed = True
            else:
                t = pos
        terminated = False
        found = self._rewards.get(t)
        if found is not None and (self._collect < 0 or action == self._collect):
            reward += found[0]
            terminated = found[1]
            del self._rewards[t]
            changed = True
        if t in self._keyset:
            self._keyset.discard(t)
            self._keys += 1
            changed = True
        target = self._warps.get(t)
        if target is not None:
            t = target
        if changed:
            self._objects_changed(doors_changed)
        return t, reward, terminated

    # -- inspection and rendering ------------------------------------------------------------
    @property
    def state(self) -> int:
        """The state index: orientation * n * n + row * n + col (orientation 0 in fixed mode)."""
        return self._pos + self._o * self.n * self.n if self._variable else self._pos

    @property
    def agent_pos(self) -> tuple[int, int]:
        return self._rc[self._pos]

    @property
    def looking(self) -> int:
        """Where the agent looks: 0 N, 1 E, 2 S, 3 W (fixed mode: its last move)."""
        return self._o

    @property
    def keys_held(self) -> int:
        return self._keys

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self.render_mode == "ansi":
            chars = self._ascii_base()
            i = self._pos // self.n * (self.n + 1) + self._pos % self.n
            if chars[i] == " ":  # as the ascii observation: objects hide the agent
                chars[i] = "A"
            return "".join(chars) + "\n"
        return self._painter_().frame(self.resolution, self._object_view(), self._rc[self._pos], self._o)

    def picture(self, agent: bool = True) -> np.ndarray:
        """The current picture at `resolution` (what rgb_array renders), optionally without the agent."""
        if agent:
            return self._painter_().frame(self.resolution, self._object_view(), self._rc[self._pos], self._o)
        return self._painter_().full(self.resolution, self._object_view()).copy()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_observe", None)  # a bound method: rebound on unpickling
        state["_windows"] = {}  # cached pictures are redrawn, not pickled
        if "_sym_tables" in state:
            state["_sym_tables"] = OrderedDict()  # rebuilt on the next change of objects
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        observe = {
            "visual": self._obs_visual,
            "window": self._obs_window,
            "window_tight": self._obs_window,
            "ascii": self._obs_ascii,
        }.get(self.obs_type)
        if observe is not None:
            self._observe = observe
        if self.obs_type in ("window", "window_tight"):
            self._windows = self._painter_().window_table(self._object_view())
