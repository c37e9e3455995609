"""graphstore: the typed property graph, its schema and its stores.

Imports none of the other graphtasks packages.
"""

from .backends import StoreBackend, register_store_backend, store_backends
from .errors import (
    ConflictError,
    GraphStoreError,
    GraphtasksError,
    QueryError,
    SchemaError,
    StoreFullError,
    StoreLocationError,
    StoreLockedError,
    StoreMissingError,
    TaskNotFound,
    did_you_mean,
)
from .filelock import LOCK_TIMEOUT_ENV_VAR
from .schema import SCHEMA, NodeType, Property, RelType, Schema
from .store import STORE_ENV_VAR, GraphStore, QueryResult, TaskSummary, default_location, open_store
from .taskgraph import TaskGraph, uid_of

__all__ = [
    "StoreBackend",
    "register_store_backend",
    "store_backends",
    "LOCK_TIMEOUT_ENV_VAR", "SCHEMA", "STORE_ENV_VAR", "ConflictError", "GraphStore", "GraphStoreError",
    "GraphtasksError", "NodeType", "Property", "QueryError", "QueryResult", "RelType", "Schema", "SchemaError",
    "StoreFullError", "StoreLocationError", "StoreLockedError", "StoreMissingError", "TaskGraph", "TaskNotFound",
    "TaskSummary", "default_location", "did_you_mean", "open_store", "uid_of",
]
