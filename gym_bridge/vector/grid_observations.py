"""Batched grid observations that depend on each copy's objects (keys, doors, rewards left).

The single `GridEnv` keeps one table or picture per object configuration. N copies can be
in up to 2^objects configurations at once, so a table per configuration does not scale.
Instead every observer here starts from the observation with every object present (a
table row, a picture, a string), then undoes, for the (copy, object) pairs where the
object is gone, exactly that object's part: one entry of a symbolic array, one character,
one cell's block of pixels, or a shorter wall ray. The work is numpy over copies and a
loop over objects or over the distinct (object, what is left, where) groups, never over
copies, and each copy's observation equals the single env's bit for bit
(tests/vector/test_grid_vector_env.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

import tasks

from ..grid_env import WINDOW_RADIUS, GridEnv
from ..render_grid import ObjectView, cell_edges

if TYPE_CHECKING:
    from .grid_vector_env import GridVectorEnv

DYNAMIC_TYPES = (
    "boundary", "symbolic", "symbolic_window", "symbolic_window_tight", "visual", "window", "window_tight", "ascii",
)
PICTURE_TYPES = ("visual", "window", "window_tight")

BatchObserver = Callable[["GridVectorEnv"], Any]


class ObjectCells:
    """The cells of the rewards, keys and doors, in the slot order of the vector env's per-copy arrays."""

    def __init__(self, rewards: list[int], keys: list[int], doors: list[int]) -> None:
        self.rewards = np.array(rewards, dtype=np.int64)
        self.keys = np.array(keys, dtype=np.int64)
        self.doors = np.array(doors, dtype=np.int64)


def batch_observer(env: GridEnv, cells: ObjectCells) -> BatchObserver | None:
    """The observer for `env.obs_type`, or None when the observation is a fixed row per state."""
    kind = env.obs_type
    if kind == "boundary":
        return BoundaryBatch(env, cells)
    if kind.startswith("symbolic"):
        return SymbolicBatch(env, cells)
    if kind == "ascii":
        return AsciiBatch(env, cells)
    if kind in PICTURE_TYPES:
        return PictureBatch(env, cells)
    return None


def _padded(index_lists: list[np.ndarray]) -> np.ndarray:
    """Rows of unequal length as one matrix, each row padded by repeating its first entry."""
    width = max(len(a) for a in index_lists)
    out = np.empty((len(index_lists), width), dtype=np.intp)
    for row, a in zip(out, index_lists):
        row[: len(a)] = a
        row[len(a) :] = a[0]
    return out


class BoundaryBatch:
    """Rays to the nearest wall, shortened per copy by the doors still closed in it."""

    def __init__(self, env: GridEnv, cells: ObjectCells) -> None:
        n, wall = env.n, env.compiled.wall
        self.n, self.nn, self.variable = n, n * n, env._variable
        door_slot = {int(c): k for k, c in enumerate(cells.doors)}
        self.wall_rays = np.zeros((n * n, 4), dtype=np.int64)
        self.door_rays = np.full((len(door_slot), n * n, 4), n, dtype=np.int64)  # n: no door on this ray
        for cell in env._free:
            r, c = divmod(cell, n)
            for d, (dr, dc) in enumerate(tasks.grid_tasks.DIRECTIONS):
                k, rr, cc = 0, r + dr, c + dc
                while 0 <= rr < n and 0 <= cc < n and not wall[rr, cc]:
                    slot = door_slot.get(rr * n + cc)
                    if slot is not None and self.door_rays[slot, cell, d] == n:
                        self.door_rays[slot, cell, d] = k
                    k, rr, cc = k + 1, rr + dr, cc + dc
                self.wall_rays[cell, d] = k
        self.fraction = (np.arange(n + 1) / n).astype(np.float32)  # what GridEnv stores for k cells
        self.eye = np.eye(4, dtype=np.float32)

    def __call__(self, venv: "GridVectorEnv") -> np.ndarray:
        pos = venv.pos
        rays = self.wall_rays[pos]
        if len(self.door_rays):
            closed = venv.present_objects()[2]
            blocked = np.where(closed.T[:, :, None], self.door_rays[:, pos], self.n).min(axis=0)
            rays = np.minimum(rays, blocked)
        values = self.fraction[rays]
        if not self.variable:
            return values
        o = venv.orientation_of
        order = (o[:, None] + np.arange(4)) & 3  # ahead, right, behind, left
        return np.concatenate([np.take_along_axis(values, order, axis=1), self.eye[o]], axis=1)


class SymbolicBatch:
    """(side, side, 6) arrays: the all-objects row, with the gone objects' entries zeroed per copy."""

    CHANNELS = (1, 2, 3)  # reward, key, door (GridEnv's SYMBOLIC_CHANNELS)

    def __init__(self, env: GridEnv, cells: ObjectCells) -> None:
        n = self.n = env.n
        self.nn, self.variable = n * n, env._variable
        self.radius = env._radius
        self.side = n if self.radius == 0 else 2 * self.radius + 1
        table = env._table  # built for the objects the env starts with: every object present
        if self.radius == 0:
            self.base = table[0].copy()
            self.base[..., 0] = 0.0  # the agent is stamped per copy; the full-grid table is not kept
        else:
            self.table = table
        visible = np.array([env._reward_info[int(c)][1] for c in cells.rewards], dtype=bool)
        # (layer, slots shown, their rows, their cols); invisible rewards never appear, so never change
        self.layers: list[tuple[int, np.ndarray | slice, np.ndarray]] = [
            (0, np.flatnonzero(visible), cells.rewards[visible]),
            (1, slice(None), cells.keys),
            (2, slice(None), cells.doors),
        ]

    def __call__(self, venv: "GridVectorEnv") -> np.ndarray:
        pos, radius, n = venv.pos, self.radius, self.n
        rows, cols = np.divmod(pos, n)
        if radius == 0:
            obs = np.empty((pos.size, *self.base.shape), dtype=np.float32)
            obs[:] = self.base
            agent = (venv.orientation_of + 1) / 4.0 if self.variable else 1.0
            obs[np.arange(pos.size), rows, cols, 0] = agent
        else:
            obs = self.table[pos + venv.orientation_of * self.nn if self.variable else pos]
        present = venv.present_objects()
        for (layer, slots, object_cells), channel in zip(self.layers, self.CHANNELS):
            if not object_cells.size:
                continue
            gone = ~present[layer][:, slots]
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


class AsciiBatch:
    """Text maps in GridEnv's (neuro-nav's) order: walls, the agent, then rewards left, keys left,
    closed doors and warps drawn over it (an object on the agent's cell hides the agent)."""

    def __init__(self, env: GridEnv, cells: ObjectCells) -> None:
        n = env.n
        self.at = np.array([r * (n + 1) + c for r, c in env._rc], dtype=np.int64)  # cell -> character position
        static = ["B" if env.compiled.wall[r, c] else " " for r, c in env._rc]
        text = "\n".join("".join(static[r * n : (r + 1) * n]) for r in range(n))
        self.static = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        self.length = len(text)
        self.warps = self.at[np.array(sorted(env._warps), dtype=np.int64)]
        visible = np.array([env._reward_info[int(c)][1] for c in cells.rewards], dtype=bool)
        reward_chars = np.array([ord("R" if env._reward_info[int(c)][0] > 0 else "L") for c in cells.rewards], np.uint8)
        # later layers win on a shared cell: rewards, keys, doors (then the static warps)
        self.layers: list[tuple[int, np.ndarray | slice, np.ndarray, np.ndarray]] = [
            (0, np.flatnonzero(visible), self.at[cells.rewards[visible]], reward_chars[visible]),
            (1, slice(None), self.at[cells.keys], np.full(cells.keys.size, ord("K"), np.uint8)),
            (2, slice(None), self.at[cells.doors], np.full(cells.doors.size, ord("D"), np.uint8)),
        ]

    def __call__(self, venv: "GridVectorEnv") -> tuple[str, ...]:
        pos = venv.pos
        chars = np.empty((pos.size, self.length), dtype=np.uint8)
        chars[:] = self.static
        chars[np.arange(pos.size), self.at[pos]] = ord("A")
        present = venv.present_objects()
        for layer, slots, where, codes in self.layers:
            if where.size:
                chars[:, where] = np.where(present[layer][:, slots], codes, chars[:, where])
        chars[:, self.warps] = ord("W")
        return tuple(chars.view(f"S{self.length}").reshape(-1).astype(f"U{self.length}").tolist())


class PictureBatch:
    """Full pictures or windows: the all-objects picture, with the blocks of cells whose objects
    differ in a copy pasted over it, and the agent's triangle stamped in."""

    def __init__(self, env: GridEnv, cells: ObjectCells) -> None:
        self.n, self.nn, self.res = env.n, env.n * env.n, env.resolution
        self.painter = env._painter_()
        self.view = view = env._object_view()  # every object present
        self.radius = 0 if env.obs_type == "visual" else WINDOW_RADIUS[env.obs_type]
        self.side = self.n if self.radius == 0 else 2 * self.radius + 1
        self.edges = np.array(cell_edges(self.side, self.res))
        # cells that hold something drawn: each gets a code per copy, one bit per object there
        shown = [bool(env._reward_info[int(c)][1]) for c in cells.rewards]  # invisible rewards are never drawn
        visible = [int(c) for c, s in zip(cells.rewards, shown) if s]
        self.object_cells = np.array(
            sorted(set(visible) | set(cells.keys.tolist()) | set(cells.doors.tolist())), np.int64
        )
        where = {int(c): x for x, c in enumerate(self.object_cells)}
        self.members: list[tuple[int, np.ndarray, np.ndarray, int]] = []  # (layer, slots, object-cell index, bit)
        drawn = (shown, [True] * cells.keys.size, [True] * cells.doors.size)
        for layer, bit, layer_cells in ((0, 1, cells.rewards), (1, 2, cells.keys), (2, 4, cells.doors)):
            slots = np.array([k for k, c in enumerate(layer_cells) if drawn[layer][k]], dtype=np.int64)
            if slots.size:
                self.members.append((layer, slots, np.array([where[int(layer_cells[k])] for k in slots]), bit))
        self.full_code = np.zeros(self.object_cells.size, dtype=np.int64)
        for _, _, x, bit in self.members:
            self.full_code[x] |= bit
        self.patches: dict[int, np.ndarray] = {}
        if self.radius == 0:
            self.picture = self.painter.full(self.res, view)
            self.agent_px = _padded([px for per_cell in env._agent_px for px in per_cell])  # (cell * 4 + o) -> pixels
        else:
            # windows around every cell with every object present, drawn when a copy first stands there
            self.windows = np.zeros((self.nn, self.res, self.res, 3), dtype=np.uint8)
            self.drawn = np.zeros(self.nn, dtype=bool)
            # the agent always stands in the centre cell: keep-masks (1 off the triangle) per orientation
            low, high = self.edges[self.radius], self.edges[self.radius + 1]
            self.centre = (slice(None), slice(low, high), slice(low, high))
            triangles = [self.painter.mask(high - low, high - low, o) for o in range(4)]
            self.keep = np.repeat(
                np.stack([~t for t in triangles]).astype(np.uint8)[..., None], 3, axis=3
            )  # (4, h, w, 3)

    def __call__(self, venv: "GridVectorEnv") -> np.ndarray:
        pos, o = venv.pos, venv.orientation_of
        count = pos.size
        if self.radius == 0:
            obs = np.empty((count, self.res, self.res, 3), dtype=np.uint8)
            obs[:] = self.picture
        else:
            new = pos[~self.drawn[pos]]
            for cell in np.unique(new).tolist() if new.size else ():  # once per cell over the env's life
                r, c = divmod(cell, self.n)
                self.windows[cell] = self.painter.draw_region(
                    r - self.radius, c - self.radius, self.side, self.res, self.view
                )
                self.drawn[cell] = True
            obs = self.windows[pos]
        if self.object_cells.size:
            self._paste_differences(venv, obs)
        if self.radius == 0:  # the agent: a black triangle
            obs.reshape(count, -1)[np.arange(count)[:, None], self.agent_px[pos * 4 + o]] = 0
        else:
            centre = obs[self.centre]
            np.multiply(centre, self.keep[o], out=centre)
        return obs

    def _paste_differences(self, venv: "GridVectorEnv", obs: np.ndarray) -> None:
        present = venv.present_objects()
        shown = [present[layer][:, slots] for layer, slots, _, _ in self.members]
        if all(p.all() for p in shown):  # the usual case: nothing taken or opened in any copy
            return
        code = np.zeros((venv.num_envs, self.object_cells.size), dtype=np.int64)
        for (_, _, x, bit), p in zip(self.members, shown):
            code[:, x] |= p * bit
        differ = code != self.full_code
        if not differ.any():
            return
        copy, x = np.nonzero(differ)
        i, j = np.divmod(self.object_cells[x], self.n)
        if self.radius:
            rows, cols = np.divmod(venv.pos[copy], self.n)
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
            cell = divmod(int(self.object_cells[x]), self.n)
            view = self.view
            left = ObjectView(
                {cell: view.rewards[cell]} if code & 1 else {}, {cell} if code & 2 else set(),
                {cell: view.doors[cell]} if code & 4 else {},
            )
            patch = self.patches[key] = self.painter.cell_block(cell, i, j, self.side, self.res, left)
        return patch
