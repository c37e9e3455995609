"""A simple agent for Room maps: it explores at random and answers from what it has seen.

`explorer` (observation "roommap"): each step it remembers the room of every object it sees
(the most recent sighting wins; at most `capacity` objects, the oldest sighting forgotten
first), answers each question with the remembered room (a room drawn at random for an object
it has not seen) and moves through a random open side of its room (stays if there is none).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np


class _Certain:
    """The probability of the action just taken: the agent records no policy over answer sets."""

    def __getitem__(self, action: Any) -> float:
        return 1.0


@dataclass(eq=False)
class ExplorerAgent:
    """Random exploration, answers from the most recent sighting (see the module docstring)."""

    capacity: int = 64
    seed: int | None = 0
    observation: ClassVar[str] = "roommap"

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 2:
            raise ValueError(f"capacity: expected an integer >= 2, got {self.capacity!r}")
        self.rng = random.Random(self.seed)
        self.learning = True
        self.memory: OrderedDict[int, int] = OrderedDict()
        self.n_rooms = 0
        self.n_objects = 0

    @classmethod
    def from_env(cls, env: Any, seed: int | None = None, **settings: Any) -> ExplorerAgent:
        return cls(seed=seed, **settings).bind(env)

    def bind(self, env: Any) -> ExplorerAgent:
        compiled = env.unwrapped.compiled
        self.n_rooms, self.n_objects = compiled.n_rooms, compiled.n_objects
        return self

    def begin_episode(self) -> None:
        self.memory.clear()

    def act(self, state: Any, available: Any) -> np.ndarray:
        room = int(state["room"])
        for o in np.flatnonzero(state["objects"][: self.n_objects]).tolist():
            self.memory.pop(o, None)
            self.memory[o] = room
            if len(self.memory) > self.capacity:
                self.memory.popitem(last=False)
        answers = [self.memory.get(q, -1) if q < self.n_objects else 0 for q in state["questions"].tolist()]
        answers = [a if a >= 0 else self.rng.randrange(self.n_rooms) for a in answers]
        open_sides = [d for d, x in enumerate(state["exits"].tolist()) if x < self.n_rooms]
        move = self.rng.choice(open_sides) if open_sides else 4
        return np.array(answers + [move], dtype=np.int64)

    def action_probabilities(self, state: Any, available: Any) -> Any:
        return _Certain()

    def learn(self, *step: Any) -> None:
        """Nothing to learn: the memory is filled when acting."""
