"""The graph-task family: neuro-nav graph templates, rewardGym tasks and users' graph files."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks.graph.family import DECISION_KIND, USER_KIND
from tasks.graph.family import GRAPH as GRAPH_TASKS

from ..family import Family, GymId
from ..keys import KeyMap
from ..screens import ChoiceScreen
from ..starts import StateStarts
from ..text import ChoiceText
from .compiled import CompiledGraphTask, load_compiled
from .env import GraphTaskEnv
from .observations import GRAPH_OBSERVATIONS

# One id per rewardGym task; the generic id takes any stored or built-in task.
REWARDGYM_IDS = {
    "TwoStep-v0": "rewardgym/two-step",
    "HCP-v0": "rewardgym/hcp",
    "MID-v0": "rewardgym/mid",
    "Posner-v0": "rewardgym/posner",
    "RiskSensitive-v0": "rewardgym/risk-sensitive",
    "RobotFactory-v0": "rewardgym/robotfactory",
    "GoNoGo-v0": "rewardgym/gonogo",
    "TwoArmedBandit-v0": "rewardgym/two-armed-bandit",
}
TRIAL_KINDS = ("rewardgym", DECISION_KIND, USER_KIND)  # trial tasks: an experiment records their every step by default


def make_env(task: str | TaskGraph, store: Any = None, **kwargs: Any) -> gym.Env:
    return GraphTaskEnv(task=task, store=store, **kwargs)


def gym_ids() -> list[GymId]:
    """The generic id, one per rewardGym and decision task: the names above, and for a task file
    added to data/rewardgym/ or data/decision/ its name in CamelCase ('risk-sensitive' ->
    'RiskSensitive-v0', 'decision/iowa-gambling' -> 'IowaGambling-v0')."""
    import tasks

    named = dict(REWARDGYM_IDS)
    for task_id in tasks.builtin_ids("rewardgym") + tasks.builtin_ids(DECISION_KIND):
        if task_id not in named.values():
            camel = "".join(part.capitalize() for part in task_id.split("/", 1)[1].replace("_", "-").split("-"))
            named[f"{camel}-v0"] = task_id
    ids = [GymId(f"graphtasks/{name}", {"task": task_id}) for name, task_id in named.items()]
    return [GymId("graphtasks/Graph-v0"), *ids]


GRAPH = Family(
    tasks=GRAPH_TASKS,
    env="gym_bridge.graph.env:GraphTaskEnv",
    gym_entry="gym_bridge.graph.env:make_for_gymnasium",
    vector_env="gym_bridge.graph.vector_env:make_graph_vector_env",
    make_env=make_env,
    episode_length="max_episode_steps",
    gym_ids=gym_ids,
    observations=GRAPH_OBSERVATIONS,
    compiled=CompiledGraphTask,
    load=load_compiled,
    starts=StateStarts(),
    records_steps=lambda graph: graph.family in TRIAL_KINDS,
    cli="graphtasks.commands.run_cmd",
    picture="gym_bridge.graph.render:draw_task",
    screen=ChoiceScreen(),  # each state's stimulus and options, from the task graph
    keys=KeyMap(numbered=True, legend="Press a number key: 1 takes the first action, 2 the second, ..."),
    text=ChoiceText(),  # each state's text (or stimulus) and its options, named per participant
    bench="benchmarks.run_all:graph_cases",
    docs="docs/graph-tasks.md",
)
