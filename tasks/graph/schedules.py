"""Seeded trial schedules: the block structure of an experiment as a list of condition names.

A schedule specification (stored on the Task node) is
`{"blocks": [{"counts": {condition: n, ...}, "no_repeat": [...], "one_of": [...], "apart": [...]}, ...],
"repeat": k}`. Each block holds the `counts` trials plus, for each list in `one_of`, one trial
whose condition is drawn uniformly from that list (rewardGym's blocks end with such draws),
in a random order in which no condition listed in `no_repeat` occurs twice in a row and no
two neighbouring trials both belong to one group of `apart`. The block list is played
`repeat` times in order. Orders are drawn by rejection, as rewardGym draws them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from graphstore.errors import GraphtasksError

MAX_TRIES = 100_000


class ScheduleError(GraphtasksError, ValueError):
    """A schedule specification is invalid or cannot be satisfied."""


def _name_lists(block: Mapping[str, Any], key: str, where: str) -> list[list[str]]:
    lists = block.get(key, [])
    if not isinstance(lists, list) or not all(isinstance(g, list) and g for g in lists):
        raise ScheduleError(f"{where}: '{key}' must be a list of non-empty lists of condition names")
    return lists


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
        here = f"{where}, block {i}"
        named = [c for key in ("one_of", "apart") for group in _name_lists(block, key, here) for c in group]
        for name, n in list(counts.items()) + [(c, 1) for c in block.get("no_repeat", []) + named]:
            if name not in conditions:
                raise ScheduleError(
                    f"{here}: unknown condition {name!r} (known: {', '.join(sorted(conditions))})"
                )
            if not isinstance(n, int) or n < 0:
                raise ScheduleError(f"{here}: count of {name!r} must be a non-negative integer")


def _acceptable(order: Sequence[str], groups: list[set[str]]) -> bool:
    return not any(a in g and b in g for a, b in pairwise(order) for g in groups)


def _block_order(block: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    trials = [name for name, n in block["counts"].items() for _ in range(n)]
    trials += [str(options[rng.integers(len(options))]) for options in block.get("one_of", ())]
    groups = [{name} for name in block.get("no_repeat", ())] + [set(g) for g in block.get("apart", ())]
    for _ in range(MAX_TRIES):
        order = [trials[i] for i in rng.permutation(len(trials))]
        if _acceptable(order, groups):
            return order
    raise ScheduleError(f"no order of {dict(block['counts'])} keeps {[sorted(g) for g in groups]} apart")


def trial_schedule(spec: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    """The condition name of every trial, drawn from `rng`."""
    out: list[str] = []
    for _ in range(spec.get("repeat", 1)):
        for block in spec["blocks"]:
            out.extend(_block_order(block, rng))
    return out


def block_lengths(spec: Mapping[str, Any]) -> list[int]:
    return [sum(b["counts"].values()) + len(b.get("one_of", ())) for b in spec["blocks"]] * spec.get("repeat", 1)
