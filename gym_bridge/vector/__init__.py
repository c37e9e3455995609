"""Natively vectorised environments: N copies of one compiled task stepped with numpy.

`base.BatchedVectorEnv` holds what every family shares (seeding, autoreset modes, truncation);
each family adds its dynamics (`GraphVectorEnv`, `GridVectorEnv`, `PogeVectorEnv`).
"""

from .base import BatchedVectorEnv, parse_autoreset_mode
from .graph_vector_env import GraphVectorEnv, build_tables, make_graph_vector_env, stack_tables
from .grid_vector_env import GridVectorEnv, make_grid_vector_env
from .poge_vector_env import PogeVectorEnv, make_poge_vector_env

__all__ = [
    "BatchedVectorEnv", "GraphVectorEnv", "GridVectorEnv", "PogeVectorEnv", "build_tables", "make_graph_vector_env",
    "make_grid_vector_env", "make_poge_vector_env", "parse_autoreset_mode", "stack_tables",
]
