"""RoomEnv: the Room memory task (RoomEnv-v0 semantics, room-env 0.1.5) on stored triples.

People each hold one object placed at a location; the agent sees one placement per step
and is asked where one object is. Semantics (see docs/room.md):
- reset: names and objects are shuffled; person k gets object k; its location is the
  commonsense one with probability p_commonsense ('highest': strongest tail; 'weighted':
  drawn by weight), else a random non-commonsense location. Each agent walks its own
  shuffled cycle over the room's slots.
- every step: reward 1 if the answer is the asked object's location, else 0; then each
  person, with p_new_object, takes another object (and places it anew), else with
  p_new_location moves the object to a different location; then with p_switch_person
  two slots swap. Then the next observations and a new question (uniform slot).
- the episode ends (terminated) after max_episode_steps steps: one question per step.

Fixed reference bug: room-env 0.1.5's non-commonsense draw never excludes the commonsense
locations (it compares a string with a list of dicts). Here it does; pass
`reference_noncommonsense=True` for the reference behaviour (the paper's figures).

Encoding: observation = (one (head, relation, tail, time) per agent, question (head,
relation)); head = name * n_objects + object ("James's laptop"), tail = name *
n_locations + location ("James's desk"). Action = location index; the extra last action
means "no answer" (always wrong). The texts come through `info` and `decode_*`.

Knowledge: the locations come from the store's AtLocation assertions (`load_room`); a store
with none gets the bundled ConceptNet snapshot on first use, said on one line on stderr
(`load_knowledge=False`: RoomKnowledgeError instead).

Speed: knowledge is read from the store once; `step` never touches it. The Bernoulli
events of a block of steps are drawn with one numpy call and turned into per-step event
lists; the remaining draws come from block-drawn uniforms (`RandomStream`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from graphstore.providers import UnknownKnowledgeProvider, knowledge_provider, provide
from tasks import RandomStream
from tasks.room import KNOWLEDGE_PROVIDER, RELATION, RoomKnowledge, RoomKnowledgeError, room_knowledge

from ..loading import load_task_graph, read_else_write
from ..params import (
    NOT_GIVEN,
    RenderModes,
    check_bool,
    check_choice,
    check_positive_int,
    check_probability,
    check_render_mode,
    check_store,
    check_type,
    episode_steps,
    named,
)

BLOCK = 4096  # steps of random events drawn at once (drawn again only when used up or reseeded)


def load_room(task: str | TaskGraph, store: GraphStore | str | None, allow_spaces: bool,
              disjoint_entities: bool, load_knowledge: bool = True) -> tuple[TaskGraph, RoomKnowledge]:
    """The task graph (put into the store first if it is a missing built-in), then its knowledge.

    The knowledge is read in a read-only session. A store with no AtLocation assertion at all
    first gets the bundled ConceptNet snapshot from the knowledge provider, as a writer, said
    on one line on stderr (once: a writer that finds it loaded meanwhile adds nothing);
    `load_knowledge=False` leaves the store as it is and raises RoomKnowledgeError instead.
    """
    graph = load_task_graph(task, store)
    if graph.family != "room":
        raise ValueError(f"task: {graph.task_id!r} is a {graph.family!r} task, not a Room task")

    def read(s: GraphStore) -> RoomKnowledge | None:
        try:
            return room_knowledge(s, graph, allow_spaces, disjoint_entities)
        except RoomKnowledgeError:
            if load_knowledge and knowledge_missing(s):
                return None  # load it as a writer
            raise  # opted out, or the store has AtLocation knowledge, but none for these objects

    def write(s: GraphStore) -> RoomKnowledge:
        provide(s, KNOWLEDGE_PROVIDER)  # looks again under the writer's lock
        return room_knowledge(s, graph, allow_spaces, disjoint_entities)

    return graph, read_else_write(store, read, write, may_create=True)


def knowledge_missing(store: GraphStore) -> bool:
    """The store has none of the provider's knowledge (False when no provider is installed: nothing to load)."""
    try:
        provider = knowledge_provider(KNOWLEDGE_PROVIDER)
    except UnknownKnowledgeProvider:
        return False
    return not provider.present(store)


MAX_AGENTS = 1_000  # num_agents: a documented limit (docs/room.md), refused before anything is allocated


class RoomEnv(gym.Env):
    """The Room memory task; see the module docstring.

    RoomEnv-v0 (room-env 0.1.5) with its people, objects and locations read from the store's
    ConceptNet AtLocation assertions instead of a bundled JSON file, and its non-commonsense
    draw fixed (`reference_noncommonsense` restores it).

    Parameters
    ----------
    room_size : {"small", "big"}, optional
        The built-in task ``room/<room_size>``, used when `task` is None.
    store : GraphStore or str, optional
        An open store or its location; None: the default store. A store with no AtLocation
        assertion gets the bundled ConceptNet snapshot first (unless `load_knowledge` is False).
    task : str or TaskGraph, optional
        A Room task, by id or as a graph, instead of the built-in of `room_size`.
    weighting_mode : {"highest", "weighted"}, optional
        An object's commonsense location: its strongest one, or one drawn by weight.
    p_commonsense : float, optional
        The probability that an object is placed at a commonsense location.
    p_new_location : float, optional
        Per step and person, the probability of moving the object to a different location.
    p_new_object : float, optional
        Per step and person, the probability of taking another object.
    p_switch_person : float, optional
        Per step, the probability that two slots (person and object) swap.
    max_episode_steps : int, optional
        The episode's number of steps (one question each; default 1000). The one name of an
        episode's length in every family (docs/limits.md); `max_step`, its old name, still
        works with a FutureWarning.
    max_step : int, optional
        Deprecated: the old name of `max_episode_steps` (a FutureWarning says so).
    num_agents : int, optional
        The number of agents each observing one placement per step (at most 1,000).
    disjoint_entities : bool, optional
        Keep the names, objects and locations disjoint sets of terms.
    allow_spaces : bool, optional
        Keep multi-word terms (ConceptNet's ``_``), which are dropped by default.
    reference_noncommonsense : bool, optional
        The reference's non-commonsense draw, which may pick a commonsense location (for
        the paper's figures).
    text_info : bool, optional
        Put the observations and question as text in `info`.
    render_mode : {"ansi"}, optional
        As gymnasium's ``render_mode``; None renders nothing.
    knowledge : RoomKnowledge, optional
        Knowledge read beforehand (an experiment's driver reads it once for its workers);
        the store is then not read.
    load_knowledge : bool, optional
        False: a store without AtLocation knowledge is a RoomKnowledgeError instead of
        getting the bundled snapshot.

    Raises
    ------
    ValueError
        A setting out of range or of the wrong type, naming it, or a task that is not a Room task.
    RoomKnowledgeError
        The store has too little AtLocation knowledge for the room.

    Examples
    --------
    The people, objects and locations come from ConceptNet assertions in the store.

    >>> from graphstore import open_store
    >>> from ingest.conceptnet_snapshot import ingest_snapshot
    >>> from gym_bridge.room import RoomEnv
    >>> with open_store(":memory:") as store:
    ...     _ = ingest_snapshot(store)  # the bundled 740 AtLocation assertions
    ...     env = RoomEnv("small", store=store)
    >>> (observations, question), info = env.reset(seed=0)
    >>> info["question_text"], env.action_space
    (("Jennifer's cat", 'AtLocation'), Discrete(11))
    """

    metadata = {"render_modes": RenderModes(["ansi"]), "render_fps": 4}
    action_space: spaces.Discrete

    def __init__(
        self,
        room_size: str = "small",
        store: GraphStore | str | None = None,
        task: str | TaskGraph | None = None,
        weighting_mode: str = "highest",
        p_commonsense: float = 0.7,
        p_new_location: float = 0.1,
        p_new_object: float = 0.1,
        p_switch_person: float = 0.5,
        max_episode_steps: int = 1000,
        num_agents: int = 1,
        disjoint_entities: bool = True,
        allow_spaces: bool = False,
        reference_noncommonsense: bool = False,
        text_info: bool = True,
        render_mode: str | None = None,
        knowledge: RoomKnowledge | None = None,
        load_knowledge: bool = True,
        max_step: Any = NOT_GIVEN,
    ) -> None:
        check_choice("room_size", room_size, ("small", "big"))
        check_store(store)
        check_type("task", task, (str, TaskGraph, type(None)), "a Room task id, a TaskGraph or None")
        check_type("knowledge", knowledge, (RoomKnowledge, type(None)), "a RoomKnowledge or None")
        check_choice("weighting_mode", weighting_mode, ("highest", "weighted"))
        check_render_mode(render_mode, self.metadata["render_modes"])
        disjoint_entities = check_bool("disjoint_entities", disjoint_entities)
        allow_spaces = check_bool("allow_spaces", allow_spaces)
        load_knowledge = check_bool("load_knowledge", load_knowledge)
        self.p_commonsense = check_probability("p_commonsense", p_commonsense)
        self.p_new_location = check_probability("p_new_location", p_new_location)
        self.p_new_object = check_probability("p_new_object", p_new_object)
        self.p_switch_person = check_probability("p_switch_person", p_switch_person)
        self.max_step = check_positive_int("max_episode_steps" if max_step is NOT_GIVEN else "max_step",
                                           episode_steps(max_episode_steps, max_step, "max_step", 1000))
        self.num_agents = check_positive_int("num_agents", num_agents)
        if self.num_agents > MAX_AGENTS:  # each agent is a triple of the observation, each step
            raise ValueError(f"num_agents: expected at most {MAX_AGENTS:,}, got {self.num_agents:,}")
        self.weighting_mode = weighting_mode
        self._highest = weighting_mode == "highest"
        self.reference_noncommonsense = check_bool("reference_noncommonsense", reference_noncommonsense)
        self.text_info = check_bool("text_info", text_info)
        self.render_mode = render_mode
        if knowledge is None:
            with named("task"):
                self.task_graph, knowledge = load_room(
                    task or f"room/{room_size}", store, allow_spaces, disjoint_entities, load_knowledge
                )
            self.task_id = self.task_graph.task_id
        else:  # knowledge read beforehand (an experiment's driver reads it once for its workers)
            self.task_id = task.task_id if isinstance(task, TaskGraph) else task or "(given knowledge)"
        self.knowledge = k = knowledge
        self.names, self.heads, self.tails = list(k.names), list(k.heads), list(k.tails)
        n_names, n_heads, n_tails = len(self.names), len(self.heads), len(self.tails)
        if n_heads < 2 or n_tails < 2:
            raise ValueError(f"task {self.task_id!r}: a room needs at least 2 objects and 2 locations, "
                             f"the store gives {n_heads} and {n_tails}")
        self.n_slots = min(n_names, n_heads)
        self.relations = [RELATION]
        # per head: commonsense tails (highest or cumulative weights) and non-commonsense tails
        self._cs_top = [cs[0][0] for cs in k.commonsense]
        self._cs_tails = [[t for t, _ in cs] for cs in k.commonsense]
        self._cs_cum = []
        for cs in k.commonsense:
            total, acc = sum(w for _, w in cs), []
            run = 0.0
            for _, w in cs:
                run += w / total
                acc.append(run)
            acc[-1] = 1.0 + 1e-12
            self._cs_cum.append(acc)
        if self.reference_noncommonsense:
            self._non_cs = [list(range(n_tails)) for _ in k.commonsense]
        else:
            self._non_cs = [[t for t in range(n_tails) if t not in set(cs)] for cs in self._cs_tails]
            empty = [self.heads[h] for h, lst in enumerate(self._non_cs) if not lst]
            if empty:
                raise ValueError(f"task {self.task_id!r}: objects {empty} have every location as commonsense; "
                                 "there is no non-commonsense location to draw")
        self._non_top = [[t for t in non if t != top] for non, top in zip(self._non_cs, self._cs_top)]
        self._head_text = [f"{n}'s {h}" for n in self.names for h in self.heads]
        self._tail_text = [f"{n}'s {t}" for n in self.names for t in self.tails]
        self._tail_lower = {t.lower(): i for i, t in enumerate(self.tails)}
        self.no_answer = n_tails
        self.action_space = spaces.Discrete(n_tails + 1)
        triple = spaces.Tuple(
            (
                spaces.Discrete(n_names * n_heads),
                spaces.Discrete(1),
                spaces.Discrete(n_names * n_tails),
                spaces.Discrete(self.max_step + 1),
            )
        )
        question = spaces.Tuple((spaces.Discrete(n_names * n_heads), spaces.Discrete(1)))
        self.observation_space = spaces.Tuple((spaces.Tuple((triple,) * self.num_agents), question))
        self._stream: RandomStream | None = None
        self._t = 0
        self._answer = -1

    # -- random draws -----------------------------------------------------------------
    def _tail_for(self, head: int, u_cs: float, u_pick: float) -> int:
        """A location for `head` from two uniforms: commonsense with p_commonsense, else a
        non-commonsense one (what that means depends on `reference_noncommonsense`)."""
        if u_cs < self.p_commonsense:
            if self._highest:
                return self._cs_top[head]
            cum = self._cs_cum[head]
            i = 0
            while u_pick >= cum[i]:
                i += 1
            return self._cs_tails[head][i]
        options = self._non_cs[head]
        return options[int(u_pick * len(options))]  # u_pick < 1

    def _draw_block(self) -> None:
        """Everything random about the next BLOCK steps, in a few numpy calls.

        Per step: the events (flat lists indexed from `_ev_start[k]`: slot, 1 = new object |
        2 = new location, and the uniforms they use), the swapped pair or None, and the slot
        asked about. Rejection draws (a new
        location equal to the old one) fall back to the block-drawn `RandomStream`.
        """
        rng = self.np_random
        n = self.n_slots
        u = rng.random((BLOCK, n, 2))
        new_object = u[:, :, 0] < self.p_new_object
        new_location = ~new_object & (u[:, :, 1] < self.p_new_location)
        codes = new_object.astype(np.int8) + 2 * new_location.astype(np.int8)
        rows, cols = np.nonzero(codes)  # row-major: events sorted by step, then slot
        extra = rng.random((3, len(rows)))
        self._ev_start = np.searchsorted(rows, np.arange(BLOCK + 1)).tolist()
        self._ev_slot = cols.tolist()
        self._ev_kind = codes[rows, cols].tolist()
        self._ev_u = extra[0].tolist(), extra[1].tolist(), extra[2].tolist()
        switch = (rng.random(BLOCK) < self.p_switch_person).tolist()
        first = rng.integers(0, n, BLOCK).tolist()
        second = rng.integers(0, n - 1, BLOCK).tolist()
        self._switch = [((i, j + (j >= i)) if sw else None) for sw, i, j in zip(switch, first, second)]
        self._asked = rng.integers(0, n, BLOCK).tolist()
        self._k = 0

    # -- gymnasium API ------------------------------------------------------------------
    @property
    def max_episode_steps(self) -> int:
        """The episode length (its last step terminates it)."""
        return self.max_step

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options:
            raise ValueError(f"reset options: RoomEnv takes none, got {sorted(options)}")
        super().reset(seed=seed)
        s = self._stream
        if seed is not None or s is None:  # a new session: the random streams start afresh from the seed
            s = self._stream = RandomStream(self.np_random)
            self._draw_block()
        n = self.n_slots
        self._name = s.shuffled(list(range(len(self.names))))[:n]
        heads = self._obj = s.shuffled(list(range(len(self.heads))))[:n]
        self._loc = [self._tail_for(h, s.uniform(), s.uniform()) for h in heads]
        self._cycles = [s.shuffled(list(range(n))) for _ in range(self.num_agents)]
        self._t = 0
        return self._observe(s.below(n)), self._info()

    def step(self, action):
        if action.__class__ is str:
            action = self._tail_lower.get(action.lower(), -1)
        reward = 1.0 if action == self._answer else 0.0
        t = self._t = self._t + 1
        k = self._k
        if k >= BLOCK:
            self._draw_block()
            k = 0
        self._k = k + 1
        obj, loc, name = self._obj, self._loc, self._name
        first, last = self._ev_start[k], self._ev_start[k + 1]
        if first != last:  # the room changes
            tail_for = self._tail_for
            ev_slot, ev_kind, (ev_head, ev_cs, ev_pick) = self._ev_slot, self._ev_kind, self._ev_u
            for e in range(first, last):
                slot, kind, u_head, u_cs, u_pick = ev_slot[e], ev_kind[e], ev_head[e], ev_cs[e], ev_pick[e]
                if kind == 1:  # another object, placed anew
                    h = int(u_head * self._n_other)  # u_head < 1
                    if h >= obj[slot]:
                        h += 1
                    obj[slot] = h
                    loc[slot] = tail_for(h, u_cs, u_pick)
                else:  # the same object somewhere else: a new draw, redrawn until it differs
                    old, h = loc[slot], obj[slot]
                    if old == self._cs_top[h] and self._highest:
                        # the redraw loop's outcome in one draw: uniform over the other locations
                        others = self._non_top[h]
                        loc[slot] = others[int(u_pick * len(others))]
                        continue
                    new = tail_for(h, u_cs, u_pick)
                    while new == old:
                        new = tail_for(h, self._stream.uniform(), self._stream.uniform())
                    loc[slot] = new
        pair = self._switch[k]
        if pair is not None:
            i, j = pair
            name[i], name[j] = name[j], name[i]
            obj[i], obj[j] = obj[j], obj[i]
            loc[i], loc[j] = loc[j], loc[i]
        q = self._asked[k]
        self._answer = loc[q]
        nh = self._nh
        question = self._question = (name[q] * nh + obj[q], 0)
        if self._single:
            slot = self._cycle0[t % self.n_slots]
            p = name[slot]
            h, tail = p * nh + obj[slot], p * self._nt + loc[slot]
            obs = (((h, 0, tail, t),), question)
            if self.text_info:
                info = {"observations_text": [[self._head_text[h], RELATION, self._tail_text[tail], t]],
                        "question_text": (self._head_text[question[0]], RELATION)}
            else:
                info = {}
            return obs, reward, t >= self.max_step, False, info
        return (self._seen(), question), reward, t >= self.max_step, False, (self._info() if self.text_info else {})

    def _seen(self) -> tuple:
        t, n = self._t, self.n_slots
        name, obj, loc, nh, nt = self._name, self._obj, self._loc, self._nh, self._nt
        out = []
        for cycle in self._cycles:
            slot = cycle[t % n]
            p = name[slot]
            out.append((p * nh + obj[slot], 0, p * nt + loc[slot], t))
        return tuple(out)

    def _observe(self, q: int):
        self._single = self.num_agents == 1
        self._cycle0 = self._cycles[0]
        self._nh, self._nt, self._n_other = len(self.heads), len(self.tails), len(self.heads) - 1
        self._answer = self._loc[q]
        self._question = (self._name[q] * self._nh + self._obj[q], 0)
        return self._seen(), self._question

    def _info(self) -> dict[str, Any]:
        # the texts of what was observed and asked (the answer is never in info)
        return {"observations_text": [self.decode_observation(o) for o in self._seen()],
                "question_text": (self._head_text[self._question[0]], RELATION)}

    # -- text -----------------------------------------------------------------------------
    def decode_head(self, index: int) -> str:
        """'James's laptop' for a head index.

        Parameters
        ----------
        index : int
            A head index (name * n_objects + object).

        Returns
        -------
        str
            The person's name and the object.
        """
        return self._head_text[index]

    def decode_tail(self, index: int) -> str:
        return self._tail_text[index]

    def decode_observation(self, triple) -> list:
        h, r, t, time = triple
        return [self._head_text[h], self.relations[r], self._tail_text[t], time]

    def location_of_tail(self, index: int) -> int:
        """The bare location index of a tail index (what an answer names).

        Parameters
        ----------
        index : int
            A tail index (name * n_locations + location).

        Returns
        -------
        int
            The location's index.
        """
        return index % len(self.tails)

    def split_head(self, index: int) -> tuple[int, int]:
        """(name index, object index) of a head index.

        Parameters
        ----------
        index : int
            A head index (name * n_objects + object).

        Returns
        -------
        tuple of (int, int)
            The name's and the object's index.
        """
        return divmod(index, len(self.heads))

    @property
    def answer(self) -> str:
        """The location word that answers the current question (for debugging, not for agents)."""
        return self.tails[self._answer]

    def render(self):
        if self.render_mode != "ansi":
            return None
        lines = [f"t={self._t}"]
        for slot in range(self.n_slots):
            lines.append(f"  {self.names[self._name[slot]]}'s {self.heads[self._obj[slot]]} AtLocation "
                         f"{self.names[self._name[slot]]}'s {self.tails[self._loc[slot]]}")
        lines.append(f"  question: {self._head_text[self._question[0]]} AtLocation ?")
        return "\n".join(lines)
