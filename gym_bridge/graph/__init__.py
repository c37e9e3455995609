"""The graph-task family (neuro-nav graphs, rewardGym tasks, users' graph files): compiled
form, env, vector env, observation types, pictures; see `family`."""

from .compiled import CompiledGraphTask, compile_from_store, compile_task
from .env import GraphTaskEnv
from .observations import (
    GRAPH_OBSERVATIONS,
    CypherObservation,
    GraphObservation,
    register_cypher_observation,
    register_observation,
)
from .vector_env import GraphVectorEnv, make_graph_vector_env

__all__ = [
    "GRAPH_OBSERVATIONS", "CompiledGraphTask", "CypherObservation", "GraphObservation", "GraphTaskEnv",
    "GraphVectorEnv", "compile_from_store", "compile_task", "make_graph_vector_env", "register_cypher_observation",
    "register_observation",
]
