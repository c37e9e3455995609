"""Trial conditions: per-trial edge overrides, fixed outcomes and offered actions.

A condition is given in rewardGym's form (`{0: {0: 1}}` forces action 0 at node 0 to
node 1; `{"reward": 1}` fixes the outcome) or in the data-file form
`{"edges": {...}, "reward": r, "available": {node: [actions]}}`; both parse to `Condition`.
As in rewardGym, a node's entry replaces that node's actions for the trial: only the
actions it lists are offered (`{0: {1: 2, 3: 4}}` offers actions 1 and 3 at node 0). A
`None` key is rewardGym's placeholder for an empty screen side and offers nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Mapping

from .notation import GraphNotationError, _action_value, _as_int


@dataclass(frozen=True)
class Condition:
    name: str
    overrides: dict[tuple[int, int], tuple[tuple[int, float], ...]] = field(default_factory=dict)
    reward: float | None = None
    available: dict[int, tuple[int, ...]] = field(default_factory=dict)


def parse_condition(name: str, value: Mapping[Any, Any], n_nodes: int | None = None) -> Condition:
    """Parse either form; errors name the condition, node and action."""
    where = f"condition {name!r}"
    if not isinstance(value, Mapping):
        raise GraphNotationError(f"{where}: expected a mapping, got {value!r}")
    known = {"edges", "reward", "available"}
    if set(value) <= known:
        edges = value.get("edges", {})
    else:  # rewardGym form: node keys plus an optional "reward"
        edges = {k: v for k, v in value.items() if k not in known}
        unknown = [k for k in value if k not in known and not str(k).lstrip("-").isdigit()]
        if unknown:
            raise GraphNotationError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
    overrides: dict[tuple[int, int], tuple[tuple[int, float], ...]] = {}
    listed: dict[int, tuple[int, ...]] = {}  # a node's entry replaces its actions
    for node_key, actions in edges.items():
        node = _as_int(node_key, f"{where}, node key")
        if not isinstance(actions, Mapping):
            raise GraphNotationError(f"{where}, node {node}: expected {{action: target}}, got {actions!r}")
        offered = [a for a in actions if a is not None]  # None: rewardGym's placeholder side
        if not offered:
            raise GraphNotationError(f"{where}, node {node}: the entry offers no action")
        for action_key in offered:
            target = actions[action_key]
            action = _as_int(action_key, f"{where}, node {node}, action key")
            outcomes = _action_value(target, f"{where}, node {node}, action {action}")
            for t, _ in outcomes:
                if n_nodes is not None and not 0 <= t < n_nodes:
                    raise GraphNotationError(f"{where}, node {node}, action {action}: target {t} is not a node")
            overrides[(node, action)] = tuple(outcomes)
        listed[node] = tuple(sorted(a for (s, a) in overrides if s == node))
    reward = value.get("reward")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, Real) or not math.isfinite(reward)):
        raise GraphNotationError(f"{where}: 'reward' must be a finite number, got {reward!r}")
    available: dict[int, tuple[int, ...]] = dict(listed)
    for node_key, actions in (value.get("available") or {}).items():
        node = _as_int(node_key, f"{where}, available node")
        if node in listed:
            raise GraphNotationError(f"{where}, node {node}: give its actions in 'edges' or in 'available', not both")
        if not isinstance(actions, (list, tuple)) or not actions:
            raise GraphNotationError(f"{where}, node {node}: 'available' needs a non-empty list of actions")
        available[node] = tuple(sorted(_as_int(a, f"{where}, node {node}, available action") for a in actions))
    return Condition(name, overrides, None if reward is None else float(reward), available)
