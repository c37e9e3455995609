"""The Room memory task (RoomEnv-v0 of "A Machine With Human-Like Memory Systems"): its rooms
as tasks and the ConceptNet knowledge an environment reads (`tasks.room.knowledge`)."""

from .knowledge import (
    KNOWLEDGE_PROVIDER,
    KNOWLEDGE_QUERY,
    RELATION,
    ROOMS_FILE,
    RoomKnowledge,
    RoomKnowledgeError,
    build_room_task,
    room_knowledge,
)

__all__ = [
    "KNOWLEDGE_PROVIDER", "KNOWLEDGE_QUERY", "RELATION", "ROOMS_FILE", "RoomKnowledge", "RoomKnowledgeError",
    "build_room_task", "room_knowledge",
]
