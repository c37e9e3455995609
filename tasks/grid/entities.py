"""The grid family's entity classes: rewards, keys, doors, warps and markers on cells."""

from __future__ import annotations

from typing import Any

from graphstore import SchemaError, TaskGraph

from ..entity_classes import Attach, EntityClass, ParamsOf, attached_to, occupied, own_params, reward_replaces


def cell_local(graph: TaskGraph, cell: Any, where: str) -> str:
    """The local id of the free cell [row, col]; SchemaError naming `where` otherwise."""
    if (
        not isinstance(cell, (list, tuple)) or len(cell) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in cell)
    ):
        raise SchemaError(f"{where}: a cell [row, col] is needed, got {cell!r}")
    row, col = cell
    for local_id, props in graph.nodes("Cell"):
        if props.get("row") == row and props.get("col") == col:
            if props.get("wall"):
                raise SchemaError(f"{where}: cell ({row}, {col}) of task {graph.task_id!r} is a wall")
            return local_id
    raise SchemaError(f"{where}: task {graph.task_id!r} has no cell ({row}, {col})")


def _attach(rel: str) -> Attach:
    def attach(graph: TaskGraph, local_id: str, params: dict[str, Any], cell: Any, where: str) -> None:
        source = cell_local(graph, cell, where)
        label = graph.label(local_id)
        existing = occupied(graph, source, rel, label)
        if existing is not None:
            raise SchemaError(
                f"{where}: cell {tuple(cell)} of task {graph.task_id!r} already holds a {label} ({existing})"
            )
        graph.add_edge(source, local_id, rel)
        if label == "Warp":
            graph.add_edge(local_id, cell_local(graph, params.get("_to"), f"{where}: to"), "WARPS_TO")

    return attach


def _cell_of(graph: TaskGraph, local_id: str | None) -> list[int] | None:
    if local_id is None or graph.label(local_id) != "Cell":
        return None
    props = graph.props(local_id)
    return [props["row"], props["col"]]


def _params_of(rel: str) -> ParamsOf:
    """An object's parameters as it is: its properties, its cell and (a warp) the cell it leads to."""

    def params_of(graph: TaskGraph, local_id: str) -> dict[str, Any]:
        params = own_params(graph, local_id)
        cell = _cell_of(graph, attached_to(graph, local_id, rel))
        if cell is not None:
            params["cell"] = cell
        if graph.label(local_id) == "Warp":
            to = [t for _, t, d in graph.graph.out_edges(local_id, data=True) if d["rel"] == "WARPS_TO"]
            target = _cell_of(graph, to[0]) if to else None
            if target is not None:
                params["to"] = target
        return params

    return params_of


def _reward_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    value = params.pop("value", None if "values" in params else 1.0)
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SchemaError(f"{where}: 'value' must be a number, got {value!r}")
        params["values"] = [float(value)]
    return {"kind": "fixed", **params}


def _warp_props(params: dict[str, Any], where: str) -> dict[str, Any]:
    if "to" not in params:
        raise SchemaError(f"{where}: a Warp needs 'to': the [row, col] it takes the agent to")
    return {"_to": params.pop("to"), **params}


def grid_entity_classes() -> tuple[EntityClass, ...]:
    has_object, on_cell = _attach("HAS_OBJECT"), _params_of("HAS_OBJECT")
    return (
        EntityClass("Reward", "Reward", "cell", _attach("HAS_REWARD"), {"visible": True},
                    _reward_props, "A reward lying on a cell (value, visible, terminate).",
                    params_of=_params_of("HAS_REWARD"),
                    replaces=reward_replaces()),
        EntityClass("Key", "Key", "cell", has_object, {}, None, "A key lying on a cell.", params_of=on_cell),
        EntityClass("Door", "Door", "cell", has_object, {"orientation": "h"}, None, "A locked door on a cell.",
                    params_of=on_cell),
        EntityClass("Warp", "Warp", "cell", has_object, {}, _warp_props, "A warp on a cell to the cell `to`.",
                    params_of=on_cell),
        EntityClass("Marker", "Marker", "cell", has_object, {"color": [255, 0, 0]}, None, "A coloured cell.",
                    params_of=on_cell),
    )
