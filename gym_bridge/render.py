"""Pictures of whole tasks for papers and docs (`graphtasks render`), one per family.

Each bridge family names its drawing function (`Family.picture`, 'module:function'); this
module asks the task's family for it, so nothing here knows a family. A drawing function
takes `(task, store, **options)` and returns a `TaskPicture`: a matplotlib Figure (made
without pyplot, so no global state) whose artists carry gids ('state', 'edge-label',
'reward-label', 'start', ...) that tests and the SVG file can find, plus the counts the
picture shows.

This module sits above the family table (`gym_bridge.families`); `TaskPicture`,
`new_figure` and `PictureError` are `gym_bridge.picture`'s, below it (re-exported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .families import family_of
from .family import load_entry_point
from .picture import FORMATS, PictureError, TaskPicture, new_figure

if TYPE_CHECKING:
    from graphstore import GraphStore

__all__ = ["FORMATS", "PictureError", "TaskPicture", "draw_task", "new_figure"]


def draw_task(task: str, store: GraphStore | str | None = None, **options: Any) -> TaskPicture:
    """A picture of any task, drawn the way its family draws its tasks.

    Parameters
    ----------
    task : str
        A task id (built-in, stored or under a user prefix).
    store : GraphStore or str, optional
        Where the task is read (None: the default store; a built-in is put there first).
    **options
        Passed to the family's drawing function (e.g. `resolution` for grids).

    Returns
    -------
    TaskPicture
        The figure, its counts and its legend.

    Examples
    --------
    >>> from gym_bridge.render import draw_task
    >>> picture = draw_task("rewardgym/two-step", store=":memory:")
    >>> picture.counts["states"], picture.counts["edge labels"]
    (7, 6)
    """
    family = family_of(task, store)
    if family.picture is None:
        raise PictureError(f"{task}: the {family.name} family draws no pictures")
    draw = load_entry_point(family.picture)
    picture: TaskPicture = draw(task, store, **options)
    return picture
