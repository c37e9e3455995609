"""Schema fragment of the Room task's version 1 (room-env's RoomEnv-v1, a discrete-event
simulation): people, each with a fixed cycle of (object, location) steps that repeats, the
objects and locations of the cycles, each location's resources (how many objects it holds at
once) and the semantic knowledge (the location an object is usually at)."""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    """Add the Room v1 types to `s` (through `tasks.families:add_schema`)."""
    s.add_node(
        "DesPerson",
        [
            Property("name", "str", True, "room-env's name of the person, e.g. 'brittany'"),
            Property("order", "int", True, "position in the configuration's components"),
        ],
        "A person of a Room v1 task, who replays a fixed cycle of (object, location) steps.",
    )
    s.add_node(
        "DesObject",
        [
            Property("name", "str", True, "object name, e.g. 'bowl'"),
            Property("knowledge_order", "int", False, "position in the configuration's semantic knowledge"),
        ],
        "An object that people of a Room v1 task hold.",
    )
    s.add_node(
        "DesLocation",
        [
            Property("name", "str", True, "location name, e.g. 'cupboard'"),
            Property("resources", "int", False, "how many objects the location holds at once (room-env's resources)"),
            Property("resource_order", "int", False, "position in the configuration's resources"),
        ],
        "A location of a Room v1 task.",
    )
    s.add_node(
        "CycleStep",
        [Property("position", "int", True, "the step's place in its person's cycle: at time t, step t % length")],
        "One step of a person's cycle: the object the person has and where it is.",
    )
    s.add_rel("HAS_DES_PERSON", [("Task", "DesPerson")], doc="The people of a Room v1 task.")
    s.add_rel("HAS_DES_OBJECT", [("Task", "DesObject")], doc="The objects of a Room v1 task.")
    s.add_rel("HAS_DES_LOCATION", [("Task", "DesLocation")], doc="The locations of a Room v1 task.")
    s.add_rel("HAS_STEP", [("DesPerson", "CycleStep")], doc="A step of the person's cycle (its position on the step).")
    s.add_rel("HOLDS", [("CycleStep", "DesObject")], doc="The object the person has at this step.")
    s.add_rel("PUTS_AT", [("CycleStep", "DesLocation")], doc="Where the object is at this step.")
    s.add_rel("USUALLY_AT", [("DesObject", "DesLocation")], doc="Semantic knowledge: where the object usually is.")
