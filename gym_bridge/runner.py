"""Play an agent for a number of episodes on an env you made, and summarise what happened.

A thin face of the one episode loop (`gym_bridge.episodes`) for Python users who hold an env
and an agent; experiments and `graphtasks run` play runs through
`graphtasks.experiments.runs`, the same loop with the same seed tree. The log keeps per
episode the total reward, the length, the first action and the state it led to, so two-step
analyses (stay probabilities after common/rare, rewarded/unrewarded trials) come straight
from it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from graphstore import TaskGraph
from tasks import trial_schedule

from .agents.base import Agent
from .episodes import SeedTree, play
from .graph.env import GraphTaskEnv
from .views import INDEX, AgentView


@dataclass
class RunLog:
    task_id: str
    rewards: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    first_actions: list[int] = field(default_factory=list)
    first_states: list[int] = field(default_factory=list)  # the state the first action led to
    conditions: list[str | None] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def episodes(self) -> int:
        return len(self.rewards)

    def add(self, episode: Any) -> None:
        """Log one `gym_bridge.episodes.Episode`."""
        self.rewards.append(episode.reward)
        self.lengths.append(episode.length)
        self.first_actions.append(episode.first_action)
        self.first_states.append(episode.first_state)
        self.conditions.append(episode.condition)

    def summary(self, window: int = 100) -> dict[str, Any]:
        rewards = np.asarray(self.rewards)
        steps = int(np.sum(self.lengths))
        return {
            "task": self.task_id,
            "episodes": self.episodes,
            "steps": steps,
            "mean_reward": float(rewards.mean()) if len(rewards) else 0.0,
            f"mean_reward_last_{window}": float(rewards[-window:].mean()) if len(rewards) else 0.0,
            "mean_length": float(np.mean(self.lengths)) if self.lengths else 0.0,
            "seconds": round(self.seconds, 3),
            "steps_per_second": round(steps / self.seconds) if self.seconds else None,
        }


def run_episodes(
    env: gym.Env,
    agent: Agent,
    episodes: int,
    seed: int | None = 0,
    schedule: bool = False,
    on_episode: Callable[[int, RunLog], None] | None = None,
    view: AgentView = INDEX,
) -> RunLog:
    """Play `episodes` episodes of `agent` on `env` as one phase of a run with seed `seed`:
    the one episode loop (`gym_bridge.episodes.play`) with the run's seed tree, so the env is
    reset with `SeedTree(seed).env(0)` (as an experiment's cell of that seed is), not with
    `seed` itself. With `schedule`, trial i uses the task's scheduled condition i.

    Parameters
    ----------
    env : gymnasium.Env
        The environment, made by `gym_bridge.make_env` or an env class.
    agent : Agent
        The agent (`gym_bridge.agents.make_agent`), sized for the env as `view` shows it.
    episodes : int
        How many episodes to play.
    seed : int or None, optional
        The run's seed: the root of its seed tree (None: fresh entropy).
    schedule : bool, optional
        Reset trial i with the task's scheduled condition i (the task's trial schedule, drawn
        from the seed tree); the task must have one.
    on_episode : callable, optional
        ``on_episode(index, log)`` after each episode (e.g. a progress bar).
    view : AgentView, optional
        How the agent sees the env (the state index by default).

    Returns
    -------
    RunLog
        Per episode its reward, length, first action, the state it led to and its condition,
        and the seconds the loop took.

    Raises
    ------
    ValueError
        `schedule` is set and the task has no trial schedule.

    Examples
    --------
    >>> from gym_bridge import make_env
    >>> from gym_bridge.agents import make_agent
    >>> from gym_bridge.runner import run_episodes
    >>> env = make_env("neuronav/graph/two_step", store=":memory:")
    >>> log = run_episodes(env, make_agent("q", 7, 2, seed=0), 50, seed=0)
    >>> log.episodes, len(log.rewards)
    (50, 50)
    """
    tree = SeedTree(seed)
    options: list[dict[str, Any] | None] | None = None
    if schedule:
        spec = getattr(getattr(env.unwrapped, "compiled", None), "schedule", None)
        if not spec:
            raise ValueError("this task has no trial schedule")
        order = trial_schedule(spec, tree.schedule(0))
        options = [{"condition": order[i % len(order)]} for i in range(episodes)]
    compiled = getattr(env.unwrapped, "compiled", None)
    log = RunLog(getattr(compiled, "task_id", None) or str(getattr(env.unwrapped, "task_id", env)))
    start = time.perf_counter()
    for episode in play(env, agent, episodes, tree.env(0), options, view):
        log.add(episode)
        if on_episode is not None:
            on_episode(episode.index, log)
    log.seconds = time.perf_counter() - start
    return log


def first_transitions(task: GraphTaskEnv | TaskGraph) -> dict[tuple[int, int], float]:
    """P(first action leads to state) from the task's start state, by (action, state index):
    from a graph env's compiled form, or from a task graph's START state and MOVE edges."""
    if isinstance(task, TaskGraph):
        index = {local: int(props["index"]) for local, props in task.nodes("State")}
        start = next((t for s, t, _ in task.edges("START")), None)
        return {
            (int(props["action"]), index[target]): float(props["p"])
            for source, target, props in task.edges("MOVE")
            if source == start and target in index
        }
    c = task.compiled
    return {
        (a, int(t)): float(p)
        for a in range(c.n_actions)
        for t, p in zip(c.targets[c.start, a], c.probs[c.start, a])
        if t >= 0
    }


def stay_probabilities(log: RunLog, task: GraphTaskEnv | TaskGraph) -> dict[str, float]:
    """P(repeat the first choice) after rewarded/unrewarded x common/rare first transitions
    (Daw et al. 2011); nan where no trial fell in a cell.

    A transition is common when its probability under the task (no condition) is >= 0.5.
    """
    probability = first_transitions(task)
    cells: dict[str, list[bool]] = {
        k: [] for k in ("rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare")
    }
    for i in range(len(log.rewards) - 1):
        common = probability.get((log.first_actions[i], log.first_states[i]), 1.0) >= 0.5
        key = ("rewarded" if log.rewards[i] > 0 else "unrewarded") + ("_common" if common else "_rare")
        cells[key].append(log.first_actions[i + 1] == log.first_actions[i])
    return {k: float(np.mean(v)) if v else float("nan") for k, v in cells.items()}
