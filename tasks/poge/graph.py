"""A POGE world as a typed tile graph, and back.

One Tile node per map cell (walls and doors included, so every section map survives the
round trip); MOVE edges from every tile the player can act on, one per (action, executed
action) with the slip probability, doors crossed as one two-tile move (`via` names the
door); START from the Task node to the `E` tile. The declarations (abstraction names,
rules, reward values) sit in the Task node's `params`, in file order.
"""

from __future__ import annotations

from typing import Any

from graphstore import SchemaError, TaskGraph

from .parser import parse_world
from .world import ACTION_INDEX, ACTIONS, ENDS_EPISODE, WALKABLE, PogeWorld
from .writer import write_world

FAMILY = "poge"


def tile_id(r: int, c: int) -> str:
    return f"r{r}c{c}"


def world_to_graph(
    world: PogeWorld,
    task_id: str,
    name: str | None = None,
    source: str = "",
    description: str = "",
    provenance: dict[str, Any] | None = None,
) -> TaskGraph:
    """The sealed TaskGraph of a world (validated: every MOVE distribution sums to 1)."""
    sections = ["Layout"] + [
        s
        for s, present in (
            ("Abstraction", world.abstraction),
            ("Behaviour", world.behaviour),
            ("Rewards", world.rewards),
        )
        if present is not None
    ]
    params = {
        "rows": world.rows,
        "cols": world.cols,
        "sections": sections,
        "abstraction_names": [list(pair) for pair in world.names],
        "rules": [[rid, ACTIONS[a], [[ACTIONS[e], p] for e, p in outcomes]] for rid, a, outcomes in world.rules],
        "reward_values": [list(pair) for pair in world.reward_values],
    }
    graph = TaskGraph(
        task_id,
        FAMILY,
        name,
        source=source,
        description=description or "POGE gridworld",
        params=params,
        provenance=provenance or {},
        n_states=world.floor_states,
        n_actions=len(ACTIONS),
    )
    for r in range(world.rows):
        for c in range(world.cols):
            graph.add_node(
                tile_id(r, c),
                "Tile",
                row=r,
                col=c,
                index=r * world.cols + c,
                kind=world.kind(r, c),
                char=world.char(r, c),
                symbol=_raw(world.abstraction, r, c),
                abstraction=world.abstraction_name(r, c),
                rule=_raw(world.behaviour, r, c),
                reward_symbol=_raw(world.rewards, r, c),
                reward=world.reward(r, c),
            )
    graph.add_edge("", tile_id(*world.start), "START")
    for r in range(world.rows):
        for c in range(world.cols):
            kind = world.kind(r, c)
            if kind not in WALKABLE or kind in ENDS_EPISODE:
                continue
            for action in range(len(ACTIONS)):
                for executed, p in world.slip(r, c, action):
                    (tr, tc), door = world.target(r, c, executed)
                    graph.add_edge(
                        tile_id(r, c),
                        tile_id(tr, tc),
                        "MOVE",
                        action=action,
                        executed=executed,
                        p=p,
                        via=tile_id(*door) if door else None,
                    )
    return graph.seal()


def _raw(grid: tuple[str, ...] | None, r: int, c: int) -> str | None:
    if grid is None or grid[r][c] == " ":
        return None
    return grid[r][c]


def graph_to_world(graph: TaskGraph) -> PogeWorld:
    """Rebuild the world from a stored tile graph; checks it with the parser."""
    if graph.family != FAMILY:
        raise SchemaError(f"task {graph.task_id!r} is a {graph.family!r} task, not a POGE world")
    params = graph.task.get("params") or {}
    try:
        rows, cols = int(params["rows"]), int(params["cols"])
        sections = set(params["sections"])
    except (KeyError, TypeError, ValueError):
        raise SchemaError(f"task {graph.task_id!r}: the Task node's params lack rows, cols and sections") from None
    grids: dict[str, list[list[str]]] = {
        k: [[" "] * cols for _ in range(rows)] for k in ("char", "symbol", "rule", "reward_symbol")
    }
    seen = 0
    for _, props in graph.nodes("Tile"):
        r, c = props["row"], props["col"]
        if not (0 <= r < rows and 0 <= c < cols):
            raise SchemaError(f"task {graph.task_id!r}: tile at row {r}, column {c} is outside the {rows}x{cols} map")
        for key, grid in grids.items():
            grid[r][c] = props.get(key) or " "
        seen += 1
    if seen != rows * cols:
        raise SchemaError(f"task {graph.task_id!r}: {seen} Tile nodes, expected {rows * cols}")

    def text(key: str, section: str) -> tuple[str, ...] | None:
        return tuple("".join(row) for row in grids[key]) if section in sections else None

    layout = text("char", "Layout")
    if layout is None:
        raise SchemaError(f"task {graph.task_id!r}: no Layout section")
    world = PogeWorld(
        layout=layout,
        abstraction=text("symbol", "Abstraction"),
        names=tuple((s, n) for s, n in params.get("abstraction_names", [])),
        behaviour=text("rule", "Behaviour"),
        rules=tuple(
            (rid, ACTION_INDEX[a], tuple((ACTION_INDEX[e], float(p)) for e, p in outcomes))
            for rid, a, outcomes in params.get("rules", [])
        ),
        rewards=text("reward_symbol", "Rewards"),
        reward_values=tuple((s, int(v)) for s, v in params.get("reward_values", [])),
    )
    return parse_world(write_world(world), f"stored task {graph.task_id!r}")
