"""Changed versions of graph tasks, made on the task graph itself (so a user's stored task
changes exactly as a built-in one does).

- `rewards = {"3" = 1.0, "4" = {kind = "probabilistic", values = [1, 0], probs = [0.2, 0.8]}}`:
  the reward at these states, in the reward notation of task files (0 removes it);
- `edges = {"1" = {"0" = 4}}`: from state 1, action 0 now leads to state 4 (with certainty).
"""

from __future__ import annotations

from typing import Any, Mapping

from graphstore import TaskGraph

from ..family import TaskChangeError
from ..rewards import RewardSpecError, reward_spec

CHANGES = {
    "rewards": "the reward paid at states: {state = value or reward kind table}; 0 removes it",
    "edges": "where actions lead: {state = {action = next state}}",
}


def _state(key: Any, states: Mapping[int, str], where: str) -> str:
    """The local id of the state `key` names."""
    try:
        index = int(key)
    except (TypeError, ValueError):
        raise TaskChangeError(f"{where}: {key!r} is not a state index") from None
    if index not in states:
        raise TaskChangeError(f"{where}: state {index} does not exist (the task has states 0..{len(states) - 1})")
    return states[index]


def _reward_node(graph: TaskGraph, state: str) -> str | None:
    for _, target, data in graph.graph.out_edges(state, data=True):
        if data["rel"] == "HAS_REWARD":
            return target
    return None


def change_graph_task(graph: TaskGraph, changes: Mapping[str, Any], task_id: str, where: str) -> TaskGraph:
    """A copy of `graph` under `task_id` with `changes` (see the module docstring)."""
    changed = graph.copy(task_id)
    states = {int(props["index"]): local for local, props in graph.nodes("State")}
    rewards = changes.get("rewards", {})
    if not isinstance(rewards, Mapping):
        raise TaskChangeError(f"{where}.rewards: expected a table of state = reward, got {rewards!r}")
    for key, value in rewards.items():
        state = _state(key, states, f"{where}.rewards.{key}")
        old = _reward_node(changed, state)
        if old is not None:
            changed.graph.remove_node(old)
        if value == 0:
            continue
        try:
            spec = reward_spec(value, f"{where}.rewards.{key}")
        except RewardSpecError as exc:
            raise TaskChangeError(str(exc)) from None
        local = f"r{changed.props(state)['index']}"
        changed.add_node(local, "Reward", **spec.node_props())
        changed.add_edge(state, local, "HAS_REWARD")
    edges = changes.get("edges", {})
    if not isinstance(edges, Mapping):
        raise TaskChangeError(f"{where}.edges: expected a table of state = {{action = target}}, got {edges!r}")
    for key, moves in edges.items():
        at = f"{where}.edges.{key}"
        state = _state(key, states, at)
        if not isinstance(moves, Mapping):
            raise TaskChangeError(f"{at}: expected a table of action = target, got {moves!r}")
        for action_key, target in moves.items():
            if not str(action_key).isdigit():
                raise TaskChangeError(f"{at}.{action_key}: an action is a non-negative integer")
            action = int(action_key)
            if action >= int(graph.task.get("n_actions") or 0):
                last = int(graph.task.get("n_actions") or 1) - 1
                raise TaskChangeError(f"{at}.{action_key}: the task has actions 0..{last}")
            old_edges = [
                (state, t, k)
                for _, t, k, data in changed.graph.out_edges(state, keys=True, data=True)
                if data["rel"] == "MOVE" and data["props"].get("action") == action
            ]
            changed.graph.remove_edges_from(old_edges)
            changed.add_edge(state, _state(target, states, f"{at}.{action_key}"), "MOVE", action=action, p=1.0)
    terminal = {local for local in states.values() if not any(
        d["rel"] == "MOVE" for _, _, d in changed.graph.out_edges(local, data=True))}
    for local in states.values():
        changed.props(local)["terminal"] = local in terminal
    return changed.seal()
