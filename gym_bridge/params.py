"""Checks of the parameters every environment and agent takes, with one wording for each error.

Why one module: the same parameter (a probability, a count, a flag) is checked by several
envs, the vector envs and the agents; one check keeps their messages and rules identical.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def check_probability(name: str, value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}")
    return float(value)


def check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def check_time_penalty(value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or value != value:
        raise ValueError(
            f"time_penalty: expected a non-negative number (it is subtracted from every step's reward), got {value!r}"
        )
    return float(value)


def check_episode_length(value: int | None) -> int:
    """None means no limit, stored as 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"episode_length: expected a positive integer or None, got {value!r}")
    return int(value)
