"""The four handcrafted memory agents of "A Machine With Human-Like Memory Systems" (Kim et
al. 2022) for RoomEnv, written for the index-encoded observations of `RoomEnv`.

- episodic: episodic memory only; forget the oldest, answer with the latest memory of the
  asked (person, object).
- semantic: semantic memory only; an observation becomes (object, location) with strength
  1 (merged into an existing entry by adding strengths); forget the weakest, answer with
  the strongest location of the asked object.
- episodic_semantic: half the capacity each; when the episodic memory is full, one memory
  whose (object, location) is the most frequent among the episodic memories moves into the
  semantic memory (then the weakest semantic memory is forgotten if that is full); answer
  from episodic memory when it knows the (person, object), else from semantic memory.
- episodic_semantic_pretrain: half the capacity each; semantic memory pre-filled with the
  strongest stored ConceptNet location of each object (frozen), its unused space given to
  episodic memory; forget the oldest episodic memory; answer as above.
A memory system is cleared of one entry *before* answering whenever it is full, as in the
paper's code, so a full memory answers with capacity - 1 entries. Ties (forget weakest,
answer strongest, which memory to compress) are broken with the agent's seeded generator.
With several agents in the room each has its own memories; the answer comes from the
agent with the latest (episodic) or strongest (semantic) memory.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

from .env import RoomEnv

KINDS = ("episodic", "semantic", "episodic_semantic", "episodic_semantic_pretrain")
PAPER = {  # published mean total reward over seeds 0-4, small room, one agent
    "episodic": {4: 239.6, 8: 399.8, 16: 459.0, 32: 489.4},
    "semantic": {4: 137.4, 8: 312.6, 16: 501.4, 32: 541.0},
    "episodic_semantic": {4: 123.8, 8: 298.4, 16: 483.6, 32: 597.0},
    "episodic_semantic_pretrain": {4: 194.6, 8: 412.2, 16: 625.4, 32: 692.2},
}


class Episodic:
    """(person, object, location) -> latest time seen; at most `capacity` entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: dict[tuple[int, int, int], int] = {}

    @property
    def full(self) -> bool:
        return len(self.entries) >= self.capacity

    def add(self, person: int, obj: int, loc: int, t: int) -> None:
        key = (person, obj, loc)
        self.entries.pop(key, None)  # the same memory again keeps only its latest time
        self.entries[key] = t

    def forget_oldest(self) -> None:
        if self.entries:
            del self.entries[min(self.entries, key=self.entries.__getitem__)]

    def latest(self, person: int, obj: int) -> tuple[int, int] | None:
        """(location, time) of the latest memory of this person's object."""
        best = None
        for (p, o, loc), t in self.entries.items():
            if p == person and o == obj and (best is None or t > best[1]):
                best = (loc, t)
        return best


class Semantic:
    """(object, location) -> strength (number of generalised memories)."""

    def __init__(self, capacity: int, rng: random.Random) -> None:
        self.capacity = capacity
        self.entries: dict[tuple[int, int], int] = {}
        self.rng = rng
        self.frozen = False

    @property
    def full(self) -> bool:
        return len(self.entries) >= self.capacity

    def add(self, obj: int, loc: int, strength: int = 1) -> None:
        if self.capacity <= 0 or self.frozen:
            return
        key = (obj, loc)
        self.entries[key] = self.entries.get(key, 0) + strength

    def forget_weakest(self) -> None:
        if self.entries:
            low = min(self.entries.values())
            weakest = [k for k, v in self.entries.items() if v == low]
            del self.entries[self.rng.choice(weakest)]

    def strongest(self, obj: int) -> tuple[int, int] | None:
        """(location, strength) of the strongest memory of this object (ties: random)."""
        cands = [(loc, s) for (o, loc), s in self.entries.items() if o == obj]
        if not cands:
            return None
        high = max(s for _, s in cands)
        return self.rng.choice([c for c in cands if c[1] == high])


@dataclass(eq=False)
class MemoryAgent:
    """One handcrafted agent (kind from KINDS) with total memory `capacity` per room agent.

    An agent of the episode loop (`gym_bridge.episodes.play`) with the Room view: `act` takes
    the env's whole observation (what each agent sees, the question), stores what it sees,
    makes room and answers. Memories are emptied at each episode's start; the tie-breaking
    stream is seeded once, when the agent is made.
    """

    kind: str
    capacity: int = 32
    seed: int | None = 0
    observation: ClassVar[str] = "room"  # it reads RoomEnv's observation, not a state index

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {self.kind!r}")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int) or self.capacity < 2:
            raise ValueError(f"capacity: expected an integer >= 2, got {self.capacity!r}")
        self.rng = random.Random(self.seed)
        self.env: RoomEnv | None = None
        self.learning = True
        self._answer = 0

    def bind(self, env: Any) -> MemoryAgent:
        """Play in `env` (a RoomEnv, or a wrapper of one): its names, objects and knowledge."""
        self.env = env.unwrapped
        return self

    # -- the agent interface of the episode loop ---------------------------------------------
    def begin_episode(self) -> None:
        if self.env is None:
            raise ValueError("bind the memory agent to a RoomEnv first (agent.bind(env))")
        self._memories(self.env)

    def act(self, state: Any, available: Any) -> int:
        """Store what the agents see now, make room, answer the question."""
        env = self.env
        assert env is not None
        seen, question = state
        self._observe(env, seen)
        self._make_room()
        self._answer = self.answer(env, question)
        return self._answer

    def action_probabilities(self, state: Any, available: Any) -> Any:
        """The answer just given, with certainty (the agent answers deterministically; ties were
        broken by its stream when it chose)."""
        import numpy as np

        assert self.env is not None
        p = np.zeros(self.env.action_space.n)
        p[self._answer] = 1.0
        return p

    def learn(self, *step: Any) -> None:
        """Nothing to learn between steps: the memories are filled when acting."""

    def _memories(self, env: RoomEnv) -> None:
        n = env.num_agents
        half = self.capacity // 2
        if self.kind == "episodic":
            self.epi = [Episodic(self.capacity) for _ in range(n)]
            self.sem = [Semantic(0, self.rng) for _ in range(n)]
        elif self.kind == "semantic":
            self.epi = [Episodic(0) for _ in range(n)]
            self.sem = [Semantic(self.capacity, self.rng) for _ in range(n)]
        else:
            self.epi = [Episodic(self.capacity - half) for _ in range(n)]
            self.sem = [Semantic(half, self.rng) for _ in range(n)]
        if self.kind == "episodic_semantic_pretrain":
            heads = {h: i for i, h in enumerate(env.heads)}
            tails = {t: i for i, t in enumerate(env.tails)}
            for e, s in zip(self.epi, self.sem):
                for head, tail in env.knowledge.top():
                    if s.full:
                        break
                    s.add(heads[head], tails[tail])
                s.frozen = True
                e.capacity += s.capacity - len(s.entries)  # unused semantic space goes to episodic

    def _observe(self, env: RoomEnv, seen: Iterable[tuple[int, int, int, int]]) -> None:
        nh, nt = len(env.heads), len(env.tails)
        for i, (h, _, t, time) in enumerate(seen):
            person, obj = divmod(h, nh)
            loc = t % nt
            if self.kind == "semantic":
                self.sem[i].add(obj, loc)
            else:
                self.epi[i].add(person, obj, loc, time)

    def _make_room(self) -> None:
        for e, s in zip(self.epi, self.sem):
            if self.kind == "semantic":
                if s.full:
                    s.forget_weakest()
            elif self.kind == "episodic_semantic":
                if e.full:
                    self._compress(e, s)
                    if s.full:
                        s.forget_weakest()
            elif e.full:
                e.forget_oldest()

    def _compress(self, e: Episodic, s: Semantic) -> None:
        """Move one episodic memory of the most frequent (object, location) into semantic memory."""
        counts: dict[tuple[int, int], int] = {}
        for (_, o, loc) in e.entries:
            counts[(o, loc)] = counts.get((o, loc), 0) + 1
        high = max(counts.values())
        cands = [key for key in e.entries if counts[(key[1], key[2])] == high]
        person, obj, loc = self.rng.choice(cands)
        del e.entries[(person, obj, loc)]
        s.add(obj, loc)

    def answer(self, env: RoomEnv, question: tuple[int, int]) -> int:
        """A location index, or env.no_answer when no memory knows."""
        person, obj = divmod(question[0], len(env.heads))
        latest, strongest = None, None
        for e, s in zip(self.epi, self.sem):
            hit = e.latest(person, obj) if self.kind != "semantic" else None
            if hit is not None:
                if latest is None or hit[1] > latest[1]:
                    latest = hit
            elif self.kind != "episodic":
                got = s.strongest(obj)
                if got is not None and (strongest is None or got[1] > strongest[1]):
                    strongest = got
        if latest is not None:
            return latest[0]
        if strongest is not None:
            return strongest[0]
        return env.no_answer

    def run_episode(self, env: RoomEnv, seed: int | None = None) -> float:
        """Total reward of one episode, played by the episode loop with the env reset with `seed`
        (default the agent's seed: the paper's code seeds the room with the run's own seed)."""
        from ..episodes import play
        from .family import MEMORY

        self.bind(env)
        (episode,) = play(env, self, 1, self.seed if seed is None else seed, view=MEMORY)
        return episode.reward


def memory_agent(name: str) -> type[MemoryAgent]:
    """The agent class of one kind, as the agent registry lists it (`capacity` and `seed` its settings)."""

    @dataclass(eq=False)
    class Kind(MemoryAgent):
        kind: str = field(default=name, init=False)

        @classmethod
        def from_env(cls, env: Any, seed: int | None = None, **settings: Any) -> MemoryAgent:
            return cls(seed=seed, **settings).bind(env)

    Kind.__name__ = Kind.__qualname__ = "".join(part.capitalize() for part in name.split("_")) + "Agent"
    Kind.__doc__ = f"The {name.replace('_', ' + ')} memory agent of Kim et al. (2022); see `MemoryAgent`."
    return Kind


MEMORY_AGENTS: dict[str, type[MemoryAgent]] = {kind: memory_agent(kind) for kind in KINDS}


def baseline_table(
    env_factory: Any, capacities: Iterable[int] = (4, 8, 16, 32), seeds: Iterable[int] = range(5),
    kinds: Iterable[str] = KINDS,
) -> dict[str, dict[int, float]]:
    """Mean total reward per (agent kind, capacity) over `seeds`; `env_factory()` makes an env."""
    env = env_factory()
    seeds = list(seeds)
    table: dict[str, dict[int, float]] = {}
    for kind in kinds:
        table[kind] = {}
        for cap in capacities:
            scores = [MemoryAgent(kind, cap, seed).run_episode(env) for seed in seeds]
            table[kind][cap] = sum(scores) / len(scores)
    return table
