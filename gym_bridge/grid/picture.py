"""A picture of a whole grid task for papers and docs (`graphtasks render`, `Family.picture`).

It draws the grid as the env does, so it sits above the env (`gym_bridge.grid.env`), which
itself paints with `gym_bridge.grid.render`.
"""

from __future__ import annotations

from typing import Any

from .env import GridEnv
from .render import DOOR, KEY, NEGATIVE, POSITIVE, WALL, WALL_BORDER, WARP


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
    gym_bridge.picture.TaskPicture
        counts: cells, walls, rewards, reward labels, keys, doors, warps.

    Examples
    --------
    >>> from gym_bridge.grid.picture import draw_task
    >>> picture = draw_task("neuronav/grid/two_step/micro", store=":memory:")
    >>> picture.counts["rewards"], picture.legend[:2]
    (4, ['wall', 'agent at its start'])
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..picture import TaskPicture, new_figure

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
