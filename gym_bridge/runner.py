"""Run an agent for a number of episodes and summarise what happened.

The runner records per episode the total reward, the length, the first action and the
state it led to, so two-step analyses (stay probabilities after common/rare, rewarded/
unrewarded trials) come straight from the log.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from tasks import trial_schedule

from .agents.base import Agent
from .graph.env import GraphTaskEnv

SCHEDULE_STREAM = 0x7363686564  # "sched"


def schedule_rng(seed: int | None) -> np.random.Generator:
    """A stream for the trial order that is independent of the env's and the agent's."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SCHEDULE_STREAM,)))


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


def action_count(env: gym.Env) -> int:
    """How many actions a tabular agent chooses from: the size of the Discrete action space."""
    space = env.action_space
    if not isinstance(space, gym.spaces.Discrete):
        raise ValueError(f"tabular agents need a Discrete action space, got {space}")
    return int(space.n)


def agent_state_count(env) -> int:
    """How many states a tabular agent needs: `info["state"]` indices or the observations."""
    n_states = getattr(env.unwrapped, "n_states", None)  # grids: depends on the orientation mode
    if isinstance(n_states, int):
        return n_states
    compiled = getattr(env.unwrapped, "compiled", None)
    if compiled is not None and hasattr(compiled, "n_states"):
        return int(compiled.n_states)
    if isinstance(env.observation_space, gym.spaces.Discrete):
        return int(env.observation_space.n)
    raise ValueError("tabular agents need a state index: use obs_type='index' for this environment")


def _view(obs: Any, info: dict[str, Any], all_actions: tuple[int, ...]) -> tuple[int, Sequence[int]]:
    """The agent's state (`info["state"]`, else the Discrete observation) and the offered actions."""
    state = info["state"] if "state" in info else int(obs)
    return state, info.get("available_actions", all_actions)


def run_episodes(
    env: gym.Env,
    agent: Agent,
    episodes: int,
    seed: int | None = 0,
    schedule: bool = False,
    on_episode: Callable[[int, RunLog], None] | None = None,
) -> RunLog:
    """Run `episodes` episodes; with `schedule`, trial i uses the task's scheduled condition i."""
    if episodes < 1:
        raise ValueError(f"episodes: expected a positive number, got {episodes}")
    conditions: list[str | None] = [None] * episodes
    if schedule:
        spec = getattr(getattr(env, "compiled", None), "schedule", None)
        if not spec:
            raise ValueError("this task has no trial schedule")
        order = trial_schedule(spec, schedule_rng(seed))
        conditions = [order[i % len(order)] for i in range(episodes)]
    all_actions = tuple(range(action_count(env)))
    compiled = getattr(env, "compiled", None)
    log = RunLog(getattr(compiled, "task_id", None) or str(getattr(env, "task_id", env)))
    start = time.perf_counter()
    obs, info = env.reset(seed=seed)
    for episode in range(episodes):
        if episode:
            options = {"condition": conditions[episode]} if conditions[episode] else None
            obs, info = env.reset(options=options)
        elif conditions[0]:
            obs, info = env.reset(options={"condition": conditions[0]})
        agent.begin_episode()
        state, available = _view(obs, info, all_actions)
        total, length = 0.0, 0
        while True:
            action = agent.act(state, available)
            obs, step_reward, terminated, truncated, info = env.step(action)
            reward = float(step_reward)
            next_state, available = _view(obs, info, all_actions)
            agent.learn(state, action, reward, next_state, terminated, available)
            if length == 0:
                log.first_actions.append(action)
                log.first_states.append(next_state)
            total += reward
            length += 1
            state = next_state
            if terminated or truncated:
                break
        log.rewards.append(total)
        log.lengths.append(length)
        log.conditions.append(conditions[episode])
        if on_episode is not None:
            on_episode(episode, log)
    log.seconds = time.perf_counter() - start
    return log


def stay_probabilities(log: RunLog, env: GraphTaskEnv) -> dict[str, float]:
    """P(repeat the first choice) after rewarded/unrewarded x common/rare first transitions.

    A transition is common when its probability under the task (no condition) is >= 0.5.
    """
    c = env.compiled
    probability = {}
    for a in range(c.n_actions):
        for t, p in zip(c.targets[c.start, a], c.probs[c.start, a]):
            if t >= 0:
                probability[(a, int(t))] = p
    cells: dict[str, list[bool]] = {
        k: [] for k in ("rewarded_common", "rewarded_rare", "unrewarded_common", "unrewarded_rare")
    }
    for i in range(len(log.rewards) - 1):
        common = probability.get((log.first_actions[i], log.first_states[i]), 1.0) >= 0.5
        key = ("rewarded" if log.rewards[i] > 0 else "unrewarded") + ("_common" if common else "_rare")
        cells[key].append(log.first_actions[i + 1] == log.first_actions[i])
    return {k: float(np.mean(v)) if v else float("nan") for k, v in cells.items()}
