"""`Family`: everything the gym bridge knows of one task family, in one object.

A family (graph tasks and rewardGym, neuro-nav grids, POGE worlds, the Room task, or one a
user adds) is declared once in each layer: a `tasks.TaskFamily` in `tasks/<family>/` (its
catalogue, schema fragment, notation, variants) and a bridge `Family` in
`gym_bridge/<family>/family.py` that holds it and adds what running it takes:

- its loader, compiled form, env and vector env classes (as gymnasium entry points), gym ids
  and observation types;
- how a worker gets what it needs without a store (`prepare`: the task graph, or the graph
  and the ConceptNet knowledge the Room task reads);
- how a start is given (`starts`), which observations agents can take on it (`views`, so
  which agents it accepts), and whether an experiment records every step by default;
- its screen: how a person plays it in the study server's pages (`gym_bridge.screens`), and
  its keys: how a person plays it from the keyboard in a window (`gym_bridge.keys`,
  `graphtasks play`);
- its command-line and benchmark modules and its docs page.

Every layer above asks these objects; nothing outside a family's folders compares task id
prefixes or family names.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from graphstore import TaskGraph
from tasks import TaskFamily

from .keys import KeyMap
from .observation_types import ObservationRegistry
from .screens import Screen
from .starts import NoStarts, StartRule
from .text import TextView
from .views import INDEX, AgentView


@dataclass(frozen=True)
class GymId:
    """One registered gymnasium id and the constructor arguments it fixes."""

    id: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def load_entry_point(entry_point: str) -> Any:
    """'package.module:Name' -> the object."""
    module, _, name = entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def the_graph(graph: TaskGraph, store: Any, settings: Mapping[str, Any]) -> TaskGraph:
    """What most families' workers need to make an env: the task graph itself."""
    return graph


def never(graph: TaskGraph) -> bool:
    return False


@dataclass(frozen=True)
class Family:
    """One task family, all of it; see the module docstring.

    Parameters
    ----------
    tasks : tasks.TaskFamily
        The tasks layer's declaration: catalogues, kinds, schema, changes.
    env : str
        The env class as a gymnasium entry point ('module:Class').
    make_env : callable
        `make_env(task, store=None, **settings)`: the env of a task id, a TaskGraph, or what
        `prepare` returned.
    episode_length : str
        The env constructors' parameter that holds the episode length: ``"max_episode_steps"``
        in every built-in family, as gymnasium names it (its default becomes every gym id's
        `max_episode_steps`; a phase's `max_episode_steps` sets it).
    gym_ids : callable
        The family's registered ids.
    vector_env : str, optional
        Its native vector env as a gymnasium entry point ('module:callable'); None: none.
    observations : ObservationRegistry, optional
        Its observation types (an env's ``obs_type``).
    compiled : type, optional
        The class of its compiled form (`CompiledGraphTask`, ...), for listings.
    load : callable, optional
        ``load(task, store=None, **params)``: the compiled form of a stored or built-in task.
    prepare : callable
        `prepare(graph, store, settings)`: what a worker process needs, read once in the driver.
    starts : StartRule
        How a phase's start is given and turned into reset options.
    views : tuple of AgentView
        The observations agents can take on this family's envs (the first is the default).
    records_steps : callable
        Whether an experiment records a Trial per step of this task by default.
    picture : str, optional
        'module:function' that draws a whole task with matplotlib (`graphtasks render`):
        `function(task, store, **options)` returns a `gym_bridge.picture.TaskPicture`.
    screen : Screen or None
        How a person plays its tasks in the study server's pages (`gym_bridge.screens`: a
        choice screen, an arrow-key grid or a question screen, and what it shows); None:
        people do not play them.
    keys : KeyMap or None
        How a person plays its tasks from the keyboard in a window (`graphtasks play`, by
        gymnasium's `play`): which key takes which action (`gym_bridge.keys`); None: not from
        the keyboard (its env draws no picture, or its actions are not one of n).
    text : TextView or None
        How its tasks read as text, for language-model participants and the Psych-101 corpus
        format (`gym_bridge.text`: a step as a situation and named options); None: not as text.
    cli : str, optional
        The module that adds the family's own commands to the command line.
    bench : str, optional
        'module:function' that adds the family's rows to benchmarks/run_all.py.
    docs : str
        Its documentation page.
    task_argument : str
        The env constructors' parameter that takes the task (``"task"``, POGE's ``"world"``).
    gym_entry : str, optional
        What the gym ids' `entry_point` names, when not the env class: a function that makes
        the env for gymnasium's `make` (`gym_bridge.params.made_by_gymnasium`: the episode's
        length left to gymnasium's TimeLimit, so `gym.make(id, max_episode_steps=N)` is the
        length). None: the env class, whose length is its own (the Room tasks, where the last
        step terminates an episode).

    Examples
    --------
    >>> import gym_bridge
    >>> family = gym_bridge.family_of("neuronav/graph/linear")
    >>> family.name, family.env, family.observations.names()
    ('graph', 'gym_bridge.graph.env:GraphTaskEnv', ['index', 'onehot', 'images'])
    >>> env = family.make_env("neuronav/graph/linear", store=":memory:")
    >>> type(env).__name__, family.load("neuronav/graph/linear", ":memory:").n_states
    ('GraphTaskEnv', 6)
    """

    tasks: TaskFamily
    env: str
    make_env: Callable[..., gym.Env]
    episode_length: str
    gym_ids: Callable[[], Iterable[GymId]]
    vector_env: str | None = None
    observations: ObservationRegistry | None = None
    compiled: type | None = None
    load: Callable[..., Any] | None = None
    prepare: Callable[[TaskGraph, Any, Mapping[str, Any]], Any] = the_graph
    starts: StartRule = field(default_factory=NoStarts)
    views: tuple[AgentView, ...] = (INDEX,)
    records_steps: Callable[[TaskGraph], bool] = never
    cli: str | None = None
    picture: str | None = None  # 'module:function': see gym_bridge.render
    screen: Screen | None = None  # how a person plays it: see gym_bridge.screens
    keys: KeyMap | None = None  # how a person plays it from the keyboard: see gym_bridge.keys
    text: TextView | None = None  # how it reads as text: see gym_bridge.text
    bench: str | None = None  # 'module:function' that adds the family's rows to benchmarks/run_all.py
    docs: str = ""
    task_argument: str = "task"  # the env constructors' parameter that takes the task
    gym_entry: str | None = None  # 'module:callable' gymnasium's make calls (None: the env class)

    @property
    def name(self) -> str:
        return self.tasks.name

    @property
    def description(self) -> str:
        return self.tasks.description

    def env_class(self) -> type[gym.Env]:
        return load_entry_point(self.env)

    def make_vector_env(self, task: Any, num_envs: int, **settings: Any) -> Any:
        """`num_envs` copies of `task` (what `prepare` returned, or an id) as the family's native
        vector env, with the single env's settings; ValueError if the family has none.

        Parameters
        ----------
        task : object
            A task id, or what `prepare` returned for it.
        num_envs : int
            The number of copies.
        **settings
            The single env's settings.

        Returns
        -------
        gymnasium.vector.VectorEnv
            The family's native vector env.
        """
        if self.vector_env is None:
            raise ValueError(f"the {self.name} family has no vector env")
        return load_entry_point(self.vector_env)(num_envs=num_envs, **{self.task_argument: task}, **settings)

    def episode_limit(self) -> int | None:
        """The default of the env's episode-length parameter (None: no limit)."""
        default = inspect.signature(self.env_class()).parameters[self.episode_length].default
        return default if isinstance(default, int) and default > 0 else None

    def view(self, observation: str) -> AgentView | None:
        """The view for agents that take `observation`, or None if this family offers none.

        Parameters
        ----------
        observation : str
            The observation an agent takes (its `observation`, e.g. ``"index"``).

        Returns
        -------
        AgentView or None
            The view, or None.
        """
        return next((v for v in self.views if v.observation == observation), None)

    def register(self) -> None:
        """Register the family's gym ids (ids already registered are left alone)."""
        limit = self.episode_limit()
        for gym_id in self.gym_ids():
            if gym_id.id in gym.registry:
                continue
            gym.register(
                gym_id.id,
                entry_point=self.gym_entry or self.env,
                vector_entry_point=self.vector_env,
                kwargs=dict(gym_id.kwargs),
                max_episode_steps=limit,
            )
