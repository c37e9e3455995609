"""Pictures of Room maps: the whole map for docs (`draw_task`), a text grid (`ansi`) and an
RGB frame (`rgb_array`) of a moment of an episode."""

from __future__ import annotations

from typing import Any

import numpy as np

from .compiled import CompiledRoomMap, load_room_map

_KIND_COLOURS = {"static": "#87cefa", "independent": "#90ee90", "moving": "#90ee90", "dependent": "#f4c26b"}


def _grid_shape(c: CompiledRoomMap) -> tuple[int, int]:
    return int(c.positions[:, 0].max()) + 1, int(c.positions[:, 1].max()) + 1


def render_ansi(c: CompiledRoomMap, rooms: np.ndarray, agent: int, t: int) -> str:
    """One line per grid row: each room as [A s i d] counts (agent, static, moving/independent, dependent)."""
    n_rows, n_cols = _grid_shape(c)
    cells = [["   .    "] * n_cols for _ in range(n_rows)]
    for r, (row, col) in enumerate(c.positions):
        kinds = [c.kinds[o] for o in np.flatnonzero(rooms == r)]
        moving = sum(k in ("independent", "moving") for k in kinds)
        text = f"{'A' if r == agent else ' '}{kinds.count('static')}{moving}{kinds.count('dependent')}"
        cells[row][col] = f"[{text:<4}]  "
    return f"t={t}\n" + "\n".join("".join(line).rstrip() for line in cells) + "\n"


def render_rgb(c: CompiledRoomMap, rooms: np.ndarray, agent: int, t: int, cell: int = 24) -> np.ndarray:
    """An RGB frame: rooms light, the agent's room purple, a green dot per object in a room."""
    n_rows, n_cols = _grid_shape(c)
    image = np.zeros((n_rows * cell, n_cols * cell, 3), dtype=np.uint8)
    for r, (row, col) in enumerate(c.positions):
        y, x = row * cell, col * cell
        image[y + 1: y + cell - 1, x + 1: x + cell - 1] = (216, 191, 216) if r == agent else (255, 228, 181)
        for k, o in enumerate(np.flatnonzero(rooms == r)[:9]):
            dy, dx = divmod(k, 3)
            image[y + 4 + dy * 6: y + 8 + dy * 6, x + 4 + dx * 6: x + 8 + dx * 6] = (34, 139, 34)
    return image


def draw_task(task: Any, store: Any = None, **options: Any) -> Any:
    """A picture of a Room map: rooms on their grid with their names, doors as gaps, the v3
    periodic walls dashed, where each object and the agent start.

    Returns
    -------
    gym_bridge.picture.TaskPicture
        counts: rooms, doors, periodic walls, objects.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    from ..picture import TaskPicture, new_figure

    c = load_room_map(task, store)
    n_rows, n_cols = _grid_shape(c)
    scale = 8.0 / max(n_rows, n_cols)
    figure = new_figure(max(5.0, n_cols * scale + 0.5), n_rows * scale + 1.4)
    ax = figure.add_subplot()
    ax.set_xlim(-0.05, n_cols + 0.05)
    ax.set_ylim(n_rows + 0.05, -0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    size = min(14, max(7, int(64 / max(n_rows, n_cols))))
    starts = c.start.argmax(axis=1) if c.n_objects else np.zeros(0, dtype=int)
    agent = int(c.agent_start.argmax())
    doors = 0
    periodic = {(min(a, b), max(a, b)) for a, b, _, _ in c.walls}
    for r, (row, col) in enumerate(c.positions):
        ax.add_patch(Rectangle((col, row), 1, 1, facecolor="#ffe4b5", edgecolor="none", gid="room"))
        ax.text(col + 0.5, row + 0.12, c.room_labels[r], ha="center", va="center", fontsize=size,
                fontweight="bold", gid="room-label")
        for d, (x0, y0, x1, y1) in enumerate([(0, 0, 1, 0), (1, 0, 1, 1), (0, 1, 1, 1), (0, 0, 0, 1)]):
            other = int(c.base_doors[r, d])
            xs, ys = [col + x0, col + x1], [row + y0, row + y1]
            if other < 0:
                ax.plot(xs, ys, color="black", lw=3, solid_capstyle="butt", gid="wall")
            elif (min(r, other), max(r, other)) in periodic:
                ax.plot(xs, ys, color="#b22222", lw=2.5, ls=(0, (2, 2)), gid="periodic-wall")
            elif d in (1, 2):
                doors += 1
        here = [o for o in range(c.n_objects) if starts[o] == r]
        lines = [(c.object_labels[o], _KIND_COLOURS[c.kinds[o]]) for o in here]
        if r == agent:
            lines.append(("agent", "#d8bfd8"))
        for k, (text, colour) in enumerate(lines[:6]):
            ax.text(col + 0.5, row + 0.32 + 0.13 * k, text, ha="center", va="center", fontsize=size - 1,
                    bbox={"boxstyle": "round,pad=0.15", "facecolor": colour, "edgecolor": "none"}, gid="object")
    kinds = sorted({c.kinds[o] for o in range(c.n_objects)}, key=list(_KIND_COLOURS).index)
    handles: list[Any] = [Patch(facecolor=_KIND_COLOURS[k], label=f"{k} object") for k in kinds]
    handles.append(Patch(facecolor="#d8bfd8", label="agent"))
    handles.append(Line2D([], [], color="black", lw=3, label="wall"))
    if c.walls:
        handles.append(Line2D([], [], color="#b22222", lw=2.5, ls=(0, (2, 2)), label="periodic wall"))
    legend = ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(handles)),
                       fontsize=9, frameon=False)
    legend.set_gid("legend")
    ax.set_title(f"{c.task_id}\n{c.n_rooms} rooms, {c.n_objects} objects (where they start)", fontsize=11)
    counts = {"rooms": c.n_rooms, "doors": doors, "periodic walls": len(c.walls), "objects": c.n_objects}
    return TaskPicture(figure, c.task_id, counts, [h.get_label() for h in handles])
