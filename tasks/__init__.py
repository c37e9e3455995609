"""tasks: the task catalogue and file formats. Imports only graphstore.

Each family lives in its own folder (`tasks/graph`, `tasks/grid`, `tasks/poge`,
`tasks/room`) and is declared there by one `TaskFamily`; `tasks.families` lists them and
answers every question about a task's family. `tasks.build(task_id, **params)` gives a
built-in task as a TaskGraph; `tasks.builtin_ids()` lists them; `tasks.read_file(path)`
reads a user's own file of any family.
"""

from .data import TaskFileError, data_dir
from .entities import (
    EntityClass,
    add_entities,
    create,
    entity_space,
    register_entity_class,
    remove,
    remove_entities,
    update,
    update_entities,
)
from .families import (
    BUILT_IN,
    UnknownFamily,
    UnknownTask,
    build,
    builtin_ids,
    catalogue_of,
    family_of,
    family_of_kind,
    is_builtin,
    make_task_id,
    read_file,
    register_family,
    resolve,
    source_file,
    split_task_id,
    task_families,
    task_family,
)
from .family import Catalogue, TaskChangeError, TaskFamily, UserFiles, split_pin, unpinned, variant_id
from .graph import Condition, GraphNotationError, ParsedGraph, parse_condition, parse_graph, trial_schedule
from .graph.family import build_from_file
from .grid import GridLayout, GridObjects, add_template_folder, build_grid_task, objects_from_dict
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

__all__ = [
    "BUILT_IN",
    "Catalogue",
    "Condition",
    "EntityClass",
    "GraphNotationError",
    "GridLayout",
    "GridObjects",
    "ParsedGraph",
    "RandomStream",
    "REWARD_KINDS",
    "RewardKind",
    "RewardSpec",
    "TaskChangeError",
    "TaskFamily",
    "TaskFileError",
    "UnknownFamily",
    "UnknownTask",
    "UserFiles",
    "add_entities",
    "add_template_folder",
    "build",
    "build_from_file",
    "build_grid_task",
    "builtin_ids",
    "catalogue_of",
    "create",
    "data_dir",
    "entity_space",
    "family_of",
    "family_of_kind",
    "is_builtin",
    "make_source",
    "make_task_id",
    "objects_from_dict",
    "parse_condition",
    "parse_graph",
    "read_file",
    "register_entity_class",
    "register_family",
    "register_reward_kind",
    "remove",
    "remove_entities",
    "resolve",
    "reward_kind",
    "reward_spec",
    "source_file",
    "spec_from_props",
    "split_pin",
    "split_task_id",
    "task_families",
    "task_family",
    "trial_schedule",
    "unpinned",
    "update",
    "update_entities",
    "variant_id",
]
