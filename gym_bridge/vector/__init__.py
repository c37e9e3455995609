"""Natively vectorised environments: N copies of one compiled task stepped with numpy.

`base.BatchedVectorEnv` holds what every family shares (seeding, autoreset modes, truncation);
each family adds its dynamics (`graph_vector_env.GraphVectorEnv`).
"""

from .base import BatchedVectorEnv, parse_autoreset_mode
from .graph_vector_env import GraphVectorEnv, build_tables, make_graph_vector_env

__all__ = ["BatchedVectorEnv", "GraphVectorEnv", "build_tables", "make_graph_vector_env", "parse_autoreset_mode"]
