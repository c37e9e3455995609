"""RoomMapEnv: the Room task's map versions (room-env 3.0.6 RoomEnv-v2 and RoomEnv-v3) as a
gymnasium env on integer arrays.

The agent is in one room of a map and sees only that room: its four sides (the room each
leads to, or a wall) and which objects are in it. Each step it is asked where some objects
are (v2: 10 questions drawn by the objects' question weights; v3: one, from the map's
100-step question cycle), answers each with a room, and moves north, east, south, west or
stays. Reward: `rewards[0]` per answer naming the object's current room, `rewards[2]` per
answer naming the room it was in before (room-env's "partial"), else `rewards[1]`.

Spaces (R rooms, O objects, Q questions a step):
- observation `Dict(room=Discrete(R), exits=MultiDiscrete([R + 1] * 4) (R = wall; north,
  east, south, west), objects=MultiBinary(O) (objects in the agent's room),
  questions=MultiDiscrete([O + 1] * Q) (O = no question))`;
- action `MultiDiscrete([R] * Q + [5])`: a room per question, then the move (north, east,
  south, west, stay).
`decode_observation`, `encode_action` and `decode_action` translate to room-env's texts.
An episode is `max_steps` (100) steps, then `terminated` (room-env's `terminates_at` 99).
"""

from __future__ import annotations

from operator import eq
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from tasks.roommap import DEFAULTS
from tasks.roommap.schema import DIRECTIONS, MOVES

from ..loading import load_task_graph
from ..params import (
    NOT_GIVEN,
    RenderModes,
    check_bool,
    check_number,
    check_positive_int,
    check_probability,
    check_render_mode,
    check_store,
    check_type,
    episode_steps,
    named,
)
from .compiled import CompiledRoomMap, compile_room_map
from .world import Episodes, episode_v3, episodes_v2

DEFAULT_TASK = f"room/v2/{DEFAULTS[2]}"
# Documented limits (docs/room-v2-v3.md): sizes past them are refused in one line before anything is
# allocated (1e12 steps or questions would otherwise end in a MemoryError, or fill the memory).
MAX_STEPS = 100_000  # max_steps (room-env: 100)
MAX_QUESTIONS = 1_000  # questions_per_step (room-env: 10)
MAX_EPISODES_AHEAD = 10_000  # episodes_ahead (128)
MAX_EPISODE_BYTES = 2 << 30  # the episodes drawn ahead (single env) or held (one per copy, vector env)


def check_at_most(name: str, value: Any, limit: int) -> int:
    """A positive integer of at most `limit`, else a ValueError naming the setting and its limit."""
    value = check_positive_int(name, value)
    if value > limit:
        raise ValueError(f"{name}: expected at most {limit:,}, got {value:,}")
    return value


def check_episode_bytes(c: CompiledRoomMap, s: "RoomMapSettings", episodes: int, name: str) -> None:
    """Refuse `episodes` episodes of `s.max_steps` steps whose arrays would pass MAX_EPISODE_BYTES."""
    n_ind, n_dep = len(c.independent), len(c.dependent)
    per_step = c.n_objects + n_dep + n_ind + n_dep * n_ind + 3 * s.n_questions  # 8-byte numbers a step
    size = 8 * episodes * (s.max_steps + 1) * per_step
    if size > MAX_EPISODE_BYTES:
        raise ValueError(
            f"{name} x max_episode_steps: {episodes:,} episodes of {s.max_steps:,} steps "
            f"({s.n_questions} questions a step) "
            f"would take {size / 2**30:,.1f} GiB; expected at most {MAX_EPISODE_BYTES / 2**30:g} GiB: "
            f"lower {name} or max_episode_steps"
        )


def load_checked(task: Any, store: Any) -> CompiledRoomMap:
    """The compiled map `task` names, every error naming `task` or `store`."""
    if isinstance(task, CompiledRoomMap):
        return task
    check_type("task", task, (str, TaskGraph), "a Room map task id such as 'room/v2/s', or a TaskGraph")
    check_store(store)
    with named("task"):
        graph = load_task_graph(task, store)
        if graph.family not in ("room-v2", "room-v3"):
            raise ValueError(f"task: {graph.task_id!r} is a {graph.family!r} task, not a Room map (room/v2/..., "
                             "room/v3/...)")
        return compile_room_map(graph)


class RoomMapSettings:
    """The env settings both envs share, checked once."""

    def __init__(self, compiled: CompiledRoomMap, max_steps: int | None, questions_per_step: int | None,
                 question_prob: float, rewards: Any, make_everything_static: bool,
                 name: str = "max_episode_steps") -> None:
        self.max_steps = check_at_most(name, max_steps, MAX_STEPS)
        if compiled.version == 3:
            if questions_per_step not in (None, 1):
                raise ValueError("questions_per_step: a v3 map asks one question a step")
            questions_per_step = 1
        self.n_questions = check_at_most("questions_per_step", 10 if questions_per_step is None
                                         else questions_per_step, MAX_QUESTIONS)
        self.question_prob = check_probability("question_prob", question_prob)
        if isinstance(rewards, dict):
            unknown = sorted(set(rewards) - {"correct", "wrong", "partial"})
            if unknown:
                raise ValueError(f"rewards: unknown key(s) {', '.join(map(str, unknown))}; "
                                 "keys: correct, wrong, partial")
            rewards = (rewards.get("correct", 1), rewards.get("wrong", 0), rewards.get("partial", 0))
        if not isinstance(rewards, (tuple, list)) or len(rewards) != 3:
            raise ValueError(f"rewards: expected {{'correct': 1, 'wrong': 0, 'partial': 0}} or three numbers, "
                             f"got {rewards!r}")
        correct, wrong, partial = (check_number("rewards", r) for r in rewards)
        self.correct, self.wrong, self.partial = correct, wrong, partial
        self.static = check_bool("make_everything_static", make_everything_static)


def room_map_spaces(c: CompiledRoomMap, n_questions: int) -> tuple[spaces.Dict, spaces.MultiDiscrete]:
    n, o = c.n_rooms, c.n_objects
    observation = spaces.Dict({
        "room": spaces.Discrete(n),
        "exits": spaces.MultiDiscrete([n + 1] * 4),
        "objects": spaces.MultiBinary(max(o, 1)),
        "questions": spaces.MultiDiscrete([o + 1] * n_questions),
    })
    return observation, spaces.MultiDiscrete([n] * n_questions + [len(MOVES)])


def make_episodes(c: CompiledRoomMap, s: RoomMapSettings, rng: Any, count: int) -> Episodes:
    if c.version == 3:
        one = episode_v3(c, s.max_steps)
        if count == 1:
            return one
        return Episodes(*(np.repeat(a, count, axis=0) for a in (one.rooms, one.attached, one.questions,
                                                                  one.truth, one.previous, one.agent)))
    return episodes_v2(c, rng, count, s.max_steps, s.n_questions, s.question_prob, s.static, previous=bool(s.partial))


def occupancy(c: CompiledRoomMap, rooms: np.ndarray) -> np.ndarray:
    """(..., R, O) int8: 1 where the object is in the room; from rooms (..., O)."""
    return (rooms[..., None, :] == np.arange(c.n_rooms)[:, None]).astype(np.int8)


class Decoder:
    """Texts of a map's integer observations and actions, in room-env's words."""

    def __init__(self, c: CompiledRoomMap) -> None:
        self.compiled = c

    def decode_observation(self, obs: dict[str, Any]) -> dict[str, Any]:
        """room-env's observation: {"room": [[room, direction, room or 'wall'], ..., [object,
        'at_location', room], ..., ['agent', 'at_location', room]], "questions": [[object,
        'at_location', '?'] or None, ...]} (v3 names the one question 'question')."""
        c = self.compiled
        room = c.rooms[int(obs["room"])]
        sides = zip(DIRECTIONS, obs["exits"])
        triples = [[room, d, c.rooms[int(x)] if int(x) < c.n_rooms else "wall"] for d, x in sides]
        triples += [[c.objects[o], "at_location", room] for o in np.flatnonzero(obs["objects"][: c.n_objects])]
        triples.append(["agent", "at_location", room])
        questions = [None if int(q) >= c.n_objects else [c.objects[int(q)], "at_location", "?"]
                     for q in obs["questions"]]
        if c.version == 3:
            return {"room": triples, "question": questions[0]}
        return {"room": triples, "questions": questions}

    def encode_action(self, answers: list[str] | str, move: str) -> np.ndarray:
        """An action from room names (one per question; a v3 answer may be one string) and a move."""
        c = self.compiled
        if isinstance(answers, str):
            answers = [answers]
        return np.array([c.room_index(a) for a in answers] + [MOVES.index(move)], dtype=np.int64)

    def decode_action(self, action: Any) -> tuple[list[str], str]:
        c = self.compiled
        values = [int(v) for v in action]
        return [c.rooms[v] for v in values[:-1]], MOVES[values[-1]]


class RoomMapEnv(gym.Env):
    """One Room map (v2 or v3); see the module docstring.

    Parameters
    ----------
    task : str, TaskGraph or CompiledRoomMap
        A Room map task ('room/v2/xl-different-prob', 'room/v3/small-01', ...).
    store : GraphStore or str, optional
        Where a task id is read (a built-in is put there first).
    max_episode_steps : int
        Steps per episode (room-env's `terminates_at` + 1; default 100): the last terminates
        it. The one name of an episode's length in every family (docs/limits.md); `max_steps`,
        its old name, still works with a FutureWarning.
    questions_per_step : int, optional
        v2: questions a step (room-env: num_total_questions / (terminates_at + 1), 10); v3: 1.
    question_prob : float
        v2: the probability that each drawn question is asked.
    rewards : dict or (correct, wrong, partial)
        Reward of an answer naming the current room, any other room, the previous room.
    make_everything_static : bool
        v2: objects never move.
    episodes_ahead : int
        v2: episodes of the world drawn at once (the world does not depend on the agent).

    Sizes are limited (`MAX_STEPS`, `MAX_QUESTIONS`, `MAX_EPISODES_AHEAD`, and `MAX_EPISODE_BYTES`
    for the episodes drawn ahead); past a limit the env refuses in one ValueError naming the setting.

    Examples
    --------
    >>> from gym_bridge.roommap.env import RoomMapEnv
    >>> RoomMapEnv(task="room/v3/small-01", store=":memory:", max_episode_steps=10**12)
    Traceback (most recent call last):
    ...
    ValueError: max_episode_steps: expected at most 100,000, got 1,000,000,000,000
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}

    def __init__(
        self,
        task: str | TaskGraph | CompiledRoomMap = DEFAULT_TASK,
        store: GraphStore | str | None = None,
        max_episode_steps: int = 100,
        questions_per_step: int | None = None,
        question_prob: float = 1.0,
        rewards: Any = (1, 0, 0),
        make_everything_static: bool = False,
        episodes_ahead: int = 128,
        render_mode: str | None = None,
        max_steps: Any = NOT_GIVEN,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.compiled = c = load_checked(task, store)
        self.task_id = c.task_id
        self.settings = s = RoomMapSettings(c, episode_steps(max_episode_steps, max_steps, "max_steps", 100),
                                            questions_per_step, question_prob, rewards, make_everything_static,
                                            "max_episode_steps" if max_steps is NOT_GIVEN else "max_steps")
        self.observation_space, self.action_space = room_map_spaces(c, s.n_questions)
        self.decoder = Decoder(c)
        self.episodes_ahead = check_at_most("episodes_ahead", episodes_ahead, MAX_EPISODES_AHEAD)
        check_episode_bytes(c, s, 1 if c.version == 3 else self.episodes_ahead, "episodes_ahead")
        self._n_q = s.n_questions
        self._doors = c.doors.tolist()  # [t % period][room][move]
        self._exits = [[np.array(row, dtype=np.int64) for row in period] for period in c.exits]
        self._period = c.period
        self._buffer: Episodes | None = None
        self._next = 0
        self._t = 0
        self._room = 0
        self._episode: dict[str, Any] = {}

    # -- episodes ----------------------------------------------------------------------------
    def _take_episode(self) -> None:
        c, s = self.compiled, self.settings
        if self._buffer is None or self._next >= len(self._buffer):
            count = 1 if c.version == 3 else self.episodes_ahead
            self._buffer = make_episodes(c, s, self.np_random, count)
            self._next = 0
        b, e = self._buffer, self._next
        self._next = e + 1 if c.version == 2 else 0
        self._rooms = b.rooms[e]
        self._attached = b.attached[e]
        self._questions = b.questions[e]
        self._truth = b.truth[e].tolist()  # step compares Python ints: faster than numpy on 10 numbers
        self._previous = b.previous[e].tolist()
        self._occ_e = occupancy(c, self._rooms)  # (T + 1, R, O): what the agent sees in each room
        self._room = int(b.agent[e])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._buffer = None  # a seeded reset starts a fresh world stream
        if options:
            raise ValueError(f"reset options: unknown key(s) {', '.join(sorted(options))}")
        self._take_episode()
        self._t = 0
        return self._observe(), {}

    def _observe(self) -> dict[str, Any]:
        t, room = self._t, self._room
        return {  # fresh arrays: gymnasium's users keep what they are given
            "room": room,
            "exits": self._exits[t % self._period][room].copy(),
            "objects": self._occ_e[t, room].copy(),
            "questions": self._questions[t].copy(),
        }

    def step(self, action: Any):
        t = self._t
        values = action.tolist() if isinstance(action, np.ndarray) else list(action)
        n_q = self._n_q
        if len(values) != n_q + 1:
            raise ValueError(f"action: expected {n_q} answers and a move, got {len(values)} values")
        truth = self._truth[t]
        s = self.settings
        hits = sum(map(eq, values, truth))  # the move (the last value) has no truth to match
        reward = hits * s.correct + (n_q - hits) * s.wrong if s.wrong or s.correct != 1 else float(hits)
        if s.partial:
            prev = self._previous[t]
            partial = sum(1 for a, r, p in zip(values, truth, prev) if a != r and a == p and p >= 0)
            reward += partial * (s.partial - s.wrong)
        move = values[n_q]
        if not 0 <= move < 5:
            raise ValueError(f"action: the move must be 0..4 (north, east, south, west, stay), got {move}")
        self._room = self._doors[t % self._period][self._room][move]
        self._t = t = t + 1
        return self._observe(), float(reward), t >= s.max_steps, False, {}

    @property
    def max_steps(self) -> int:
        """Steps per episode: the env's own episode length."""
        return self.settings.max_steps

    @property
    def max_episode_steps(self) -> int:
        """The episode length (its last step terminates it)."""
        return self.settings.max_steps

    # -- the hidden state (tests, rendering) --------------------------------------------------------
    @property
    def t(self) -> int:
        return self._t

    @property
    def agent_room(self) -> int:
        return self._room

    @property
    def locations(self) -> np.ndarray:
        """Every object's room now."""
        return self._rooms[self._t].copy()

    @property
    def attached(self) -> np.ndarray:
        """v2: the independent object (index among them) each dependent one is attached to, or -1."""
        return self._attached[self._t].copy()

    def closed_sides(self) -> list[int]:
        """v3: 4 * room + direction of each side that is a wall now but a door in the base map."""
        c = self.compiled
        doors = c.doors[self._t % c.period, :, :4]
        closed = (c.base_doors >= 0) & (doors == np.arange(c.n_rooms)[:, None])
        return [int(i) for i in np.flatnonzero(closed)]

    def decode_observation(self, obs: dict[str, Any]) -> dict[str, Any]:
        return self.decoder.decode_observation(obs)

    def encode_action(self, answers: list[str] | str, move: str) -> np.ndarray:
        return self.decoder.encode_action(answers, move)

    def decode_action(self, action: Any) -> tuple[list[str], str]:
        return self.decoder.decode_action(action)

    def render(self) -> Any:
        from .render import render_ansi, render_rgb

        if self.render_mode == "ansi":
            return render_ansi(self.compiled, self._rooms[self._t], self._room, self._t)
        if self.render_mode == "rgb_array":
            return render_rgb(self.compiled, self._rooms[self._t], self._room, self._t)
        return None
