"""What a picture of a whole task is: `TaskPicture` (a figure and what it shows) and `new_figure`.

Each family's drawing function (`Family.picture`) builds one with these; `gym_bridge.render`
(`draw_task`, `graphtasks render`) asks a task's family for its drawing function. This
module imports no family and not the family table, so the families' drawing modules can
import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")


class PictureError(ValueError):
    """A task cannot be drawn (no matplotlib, a family without pictures, an unknown format)."""


@dataclass
class TaskPicture:
    """A drawn task: the figure and what it shows.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The picture.
    task_id : str
        The task drawn.
    counts : dict of str to int
        What the picture shows, by kind ('states', 'edges', 'edge labels', 'rewards', ...).
    legend : list of str
        The legend's entries, in order.

    Examples
    --------
    `draw_task` returns one; its `counts` say what was drawn, so a test can check a picture
    without looking at it.

    >>> from gym_bridge.render import draw_task
    >>> picture = draw_task("neuronav/graph/linear", store=":memory:")
    >>> picture.task_id, picture.counts["states"], picture.counts["rewards"]
    ('neuronav/graph/linear', 6, 1)
    >>> picture.encode("svg").startswith(b"<?xml")
    True
    """

    figure: Figure
    task_id: str
    counts: dict[str, int] = field(default_factory=dict)
    legend: list[str] = field(default_factory=list)

    def encode(self, suffix: str = "png", dpi: int = 150) -> bytes:
        """The picture as a .png, .svg or .pdf file's bytes (an SVG or PDF of the same task is the same file).

        Parameters
        ----------
        suffix : {"png", "svg", "pdf"}, optional
            The format.
        dpi : int, optional
            Resolution of a .png.

        Returns
        -------
        bytes
            The encoded picture.
        """
        import io

        suffix = suffix.lower().lstrip(".") or "png"
        if suffix not in FORMATS:
            raise PictureError(f"unknown picture format .{suffix}; use .png, .svg or .pdf")
        import matplotlib

        buffer = io.BytesIO()
        metadata: dict[str, Any] = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(suffix, {})
        with matplotlib.rc_context({"svg.hashsalt": self.task_id}):  # SVG ids made from the task, not at random
            self.figure.savefig(buffer, format=suffix, dpi=dpi, bbox_inches="tight", metadata=metadata)
        return buffer.getvalue()

    def save(self, path: str | Path, dpi: int = 150) -> None:
        """Write the picture to `path`, in the format its extension names (.png, .svg or .pdf).

        Parameters
        ----------
        path : str or Path
            The file to write.
        dpi : int, optional
            Resolution of a .png.
        """
        Path(path).write_bytes(self.encode(Path(path).suffix, dpi))


def new_figure(width: float, height: float) -> Figure:
    """A matplotlib Figure without pyplot (Agg canvas), or PictureError naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PictureError("pictures need matplotlib: pip install 'graphtasks[plot]'") from None
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure
