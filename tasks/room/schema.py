"""Schema fragment of the Room memory task: its people and objects (locations come from the
shared ConceptNet assertions)."""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    """Add the Room types to `s` (entry point `graphtasks.schema: room`)."""
    s.add_node(
        "RoomPerson",
        [Property("name", "str", True, "first name, e.g. 'James'"), Property("order", "int", True)],
        "A person of a Room task (RoomEnv-v0).",
    )
    s.add_node(
        "RoomObject",
        [
            Property("name", "str", True, "object term, e.g. 'laptop'"),
            Property("concept", "str", True, "uid of the ConceptNet Concept whose AtLocation tails are its locations"),
            Property("locations", "str[]", False, "allowed location terms (curated rooms); absent = every stored tail"),
            Property("order", "int", True),
        ],
        "An object of a Room task; its commonsense locations are read from the stored assertions.",
    )
    s.add_rel("HAS_PERSON", [("Task", "RoomPerson")], doc="The people of a Room task.")
    s.add_rel("HAS_OBJECT", [("Task", "RoomObject")], doc="The objects of a Room task.")
