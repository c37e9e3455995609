"""The Room memory task on ConceptNet AtLocation assertions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.room import RoomKnowledge
from tasks.room.family import ROOM as ROOM_TASKS

from ..family import Family, GymId
from ..screens import QuestionScreen
from ..starts import NoStarts
from ..text import QuestionText
from ..views import AgentView, action_count
from .env import load_room


@dataclass(frozen=True)
class PreparedRoom:
    """A Room task and the knowledge its env reads from the store, read once by the driver."""

    graph: TaskGraph
    knowledge: RoomKnowledge


def make_env(task: str | TaskGraph | PreparedRoom, store: Any = None, **kwargs: Any) -> gym.Env:
    from .env import RoomEnv

    if isinstance(task, PreparedRoom):
        return RoomEnv(task=task.graph, knowledge=task.knowledge, **kwargs)
    return RoomEnv(task=task, store=store, **kwargs)


def prepare(graph: TaskGraph, store: Any, settings: Mapping[str, Any]) -> PreparedRoom:
    """The room's ConceptNet knowledge, read from the store with the env's settings."""
    _, knowledge = load_room(graph, store, bool(settings.get("allow_spaces", False)),
                             bool(settings.get("disjoint_entities", True)), bool(settings.get("load_knowledge", True)))
    return PreparedRoom(graph, knowledge)


def gym_ids() -> list[GymId]:
    """The Room memory task; kwargs such as room_size='big' or store=... go to gym.make."""
    return [GymId("graphtasks/Room-v0")]


# The memory agents read the whole observation: what each agent sees and the question.
MEMORY = AgentView("room", state=lambda obs, info: obs, sizes=lambda env: (0, action_count(env)),
                   description="the observations and the question, as RoomEnv gives them",
                   recorded=lambda obs: int(obs[1][0]))
# A tabular agent answers the question: its state is the asked (person, object).
def question_sizes(env: gym.Env) -> tuple[int, int]:
    """(the number of (person, object) questions, the number of answers)."""
    space = env.observation_space
    assert isinstance(space, gym.spaces.Tuple)
    question = space[1]
    assert isinstance(question, gym.spaces.Tuple) and isinstance(question[0], gym.spaces.Discrete)
    return int(question[0].n), action_count(env)


QUESTION = AgentView(
    "index",
    state=lambda obs, info: int(obs[1][0]),
    sizes=question_sizes,
    description="the question's (person, object) index; the answer is a location",
)

def answers(env: gym.Env) -> list[str]:
    """The answers a person is shown: the room's location words, then the env's no-answer action."""
    return [str(t) for t in env.unwrapped.tails] + ["I don't know"]  # type: ignore[attr-defined]


def question(info: Mapping[str, Any]) -> dict[str, Any]:
    """What each agent in the room observed (`head` is at `tail`) and the object asked about."""
    observed = [{"head": str(o[0]), "tail": str(o[2])} for o in info.get("observations_text") or ()]
    asked = info.get("question_text") or ("?",)
    return {"observations": observed, "question": str(asked[0])}


# A person reads what the room shows and answers where a thing is, with a key per location.
QUESTIONS = QuestionScreen(
    name="room", answers=answers, read=question, title="You see:", seen="{head} is at {tail}.",
    ask="Where is {question}?", legend="Remember where everyone's things are. Answer with the key of the place.",
)

# The Room question as text, as it is on the screen: what is seen, and where one thing is.
ROOM_TEXT = QuestionText(
    answers=answers, read=question, title="You see:", seen="{head} is at {tail}.", ask="Where is {question}?",
    intro="Remember where everyone's things are. Each step, answer where one thing is.",
)

ROOM = Family(
    tasks=ROOM_TASKS,
    env="gym_bridge.room.env:RoomEnv",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    load=load_room,
    prepare=prepare,
    starts=NoStarts(),
    views=(MEMORY, QUESTION),
    cli="graphtasks.commands.room_cmd",
    picture="gym_bridge.room.render:draw_task",
    screen=QUESTIONS,
    text=ROOM_TEXT,
    bench="benchmarks.run_all:room_cases",
    docs="docs/room.md",
)
