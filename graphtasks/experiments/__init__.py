"""Experiments: spec files (protocols of phases over tasks, agents and seeds) and running them."""

from .spec import AgentSpec, ExperimentSpec, ExperimentSpecError, PhaseSpec, load_spec, parse_spec
from .sweep import COLUMNS, Cell, SweepResult, cells, run_experiment, summary, task_versions, write_csv

__all__ = [
    "COLUMNS",
    "AgentSpec",
    "Cell",
    "ExperimentSpec",
    "ExperimentSpecError",
    "PhaseSpec",
    "SweepResult",
    "cells",
    "load_spec",
    "parse_spec",
    "run_experiment",
    "summary",
    "task_versions",
    "write_csv",
]
