"""What every form of the likelihood shares: the shape of a task (`TaskShape`: its size and the
actions each state offers, with the check that choices fit it) and `FLOOR`, the probability a
choice the agent rules out is given.

The replayed (`likelihood`), vectorised, batched and NUTS forms all use these; this module
imports none of them. `graphtasks.fitting.likelihood` makes shapes from tasks (`task_shape`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .behaviour import BehaviourError, Choices

FLOOR = 1e-300  # a choice the agent gives probability 0 costs log(FLOOR), about -690, not -inf


@dataclass(frozen=True)
class TaskShape:
    """What a replay needs of the task: its size and the actions each state offers."""

    task_id: str
    n_states: int
    n_actions: int
    available: tuple[tuple[int, ...], ...]

    def check(self, choices: Choices, lines: Any = None) -> None:
        """BehaviourError naming the first choice the task cannot have produced (by its line of
        the events file when `lines`, one per choice, are given). Checked on the arrays at once."""
        states, actions, nexts = choices.states, choices.actions, choices.next_states
        outside = (states < 0) | (states >= self.n_states) | (nexts < 0) | (nexts >= self.n_states)
        offered = np.zeros((max(self.n_states, 1), max(self.n_actions, 1)), dtype=bool)
        for state, acts in enumerate(self.available):
            offered[state, list(acts)] = True
        inside = ~outside & (actions >= 0) & (actions < self.n_actions)
        allowed = np.zeros(len(states), dtype=bool)
        allowed[inside] = offered[states[inside], actions[inside]]
        wrong = outside | ~allowed
        if not wrong.any():
            return
        i = int(np.argmax(wrong))
        s, a, n = int(states[i]), int(actions[i]), int(nexts[i])
        where = f"{choices.source}, line {int(lines[i])}" if lines is not None else f"{choices.source}: choice {i}"
        if outside[i]:
            raise BehaviourError(
                f"{where}: state {s} -> {n} outside task {self.task_id!r} (states 0..{self.n_states - 1})"
            )
        raise BehaviourError(
            f"{where}: action {a} is not offered in state {s} of {self.task_id!r} "
            f"(offered: {list(self.available[s])})"
        )


def env_sizes(env: Any) -> tuple[int, int]:
    """(states, actions) of a graphtasks environment of any family."""
    base: Any = env.unwrapped
    return int(getattr(base, "n_states", 0) or base.compiled.n_states), int(base.action_space.n)
