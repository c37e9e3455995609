"""Schema fragment of neuro-nav grid worlds: cells, their objects, moves between cells."""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    """Add the grid types to `s` (entry point `graphtasks.schema: grid`)."""
    s.add_node(
        "Cell",
        [
            Property("row", "int", True, "0 is the north row"),
            Property("col", "int", True, "0 is the west column"),
            Property("index", "int", True, "row * n + col"),
            Property("wall", "bool", True, "walls cannot be entered"),
        ],
        "A cell of a grid world.",
    )
    s.add_node(
        "Reward",
        [
            Property("visible", "bool", False, "grid rewards: shown in pictures and symbolic observations"),
            Property(
                "terminate",
                "bool",
                False,
                "grid rewards: ends the episode when collected (unset: the env's terminate_on_reward)",
            ),
        ],
    )
    s.add_node("Key", [], "A consumable key lying on a cell; a door takes one to open.")
    s.add_node(
        "Door", [Property("orientation", "str", True, "'h' or 'v' (how it is drawn)")], "A locked door on a cell."
    )
    s.add_node("Warp", [], "Teleports the agent to the WARPS_TO cell after reward and key handling.")
    s.add_node("Marker", [Property("color", "int[]", True, "RGB 0-255")], "A coloured cell in pictures only.")
    s.add_rel("MOVE", [("Cell", "Cell")])
    s.add_rel("START", [("Task", "Cell")])
    s.add_rel("HAS_REWARD", [("Cell", "Reward")])
    s.add_rel(
        "HAS_OBJECT",
        [("Cell", "Key"), ("Cell", "Door"), ("Cell", "Warp"), ("Cell", "Marker")],
        doc="A grid object lying on a cell.",
    )
    s.add_rel("WARPS_TO", [("Warp", "Cell")], doc="Where a warp takes the agent.")
