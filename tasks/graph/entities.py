"""The graph family's entity classes: a reward source attached to a state."""

from __future__ import annotations

from typing import Any

from graphstore import SchemaError, TaskGraph

from ..entity_classes import EntityClass, attached_to, occupied, own_params, reward_replaces
from ..rewards import RewardSpecError, reward_spec


def state_local(graph: TaskGraph, index: Any, where: str) -> str:
    """The local id of the state with this index; SchemaError naming `where` otherwise."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise SchemaError(f"{where}: a state index (integer) is needed, got {index!r}")
    for local_id, props in graph.nodes("State"):
        if props.get("index") == index:
            return local_id
    raise SchemaError(f"{where}: task {graph.task_id!r} has no state {index}")


def _attach_reward(graph: TaskGraph, local_id: str, params: dict[str, Any], state: Any, where: str) -> None:
    source = state_local(graph, state, where)
    existing = occupied(graph, source, "HAS_REWARD", "Reward")
    if existing is not None:
        raise SchemaError(f"{where}: state {state} of task {graph.task_id!r} already has a reward ({existing})")
    graph.add_edge(source, local_id, "HAS_REWARD")


def _reward_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    if "value" in params:  # shorthand for a fixed reward, as in grids
        params = dict(params)
        params["values"] = [params.pop("value")]
    try:
        return reward_spec(params, where).node_props()
    except RewardSpecError as exc:
        raise SchemaError(str(exc)) from None


def _reward_params(graph: TaskGraph, local_id: str) -> dict[str, Any]:
    """A reward's parameters as it is: its specification and the index of its state."""
    params = own_params(graph, local_id)
    source = attached_to(graph, local_id, "HAS_REWARD")
    if source is not None and graph.label(source) == "State":
        params["state"] = graph.props(source).get("index")
    return params


REWARD = EntityClass(
    "Reward", "Reward", "state", _attach_reward, {"kind": "fixed"}, _reward_props,
    "A reward source paid at a state: value (fixed), or kind, values, probs, borders, sd as in task files.",
    params_of=_reward_params,
    replaces=reward_replaces(),
)


def graph_entity_classes() -> tuple[EntityClass, ...]:
    return (REWARD,)
