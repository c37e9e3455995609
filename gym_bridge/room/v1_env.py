"""RoomV1Env: the Room task's version 1 (room-env 3.0.6 RoomEnv-v1) as a gymnasium env, and its
native vector env.

room-env's v1 is a discrete-event simulation: person p has, at time t, the object and location
of step t % length of their cycle (`room/v1/<size>`, read from the store). At every time one
person is observed, in a fixed round of the people in name order (or drawn at random with
`allow_random_human`): the observation is (person, their object, its location, t). A question
asks where some person's object is now; room-env asks about one of the people observed in the
last round whose object and location have not changed since they were observed (or about any
person observed so far, with `allow_random_question`), and each question is kept with
probability `question_prob`. The answer is a location: +1 when it is the object's location,
-1 otherwise, 0 when nothing was asked. An episode is `last_timestep` steps (128); its last
observation asks nothing.

The questions are drawn with Python's `random.Random`, with room-env's own sequence of calls,
so a session seeded with s asks exactly what `RoomEnv1(seed=s)` asks: the same observations,
questions and rewards for the same answers, episode after episode (room-env seeds once, when
it is made: `reset(seed=s)` here, then `reset()`).

Spaces (P people, O objects, L locations, T = last_timestep):
- observation `Dict(observation=MultiDiscrete([P, O, L, T + 1]) (person, object, location, time),
  question=MultiDiscrete([P + 1, O + 1]) (person, object; P and O when nothing is asked))`;
- action `Discrete(L)`: the location answered (locations in name order, as room-env sorts them).
`info["state"]` is the question's (person, object) index, person * O + object (P * O: none),
so tabular agents answer questions (`n_states` = P * O + 1). `decode` gives room-env's texts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from tasks.room.v1_config import KIND, cycles
from tasks.room.v1_family import DEFAULT, PREFIX

from ..loading import load_task_graph
from ..params import (
    NOT_GIVEN,
    RenderModes,
    check_bool,
    check_positive_int,
    check_probability,
    check_render_mode,
    check_store,
    check_type,
    episode_steps,
    made_by_gymnasium,
    named,
)
from ..vector.base import BatchedVectorEnv

DEFAULT_TASK = PREFIX + DEFAULT
EPISODE_LENGTH = 128  # every room-env v1 configuration's last_timestep
CORRECT, WRONG = 1.0, -1.0


@dataclass(frozen=True)
class CompiledRoomV1:
    """A Room v1 task as arrays: the people, objects and locations in name order (room-env's),
    and every person's object and location at every time of an episode."""

    task_id: str
    people: list[str]
    objects: list[str]
    locations: list[str]
    until: int  # last_timestep: an episode's steps
    object_at: np.ndarray  # (T + 1, P) object index of each person at time t
    location_at: np.ndarray  # (T + 1, P) location index
    unchanged: np.ndarray  # (T + 1, T + 1, P) bool: person p's (object, location) at time a equals time b's

    @property
    def n_people(self) -> int:
        return len(self.people)

    @property
    def n_objects(self) -> int:
        return len(self.objects)

    @property
    def n_locations(self) -> int:
        return len(self.locations)


def compile_room_v1(graph: TaskGraph) -> CompiledRoomV1:
    person_cycles = cycles(graph)
    people = sorted(person_cycles)
    objects = sorted({o for cycle in person_cycles.values() for o, _ in cycle})
    locations = sorted({loc for cycle in person_cycles.values() for _, loc in cycle})
    until = int((graph.task.get("params") or {})["last_timestep"])
    times = np.arange(until + 1)
    object_at = np.empty((until + 1, len(people)), dtype=np.int64)
    location_at = np.empty_like(object_at)
    for p, person in enumerate(people):
        cycle = person_cycles[person]
        object_at[:, p] = [objects.index(cycle[t % len(cycle)][0]) for t in times]
        location_at[:, p] = [locations.index(cycle[t % len(cycle)][1]) for t in times]
    unchanged = ((object_at[:, None, :] == object_at[None, :, :])
                 & (location_at[:, None, :] == location_at[None, :, :]))
    return CompiledRoomV1(graph.task_id, people, objects, locations, until, object_at, location_at, unchanged)


def load_room_v1(task: str | TaskGraph | CompiledRoomV1, store: GraphStore | str | None = None) -> CompiledRoomV1:
    """Compile a Room v1 task: a TaskGraph, or an id read from the store (a built-in is put first)."""
    if isinstance(task, CompiledRoomV1):
        return task
    check_type("task", task, (str, TaskGraph), "a Room v1 task id such as 'room/v1/s', or a TaskGraph")
    check_store(store)
    with named("task"):
        graph = load_task_graph(task, store)
        if graph.family != KIND:
            raise ValueError(f"task: {graph.task_id!r} is a {graph.family!r} task, not a Room v1 one (room/v1/...)")
    return compile_room_v1(graph)


@dataclass(frozen=True)
class Questions:
    """How questions are asked (RoomEnv1's settings)."""

    question_prob: float = 1.0
    allow_random_human: bool = False
    allow_random_question: bool = False


def episode_plan(c: CompiledRoomV1, q: Questions, rng: random.Random) -> tuple[np.ndarray, np.ndarray]:
    """Who is observed and who is asked about at each time 0..T (-1: no question), drawn from
    `rng` with room-env's calls in room-env's order (`RoomEnv1.generate_sequences`)."""
    n, until = c.n_people, c.until
    if q.allow_random_human:
        observed = rng.choices(range(n), k=until + 1)
    else:
        observed = (list(range(n)) * (until // n + 1))[: until + 1]
    if q.allow_random_question:
        asked = [rng.choice(observed[: i + 1]) for i in range(until + 1)]
    else:
        asked = [observed[0]]
        for i in range(until):
            start, end = max(i + 2 - n, 0), i + 2
            unchanged = c.unchanged[end - 1]
            kept = [h for j, h in enumerate(observed[start:end]) if unchanged[start + j, h]]
            asked.append(rng.choice(kept))
    questions = [h if rng.random() < q.question_prob else -1 for h in asked[:-1]] + [-1]
    return np.asarray(observed, dtype=np.int64), np.asarray(questions, dtype=np.int64)


def room_v1_spaces(c: CompiledRoomV1) -> tuple[spaces.Dict, spaces.Discrete]:
    observation = spaces.Dict({
        "observation": spaces.MultiDiscrete([c.n_people, c.n_objects, c.n_locations, c.until + 1]),
        "question": spaces.MultiDiscrete([c.n_people + 1, c.n_objects + 1]),
    })
    return observation, spaces.Discrete(c.n_locations)


def check_questions(question_prob: float, allow_random_human: bool, allow_random_question: bool) -> Questions:
    check_probability("question_prob", question_prob)
    if question_prob <= 0:
        raise ValueError(f"question_prob: expected a probability above 0 (room-env's rule), got {question_prob!r}")
    check_bool("allow_random_human", allow_random_human)
    check_bool("allow_random_question", allow_random_question)
    return Questions(float(question_prob), allow_random_human, allow_random_question)


def python_random(seed: int | None, np_random: np.random.Generator) -> random.Random:
    """The session's question stream: Python's generator seeded with `seed` as room-env seeds it,
    or (no seed given) with a number drawn from the env's own generator."""
    return random.Random(seed if seed is not None else int(np_random.integers(2**63)))


def render_text(observation: list[Any], question: list[Any] | None) -> str:
    """One moment as text: what is observed and what is asked."""
    asked = " ".join(map(str, question[:3])) if question is not None else "(no question)"
    return f"t={observation[3]}  seen: {' '.join(map(str, observation[:3]))}  asked: {asked}\n"


class RoomV1Env(gym.Env):
    """room-env's RoomEnv-v1 on integer spaces (see the module docstring).

    Parameters
    ----------
    task : str, TaskGraph or CompiledRoomV1
        A Room v1 task (default `room/v1/l`, room-env's default size).
    store : GraphStore or str, optional
        Where the task is read from (a built-in is put there first).
    question_prob, allow_random_human, allow_random_question
        RoomEnv1's settings of the same names.
    max_episode_steps : int, optional
        Truncate an episode after this many steps (default 128, every configuration's
        `last_timestep`; an episode terminates after `last_timestep` steps anyway). The one
        name of an episode's length in every family (docs/limits.md); `episode_length`, its
        old name, still works with a FutureWarning.
    render_mode : {None, "ansi"}
        "ansi": `render()` returns the moment as text (what is seen, what is asked).

    Examples
    --------
    >>> env = RoomV1Env("room/v1/xxs", store=":memory:")
    >>> obs, info = env.reset(seed=0)
    >>> env.decode(obs)
    (["beverly's bowl", 'atlocation', 'cupboard', 0], ["beverly's bowl", 'atlocation', '?', 0])
    >>> env.step(env.compiled.locations.index("cupboard"))[1]
    1.0
    """

    metadata = {"render_modes": RenderModes(["ansi"]), "render_fps": 4}

    def __init__(
        self,
        task: str | TaskGraph | CompiledRoomV1 = DEFAULT_TASK,
        store: GraphStore | str | None = None,
        question_prob: float = 1.0,
        allow_random_human: bool = False,
        allow_random_question: bool = False,
        max_episode_steps: int | None = EPISODE_LENGTH,
        render_mode: str | None = None,
        episode_length: Any = NOT_GIVEN,
    ) -> None:
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        length = episode_steps(max_episode_steps, episode_length, "episode_length", EPISODE_LENGTH)
        if length is not None:
            check_positive_int("max_episode_steps" if episode_length is NOT_GIVEN else "episode_length", length)
        self.episode_length = length
        self.compiled = c = load_room_v1(task, store)
        self.questions = check_questions(question_prob, allow_random_human, allow_random_question)
        self.observation_space, self.action_space = room_v1_spaces(c)
        self.n_states = c.n_people * c.n_objects + 1
        self._random: random.Random | None = None
        self._observed = self._asked = np.zeros(0, dtype=np.int64)
        self.t = 0

    def _observation(self) -> dict[str, np.ndarray]:
        c, t = self.compiled, self.t
        h = int(self._observed[t])
        q = int(self._asked[t])
        question = (q, int(c.object_at[t, q])) if q >= 0 else (c.n_people, c.n_objects)
        return {
            "observation": np.array([h, c.object_at[t, h], c.location_at[t, h], t], dtype=np.int64),
            "question": np.array(question, dtype=np.int64),
        }

    def _info(self, obs: dict[str, np.ndarray]) -> dict[str, Any]:
        person, obj = (int(x) for x in obs["question"])
        state = self.n_states - 1 if person == self.compiled.n_people else person * self.compiled.n_objects + obj
        return {"state": state, "time": self.t}

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length (None: only the task's last step ends it)."""
        return self.episode_length

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if options:
            raise ValueError(f"reset options: Room v1 takes none, got {', '.join(sorted(options))}")
        if seed is not None or self._random is None:
            self._random = python_random(seed, self.np_random)
        self._observed, self._asked = episode_plan(self.compiled, self.questions, self._random)
        self.t = 0
        obs = self._observation()
        return obs, self._info(obs)

    def step(self, action: Any):
        if self._random is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action: expected a location index 0..{self.compiled.n_locations - 1}, got {action!r}")
        if self.t >= self.compiled.until:
            raise gym.error.ResetNeeded("the episode has ended: call reset()")
        c, t = self.compiled, self.t
        q = int(self._asked[t])
        reward = 0.0 if q < 0 else (CORRECT if int(action) == int(c.location_at[t, q]) else WRONG)
        self.t = t + 1
        obs = self._observation()
        terminated = self.t >= c.until
        truncated = not terminated and self.episode_length is not None and self.t >= self.episode_length
        return obs, reward, terminated, truncated, self._info(obs)

    def render(self) -> str | None:
        """`render_mode="ansi"`: the current observation and question as text."""
        if self.render_mode != "ansi":
            return None
        if self._random is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        return render_text(*self.decode(self._observation()))

    def decode(self, obs: dict[str, Any]) -> tuple[list[Any], list[Any] | None]:
        """room-env's (observation, question) texts of an observation."""
        c = self.compiled
        h, o, loc, t = (int(x) for x in obs["observation"])
        observation = [f"{c.people[h]}'s {c.objects[o]}", "atlocation", c.locations[loc], t]
        person, obj = (int(x) for x in obs["question"])
        if person == c.n_people:
            return observation, None
        return observation, [f"{c.people[person]}'s {c.objects[obj]}", "atlocation", "?", t]


class RoomV1VectorEnv(BatchedVectorEnv):
    """`num_envs` copies of a Room v1 task stepped with numpy; each copy's episodes are planned
    by `episode_plan` with its own Python generator (seeded from the batch's), so copy i follows
    `RoomV1Env`'s rules exactly. Observations are the single env's Dict, batched."""

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP, "render_modes": []}
    _uses_active = False

    def __init__(
        self,
        num_envs: int = 1,
        task: str | TaskGraph | CompiledRoomV1 = DEFAULT_TASK,
        store: GraphStore | str | None = None,
        question_prob: float = 1.0,
        allow_random_human: bool = False,
        allow_random_question: bool = False,
        max_episode_steps: int | None = EPISODE_LENGTH,
        autoreset_mode: str | gym.vector.AutoresetMode = gym.vector.AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        episode_length: Any = NOT_GIVEN,
    ) -> None:
        if render_mode is not None:
            raise ValueError("render_mode: Room v1 has no renderer")
        self.compiled = c = load_room_v1(task, store)
        self.questions = check_questions(question_prob, allow_random_human, allow_random_question)
        observation, action = room_v1_spaces(c)
        length = episode_steps(max_episode_steps, episode_length, "episode_length", EPISODE_LENGTH)
        if length is not None:
            check_positive_int("max_episode_steps" if episode_length is NOT_GIVEN else "episode_length", length)
        length = length or 0
        super().__init__(num_envs, observation, action, length, autoreset_mode)
        n = self.num_envs
        self._observed = np.zeros((n, c.until + 1), dtype=np.int64)
        self._asked = np.full((n, c.until + 1), -1, dtype=np.int64)
        self.t = np.zeros(n, dtype=np.int64)
        self._copies = np.arange(n)
        self._randoms: list[random.Random] = []
        self.session_seeds = np.zeros(n, dtype=np.int64)  # copy i's session asks as RoomV1Env.reset(seed=...) does

    def _new_session(self, copies: np.ndarray | None) -> None:
        index = self._copies if copies is None else copies
        self.session_seeds[index] = self._rng(copies).integers(2**62, size=len(index))
        if not self._randoms:
            self._randoms = [random.Random(0) for _ in range(self.num_envs)]
        for i in index:
            self._randoms[int(i)] = random.Random(int(self.session_seeds[i]))

    def _reset_copies(self, copies: np.ndarray | None) -> None:
        index = self._copies if copies is None else copies
        for i in index:
            self._observed[i], self._asked[i] = episode_plan(self.compiled, self.questions, self._randoms[int(i)])
        self.t[index] = 0

    def _transition(self, actions: np.ndarray, active: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        c, copies, t = self.compiled, self._copies, self.t
        asked = self._asked[copies, t]
        truth = c.location_at[t, np.maximum(asked, 0)]
        reward = np.where(asked < 0, 0.0, np.where(actions == truth, CORRECT, WRONG))
        self.t = np.minimum(t + 1, c.until)
        return reward, self.t >= c.until

    def _observe(self) -> dict[str, np.ndarray]:
        c, copies, t = self.compiled, self._copies, self.t
        h = self._observed[copies, t]
        q = self._asked[copies, t]
        asked = q >= 0
        return {
            "observation": np.stack([h, c.object_at[t, h], c.location_at[t, h], t], axis=1),
            "question": np.stack([np.where(asked, q, c.n_people),
                                  np.where(asked, c.object_at[t, np.maximum(q, 0)], c.n_objects)], axis=1),
        }

    def _info(self) -> dict[str, Any]:
        c = self.compiled
        obs = self._observe()
        person, obj = obs["question"][:, 0], obs["question"][:, 1]
        state = np.where(person == c.n_people, c.n_people * c.n_objects, person * c.n_objects + obj)
        return {"state": state, "time": self.t.copy()}


def make_room_v1_vector_env(num_envs: int = 1, **kwargs: Any) -> RoomV1VectorEnv:
    """`vector_entry_point` of `graphtasks/RoomV1-v0`."""
    return RoomV1VectorEnv(num_envs=num_envs, **kwargs)


def make_for_gymnasium(**kwargs: Any) -> RoomV1Env:
    """The gym ids' entry point: `RoomV1Env` for gymnasium's `make`, its episodes ended by
    gymnasium's TimeLimit (`gym.make(id, max_episode_steps=N)`; `gym_bridge.params.made_by_gymnasium`)."""
    return made_by_gymnasium(RoomV1Env, "episode_length", kwargs)


make_for_gymnasium.metadata = RoomV1Env.metadata  # type: ignore[attr-defined]  # what make reads of an entry point
make_for_gymnasium.__wrapped__ = RoomV1Env  # type: ignore[attr-defined]  # inspect.signature shows the env's parameters
