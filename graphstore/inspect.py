"""A summary of one task for people: what `graphtasks tasks show ID` prints."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from .taskgraph import TASK_LOCAL_ID, TaskGraph


def summarise(graph: TaskGraph) -> dict[str, Any]:
    """States, actions, rewards, terminal states, stochastic edges and what the start reaches.

    Works on any TaskGraph, including hand-written ones that would not compile, so a
    person can see what is there before fixing what is missing.
    """
    states = {local_id: props for local_id, props in graph.nodes("State")}
    name = {local_id: f"{props.get('index')}:{props.get('name', local_id)}" for local_id, props in states.items()}
    moves: dict[tuple[str, int | None], list[tuple[str, float | None]]] = defaultdict(list)
    for source, target, props in graph.edges("MOVE"):
        moves[(source, props.get("action"))].append((target, props.get("p")))
    actions = sorted({a for _, a in moves if a is not None})
    starts = [target for source, target, _ in graph.edges("START") if source == TASK_LOCAL_ID]
    rewards = []
    for source, target, _ in graph.edges("HAS_REWARD"):
        reward = graph.props(target)
        rewards.append({"state": name.get(source, source), "kind": reward.get("kind"), "values": reward.get("values"),
                        "probs": reward.get("probs")})
    rewards.sort(key=lambda r: str(r["state"]))
    with_moves = {source for source, _ in moves}
    terminal = sorted((s for s in states if s not in with_moves or states[s].get("terminal")), key=_order(states))
    stochastic = [
        {
            "state": name.get(s, s),
            "action": a,
            "outcomes": [(name.get(t, t), p) for t, p in sorted(outs, key=lambda o: str(o[0]))],
        }
        for (s, a), outs in sorted(moves.items(), key=lambda kv: (_order(states)(kv[0][0]), kv[0][1]))
        if len(outs) > 1
    ]
    reachable: set[str] = set()
    queue = deque(starts)
    successors: dict[str, set[str]] = defaultdict(set)
    for (s, _), outs in moves.items():
        successors[s].update(t for t, p in outs if p)
    while queue:
        s = queue.popleft()
        if s in reachable:
            continue
        reachable.add(s)
        queue.extend(successors[s] - reachable)
    return {
        "task": graph.task_id,
        "family": graph.family,
        "name": graph.task.get("name"),
        "description": graph.task.get("description"),
        "reward_on": graph.task.get("reward_on"),
        "content_hash": graph.task.get("content_hash") or graph.content_hash(),
        "states": len(states),
        "actions": actions,
        "move_edges": sum(len(v) for v in moves.values()),
        "start": [name.get(s, s) for s in starts],
        "terminal": [name[s] for s in terminal],
        "rewards": rewards,
        "stochastic": stochastic,
        "conditions": sorted(props.get("name") for _, props in graph.nodes("Condition")),
        "reachable_from_start": len(reachable),
        "unreachable": sorted((name[s] for s in states if s not in reachable), key=str),
    }


def _order(states: dict[str, dict[str, Any]]):
    return lambda local_id: (states.get(local_id, {}).get("index", 1 << 30), local_id)


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as indented text."""
    lines = [f"task        {summary['task']}  ({summary['family']})"]
    if summary.get("description"):
        lines.append(f"            {summary['description']}")
    lines += [
        f"hash        {summary['content_hash']}",
        f"states      {summary['states']}   MOVE edges {summary['move_edges']}   reward on {summary['reward_on']}",
        f"actions     {', '.join(map(str, summary['actions'])) or '(none)'}",
        f"start       {', '.join(summary['start']) or '(none: add a START edge from the Task node)'}",
        f"terminal    {', '.join(summary['terminal']) or '(none)'}",
        f"reachable   {summary['reachable_from_start']} of {summary['states']} states from the start",
    ]
    if summary["unreachable"]:
        lines.append(f"unreachable {', '.join(summary['unreachable'])}")
    lines.append(f"rewards     {len(summary['rewards'])}")
    for r in summary["rewards"]:
        probs = f" p={r['probs']}" if r.get("probs") else ""
        lines.append(f"  {r['state']:<20} {r['kind']:<13} {r['values']}{probs}")
    lines.append(f"stochastic  {len(summary['stochastic'])} (state, action) pairs with several outcomes")
    for item in summary["stochastic"]:
        outs = ", ".join(f"{t} p={p:g}" for t, p in item["outcomes"])
        lines.append(f"  {item['state']:<20} action {item['action']}: {outs}")
    if summary["conditions"]:
        lines.append(f"conditions  {', '.join(summary['conditions'])}")
    return "\n".join(lines)
