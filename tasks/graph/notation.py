"""rewardGym's graph notation, parsed into explicit (action -> [(target, p)]) tables.

Accepted per node (Python values, or their JSON encodings used in data files):
- `[]`, `{}`                 terminal node
- `[t0, t1, ...]`            action i goes to t_i
- `(targets, p)`             action i goes to t_i with probability p, otherwise uniformly to
                             one of the other targets (JSON: {"targets": [...], "p": p})
- `{action: value, ..., "skip": True}`  one entry per action; value is a target, a tuple
                             (intended target first) or an explicit distribution
                             {"targets": [...], "probs": [...]}; `skip` may stand anywhere
- scalar t                   action 0 goes to t
Explicit distributions may also stand as elements of the list form (neuro-nav's
probabilistic edges).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, Mapping

from graphstore.errors import GraphtasksError

PROBABILITY_TOLERANCE = 1e-6


class GraphNotationError(GraphtasksError, ValueError):
    """An invalid graph; the message names the node and action."""


@dataclass
class ParsedGraph:
    """Explicit transition tables: edges[node][action] = [(target, probability), ...]."""

    nodes: list[int]
    edges: dict[int, dict[int, list[tuple[int, float]]]]
    skip: set[int] = field(default_factory=set)

    @property
    def n_actions(self) -> int:
        return max((max(acts) + 1 for acts in self.edges.values() if acts), default=0)

    def terminal(self, node: int) -> bool:
        return not self.edges[node]


def _as_int(value: Any, what: str) -> int:
    """An integer, or a string of digits: JSON object keys (nodes, actions) are always strings."""
    if isinstance(value, bool):
        raise GraphNotationError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise GraphNotationError(f"{what}: expected an integer, got {value!r}")


def _target(value: Any, what: str) -> int:
    """A target node: an integer, never a string (a quoted "1" is almost always a typo in a data file)."""
    if isinstance(value, str):
        raise GraphNotationError(f"{what}: expected an integer node index, got the string {value!r}")
    return _as_int(value, what)


def _probability(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise GraphNotationError(f"{what}: probability must be a number, got {value!r}")
    p = float(value)
    if not 0.0 <= p <= 1.0:
        raise GraphNotationError(f"{what}: probability {p} outside [0, 1]")
    return p


def _targets(value: Any, what: str) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise GraphNotationError(f"{what}: targets must be a list, got {value!r}")
    if not value:
        raise GraphNotationError(f"{what}: empty list of targets")
    return [_target(t, f"{what}, target") for t in value]


def _intended(targets: list[int], p: float, what: str) -> list[tuple[int, float]]:
    """Intended target targets[0] with p, the others uniformly with 1 - p."""
    if len(targets) == 1:
        if abs(p - 1.0) > PROBABILITY_TOLERANCE:
            raise GraphNotationError(f"{what}: probability {p} with a single target leaves {1 - p:.3g} unassigned")
        return [(targets[0], 1.0)]
    rest = (1.0 - p) / (len(targets) - 1)
    return [(targets[0], p)] + [(t, rest) for t in targets[1:]]


def _is_tuple_form(value: Any) -> bool:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (list, tuple)):
        return True
    return isinstance(value, Mapping) and set(value) == {"targets", "p"}


def _is_distribution(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"targets", "probs"}


def _tuple_parts(value: Any) -> tuple[Any, Any]:
    return (value["targets"], value["p"]) if isinstance(value, Mapping) else value


def _action_value(value: Any, what: str) -> list[tuple[int, float]]:
    """One action's outcome: a target, a tuple (intended first) or an explicit distribution."""
    if _is_tuple_form(value):
        targets, p = _tuple_parts(value)
        return _intended(_targets(targets, what), _probability(p, what), what)
    if _is_distribution(value):
        targets = _targets(value["targets"], what)
        probs = value["probs"]
        if not isinstance(probs, (list, tuple)) or len(probs) != len(targets):
            raise GraphNotationError(f"{what}: 'probs' must list one probability per target")
        return [(t, _probability(p, what)) for t, p in zip(targets, probs)]
    return [(_target(value, f"{what}, target"), 1.0)]


def _parse_node(node: int, value: Any) -> tuple[dict[int, list[tuple[int, float]]], bool]:
    where = f"node {node}"
    if value is None or (isinstance(value, (list, tuple, Mapping)) and len(value) == 0):
        return {}, False
    if _is_tuple_form(value):
        targets_raw, p_raw = _tuple_parts(value)
        targets = _targets(targets_raw, f"{where}, tuple")
        p = _probability(p_raw, f"{where}, tuple")
        out = {}
        for action, intended in enumerate(targets):
            others = targets[:action] + targets[action + 1 :]
            out[action] = _intended([intended] + others, p, f"{where}, action {action}")
        return out, False
    if isinstance(value, Mapping) and not _is_distribution(value):
        skip = False
        out = {}
        for key, item in value.items():
            if key == "skip":
                if not isinstance(item, bool):
                    raise GraphNotationError(f"{where}: 'skip' must be true or false, got {item!r}")
                skip = item
                continue
            action = _as_int(key, f"{where}, action key")
            if action < 0:
                raise GraphNotationError(f"{where}, action {action}: actions are non-negative integers")
            out[action] = _action_value(item, f"{where}, action {action}")
        if skip and not out:
            raise GraphNotationError(f"{where}: a skip node needs at least one action to advance with")
        return out, skip
    if isinstance(value, (list, tuple)):
        return {a: _action_value(item, f"{where}, action {a}") for a, item in enumerate(value)}, False
    return {0: _action_value(value, f"{where}, action 0")}, False


def parse_graph(graph: Mapping[Any, Any]) -> ParsedGraph:
    """Parse a whole graph; raises GraphNotationError naming the node and action."""
    if not isinstance(graph, Mapping) or not graph:
        raise GraphNotationError("a graph is a non-empty mapping of node -> outgoing edges")
    nodes: dict[int, Any] = {}
    for key, value in graph.items():
        node = _as_int(key, "node key")
        if node in nodes:
            raise GraphNotationError(f"node {node} defined twice")
        nodes[node] = value
    edges: dict[int, dict[int, list[tuple[int, float]]]] = {}
    skip: set[int] = set()
    for node in sorted(nodes):
        table, is_skip = _parse_node(node, nodes[node])
        for action, outcomes in table.items():
            merged: dict[int, float] = {}
            for target, p in outcomes:
                if target not in nodes:
                    raise GraphNotationError(
                        f"node {node}, action {action}: target {target} is not a node of the graph"
                    )
                merged[target] = merged.get(target, 0.0) + p
            total = sum(merged.values())
            if abs(total - 1.0) > 1e-3:
                raise GraphNotationError(f"node {node}, action {action}: probabilities sum to {total:.6g}, not 1")
            table[action] = [(t, p / total) for t, p in merged.items() if p > 0.0]
        edges[node] = table
        if is_skip:
            skip.add(node)
    ordered = sorted(nodes)
    if ordered != list(range(len(ordered))):
        raise GraphNotationError(f"nodes must be numbered 0..{len(ordered) - 1} without gaps; got {ordered}")
    return ParsedGraph(ordered, edges, skip)
