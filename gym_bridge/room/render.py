"""Pictures of Room tasks for papers (`graphtasks render`): the room's people, its objects
and, when the store holds the ConceptNet knowledge, each object's commonsense location."""

from __future__ import annotations

from typing import Any

PERSON = "#e08a3c"
OBJECT = "#4a78d6"
LOCATION = "#5aa05a"


def draw_task(task: str, store: Any = None) -> Any:
    """A picture of a Room task: people, objects and the AtLocation edge of each object to
    its strongest ConceptNet location (what an agent's pretrained semantic memory holds),
    in three columns, with a legend.

    Parameters
    ----------
    task : str
        A Room task id (room/small, room/big).
    store : GraphStore or str, optional
        Where it is read; without the ConceptNet snapshot in it (`graphtasks ingest snapshot`)
        the picture shows people and objects only and says so.

    Returns
    -------
    gym_bridge.picture.TaskPicture
        counts: people, objects, locations, edges.

    Examples
    --------
    >>> from gym_bridge.room.render import draw_task
    >>> picture = draw_task("room/small", store=":memory:")
    >>> picture.counts["people"] > 0, picture.counts["objects"] > 0
    (True, True)
    """
    from matplotlib.lines import Line2D

    from graphstore import GraphtasksError
    from tasks.room import room_knowledge

    from ..loading import load_task_graph, with_store
    from ..picture import TaskPicture, new_figure

    graph = load_task_graph(task, store)
    people = [props["name"] for _, props in sorted(graph.nodes("RoomPerson"), key=lambda n: n[1]["order"])]
    objects = [props["name"] for _, props in sorted(graph.nodes("RoomObject"), key=lambda n: n[1]["order"])]
    try:
        knowledge = with_store(store, lambda s: room_knowledge(s, graph))
        pairs = knowledge.top()
        note = "object -> strongest AtLocation in ConceptNet"
    except GraphtasksError:
        pairs = []
        note = "no ConceptNet knowledge in the store (graphtasks ingest snapshot): locations not shown"
    locations = sorted({tail for _, tail in pairs})
    rows = max(len(people), len(objects), len(locations), 1)
    step = 0.22
    figure = new_figure(9.0, 1.8 + rows * step)
    ax = figure.add_subplot()
    ax.set_axis_off()
    columns = [(people, 0.0, PERSON, "person", "people"), (objects, 1.0, OBJECT, "object", "objects"),
               (locations, 2.0, LOCATION, "location", "locations")]
    where: dict[tuple[str, str], tuple[float, float]] = {}
    for names, x, colour, kind, heading in columns:
        for i, name in enumerate(names):
            y = -(i + 0.5) * rows / max(len(names), 1)
            where[(kind, name)] = (x, y)
        if names:
            xs, ys = zip(*(where[(kind, name)] for name in names))
            ax.scatter(xs, ys, s=30, color=colour, zorder=2, gid=kind)
            for name in names:
                x0, y0 = where[(kind, name)]
                left = kind == "object"  # objects' names left of their dots, clear of the edges
                ax.text(x0 - 0.04 if left else x0 + 0.04, y0, name, fontsize=7, va="center",
                        ha="right" if left else "left", gid=f"{kind}-label")
        ax.text(x, 0.6, f"{heading} ({len(names)})", ha="left", fontsize=10, fontweight="bold")
    for head, tail in pairs:
        (x0, y0), (x1, y1) = where[("object", head)], where[("location", tail)]
        ax.plot([x0, x1], [y0, y1], color="#999999", lw=0.6, zorder=1, gid="edge")
    ax.set_xlim(-0.1, 2.6)
    ax.set_ylim(-rows - 0.3, 1.0)
    handles = [Line2D([], [], ls="", marker="o", color=PERSON, label="person"),
               Line2D([], [], ls="", marker="o", color=OBJECT, label="object"),
               Line2D([], [], ls="", marker="o", color=LOCATION, label="location"),
               Line2D([], [], color="#999999", label="AtLocation (strongest)")]
    legend = ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=9,
                       frameon=False)
    legend.set_gid("legend")
    ax.set_title(f"{graph.task_id}: the Room memory task\n{note}", fontsize=11)
    counts = {"people": len(people), "objects": len(objects), "locations": len(locations), "edges": len(pairs)}
    return TaskPicture(figure, graph.task_id, counts, [str(h.get_label()) for h in handles])
