"""Schema fragment of the Room task's map versions (room-env's RoomEnv-v2 and RoomEnv-v3):
rooms joined north/east/south/west, inner walls with on/off patterns, objects that stay, move
or attach to moving ones, the agent, and (v3) the fixed question sequence."""

from __future__ import annotations

from graphstore.schema import Property, Schema

DIRECTIONS = ("north", "east", "south", "west")
MOVES = DIRECTIONS + ("stay",)
KINDS = ("static", "independent", "dependent", "moving", "agent")


def add_schema(s: Schema) -> None:
    """Add the Room map types to `s` (through `tasks.families:add_schema`)."""
    s.add_node(
        "MapRoom",
        [
            Property("name", "str", True, "room-env's room name, e.g. 'room_000' or 'kitchen'"),
            Property("order", "int", True, "position in the configuration's room list (the index of the room)"),
            Property("row", "int", True, "row of the room on the map's grid (0 at the top)"),
            Property("col", "int", True, "column of the room on the map's grid (0 at the left)"),
            Property("label", "str", False, "human name of the room (room-env's `mapping`, e.g. 'Kitchen')"),
        ],
        "A room of a Room map task (RoomEnv-v2 / v3).",
    )
    s.add_node(
        "MapObject",
        [
            Property("name", "str", True, "room-env's object name, e.g. 'sta_000', 'ind_001', 'john' or 'agent'"),
            Property("kind", "str", True, "static | independent | dependent (v2) | moving (v3) | agent"),
            Property("order", "int", True, "position among the objects of its kind"),
            Property("question_prob", "float", False, "v2: the weight with which questions ask about this object"),
            Property("preferences", "str[]", False, "v3 moving objects: directions tried in this order each step"),
            Property("label", "str", False, "human name (room-env's `mapping`, e.g. 'Alex')"),
        ],
        "An object (or the agent) of a Room map task.",
    )
    s.add_node(
        "MapWall",
        [
            Property("orientation", "str", True, "horizontal (a room and the one south) | vertical (east)"),
            Property("pattern", "int[]", True, "on (1) or off (0) at step t is pattern[t % len(pattern)]"),
            Property("order", "int", True, "position in the configuration's wall list"),
        ],
        "A v3 inner wall that closes the door between two rooms on a periodic pattern.",
    )
    s.add_rel("HAS_ROOM", [("Task", "MapRoom")], doc="The rooms of a Room map task.")
    s.add_rel("HAS_MAP_OBJECT", [("Task", "MapObject")], doc="The objects and the agent of a Room map task.")
    s.add_rel("HAS_WALL", [("Task", "MapWall")], doc="The periodic inner walls of a v3 Room map task.")
    s.add_rel(
        "LEADS_TO",
        [("MapRoom", "MapRoom")],
        [Property("direction", "str", True, "north | east | south | west: going this way leads to the target")],
        doc="An open side of a room; a side without a LEADS_TO edge is a wall.",
    )
    s.add_rel(
        "SEPARATES",
        [("MapWall", "MapRoom")],
        [Property("end", "int", True, "0: the north / west room, 1: the south / east one")],
        doc="The two rooms a periodic wall stands between.",
    )
    s.add_rel(
        "STARTS_IN",
        [("MapObject", "MapRoom")],
        [Property("p", "float", True, "probability of starting in this room")],
        doc="Where an object (or the agent) is at the start of an episode.",
    )
    s.add_rel(
        "MOVES_IN",
        [("MapObject", "MapRoom")],
        [Property(d, "float", True, f"probability of trying to move {d}") for d in MOVES],
        doc="v2: where an independent object in this room tries to go each step (a wall keeps it in place).",
    )
    s.add_rel(
        "ATTACHES_TO",
        [("MapObject", "MapObject")],
        [Property("p", "float", True, "probability of attaching each step when in the same room"),
         Property("order", "int", True, "position in the dependent object's list")],
        doc="v2: a dependent object rides along with an independent one it attached to.",
    )
    s.add_rel(
        "ASKS",
        [("Task", "MapObject")],
        [Property("step", "int", True, "the question of steps t with t % 100 == step")],
        doc="v3: the object asked about at each step of the 100-step question cycle.",
    )
