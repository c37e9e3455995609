"""The Room task's map versions (room-env RoomEnv-v2 and RoomEnv-v3) as gymnasium envs."""

from .compiled import CompiledRoomMap, compile_room_map, load_room_map
from .env import RoomMapEnv
from .vector_env import RoomMapVectorEnv

__all__ = ["CompiledRoomMap", "RoomMapEnv", "RoomMapVectorEnv", "compile_room_map", "load_room_map"]
