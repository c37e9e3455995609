"""POGE partially observable gridworlds: the world file format, its writer, and the tile graph."""

from .family import build_from_world_file
from .graph import graph_to_world, tile_id, world_to_graph
from .parser import PogeFormatError, load_world, parse_world
from .world import ACTIONS, DELTAS, PogeWorld, kind_of, statistics
from .writer import write_world

__all__ = [
    "ACTIONS",
    "DELTAS",
    "PogeFormatError",
    "PogeWorld",
    "build_from_world_file",
    "graph_to_world",
    "kind_of",
    "load_world",
    "parse_world",
    "statistics",
    "tile_id",
    "world_to_graph",
    "write_world",
]
