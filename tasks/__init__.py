"""tasks: the task catalogue and file formats. Imports only graphstore.

`tasks.build(task_id, **params)` gives a built-in task as a TaskGraph;
`tasks.builtin_ids()` lists them.
"""

from . import (
    poge,  # noqa: F401, I001  (importing it registers the POGE family)
    room,  # noqa: E402,F401  (registers the Room family)
)
from .conditions import Condition, parse_condition
from .data import TaskFileError, data_dir
from .entities import EntityClass, add_entities, create, entity_space, register_entity_class
from .graph_notation import GraphNotationError, ParsedGraph, parse_graph
from .grid_tasks import GridLayout, GridObjects, add_template_folder, build_grid_task, grid_family, objects_from_dict
from .registry import (
    Family,
    UnknownTask,
    build,
    build_from_file,
    builtin_ids,
    families,
    is_builtin,
    make_task_id,
    register_family,
    resolve,
    source_file,
    split_task_id,
)
from .rewards import (
    REWARD_KINDS,
    RandomStream,
    RewardKind,
    RewardSpec,
    make_source,
    register_reward_kind,
    reward_kind,
    reward_spec,
    spec_from_props,
)
from .schedules import trial_schedule

register_family(grid_family())

__all__ = [
    "Condition",
    "EntityClass",
    "Family",
    "GraphNotationError",
    "ParsedGraph",
    "RandomStream",
    "RewardSpec",
    "TaskFileError",
    "UnknownTask",
    "add_entities",
    "build",
    "create",
    "entity_space",
    "build_from_file",
    "builtin_ids",
    "data_dir",
    "families",
    "is_builtin",
    "source_file",
    "make_source",
    "REWARD_KINDS",
    "RewardKind",
    "register_reward_kind",
    "reward_kind",
    "make_task_id",
    "parse_condition",
    "parse_graph",
    "register_entity_class",
    "register_family",
    "resolve",
    "reward_spec",
    "spec_from_props",
    "split_task_id",
    "trial_schedule",
    "GridLayout",
    "GridObjects",
    "add_template_folder",
    "build_grid_task",
    "objects_from_dict",
]
