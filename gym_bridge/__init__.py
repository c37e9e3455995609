"""gym_bridge: run stored tasks as gymnasium environments. Imports graphstore and tasks.

Importing this package registers the `graphtasks/...` ids.
"""

from .families import families, family, family_of, make_env, register_all, register_family, registered_ids
from .family import Family, GymId
from .graph.compiled import CompiledGraphTask, compile_from_store, compile_task
from .graph.env import GraphTaskEnv
from .graph.observations import register_cypher_observation, register_observation
from .grid.compiled import CompiledGrid, compile_grid, compile_grid_from_store
from .grid.env import GridEnv
from .grid.observations import register_grid_cypher_observation, register_grid_observation
from .loading import load_task_graph
from .observation_types import ObservationRegistry, ObservationType, TableObservation, state_images
from .poge.env import PogeEnv

register_all()

__all__ = [
    "CompiledGraphTask",
    "GraphTaskEnv",
    "PogeEnv",
    "compile_from_store",
    "compile_task",
    "load_task_graph",
    "register_all",
    "register_cypher_observation",
    "Family",
    "GymId",
    "ObservationRegistry",
    "ObservationType",
    "TableObservation",
    "families",
    "family",
    "family_of",
    "make_env",
    "register_family",
    "register_observation",
    "registered_ids",
    "state_images",
    "CompiledGrid",
    "GridEnv",
    "compile_grid",
    "compile_grid_from_store",
    "register_grid_cypher_observation",
    "register_grid_observation",
]
