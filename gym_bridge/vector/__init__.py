"""Natively vectorised environments: N copies of one compiled task stepped with numpy.

`base.BatchedVectorEnv` holds what every family shares (seeding, autoreset modes, truncation);
each family adds its dynamics (`GraphVectorEnv`, `GridVectorEnv`, `PogeVectorEnv`).
"""

from .base import BatchedVectorEnv, parse_autoreset_mode

_FAMILY_VECTOR_ENVS = {
    "GridVectorEnv": "gym_bridge.grid.vector_env",
    "make_grid_vector_env": "gym_bridge.grid.vector_env",
    "GraphVectorEnv": "gym_bridge.graph.vector_env",
    "build_tables": "gym_bridge.graph.vector_env",
    "make_graph_vector_env": "gym_bridge.graph.vector_env",
    "stack_tables": "gym_bridge.graph.vector_env",
    "PogeVectorEnv": "gym_bridge.poge.vector_env",
    "make_poge_vector_env": "gym_bridge.poge.vector_env",
}


def __getattr__(name: str):
    """Vector envs that live in their family's package, found here too (imported on first use:
    the family packages import this package's base)."""
    if name in _FAMILY_VECTOR_ENVS:
        import importlib

        return getattr(importlib.import_module(_FAMILY_VECTOR_ENVS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BatchedVectorEnv", "GraphVectorEnv", "GridVectorEnv", "PogeVectorEnv", "build_tables", "make_graph_vector_env",
    "make_grid_vector_env", "make_poge_vector_env", "parse_autoreset_mode", "stack_tables",
]
