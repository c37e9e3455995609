"""The Room memory task family: the env, its knowledge from ConceptNet, the baseline agents; see `family`."""

from .env import RoomEnv, load_room

__all__ = ["RoomEnv", "load_room"]
