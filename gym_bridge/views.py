"""What an agent sees of an environment: one `AgentView` per kind of observation an agent takes.

Agents declare the observation they act on (`observation = "index"` for the tabular agents,
"room" for the Room task's memory agents); a family lists the views it offers, so whether an
agent can run on a task is one lookup, and the episode loop asks the view, never the family,
for the agent's state and sizes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym


def discrete_size(space: gym.Space) -> int:
    """The number of values of a Discrete space; ValueError for any other space."""
    if not isinstance(space, gym.spaces.Discrete):
        raise ValueError(f"tabular agents need a Discrete space, got {space}")
    return int(space.n)


def action_count(env: gym.Env) -> int:
    """How many actions a tabular agent chooses from: the size of the Discrete action space."""
    return discrete_size(env.action_space)


def offered_actions(env: gym.Env) -> tuple[int, ...]:
    """The actions the episode loop offers an agent: every action of a Discrete space; none listed
    for other spaces (a Room map's answers and move: its agents read what they need themselves)."""
    space = env.action_space
    return tuple(range(int(space.n))) if isinstance(space, gym.spaces.Discrete) else ()


def agent_state_count(env: gym.Env) -> int:
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


def index_state(obs: Any, info: Mapping[str, Any]) -> int:
    """The state index: `info["state"]` where the env gives it, else the Discrete observation."""
    return info["state"] if "state" in info else int(obs)


def index_sizes(env: gym.Env) -> tuple[int, int]:
    return agent_state_count(env), action_count(env)


@dataclass(frozen=True)
class AgentView:
    """One observation kind: the state an agent gets from (obs, info), the table sizes it
    needs, the env settings the view relies on (e.g. POGE's `obs_type="index"`), and the
    index a Trial record keeps of a state.

    A family lists the views its envs offer (`Family.views`); an agent names the view it
    takes, so the episode loop knows which agents a task accepts and how to feed them.

    Parameters
    ----------
    observation : str
        The view's name (``"index"``, ...), which agents declare.
    state : callable, optional
        ``state(obs, info)``: the state the agent gets; by default ``info["state"]`` where
        the env gives it, else the Discrete observation.
    sizes : callable, optional
        ``sizes(env)``: (number of states, number of actions) a tabular agent needs.
    env_settings : mapping, optional
        Env settings the view relies on, applied when the env is made.
    description : str, optional
        One line for listings.
    recorded : callable, optional
        The state index a Trial record keeps of a state (``int`` by default).
    action_index : callable, optional
        The action index a Trial record keeps of an action (``int`` by default).

    Examples
    --------
    >>> from gym_bridge import GraphTaskEnv
    >>> from gym_bridge.views import INDEX
    >>> env = GraphTaskEnv("neuronav/graph/linear", store=":memory:")
    >>> obs, info = env.reset(seed=0)
    >>> INDEX.observation, INDEX.state(obs, info), INDEX.sizes(env)
    ('index', 0, (6, 1))
    """

    observation: str
    state: Callable[[Any, Mapping[str, Any]], Any] = index_state
    sizes: Callable[[gym.Env], tuple[int, int]] = index_sizes
    env_settings: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    recorded: Callable[[Any], int] = int  # the state index a Trial record keeps of a state
    action_index: Callable[[Any], int] = int  # the action index a Trial record keeps of an action


INDEX = AgentView("index", description="a state index (info['state'] or the Discrete observation)")
