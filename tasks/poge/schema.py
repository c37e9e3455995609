"""Schema fragment of POGE worlds: tiles and the moves between them."""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    """Add the POGE types to `s` (entry point `graphtasks.schema: poge`)."""
    s.add_node(
        "Tile",
        [
            Property("row", "int", True, "row of the tile (0 at the top)"),
            Property("col", "int", True, "column of the tile (0 at the left)"),
            Property("index", "int", True, "row-major tile index: row * cols + col"),
            Property("kind", "str", True, "floor | wall | door | start | goal | terminal | toggle"),
            Property("char", "str", True, "the tile's character in the Layout map"),
            Property("symbol", "str", False, "abstraction symbol (character of the Abstraction map; absent: blank)"),
            Property("abstraction", "str", False, "readable abstraction name (its `id:name`, else the symbol)"),
            Property("reward_symbol", "str", False, "character of the Rewards map on this tile"),
            Property("reward", "int", False, "reward paid on entering (from the symbol's `symbol:int`)"),
            Property("rule", "str", False, "character of the Behaviour map on this tile (a slip rule id)"),
        ],
        "A POGE gridworld tile.",
    )
    s.add_rel("MOVE", [("Tile", "Tile")], [Property("via", "str", False, "local id of a door passed on the way")])
    s.add_rel("START", [("Task", "Tile")])
