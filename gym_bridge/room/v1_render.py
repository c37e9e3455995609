"""A picture of a Room v1 task (`graphtasks render room/v1/s`): each person's cycle over the
first steps of an episode, one row per person and one cell per time, coloured by where the
person's object is, the object written in the cell where it changes."""

from __future__ import annotations

from typing import Any

from .v1_env import load_room_v1

SHOWN = 48  # times drawn (the cycles repeat; an episode is 128 steps)


def draw_task(task: Any, store: Any = None, times: int = SHOWN, **options: Any) -> Any:
    """The people's (object, location) at times 0..`times`-1.

    Returns
    -------
    gym_bridge.picture.TaskPicture
        counts: people, objects, locations, distinct (object, location) pairs of the people.
    """
    import matplotlib

    from ..picture import TaskPicture, new_figure

    c = load_room_v1(task, store)
    shown = min(int(times), c.until + 1)
    n = c.n_people
    figure = new_figure(10.0, 1.6 + 0.22 * n)
    ax = figure.add_subplot()
    colours = matplotlib.colormaps["tab20"].resampled(max(c.n_locations, 1))
    grid = c.location_at[:shown].T  # (people, times)
    ax.imshow(grid, aspect="auto", cmap=colours, vmin=-0.5, vmax=c.n_locations - 0.5, interpolation="nearest")
    for p in range(n):
        for t in range(shown):
            if t == 0 or c.object_at[t, p] != c.object_at[t - 1, p]:
                ax.text(t, p, c.objects[c.object_at[t, p]][:4], fontsize=5, ha="left", va="center", color="black")
    ax.set_yticks(range(n), c.people, fontsize=6 if n > 20 else 8)
    ax.set_xlabel(f"time (the first {shown} of {c.until} steps; text: the person's object where it changes)")
    ax.set_title(f"{c.task_id}: each person's cycle of objects and locations (colour: location)", fontsize=10)
    used = sorted(set(grid.ravel().tolist()))
    handles = [matplotlib.patches.Patch(color=colours(k), label=c.locations[k]) for k in used]
    ax.legend(handles=handles, fontsize=7, ncol=min(len(handles), 7), loc="upper center",
              bbox_to_anchor=(0.5, -0.12 - 0.6 / max(n, 4)), frameon=False)
    steps = sum(len({(int(o), int(loc)) for o, loc in zip(c.object_at[:, p], c.location_at[:, p])}) for p in range(n))
    counts = {"people": n, "objects": c.n_objects, "locations": c.n_locations, "object-location pairs": steps}
    return TaskPicture(figure, c.task_id, counts, [c.locations[k] for k in used])
