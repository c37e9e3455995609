"""Graph tasks: rewardGym's notation (`notation`), definition files (`definitions`), task
conditions and trial schedules, the schema fragment and the family declaration."""

from .conditions import Condition, parse_condition
from .definitions import build_graph_task, effective_params, load_definition, substitute
from .notation import GraphNotationError, ParsedGraph, parse_graph
from .schedules import ScheduleError, trial_schedule, validate_schedule

__all__ = [
    "Condition", "GraphNotationError", "ParsedGraph", "ScheduleError", "build_graph_task", "effective_params",
    "load_definition", "parse_condition", "parse_graph", "substitute", "trial_schedule", "validate_schedule",
]
