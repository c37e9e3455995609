"""Seeded trial schedules: the block structure of an experiment as a list of condition names.

A schedule specification (stored on the Task node) is
`{"blocks": [{"counts": {condition: n, ...}, "no_repeat": [condition, ...]}, ...], "repeat": k}`:
each block holds exactly `counts` trials in a random order in which no condition listed in
`no_repeat` occurs twice in a row; the block list is played `repeat` times in order.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

MAX_TRIES = 100_000


class ScheduleError(ValueError):
    """A schedule specification is invalid or cannot be satisfied."""


def validate_schedule(spec: Mapping[str, Any], conditions: set[str], where: str = "schedule") -> None:
    blocks = spec.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        raise ScheduleError(f"{where}: 'blocks' must be a non-empty list")
    repeat = spec.get("repeat", 1)
    if not isinstance(repeat, int) or repeat < 1:
        raise ScheduleError(f"{where}: 'repeat' must be a positive integer, got {repeat!r}")
    for i, block in enumerate(blocks):
        counts = block.get("counts") if isinstance(block, Mapping) else None
        if not isinstance(counts, Mapping) or not counts:
            raise ScheduleError(f"{where}, block {i}: 'counts' must map condition names to trial counts")
        for name, n in list(counts.items()) + [(c, 1) for c in block.get("no_repeat", [])]:
            if name not in conditions:
                raise ScheduleError(
                    f"{where}, block {i}: unknown condition {name!r} (known: {', '.join(sorted(conditions))})"
                )
            if not isinstance(n, int) or n < 0:
                raise ScheduleError(f"{where}, block {i}: count of {name!r} must be a non-negative integer")


def _block_order(counts: Mapping[str, int], no_repeat: set[str], rng: np.random.Generator) -> list[str]:
    trials = [name for name, n in counts.items() for _ in range(n)]
    for _ in range(MAX_TRIES):
        order = [trials[i] for i in rng.permutation(len(trials))]
        if not any(a == b and a in no_repeat for a, b in zip(order, order[1:])):
            return order
    raise ScheduleError(f"no order of {dict(counts)} avoids repeating {sorted(no_repeat)}")


def trial_schedule(spec: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    """The condition name of every trial, drawn from `rng`."""
    out: list[str] = []
    for _ in range(spec.get("repeat", 1)):
        for block in spec["blocks"]:
            out.extend(_block_order(block["counts"], set(block.get("no_repeat", ())), rng))
    return out


def block_lengths(spec: Mapping[str, Any]) -> list[int]:
    return [sum(b["counts"].values()) for b in spec["blocks"]] * spec.get("repeat", 1)
