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


def draw_task(task: str, store: Any = None, resolution: int = 512) -> Any:
    """A picture of a grid task for papers: the grid as the env draws it (reference colours and
    shapes, the agent at its start), reward values written in their cells when the grid is
    small enough to read them, and a legend of what it holds.

    Parameters
    ----------
    task : str
        A grid task id (neuronav/grid/TEMPLATE/SIZE or a user's grid).
    store : GraphStore or str, optional
        Where it is read (a built-in is put there first).
    resolution : int
        Pixels across the drawn grid (16..4096).

    Returns
    -------
    gym_bridge.render.TaskPicture
        counts: cells, walls, rewards, reward labels, keys, doors, warps.

    Examples
    --------
    >>> from gym_bridge.grid.render import draw_task
    >>> picture = draw_task("neuronav/grid/two_step/micro", store=":memory:")
    >>> picture.counts["rewards"], picture.legend[:2]
    (4, ['wall', 'agent at its start'])
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..render import TaskPicture, new_figure
    from .env import GridEnv

    env = GridEnv(task=task, store=store, resolution=resolution)
    env.reset(seed=0)
    compiled = env.compiled
    objects = compiled.objects
    n = compiled.n
    figure = new_figure(7.0, 7.8)
    ax = figure.add_subplot()
    ax.imshow(env.picture(), extent=(-0.5, n - 0.5, n - 0.5, -0.5), interpolation="nearest", gid="grid")
    ax.set_xticks([])
    ax.set_yticks([])
    reward_labels = 0
    if n <= 20:
        for (r, c), (value, _visible, _terminate) in objects.rewards.items():
            ax.text(c, r, f"{value:g}", ha="center", va="center", fontsize=max(6, int(120 / n)), color="white",
                    fontweight="bold", gid="reward-label")
            reward_labels += 1

    def rgb(colour: tuple[int, int, int]) -> tuple[float, float, float]:
        return (colour[0] / 255, colour[1] / 255, colour[2] / 255)

    def square(colour: tuple[int, int, int], label: str, size: float = 11) -> Line2D:
        return Line2D([], [], ls="", marker="s", ms=size, mfc=rgb(colour), mec=rgb(colour), label=label)

    handles: list[Any] = [Patch(facecolor=rgb(WALL), edgecolor=rgb(WALL_BORDER), label="wall"),
                          Line2D([], [], ls="", marker="^", ms=10, color="black", label="agent at its start")]
    values = [v for v, _, _ in objects.rewards.values()]
    if any(v > 0 for v in values):
        handles.append(square(POSITIVE, "reward > 0"))
    if any(v <= 0 for v in values):
        handles.append(square(NEGATIVE, "reward <= 0"))
    if objects.keys:
        handles.append(square(KEY, "key", 7))
    if objects.doors:
        handles.append(Patch(facecolor=rgb(DOOR), label="door (a key opens it)"))
    if objects.warps:
        handles.append(Line2D([], [], ls="", marker="o", ms=10, mfc=rgb(WARP), mec=rgb(WARP), label="warp"))
    if objects.markers:
        handles.append(Patch(facecolor="none", edgecolor="grey", label="coloured cells: markers"))
    legend = ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=min(4, len(handles)),
                       fontsize=9, frameon=False)
    legend.set_gid("legend")
    ax.set_title(f"{compiled.task_id}\n{n} x {n} cells, {int(compiled.wall.sum())} walls", fontsize=11)
    counts = {"cells": n * n, "walls": int(compiled.wall.sum()), "rewards": len(objects.rewards),
              "reward labels": reward_labels, "keys": len(objects.keys), "doors": len(objects.doors),
              "warps": len(objects.warps)}
    return TaskPicture(figure, compiled.task_id, counts, [h.get_label() for h in handles])
