"""Choices of a simulated agent: what parameter and model recovery fit back."""

from __future__ import annotations

from typing import Any

from gym_bridge import make_env
from gym_bridge.agents import make_agent

from .behaviour import Choices
from .likelihood import env_sizes


def simulate(task_id: str, agent: str, settings: dict[str, Any], trials: int, seed: int, store: Any = None) -> Choices:
    """`trials` episodes of `agent` with `settings` on `task_id`, seeded; every step recorded."""
    env = make_env(task_id, store=store)
    n_states, n_actions = env_sizes(env)
    chooser = make_agent(agent, n_states, n_actions, seed=seed, **settings)
    all_actions = tuple(range(n_actions))
    steps: list[tuple[int, int, float, int, bool]] = []
    obs, info = env.reset(seed=seed)
    for trial in range(trials):
        if trial:
            obs, info = env.reset()
        chooser.begin_episode()
        state, available = info.get("state", obs), info.get("available_actions", all_actions)
        while True:
            action = chooser.act(state, available)
            obs, reward, terminated, truncated, info = env.step(action)
            nxt, available = info.get("state", obs), info.get("available_actions", all_actions)
            chooser.learn(state, action, float(reward), nxt, terminated, available)
            steps.append((int(state), int(action), float(reward), int(nxt), bool(terminated or truncated)))
            state = nxt
            if terminated or truncated:
                break
    return Choices.from_steps(task_id, steps, f"simulated {agent} seed {seed}", truth={"agent": agent, **settings})
