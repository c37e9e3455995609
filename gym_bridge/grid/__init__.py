"""The neuro-nav grid family: compiled form, settings, rules, env, vector env, observation types; see `family`."""

from .compiled import CompiledGrid, compile_grid, compile_grid_from_store
from .env import GridEnv
from .observations import (
    GRID_OBSERVATIONS,
    GridObservation,
    grid_observation_types,
    register_grid_cypher_observation,
    register_grid_observation,
)
from .rules import (
    GridBatch,
    GridRules,
    GridSettings,
    GridState,
    Lanes,
    ObjectRule,
    ObjectSlots,
    grid_rules,
    load_compiled_grid,
)
from .vector_env import GridVectorEnv, make_grid_vector_env

__all__ = [
    "GRID_OBSERVATIONS", "CompiledGrid", "GridBatch", "GridEnv", "GridObservation", "GridRules", "GridSettings",
    "GridState", "GridVectorEnv", "Lanes", "ObjectRule", "ObjectSlots", "compile_grid", "compile_grid_from_store",
    "grid_observation_types", "grid_rules", "load_compiled_grid", "make_grid_vector_env",
    "register_grid_cypher_observation", "register_grid_observation",
]
