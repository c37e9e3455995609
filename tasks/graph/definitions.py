"""Graph tasks (neuro-nav graph templates, rewardGym tasks, user files) as typed task graphs.

A definition file holds: name, description, reference, reward_on, start, graph (rewardGym
notation), names, rewards, conditions, schedule, provenance, and `defaults` for the
parameters that `"$name"` placeholders anywhere in the file refer to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from graphstore import TaskGraph

from ..data import TaskFileError, read_json
from ..rewards import RewardSpecError, reward_spec
from .conditions import parse_condition
from .notation import GraphNotationError, parse_graph
from .schedules import ScheduleError, validate_schedule

REWARD_ON = ("arrival", "terminal")
# The JSON type each optional field must have; checked first so no later step fails without the file's name.
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "description": (str,), "reference": (str,), "reward_on": (str,), "names": (dict,),
    "info": (dict,), "rewards": (dict,), "conditions": (dict,), "schedule": (dict,), "provenance": (dict,),
    "defaults": (dict,),
}
KNOWN_FIELDS = {
    "name", "description", "reference", "reward_on", "start", "graph", "names", "info", "rewards",
    "conditions", "schedule", "provenance", "defaults",
}


def substitute(value: Any, params: Mapping[str, Any], where: str) -> Any:
    """Replace every "$name" string by params[name]."""
    if isinstance(value, str) and value.startswith("$"):
        key = value[1:]
        if key not in params:
            raise TaskFileError(
                f"{where}: placeholder {value!r} has no value (parameters: {', '.join(sorted(params)) or 'none'})"
            )
        return params[key]
    if isinstance(value, list):
        return [substitute(v, params, where) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, params, where) for k, v in value.items()}
    return value


def effective_params(definition: Mapping[str, Any], params: Mapping[str, Any], where: str) -> dict[str, Any]:
    defaults = dict(definition.get("defaults", {}))
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise TaskFileError(
            f"{where}: unknown parameter(s) {', '.join(unknown)} in params; "
            f"this task takes: {', '.join(sorted(defaults)) or 'none'}"
        )
    return {**defaults, **params}


def build_graph_task(
    task_id: str, family: str, definition: Mapping[str, Any], params: Mapping[str, Any] | None = None, source: str = ""
) -> TaskGraph:
    """A validated TaskGraph from a definition; errors name the file/task and the field."""
    where = source or task_id
    unknown = sorted(set(definition) - KNOWN_FIELDS)
    if unknown:
        raise TaskFileError(f"{where}: unknown field(s) {', '.join(unknown)}")
    _check_field_types(definition, where)
    chosen = effective_params(definition, params or {}, where)
    d = substitute({k: v for k, v in definition.items() if k != "defaults"}, chosen, where)
    _check_field_types(d, where)
    if "graph" not in d:
        raise TaskFileError(f"{where}: missing field 'graph'")
    try:
        parsed = parse_graph(d["graph"])
    except GraphNotationError as exc:
        raise TaskFileError(f"{where}: graph: {exc}") from None
    n = len(parsed.nodes)
    reward_on = d.get("reward_on", "arrival")
    if reward_on not in REWARD_ON:
        raise TaskFileError(f"{where}: 'reward_on' must be one of {', '.join(REWARD_ON)}, got {reward_on!r}")
    start = d.get("start", 0)
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < n:
        raise TaskFileError(f"{where}: 'start' must be a node index in 0..{n - 1}, got {start!r}")
    provenance = dict(d.get("provenance", {}))
    if d.get("reference"):
        provenance.setdefault("reference", d["reference"])
    graph = TaskGraph(
        task_id,
        family,
        d.get("name", task_id.rsplit("/", 1)[-1]),
        source=source,
        description=d.get("description", ""),
        params=chosen,
        provenance=provenance,
        reward_on=reward_on,
        n_states=n,
        n_actions=parsed.n_actions,
        schedule=d.get("schedule"),
    )
    names = d.get("names", {})
    info = d.get("info", {})
    for node in parsed.nodes:
        graph.add_node(
            f"s{node}",
            "State",
            index=node,
            name=names.get(str(node), str(node)),
            terminal=parsed.terminal(node),
            skip=node in parsed.skip,
            info=info.get(str(node)),
        )
    graph.add_edge("", f"s{start}", "START")
    for node, actions in parsed.edges.items():
        for action, outcomes in sorted(actions.items()):
            for target, p in outcomes:
                graph.add_edge(f"s{node}", f"s{target}", "MOVE", action=action, p=p)
    for key, value in d.get("rewards", {}).items():
        node = _node_key(key, n, f"{where}: rewards")
        try:
            spec = reward_spec(value, f"{where}: rewards[{key}]")
        except RewardSpecError as exc:
            raise TaskFileError(str(exc)) from None
        graph.add_node(f"r{node}", "Reward", **spec.node_props())
        graph.add_edge(f"s{node}", f"r{node}", "HAS_REWARD")
    conditions = d.get("conditions", {})
    for name, value in conditions.items():
        try:
            condition = parse_condition(name, value, n)
        except GraphNotationError as exc:
            raise TaskFileError(f"{where}: conditions: {exc}") from None
        local = f"condition/{name}"
        graph.add_node(
            local,
            "Condition",
            name=name,
            reward=condition.reward,
            available={str(k): list(v) for k, v in condition.available.items()} or None,
        )
        graph.add_edge("", local, "HAS_CONDITION")
        for (node, action), override in condition.overrides.items():
            for target, p in override:
                graph.add_edge(local, f"s{target}", "OVERRIDE", source=node, action=action, p=p)
    if d.get("schedule") is not None:
        try:
            validate_schedule(d["schedule"], set(conditions), f"{where}: schedule")
        except ScheduleError as exc:
            raise TaskFileError(str(exc)) from None
    return graph.seal()


def _check_field_types(d: Mapping[str, Any], where: str) -> None:
    for name, types in FIELD_TYPES.items():
        value = d.get(name)
        placeholder = isinstance(value, str) and value.startswith("$")
        if value is not None and not placeholder and not isinstance(value, types):
            expected = "a JSON object" if types == (dict,) else "a string"
            raise TaskFileError(f"{where}: field {name!r} must be {expected}, got {type(value).__name__} {value!r:.60}")
    for name in ("names", "info"):
        for key in (d.get(name) or {}) if isinstance(d.get(name), dict) else ():
            if not str(key).lstrip("-").isdigit():
                raise TaskFileError(f"{where}: {name}: key {key!r} is not a node index")
    for key, value in (d.get("names") or {}).items() if isinstance(d.get("names"), dict) else ():
        if not isinstance(value, str):
            raise TaskFileError(f"{where}: names[{key}]: expected a string, got {value!r}")


def _node_key(key: Any, n: int, where: str) -> int:
    try:
        node = int(key)
    except (TypeError, ValueError):
        raise TaskFileError(f"{where}: key {key!r} is not a node index") from None
    if not 0 <= node < n:
        raise TaskFileError(f"{where}: node {node} is not in the graph (0..{n - 1})")
    return node


def load_definition(path: Path) -> dict[str, Any]:
    definition = read_json(path)
    if not isinstance(definition, dict):
        raise TaskFileError(f"{path}: a task file holds a JSON object")
    return definition
