"""The grid family: neuro-nav's 18 templates in four sizes and users' maps; objects, 13+ observation types."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.data import data_dir
from tasks.grid.family import GRID as GRID_TASKS

from ..family import Family, GymId
from ..keys import ARROWS_AND_WASD, KeyMap
from ..screens import ArrowKeyGrid
from ..starts import CellStarts
from ..text import PictureText
from .compiled import CompiledGrid
from .observations import GRID_OBSERVATIONS
from .rules import load_compiled_grid


def make_env(task: str | TaskGraph, store: Any = None, **kwargs: Any) -> gym.Env:
    from .env import GridEnv

    return GridEnv(task=task, store=store, **kwargs)


def grid_env_id(template: str) -> str:
    """'four_rooms' -> 'graphtasks/GridFourRooms-v0'."""
    return "graphtasks/Grid" + "".join(part.capitalize() for part in template.split("_")) + "-v0"


def gym_ids() -> list[GymId]:
    """The generic `graphtasks/Grid-v0` (pass template=, size=) and one id per built-in template."""
    templates = sorted(path.stem for path in (data_dir() / "neuronav" / "grids").glob("*.txt"))
    return [GymId("graphtasks/Grid-v0")] + [GymId(grid_env_id(name), {"template": name}) for name in templates]


def free_cells(graph: TaskGraph) -> list[tuple[int, int]]:
    """The cells an agent can stand on."""
    return sorted((int(p["row"]), int(p["col"])) for _, p in graph.nodes("Cell") if not p.get("wall"))


class GridKeys(KeyMap):
    """The grid's keys: its actions depend on the env's settings (gym_bridge.grid.rules).

    Fixed orientation: the arrows or W, A, S, D move north, east, south, west (actions 0-3);
    variable orientation: left/A and right/D turn, up/W goes forward (actions 0-2); then space
    is the no-op (`use_noop`) and C the collect action (`manual_collect`) where the env has them.

    Examples
    --------
    >>> from gym_bridge.grid.env import GridEnv
    >>> GRID.keys.for_env(GridEnv("four_rooms", "micro", orientation="variable", use_noop=True))
    {'left': 0, 'a': 0, 'right': 1, 'd': 1, 'up': 2, 'w': 2, 'space': 3}
    """

    def for_env(self, env: Any) -> dict[str, int]:
        rules = env.unwrapped.rules
        keys = dict(ARROWS_AND_WASD) if not rules.variable else {"left": 0, "a": 0, "right": 1, "d": 1, "up": 2, "w": 2}
        if rules.noop >= 0:
            keys["space"] = rules.noop
        if rules.collect >= 0:
            keys["c"] = rules.collect
        return keys


GRID = Family(
    tasks=GRID_TASKS,
    env="gym_bridge.grid.env:GridEnv",
    gym_entry="gym_bridge.grid.env:make_for_gymnasium",
    vector_env="gym_bridge.grid.vector_env:make_grid_vector_env",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    observations=GRID_OBSERVATIONS,
    compiled=CompiledGrid,
    load=load_compiled_grid,
    starts=CellStarts("agent_pos", free_cells, random_option={"random_start": True}),
    cli="graphtasks.commands.grid_cmd",
    picture="gym_bridge.grid.picture:draw_task",
    keys=GridKeys(legend="Move with the arrow keys or W, A, S, D (turn with left/right and go with up, "
                  "when the agent has an orientation); space waits, C collects, where the task has them."),
    screen=ArrowKeyGrid(  # actions 0-3: north, east, south, west; the text picture's A is the agent
        keys=("ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"), agent="A",
        colours={"B": "#3b3b3b", " ": "#f2f2f2", "R": "#6acc64", "L": "#d65f5f"},
        legend="Move with the arrow keys. Green squares pay, red ones cost.",
    ),
    text=PictureText(  # the text picture, the player's square and the four moves
        moves=("go north", "go east", "go south", "go west"), agent="A",
        legend="A map: A is you, B is a wall, R pays, L costs.",
        intro="You move on a map of squares. Get to the squares that pay.",
    ),
    bench="benchmarks.run_all:grid_cases",
    docs="docs/grid.md",
)
