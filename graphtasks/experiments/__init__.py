"""Experiments: spec files (protocols of phases over tasks, agents and seeds), running them, and
their records in the store.

The names below load on first use: the schema fragment (`graphtasks.experiments.schema`) is
read while the store schema loads, before tasks and environments can be imported.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "Experiment": "api",
    "RunReport": "api",
    "UnknownExperiment": "api",
    "AgentSpec": "spec",
    "ExperimentSpec": "spec",
    "ExperimentSpecError": "spec",
    "PhaseSpec": "spec",
    "load_spec": "spec",
    "parse_spec": "spec",
    "COLUMNS": "sweep",
    "Cell": "runs",
    "SweepResult": "sweep",
    "cells": "runs",
    "play_run": "runs",
    "TaskSource": "versions",
    "TaskVersion": "versions",
    "run_experiment": "sweep",
    "summary": "sweep",
    "task_versions": "sweep",
    "write_csv": "sweep",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_HOMES)
