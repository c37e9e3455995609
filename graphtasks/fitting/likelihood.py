"""The log-likelihood of a sequence of choices under an agent and its settings.

`replay_log_likelihood` works for every agent: it walks the choices in order, asks the agent
how likely the recorded choice was (`action_probabilities`), then lets it learn from what
followed, exactly as the runner would have. For the Q and hybrid agents on tasks whose trials
have two stages (two-step and its kin) `log_likelihood` uses a vectorised form instead
(`graphtasks.fitting.vectorised`), tested equal to the replay.
"""

from __future__ import annotations

import math
from typing import Any

from graphstore import TaskGraph
from gym_bridge import family_of, make_env
from gym_bridge.agents import make_agent

from .behaviour import Choices
from .shape import FLOOR, TaskShape, env_sizes
from .vectorised import vectorised_log_likelihood

_SHAPES: dict[tuple[str, int], TaskShape] = {}


def task_shape(task_id: str, store: Any = None) -> TaskShape:
    """The shape of a task, from its environment (cached per task and store)."""
    key = (task_id, id(store))
    if key not in _SHAPES:
        _SHAPES[key] = _shape(task_id, make_env(task_id, store=store))
    return _SHAPES[key]


def graph_shape(graph: TaskGraph) -> TaskShape:
    """The shape of a task graph held in memory: nothing is read from or written to a store."""
    return _shape(graph.task_id, family_of(graph).make_env(graph))


def _shape(task_id: str, made: Any) -> TaskShape:
    env: Any = made.unwrapped
    n_states, n_actions = env_sizes(env)
    offered = getattr(env, "available_actions", None)
    available = offered if offered is not None else tuple(tuple(range(n_actions)) for _ in range(n_states))
    return TaskShape(task_id, n_states, n_actions, tuple(available))


def replay_log_likelihood(agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape) -> float:
    """Sum of log P(choice) over the choices, the agent learning from each as it goes.

    Works for every agent: it walks the choices in order, asks the agent how likely the
    recorded choice was (`action_probabilities`, floored at `FLOOR`), then lets it learn from
    what followed, exactly as the runner would have: the reference that the vectorised form
    in `log_likelihood` is tested against.

    Parameters
    ----------
    agent : str
        The agent's name (`gym_bridge.agents.make_agent`).
    settings : dict
        Its settings (a model's fixed and free values: `FitModel.settings`).
    choices : Choices
        The choices, in order (`simulate`, `read_events`, `load_run`).
    shape : TaskShape
        The task's size and the actions each state offers (`task_shape`).

    Returns
    -------
    float
        The log-likelihood (at most 0).

    Raises
    ------
    AgentSettingError
        A setting the agent does not have, or out of its range.

    Examples
    --------
    >>> from graphtasks.fitting import replay_log_likelihood, simulate
    >>> from graphtasks.fitting.likelihood import task_shape
    >>> settings = {"lr": 0.5, "beta": 5.0, "gamma": 1.0}
    >>> choices = simulate("rewardgym/two-step", "q", settings, trials=20, seed=1, store=":memory:")
    >>> round(replay_log_likelihood("q", settings, choices, task_shape("rewardgym/two-step", ":memory:")), 3)
    -12.889
    """
    if "rt" in settings:  # choices with response times: graphtasks.fitting.rt
        from .rt import rt_log_likelihood

        return rt_log_likelihood(agent, settings, choices, shape)
    chooser = make_agent(agent, shape.n_states, shape.n_actions, seed=0, **settings)
    available = shape.available
    total, new_trial = 0.0, True
    for s, a, r, n, end, learn in zip(
        choices.states.tolist(),
        choices.actions.tolist(),
        choices.rewards.tolist(),
        choices.next_states.tolist(),
        choices.ends.tolist(),
        choices.learn.tolist(),
    ):
        if new_trial:
            chooser.begin_episode()
        total += math.log(max(float(chooser.action_probabilities(s, available[s])[a]), FLOOR))
        chooser.learning = learn
        chooser.learn(s, a, r, n, end, available[n])
        new_trial = end
    return total


def log_likelihood(agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape) -> float:
    """The log-likelihood of `choices`: vectorised where the agent and task allow, else replayed.

    What `fit` maximises. For the Q and hybrid agents on two-stage tasks (two-step and its
    kin) it is computed on whole arrays (`graphtasks.fitting.vectorised`); otherwise it is
    `replay_log_likelihood`. Both give the same number.

    Parameters
    ----------
    agent : str
        The agent's name (`gym_bridge.agents.make_agent`).
    settings : dict
        Its settings (a model's fixed and free values: `FitModel.settings`).
    choices : Choices
        The choices, in order (`simulate`, `read_events`, `load_run`).
    shape : TaskShape
        The task's size and the actions each state offers (`task_shape`).

    Returns
    -------
    float
        The log-likelihood (at most 0).

    Raises
    ------
    AgentSettingError
        A setting the agent does not have, or out of its range.

    Examples
    --------
    >>> from graphtasks.fitting import log_likelihood, replay_log_likelihood, simulate
    >>> from graphtasks.fitting.likelihood import task_shape
    >>> settings = {"lr": 0.5, "beta": 5.0, "gamma": 1.0}
    >>> choices = simulate("rewardgym/two-step", "q", settings, trials=20, seed=1, store=":memory:")
    >>> shape = task_shape("rewardgym/two-step", ":memory:")
    >>> fast = log_likelihood("q", settings, choices, shape)
    >>> replayed = replay_log_likelihood("q", settings, choices, shape)
    >>> round(fast, 3), abs(fast - replayed) < 1e-9
    (-12.889, True)
    """
    fast = None if "rt" in settings else vectorised_log_likelihood(agent, settings, choices, shape)
    return fast if fast is not None else replay_log_likelihood(agent, settings, choices, shape)
