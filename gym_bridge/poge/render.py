"""Pictures of POGE worlds for papers (`graphtasks render`): the tiles in the env's colours,
reward values, the start, tiles with their own movement rules, and a legend."""

from __future__ import annotations

from typing import Any

import numpy as np

from .env import _COLOURS, load_compiled_world

LABELS = {
    "wall": "wall",
    "door": "door",
    "floor": "floor",
    "goal": "goal",
    "terminal": "terminal",
    "toggle": "toggle (slippery on/off)",
}


def draw_task(task: str, store: Any = None) -> Any:
    """A picture of a POGE world: tiles coloured by kind, reward values in their tiles, the
    start, tiles with a behaviour rule hatched, and a legend of the kinds present.

    Parameters
    ----------
    task : str
        A POGE task id (poge/world0, user/poge/NAME).
    store : GraphStore or str, optional
        Where it is read (a built-in is put there first).

    Returns
    -------
    gym_bridge.picture.TaskPicture
        counts: tiles, goals, terminals, rewards, rule tiles.

    Examples
    --------
    >>> from gym_bridge.poge.render import draw_task
    >>> picture = draw_task("poge/world0", store=":memory:")
    >>> picture.counts["goals"] >= 1, "start" in picture.legend
    (True, True)
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    from ..picture import TaskPicture, new_figure

    compiled = load_compiled_world(task, store)
    world = compiled.world
    rows, cols = world.rows, world.cols
    image = np.zeros((rows, cols, 3))
    kinds: set[str] = set()
    for r in range(rows):
        for c in range(cols):
            kind = world.kind(r, c)
            kinds.add("floor" if kind == "start" else kind)
            image[r, c] = np.array(_COLOURS[kind]) / 255
    scale = 7.0 / max(rows, cols)
    figure = new_figure(max(4.5, cols * scale + 0.5), rows * scale + 1.6)
    ax = figure.add_subplot()
    ax.imshow(image, extent=(-0.5, cols - 0.5, rows - 0.5, -0.5), interpolation="nearest", gid="tiles")
    ax.set_xticks(np.arange(-0.5, cols), minor=True)
    ax.set_yticks(np.arange(-0.5, rows), minor=True)
    ax.grid(which="minor", color="#cccccc", lw=0.5)
    ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
    size = max(6, int(110 / max(rows, cols)))
    rewards = rules = 0
    for r in range(rows):
        for c in range(cols):
            value = world.reward(r, c)
            if value is not None:
                ax.text(c, r, f"{value:g}", ha="center", va="center", fontsize=size, fontweight="bold",
                        color="#7a5a00", gid="reward-label")
                rewards += 1
            if world.rule_id(r, c) is not None:
                ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, hatch="///", edgecolor="#666666",
                                       lw=0, gid="rule"))
                rules += 1
    sr, sc = world.start
    ax.plot([sc], [sr], ls="", marker="o", ms=max(5, size), color="#14147a", gid="start")
    handles: list[Any] = [Patch(facecolor="#%02x%02x%02x" % _COLOURS[k], edgecolor="#999999", label=LABELS[k])
                          for k in LABELS if k in kinds]
    handles.append(Line2D([], [], ls="", marker="o", ms=8, color="#14147a", label="start"))
    if rewards:
        handles.append(Line2D([], [], ls="", marker="$5$", ms=8, color="#7a5a00", label="reward value"))
    if rules:
        handles.append(Patch(facecolor="white", edgecolor="#666666", hatch="///", label="own movement rule"))
    legend = ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=min(4, len(handles)),
                       fontsize=9, frameon=False)
    legend.set_gid("legend")
    ax.set_title(f"{compiled.task_id}\n{rows} x {cols} tiles, {world.floor_states} floor states", fontsize=11)
    counts = {"tiles": rows * cols, "goals": len(world.goals), "terminals": len(world.terminals),
              "rewards": rewards, "rule tiles": rules}
    return TaskPicture(figure, compiled.task_id, counts, [h.get_label() for h in handles])
