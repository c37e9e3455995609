"""Pictures of grid worlds with the reference colours and shapes.

Why the structure: a picture is the static layer (walls, grid lines, markers) plus the
objects still present plus the agent. The layer with objects is drawn once per object
configuration (it changes only when a reward, key or door goes) and kept; a frame is a
copy of it with the agent triangle stamped in from a precomputed mask. Windows around
the agent are drawn once per (configuration, agent cell) and kept the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

BACKGROUND = (235, 235, 235)
GRID_LINE = (210, 210, 210)
WALL = (165, 165, 165)
WALL_BORDER = (125, 125, 125)
POSITIVE = (30, 80, 230)  # blue
NEGATIVE = (220, 40, 40)  # red
KEY = (235, 200, 20)  # yellow
DOOR = (20, 150, 50)  # green
WARP = (140, 40, 200)  # purple
AGENT = (0, 0, 0)
CACHE_CONFIGS = 8  # object configurations whose full pictures are kept
WINDOW_CACHE_BYTES = 64 * 2**20  # window pictures kept per painter

Cell = tuple[int, int]


def cell_edges(cells: int, res: int) -> list[int]:
    """Pixel boundaries of `cells` cells across `res` pixels (cells differ by at most one pixel)."""
    return [round(i * res / cells) for i in range(cells + 1)]


def triangle_mask(h: int, w: int, orientation: int) -> np.ndarray:
    """Boolean mask of a triangle pointing north/east/south/west inside an h x w cell."""
    img = Image.new("L", (w, h), 0)
    mx, my = 0.18 * w, 0.18 * h
    x0, y0, x1, y1 = mx, my, w - 1 - mx, h - 1 - my
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    points = {
        0: [(cx, y0), (x1, y1), (x0, y1)],
        1: [(x1, cy), (x0, y1), (x0, y0)],
        2: [(cx, y1), (x0, y0), (x1, y0)],
        3: [(x0, cy), (x1, y0), (x1, y1)],
    }[orientation]
    ImageDraw.Draw(img).polygon(points, fill=255)
    return np.asarray(img) > 0


class GridPainter:
    """Draws regions of one grid; `objects` is the current configuration (see `ObjectView`)."""

    def __init__(self, n: int, wall: np.ndarray, markers: dict[Cell, tuple[int, int, int]], warps: dict[Cell, Cell]):
        self.n = n
        self.wall = wall
        self.markers = markers
        self.warps = warps
        self._full: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._windows: OrderedDict[tuple, dict[tuple[int, int, int], np.ndarray]] = OrderedDict()
        self._masks: dict[tuple[int, int, int], np.ndarray] = {}

    def draw_region(self, r0: int, c0: int, cells: int, res: int, objects: "ObjectView") -> np.ndarray:
        """RGB picture of the cells [r0, r0+cells) x [c0, c0+cells); cells off the grid are walls."""
        img = Image.new("RGB", (res, res), BACKGROUND)
        d = ImageDraw.Draw(img)
        edges = cell_edges(cells, res)
        for i in range(cells):
            for j in range(cells):
                self._draw_cell(d, (r0 + i, c0 + j), edges[j], edges[i], edges[j + 1] - 1, edges[i + 1] - 1, objects)
        return np.asarray(img, dtype=np.uint8).copy()

    def cell_block(self, cell: Cell, i: int, j: int, cells: int, res: int, objects: "ObjectView") -> np.ndarray:
        """The pixels `cell` gets at position (i, j) of a `cells`-wide region drawn at `res`.

        A cell draws only inside its own rectangle, so this block equals the same block of
        `draw_region`; the vector env pastes such blocks where one copy's objects differ.
        """
        img = Image.new("RGB", (res, res), BACKGROUND)
        edges = cell_edges(cells, res)
        self._draw_cell(ImageDraw.Draw(img), cell, edges[j], edges[i], edges[j + 1] - 1, edges[i + 1] - 1, objects)
        return np.asarray(img, dtype=np.uint8)[edges[i] : edges[i + 1], edges[j] : edges[j + 1]].copy()

    def _draw_cell(self, d: ImageDraw.ImageDraw, cell: Cell, x0: int, y0: int, x1: int, y1: int, objects: "ObjectView"):
        r, c = cell
        if not (0 <= r < self.n and 0 <= c < self.n) or self.wall[r, c]:
            d.rectangle((x0, y0, x1, y1), fill=WALL, outline=WALL_BORDER)
            return
        d.rectangle((x0, y0, x1, y1), fill=self.markers.get(cell, BACKGROUND), outline=GRID_LINE)
        self._draw_objects(d, cell, x0, y0, x1, y1, objects)

    def _draw_objects(
        self, d: ImageDraw.ImageDraw, cell: Cell, x0: int, y0: int, x1: int, y1: int, objects: "ObjectView"
    ):
        w, h = x1 - x0, y1 - y0
        reward = objects.rewards.get(cell)
        if reward is not None and reward[1]:  # visible
            value, _, terminate = reward
            inset = 0.15 if terminate else 0.3  # non-terminating rewards are smaller squares
            d.rectangle(
                (x0 + inset * w, y0 + inset * h, x1 - inset * w, y1 - inset * h),
                fill=POSITIVE if value > 0 else NEGATIVE,
            )
        if cell in objects.keys:
            d.rectangle((x0 + 0.3 * w, y0 + 0.3 * h, x1 - 0.3 * w, y1 - 0.3 * h), fill=KEY)
        orientation = objects.doors.get(cell)
        if orientation == "h":
            d.rectangle((x0, y0 + 0.35 * h, x1, y1 - 0.35 * h), fill=DOOR)
        elif orientation == "v":
            d.rectangle((x0 + 0.35 * w, y0, x1 - 0.35 * w, y1), fill=DOOR)
        if cell in self.warps:
            d.ellipse((x0 + 0.2 * w, y0 + 0.2 * h, x1 - 0.2 * w, y1 - 0.2 * h), fill=WARP)

    # -- cached layers --------------------------------------------------------------------
    def full(self, res: int, objects: "ObjectView") -> np.ndarray:
        """The whole grid with the current objects, no agent (read-only, cached)."""
        key = (res, objects.key)
        image = self._full.get(key)
        if image is None:
            image = self.draw_region(0, 0, self.n, res, objects)
            image.flags.writeable = False
            self._full[key] = image
            if len(self._full) > CACHE_CONFIGS:
                self._full.popitem(last=False)
        return image

    def window_table(self, objects: "ObjectView") -> dict:
        """The cache of window pictures for one object configuration (keyed by cell index)."""
        table = self._windows.get(objects.key)
        if table is None:
            table = self._windows[objects.key] = {}
        self._windows.move_to_end(objects.key)
        return table

    def window(self, cell: Cell, radius: int, res: int, objects: "ObjectView") -> np.ndarray:
        """The (2*radius+1)^2 cells around `cell` with the current objects, no agent (cached
        within a memory budget: older configurations go first, then the current one)."""
        table = self.window_table(objects)
        key = cell[0] * self.n + cell[1]
        image = table.get(key)
        if image is None:
            size = 2 * radius + 1
            image = self.draw_region(cell[0] - radius, cell[1] - radius, size, res, objects)
            image.flags.writeable = False
            used = sum(len(t) for t in self._windows.values()) * image.nbytes
            while used + image.nbytes > WINDOW_CACHE_BYTES and len(self._windows) > 1:
                _, old = self._windows.popitem(last=False)
                used -= len(old) * image.nbytes
                old.clear()
            if used + image.nbytes > WINDOW_CACHE_BYTES:
                table.clear()
            table[key] = image
        return image

    def mask(self, h: int, w: int, orientation: int) -> np.ndarray:
        key = (h, w, orientation)
        m = self._masks.get(key)
        if m is None:
            m = self._masks[key] = triangle_mask(h, w, orientation)
        return m

    def frame(self, res: int, objects: "ObjectView", cell: Cell, orientation: int) -> np.ndarray:
        """A full picture with the agent (a new array)."""
        image = self.full(res, objects).copy()
        edges = cell_edges(self.n, res)
        r, c = cell
        y0, y1, x0, x1 = edges[r], edges[r + 1], edges[c], edges[c + 1]
        image[y0:y1, x0:x1][self.mask(y1 - y0, x1 - x0, orientation)] = AGENT
        return image

    def clear_caches(self) -> None:
        self._full.clear()
        self._windows.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_full"], state["_windows"] = OrderedDict(), OrderedDict()
        return state


class ObjectView:
    """The objects present now, in (row, col) terms, with a hashable key for the caches."""

    __slots__ = ("rewards", "keys", "doors", "key")

    def __init__(self, rewards: dict[Cell, tuple[float, bool, bool]], keys: set[Cell], doors: dict[Cell, str]):
        self.rewards = rewards
        self.keys = keys
        self.doors = doors
        self.key = (tuple(sorted(rewards.items())), tuple(sorted(keys)), tuple(sorted(doors.items())))
