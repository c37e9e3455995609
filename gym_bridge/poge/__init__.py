"""The POGE world family: compiled form, env, vector env, observation types; see `family`."""

from .compiled import CompiledWorld, FlatOutcomes, PogeOptions, compile_world
from .env import PogeEnv, load_compiled_world, load_world_graph
from .observations import POGE_OBSERVATIONS, PogeObservation
from .vector_env import PogeVectorEnv, make_poge_vector_env

__all__ = [
    "CompiledWorld", "FlatOutcomes", "POGE_OBSERVATIONS", "PogeEnv", "PogeObservation", "PogeOptions", "PogeVectorEnv",
    "compile_world", "load_compiled_world", "load_world_graph", "make_poge_vector_env",
]
