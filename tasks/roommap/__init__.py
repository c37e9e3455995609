"""The Room task's map versions (room-env's RoomEnv-v2 and RoomEnv-v3) as task graphs."""

from .config import config_hash, config_to_graph, config_version, graph_to_config
from .family import DEFAULTS, ROOM_MAP, config_names, config_path, read_config

__all__ = [
    "DEFAULTS", "ROOM_MAP", "config_hash", "config_names", "config_path", "config_to_graph", "config_version",
    "graph_to_config", "read_config",
]
