"""Handcrafted agents for Room maps: an exploration rule, a memory of what was seen with a
forgetting rule, and an answering rule (the kinds of agent the v2 paper compares against).

- `explore`: "random" (a random open side), "bfs" (walk the known map by breadth-first
  search to the nearest room never visited, else to the one visited longest ago), or
  "dijkstra" (shortest paths where entering a room costs 1 + how often it was visited, to
  the room whose staleness minus path cost is largest: it goes round rather than back).
- memory: one entry per sighting (object, room, step), at most `capacity`; when full,
  `forget` drops the entry added first ("fifo"), used longest ago ("lru"), used least
  ("lfu", ties: the oldest) or a random one ("random"). Answering with an entry uses it.
- `answer`: the room of the object's most recently added entry ("recent"), its most used
  entry ("used", ties: the most recent) or the room it was seen in most often ("frequent");
  a random room for an object with no entry.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .agents import _Certain

EXPLORE = ("random", "bfs", "dijkstra")
FORGET = ("fifo", "lru", "lfu", "random")
ANSWER = ("recent", "used", "frequent")


@dataclass(eq=False)
class HandcraftedAgent:
    """See the module docstring."""

    capacity: int = 16
    explore: str = "bfs"
    forget: str = "lru"
    answer: str = "recent"
    seed: int | None = 0
    observation: ClassVar[str] = "roommap"

    def __post_init__(self) -> None:
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 2:
            raise ValueError(f"capacity: expected an integer >= 2, got {self.capacity!r}")
        for name, value, choices in (("explore", self.explore, EXPLORE), ("forget", self.forget, FORGET),
                                     ("answer", self.answer, ANSWER)):
            if value not in choices:
                raise ValueError(f"{name}: expected one of {', '.join(choices)}, got {value!r}")
        self.rng = random.Random(self.seed)
        self.learning = True
        self.n_rooms = self.n_objects = 0
        self.begin_episode()

    @classmethod
    def from_env(cls, env: Any, seed: int | None = None, **settings: Any) -> HandcraftedAgent:
        return cls(seed=seed, **settings).bind(env)

    def bind(self, env: Any) -> HandcraftedAgent:
        compiled = env.unwrapped.compiled
        self.n_rooms, self.n_objects = compiled.n_rooms, compiled.n_objects
        return self

    def begin_episode(self) -> None:
        # entry: [object, room, added, last used, uses]
        self.entries: list[list[int]] = []
        self.exits: dict[int, list[int]] = {}
        self.last_visit: dict[int, int] = {}
        self.visits: dict[int, int] = {}
        self.t = 0

    # -- memory ----------------------------------------------------------------------------
    def _remember(self, obj: int, room: int) -> None:
        self.entries.append([obj, room, self.t, self.t, 0])
        if len(self.entries) > self.capacity:
            if self.forget == "random":
                drop = self.rng.randrange(len(self.entries))
            else:
                key = {"fifo": lambda e: (e[2],), "lru": lambda e: (e[3], e[2]), "lfu": lambda e: (e[4], e[2])}
                drop = min(range(len(self.entries)), key=lambda i: key[self.forget](self.entries[i]))
            self.entries.pop(drop)

    def _answer(self, obj: int) -> int:
        mine = [e for e in self.entries if e[0] == obj]
        if not mine:
            return self.rng.randrange(self.n_rooms)
        if self.answer == "recent":
            chosen = max(mine, key=lambda e: e[2])
        elif self.answer == "used":
            chosen = max(mine, key=lambda e: (e[4], e[2]))
        else:
            counts: dict[int, int] = {}
            for e in mine:
                counts[e[1]] = counts.get(e[1], 0) + 1
            best = max(counts.values())
            chosen = max((e for e in mine if counts[e[1]] == best), key=lambda e: e[2])
        chosen[3], chosen[4] = self.t, chosen[4] + 1
        return chosen[1]

    # -- exploration -------------------------------------------------------------------------
    def _first_steps(self, start: int, cost_of: Any) -> dict[int, tuple[float, int]]:
        """(cost, first move) of every known room reachable from `start` (Dijkstra; BFS when costs are 1)."""
        best: dict[int, tuple[float, int]] = {start: (0.0, 4)}
        queue: list[tuple[float, int, int]] = [(0.0, start, 4)]
        while queue:
            cost, room, first = heapq.heappop(queue)
            if cost > best[room][0]:
                continue
            for d, nxt in enumerate(self.exits.get(room, ())):
                if nxt >= self.n_rooms:
                    continue
                c = cost + cost_of(nxt)
                if nxt not in best or c < best[nxt][0]:
                    best[nxt] = (c, d if room == start else first)
                    if nxt in self.exits:  # only rooms whose sides are known lead further
                        heapq.heappush(queue, (c, nxt, best[nxt][1]))
        return best

    def _move(self, room: int, exits: list[int]) -> int:
        open_sides = [d for d, x in enumerate(exits) if x < self.n_rooms]
        if not open_sides:
            return 4
        if self.explore == "random":
            return self.rng.choice(open_sides)
        if self.explore == "bfs":
            reach = self._first_steps(room, lambda r: 1.0)
            unseen = [(c, r) for r, (c, _) in reach.items() if r not in self.last_visit]
            target = min(unseen)[1] if unseen else min(
                (r for r in reach if r != room), key=lambda r: (self.last_visit[r], reach[r][0]), default=room)
        else:
            reach = self._first_steps(room, lambda r: 1.0 + self.visits.get(r, 0))
            target = max((r for r in reach if r != room),
                         key=lambda r: (self.t - self.last_visit.get(r, -self.n_rooms)) - reach[r][0], default=room)
        move = reach[target][1] if target != room else 4
        return move if move in open_sides else self.rng.choice(open_sides)

    # -- the agent interface -------------------------------------------------------------------
    def act(self, state: Any, available: Any) -> np.ndarray:
        room = int(state["room"])
        exits = state["exits"].tolist()
        self.exits[room] = exits
        self.last_visit[room] = self.t
        self.visits[room] = self.visits.get(room, 0) + 1
        for o in np.flatnonzero(state["objects"][: self.n_objects]).tolist():
            self._remember(o, room)
        answers = [self._answer(q) if q < self.n_objects else 0 for q in state["questions"].tolist()]
        move = self._move(room, exits)
        self.t += 1
        return np.array(answers + [move], dtype=np.int64)

    def action_probabilities(self, state: Any, available: Any) -> Any:
        return _Certain()

    def learn(self, *step: Any) -> None:
        """Nothing to learn: the memory is filled when acting."""
