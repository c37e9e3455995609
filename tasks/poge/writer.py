"""Write a world back to the file format.

The output is canonical (one blank line between blocks, declarations in the order they were
declared, probabilities as Python's shortest float text), so `parse_world(write_world(w)) == w`
for every world and `write_world(parse_world(t)) == t` for every canonical text `t`.
Comments and overridden rule lines of a hand-written file are not kept.
"""

from __future__ import annotations

from .world import ACTIONS, PogeWorld


def write_world(world: PogeWorld) -> str:
    """The text of a world file."""
    blocks: list[str] = ["===Layout===", "\n".join(world.layout)]
    if world.abstraction is not None:
        blocks += ["===Abstraction===", "\n".join(world.abstraction)]
        if world.names:
            blocks.append("\n".join(f"{sym}:{name}" for sym, name in world.names))
    if world.behaviour is not None:
        blocks += ["===Behaviour===", "\n".join(world.behaviour)]
        if world.rules:
            blocks.append("\n".join(format_rule(rid, a, outcomes) for rid, a, outcomes in world.rules))
    if world.rewards is not None:
        blocks += ["===Rewards===", "\n".join(world.rewards)]
        if world.reward_values:
            blocks.append("\n".join(f"{sym}:{value}" for sym, value in world.reward_values))
    return "\n\n".join(blocks) + "\n"


def format_rule(rule_id: str, action: int, outcomes) -> str:
    """`1-up-[up:0.75, right:0.25]`."""
    body = ", ".join(f"{ACTIONS[e]}:{p!r}" for e, p in outcomes)
    return f"{rule_id}-{ACTIONS[action]}-[{body}]"
