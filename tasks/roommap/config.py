"""room-env's JSON configurations of RoomEnv-v2 and RoomEnv-v3 as task graphs, and back.

`config_to_graph` reads a configuration (the dict of a `room-config-<name>-v2.json` or
`-v3.json` file of room-env 3.0.6) into a TaskGraph of typed nodes: `MapRoom`s joined by
`LEADS_TO` edges (a side without one is a wall), `MapObject`s (static, independent, dependent,
moving, the agent) with where they start (`STARTS_IN`), how they move (`MOVES_IN`: v2's
per-room direction probabilities; `preferences`: v3's fixed order of directions), what they
attach to (`ATTACHES_TO`, v2), v3's periodic inner walls (`MapWall` `SEPARATES` two rooms)
and v3's question cycle (`ASKS`). `graph_to_config` writes the same dict back: the same keys
in the same order and the same values, so `config_hash` of the export equals the file's.
What the graph derives (v2's `names` lists and `grid`, v3's `selected_walls`) is checked on
import and rebuilt on export.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError
from .schema import DIRECTIONS, MOVES

V2_KINDS = ("static", "independent", "dependent", "agent")
V2_NAME_KEYS = {"static": "static_objects", "independent": "independent_objects", "dependent": "dependent_objects"}
V3_KEYS = (
    "grid_length", "room_names", "room_positions", "room_connections", "static_names", "moving_names",
    "static_locations", "moving_locations", "movement_preferences", "agent_location", "selected_walls",
    "wall_configs", "question_objects", "seed",
)
V2_REQUIRED = ("room_config", "object_init_config", "object_transition_config", "object_question_probs")


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the configuration's canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def config_version(config: Any) -> int:
    """2 or 3: which room-env version a configuration dict is for (TaskFileError otherwise)."""
    if isinstance(config, dict) and all(k in config for k in V2_REQUIRED):
        return 2
    if isinstance(config, dict) and all(k in config for k in V3_KEYS if k != "seed"):
        return 3
    raise TaskFileError(
        "not a room-env configuration: a v2 one has " + ", ".join(V2_REQUIRED) + "; a v3 one has "
        + ", ".join(V3_KEYS[:-1])
    )


def _need(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise TaskFileError(f"{where}: {message}")


def _number(value: Any) -> float:
    return float(value)


def _rooms(g: TaskGraph, names: list[str], positions: list[tuple[int, int]], labels: dict[str, str]) -> None:
    for i, (name, (row, col)) in enumerate(zip(names, positions)):
        g.add_node(f"room/{name}", "MapRoom", name=name, order=i, row=int(row), col=int(col), label=labels.get(name))
        g.add_edge("", f"room/{name}", "HAS_ROOM")


def _doors(g: TaskGraph, connections: dict[str, dict[str, str]], rooms: set[str], where: str) -> None:
    for name, sides in connections.items():
        _need(isinstance(sides, dict) and list(sides) == list(DIRECTIONS), where,
              f"room {name!r}: expected the sides {', '.join(DIRECTIONS)} in this order")
        for direction, target in sides.items():
            if target == "wall":
                continue
            _need(target in rooms, where, f"room {name!r}: {direction} leads to {target!r}, which is not a room")
            g.add_edge(f"room/{name}", f"room/{target}", "LEADS_TO", direction=direction)


def config_to_graph(config: dict[str, Any], task_id: str, name: str, source: str | None = None,
                    provenance: dict[str, Any] | None = None, where: str = "configuration") -> TaskGraph:
    """The task graph of a room-env v2 or v3 configuration (see the module docstring)."""
    version = config_version(config)
    kind = f"room-v{version}"
    params: dict[str, Any] = {"version": version, "config": name, "keys": list(config)}
    g = TaskGraph(task_id, kind, name, source=source, params=params, provenance=provenance,
                  description=f"room-env RoomEnv-v{version} map {name!r}")
    if version == 2:
        _v2(g, config, params, where)
    else:
        _v3(g, config, params, where)
    g.task["params"] = params
    return g.seal()


def _v2(g: TaskGraph, c: dict[str, Any], params: dict[str, Any], where: str) -> None:
    rooms = list(c["room_config"])
    labels = dict(c.get("mapping") or {})
    indexes = c.get("room_indexes")
    if indexes is None:
        positions = [(0, i) for i in range(len(rooms))]
    else:
        _need(len(indexes) == len(rooms), where, "room_indexes must give one [row, col] per room")
        positions = [(int(r), int(col)) for r, col in indexes]
    if "grid" in c:
        grid = c["grid"]
        params["grid_shape"] = [len(grid), len(grid[0]) if grid else 0]
        cells = {(r, col) for r, row in enumerate(grid) for col, v in enumerate(row) if v}
        _need(cells == set(positions), where, "grid: its 1-cells must be exactly the rooms' room_indexes")
    _rooms(g, rooms, positions, labels)
    _doors(g, c["room_config"], set(rooms), where)
    init, moves, asks = c["object_init_config"], c["object_transition_config"], c["object_question_probs"]
    _need(list(init) == list(V2_KINDS), where, f"object_init_config: expected the kinds {', '.join(V2_KINDS)}")
    for kind in V2_KINDS:
        for order, obj in enumerate(init[kind]):
            local = f"object/{obj}"
            _need(obj in asks.get(kind, {}), where, f"object_question_probs: no entry for {kind} object {obj!r}")
            g.add_node(local, "MapObject", name=obj, kind=kind, order=order, question_prob=_number(asks[kind][obj]),
                       label=labels.get(obj))
            g.add_edge("", local, "HAS_MAP_OBJECT")
            starts = init[kind][obj]
            _need(list(starts) == rooms, where, f"object_init_config: {obj!r} must list every room, in order")
            for room, p in starts.items():
                if p:
                    g.add_edge(local, f"room/{room}", "STARTS_IN", p=_number(p))
    for kind in V2_KINDS:
        for obj in init[kind]:
            rule = moves.get(kind, {}).get(obj, "missing")
            local = f"object/{obj}"
            if kind in ("static", "agent"):
                _need(rule is None, where, f"object_transition_config: {kind} object {obj!r} must be null")
            elif kind == "independent":
                _need(isinstance(rule, dict) and list(rule) == rooms, where,
                      f"object_transition_config: independent {obj!r} must list every room, in order")
                for room, probs in rule.items():
                    _need(list(probs) == list(MOVES), where,
                          f"object_transition_config: {obj!r} in {room!r}: expected {', '.join(MOVES)}")
                    g.add_edge(local, f"room/{room}", "MOVES_IN", **{d: _number(probs[d]) for d in MOVES})
            else:
                _need(isinstance(rule, dict), where, f"object_transition_config: dependent {obj!r} must be an object")
                for i, (target, p) in enumerate(rule.items()):
                    _need(target in init["independent"], where,
                          f"object_transition_config: {obj!r} attaches to {target!r}, not an independent object")
                    g.add_edge(local, f"object/{target}", "ATTACHES_TO", p=_number(p), order=i)
    if "names" in c:
        names = c["names"]
        derived = {"room": rooms, **{V2_NAME_KEYS[k]: list(init[k]) for k in V2_NAME_KEYS}}
        _need(names == {k: derived[k] for k in names}, where, "names: must list the rooms and objects in order")
        params["names_keys"] = list(names)
    known = set(rooms) | {o for kind in V2_KINDS for o in init[kind]}
    extra = {k: v for k, v in labels.items() if k not in known}
    if "mapping" in c:
        params["mapping_order"] = list(labels)
        params["extra_labels"] = extra


def _v3(g: TaskGraph, c: dict[str, Any], params: dict[str, Any], where: str) -> None:
    _need(list(c) == [k for k in V3_KEYS if k in c], where, f"expected the keys {', '.join(V3_KEYS)} in this order")
    rooms = list(c["room_names"])
    n = int(c["grid_length"])
    params["grid_length"] = n
    if "seed" in c:
        params["seed"] = c["seed"]
    positions = [tuple(c["room_positions"][r]) for r in rooms]
    _need(list(c["room_positions"]) == rooms, where, "room_positions must list the rooms in room_names order")
    _rooms(g, rooms, positions, {})
    _need(list(c["room_connections"]) == rooms, where, "room_connections must list the rooms in room_names order")
    _doors(g, c["room_connections"], set(rooms), where)
    objects = [("static", o) for o in c["static_names"]] + [("moving", o) for o in c["moving_names"]]
    locations = {**c["static_locations"], **c["moving_locations"]}
    _need(list(c["static_locations"]) == list(c["static_names"]), where, "static_locations: one per static name")
    _need(list(c["moving_locations"]) == list(c["moving_names"]), where, "moving_locations: one per moving name")
    _need(list(c["movement_preferences"]) == list(c["moving_names"]), where,
          "movement_preferences: one per moving name")
    orders = {"static": 0, "moving": 0}
    for kind, obj in objects:
        local = f"object/{obj}"
        prefs = c["movement_preferences"][obj] if kind == "moving" else None
        if prefs is not None:
            _need(all(d in DIRECTIONS for d in prefs), where, f"movement_preferences: {obj!r}: unknown direction")
        g.add_node(local, "MapObject", name=obj, kind=kind, order=orders[kind], preferences=prefs)
        orders[kind] += 1
        g.add_edge("", local, "HAS_MAP_OBJECT")
        _need(locations[obj] in rooms, where, f"{obj!r} starts in {locations[obj]!r}, which is not a room")
        g.add_edge(local, f"room/{locations[obj]}", "STARTS_IN", p=1.0)
    g.add_node("object/agent", "MapObject", name="agent", kind="agent", order=0)
    g.add_edge("", "object/agent", "HAS_MAP_OBJECT")
    _need(c["agent_location"] in rooms, where, "agent_location: not a room")
    g.add_edge("object/agent", f"room/{c['agent_location']}", "STARTS_IN", p=1.0)
    walls = list(c["wall_configs"].items())
    _need([k.split("|") for k, _ in walls] == [list(w) for w in c["selected_walls"]], where,
          "selected_walls must list the walls of wall_configs, in order")
    for i, (key, pattern) in enumerate(walls):
        first, second, orientation = key.split("|")
        _need(orientation in ("horizontal", "vertical"), where, f"wall {key!r}: horizontal or vertical")
        _need(len(pattern) > 0 and all(v in (0, 1) for v in pattern), where, f"wall {key!r}: a pattern of 0 and 1")
        g.add_node(f"wall/{i}", "MapWall", orientation=orientation, pattern=[int(v) for v in pattern], order=i)
        g.add_edge("", f"wall/{i}", "HAS_WALL")
        g.add_edge(f"wall/{i}", f"room/{first}", "SEPARATES", end=0)
        g.add_edge(f"wall/{i}", f"room/{second}", "SEPARATES", end=1)
    names = {o for _, o in objects}
    for step, obj in enumerate(c["question_objects"]):
        _need(obj in names, where, f"question_objects[{step}]: {obj!r} is not an object")
        g.add_edge("", f"object/{obj}", "ASKS", step=step)


# -- export ------------------------------------------------------------------------------------

def _plain(p: float) -> int | float:
    """An initial placement as room-env writes it: 0 and 1 as integers."""
    return int(p) if float(p).is_integer() else p


def graph_to_config(g: TaskGraph) -> dict[str, Any]:
    """The room-env configuration dict of a task graph made by `config_to_graph` (or edited since)."""
    params = g.task.get("params") or {}
    version = int(params.get("version", 3 if g.family == "room-v3" else 2))
    rooms = sorted(((p["order"], local, p) for local, p in g.nodes("MapRoom")), key=lambda t: t[0])
    room_names = [p["name"] for _, _, p in rooms]
    by_local = {local: p for _, local, p in rooms}
    objects = sorted(((p["kind"], p["order"], local, p) for local, p in g.nodes("MapObject")),
                     key=lambda t: (t[0], t[1]))
    sides: dict[str, dict[str, str]] = {name: {d: "wall" for d in DIRECTIONS} for name in room_names}
    starts: dict[str, dict[str, float]] = {}
    moves: dict[str, dict[str, dict[str, float]]] = {}
    attaches: dict[str, list[tuple[int, str, float]]] = {}
    asks: list[tuple[int, str]] = []
    ends: dict[str, dict[int, str]] = {}
    names = {local: p["name"] for local, p in g.nodes() if "name" in p}
    for source, target, data in g.graph.edges(data=True):
        rel, props = data["rel"], data["props"]
        if rel == "LEADS_TO":
            sides[by_local[source]["name"]][props["direction"]] = by_local[target]["name"]
        elif rel == "STARTS_IN":
            starts.setdefault(names[source], {})[by_local[target]["name"]] = props["p"]
        elif rel == "MOVES_IN":
            moves.setdefault(names[source], {})[by_local[target]["name"]] = {d: props[d] for d in MOVES}
        elif rel == "ATTACHES_TO":
            attaches.setdefault(names[source], []).append((props["order"], names[target], props["p"]))
        elif rel == "ASKS":
            asks.append((props["step"], names[target]))
        elif rel == "SEPARATES":
            ends.setdefault(source, {})[props["end"]] = by_local[target]["name"]
    if version == 2:
        return _v2_export(params, rooms, room_names, objects, sides, starts, moves, attaches)
    return _v3_export(g, params, rooms, room_names, objects, sides, starts, asks, ends)


def _v2_export(params, rooms, room_names, objects, sides, starts, moves, attaches) -> dict[str, Any]:
    of_kind = {k: [(o, p) for kind, o, _, p in objects if kind == k] for k in V2_KINDS}
    for k in of_kind:
        of_kind[k].sort(key=lambda t: t[0])
    out: dict[str, Any] = {}
    labels = {p["name"]: p["label"] for _, _, p in rooms if p.get("label") is not None}
    labels.update({p["name"]: p["label"] for _, _, _, p in objects if p.get("label") is not None})
    labels.update(params.get("extra_labels") or {})
    for key in params["keys"]:
        if key == "room_config":
            out[key] = {name: dict(sides[name]) for name in room_names}
        elif key == "object_init_config":
            out[key] = {k: {p["name"]: {r: _plain(starts.get(p["name"], {}).get(r, 0)) for r in room_names}
                            for _, p in of_kind[k]} for k in V2_KINDS}
        elif key == "object_transition_config":
            section: dict[str, Any] = {}
            for k in V2_KINDS:
                entries: dict[str, Any] = {}
                for _, p in of_kind[k]:
                    if k == "independent":
                        rule = moves.get(p["name"], {})
                        entries[p["name"]] = {r: rule[r] for r in room_names if r in rule}
                    elif k == "dependent":
                        entries[p["name"]] = {t: prob for _, t, prob in sorted(attaches.get(p["name"], []))}
                    else:
                        entries[p["name"]] = None
                section[k] = entries
            out[key] = section
        elif key == "object_question_probs":
            out[key] = {k: {p["name"]: p.get("question_prob", 0.0) for _, p in of_kind[k]} for k in V2_KINDS}
        elif key == "grid":
            n_rows, n_cols = params["grid_shape"]
            grid = [[0] * n_cols for _ in range(n_rows)]
            for _, _, p in rooms:
                grid[p["row"]][p["col"]] = 1
            out[key] = grid
        elif key == "room_indexes":
            out[key] = [[p["row"], p["col"]] for _, _, p in rooms]
        elif key == "names":
            derived = {"room": room_names}
            derived.update({V2_NAME_KEYS[k]: [p["name"] for _, p in of_kind[k]] for k in V2_NAME_KEYS})
            out[key] = {k: derived[k] for k in params.get("names_keys", list(derived))}
        elif key == "mapping":
            order = params.get("mapping_order") or list(labels)
            out[key] = {k: labels[k] for k in order if k in labels}
    return out


def _v3_export(g, params, rooms, room_names, objects, sides, starts, asks, ends) -> dict[str, Any]:
    static = sorted((o, p) for kind, o, _, p in objects if kind == "static")
    moving = sorted((o, p) for kind, o, _, p in objects if kind == "moving")
    agent = next(p for kind, _, _, p in objects if kind == "agent")

    def where(name: str) -> str:
        return next(iter(starts[name]))

    walls = sorted((p["order"], local, p) for local, p in g.nodes("MapWall"))
    out: dict[str, Any] = {
        "grid_length": params["grid_length"],
        "room_names": room_names,
        "room_positions": {p["name"]: [p["row"], p["col"]] for _, _, p in rooms},
        "room_connections": {name: dict(sides[name]) for name in room_names},
        "static_names": [p["name"] for _, p in static],
        "moving_names": [p["name"] for _, p in moving],
        "static_locations": {p["name"]: where(p["name"]) for _, p in static},
        "moving_locations": {p["name"]: where(p["name"]) for _, p in moving},
        "movement_preferences": {p["name"]: list(p["preferences"]) for _, p in moving},
        "agent_location": where(agent["name"]),
        "selected_walls": [[ends[local][0], ends[local][1], p["orientation"]] for _, local, p in walls],
        "wall_configs": {f"{ends[local][0]}|{ends[local][1]}|{p['orientation']}": list(p["pattern"])
                         for _, local, p in walls},
        "question_objects": [name for _, name in sorted(asks)],
    }
    if "seed" in params:
        out["seed"] = params["seed"]
    return {k: out[k] for k in params.get("keys", list(out)) if k in out}
