"""room-env's RoomEnv-v1 configurations (`des-config-<size>-v1.json`) as task graphs, and back.

A configuration holds `components` (each person's cycle of [object, location] steps: at time
t a person has the object of step t % length, at its location), `resources` (how many objects
each location holds at once), `last_timestep` (the episode's length), `semantic_knowledge`
(object -> its usual location) and `complexity`. `config_to_graph` makes `DesPerson`s with their
`CycleStep`s (`HAS_STEP`, each step `HOLDS` a `DesObject` and `PUTS_AT` a `DesLocation`), the
objects' usual locations (`USUALLY_AT`) and the locations' resources; `graph_to_config` writes the
same dict back (the same keys in the same order, the same values), so `config_hash` of the export
equals the file's. On import the cycles are checked against the resources over the whole
episode, as room-env's simulator checks them while it runs.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from graphstore import TaskGraph

from ..data import TaskFileError

KEYS = ("components", "resources", "last_timestep", "semantic_knowledge")
KIND = "room-v1"


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the configuration's canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def is_v1_config(config: Any) -> bool:
    return isinstance(config, dict) and all(k in config for k in KEYS)


def _need(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise TaskFileError(f"{where}: {message}")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_config(config: Any, where: str = "configuration") -> None:
    """TaskFileError naming the first field that is not a RoomEnv-v1 configuration's, or the
    first (time, location) whose resources the cycles exhaust."""
    _need(is_v1_config(config), where, "not a room-env v1 configuration: it needs " + ", ".join(KEYS))
    components = config["components"]
    _need(isinstance(components, dict) and bool(components), where, "'components' must map people to their cycles")
    for person, cycle in components.items():
        _need(isinstance(cycle, list) and bool(cycle), where, f"components[{person!r}]: expected a non-empty list")
        for i, step in enumerate(cycle):
            _need(isinstance(step, list) and len(step) == 2 and all(isinstance(x, str) and x for x in step), where,
                  f"components[{person!r}][{i}]: expected [object, location], got {step!r}")
    resources = config["resources"]
    _need(isinstance(resources, dict) and all(_whole(v) and v >= 0 for v in resources.values()), where,
          "'resources' must map locations to whole numbers >= 0")
    until = config["last_timestep"]
    _need(_whole(until) and until >= 1, where, f"'last_timestep' must be a whole number >= 1, got {until!r}")
    knowledge = config["semantic_knowledge"]
    _need(isinstance(knowledge, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in knowledge.items()),
          where, "'semantic_knowledge' must map objects to locations")
    if "complexity" in config:
        _need(_whole(config["complexity"]), where, "'complexity' must be a whole number")
    unknown = sorted(set(config) - set(KEYS) - {"complexity"})
    _need(not unknown, where, f"unknown key(s) {', '.join(unknown)}")
    for t in range(until + 1):  # room-env's check_resources: every location holds what it can
        used: dict[str, int] = {}
        for person, cycle in components.items():
            location = cycle[t % len(cycle)][1]
            used[location] = used.get(location, 0) + 1
        for location, n in used.items():
            _need(location in resources, where, f"location {location!r} has no resources entry")
            _need(n <= resources[location], where,
                  f"at time {t}, {n} objects are at {location!r}, which holds {resources[location]}")


def config_to_graph(config: dict[str, Any], task_id: str, name: str, source: str | None = None,
                    provenance: dict[str, Any] | None = None, where: str = "configuration") -> TaskGraph:
    """The task graph of a room-env v1 configuration (see the module docstring)."""
    check_config(config, where)
    params: dict[str, Any] = {"version": 1, "config": name, "keys": list(config),
                              "last_timestep": config["last_timestep"]}
    if "complexity" in config:
        params["complexity"] = config["complexity"]
    g = TaskGraph(task_id, KIND, name, source=source, params=params, provenance=provenance,
                  description=f"room-env RoomEnv-v1 simulation {name!r}: {len(config['components'])} people")
    objects = dict.fromkeys([o for cycle in config["components"].values() for o, _ in cycle]
                            + list(config["semantic_knowledge"]))
    locations = dict.fromkeys([loc for cycle in config["components"].values() for _, loc in cycle]
                              + list(config["resources"]) + list(config["semantic_knowledge"].values()))
    knowledge_order = {o: i for i, o in enumerate(config["semantic_knowledge"])}
    resource_order = {loc: i for i, loc in enumerate(config["resources"])}
    for obj in objects:
        g.add_node(f"object/{obj}", "DesObject", name=obj, knowledge_order=knowledge_order.get(obj))
        g.add_edge("", f"object/{obj}", "HAS_DES_OBJECT")
    for loc in locations:
        g.add_node(f"location/{loc}", "DesLocation", name=loc, resources=config["resources"].get(loc),
                   resource_order=resource_order.get(loc))
        g.add_edge("", f"location/{loc}", "HAS_DES_LOCATION")
    for order, (person, cycle) in enumerate(config["components"].items()):
        g.add_node(f"person/{person}", "DesPerson", name=person, order=order)
        g.add_edge("", f"person/{person}", "HAS_DES_PERSON")
        for position, (obj, loc) in enumerate(cycle):
            step = f"step/{person}/{position}"
            g.add_node(step, "CycleStep", position=position)
            g.add_edge(f"person/{person}", step, "HAS_STEP")
            g.add_edge(step, f"object/{obj}", "HOLDS")
            g.add_edge(step, f"location/{loc}", "PUTS_AT")
    for obj, loc in config["semantic_knowledge"].items():
        g.add_edge(f"object/{obj}", f"location/{loc}", "USUALLY_AT")
    return g.seal()


def cycles(g: TaskGraph) -> dict[str, list[tuple[str, str]]]:
    """Each person's cycle of (object, location), people in the configuration's order."""
    names = {local: p["name"] for local, p in g.nodes() if "name" in p}
    position = {local: p["position"] for local, p in g.nodes("CycleStep")}
    held = {s: names[t] for s, t, _ in g.edges("HOLDS")}
    put = {s: names[t] for s, t, _ in g.edges("PUTS_AT")}
    steps: dict[str, list[tuple[int, str]]] = {}
    for person, step, _ in g.edges("HAS_STEP"):
        steps.setdefault(person, []).append((position[step], step))
    people = sorted(g.nodes("DesPerson"), key=lambda item: item[1]["order"])
    return {p["name"]: [(held[s], put[s]) for _, s in sorted(steps.get(local, []))] for local, p in people}


def graph_to_config(g: TaskGraph) -> dict[str, Any]:
    """The room-env v1 configuration dict of a task graph made by `config_to_graph` (or edited since)."""
    params = g.task.get("params") or {}
    names = {local: p["name"] for local, p in g.nodes() if "name" in p}
    locations = [p for _, p in g.nodes("DesLocation") if p.get("resources") is not None]
    objects = sorted(((p["knowledge_order"], local) for local, p in g.nodes("DesObject")
                      if p.get("knowledge_order") is not None))
    usual = {names[s]: names[t] for s, t, _ in g.edges("USUALLY_AT")}
    values: dict[str, Any] = {
        "components": {person: [[o, loc] for o, loc in cycle] for person, cycle in cycles(g).items()},
        "resources": {p["name"]: p["resources"] for p in sorted(locations, key=lambda p: p["resource_order"])},
        "last_timestep": params["last_timestep"],
        "semantic_knowledge": {names[local]: usual[names[local]] for _, local in objects},
    }
    if "complexity" in params:
        values["complexity"] = params["complexity"]
    keys = [k for k in params.get("keys", list(values)) if k in values]
    return {k: values[k] for k in keys + [k for k in values if k not in keys]}
