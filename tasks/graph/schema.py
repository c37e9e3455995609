"""Schema fragment of graph tasks (neuro-nav graphs, rewardGym): states, reward sources,
conditions and action-labelled MOVE edges with probabilities."""

from __future__ import annotations

from graphstore.schema import Property, Schema

from ..rewards import reward_properties


def add_schema(s: Schema) -> None:
    """Add the graph-task types to `s` (entry point `graphtasks.schema: graph`)."""
    s.add_node(
        "State",
        [
            Property("index", "int", True, "state index used by the environment"),
            Property("name", "str"),
            Property("terminal", "bool", False, "no outgoing MOVE edges: the episode ends here"),
            Property("skip", "bool", False, "auto-advances with action 0 whenever reached"),
            Property("info", "json", False, "free-form annotations returned in the environment's info"),
        ],
        "A state of a graph task.",
    )
    s.add_node("Reward", reward_properties(), "A reward source attached to a state.")
    s.add_node(
        "Condition",
        [
            Property("name", "str", True),
            Property("reward", "float", False, "fixed outcome of the trial, overriding the reward source"),
            Property("available", "json", False, "actions offered per state index in this trial"),
        ],
        "A trial condition: per-trial edge overrides (OVERRIDE edges) and fixed outcomes.",
    )
    s.add_rel(
        "MOVE",
        [("State", "State")],
        [
            Property("action", "int", True, "action label"),
            Property("p", "float", True, "probability of this target given (source, action)"),
            Property("executed", "int", False, "action actually carried out (differs under slips)"),
        ],
        "Transition: taking `action` in the source leads to the target with probability `p`.",
    )
    s.add_rel("HAS_REWARD", [("State", "Reward")], doc="The reward source paid at this state.")
    s.add_rel("START", [("Task", "State")], doc="The start state of the task.")
    s.add_rel(
        "OVERRIDE",
        [("Condition", "State")],
        [
            Property("source", "int", True, "state index whose edge is overridden"),
            Property("action", "int", True),
            Property("p", "float", True),
        ],
        "In this condition, `action` at state `source` goes to the target with probability `p`.",
    )
    s.add_rel("HAS_CONDITION", [("Task", "Condition")], doc="The task's named trial conditions.")
