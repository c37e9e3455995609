"""The one episode loop, and the one seed tree every run draws from.

Everything in graphtasks that plays episodes plays them here: `graphtasks run`, each cell of
an experiment, the reproductions, the simulated participants of fitting. So one seed gives
one sequence of episodes whichever of them asks.

The seed tree of a run with seed `s` (numpy `SeedSequence`s, so the streams are independent):

- the environment of phase `p` is reset once, at its first episode, with `env(p)`
  (= the first word of `SeedSequence([s, p, 0])`), and its own stream carries on from there;
- start states drawn for phase `p` come from `starts(p)` (`SeedSequence([s, p, 1])`);
- the trial order of a scheduled phase from `schedule(p)` (spawned from `env(p)`);
- the agent draws from its own stream, `agent_rng(s)` (`gym_bridge.agents.base`), made when
  the agent is made with `seed=s`.

A run of one phase with seed 0 therefore resets its env with `env(0)`, not with 0: the same
number an experiment's cell of seed 0 uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from .agents.base import greedy_choice
from .views import INDEX, AgentView, offered_actions

SCHEDULE_STREAM = 0x7363686564  # "sched"


@dataclass(frozen=True)
class SeedTree:
    """Every random stream of a run, derived from its seed alone (see the module docstring).

    So a run is reproduced from its seed: the env's resets, the start draws and a schedule's
    trial order each come from their own stream, per phase, independent of one another.

    Parameters
    ----------
    seed : int or None
        The run's seed; None: fresh entropy for every stream (nothing reproducible).

    Examples
    --------
    >>> from gym_bridge.episodes import SeedTree
    >>> tree = SeedTree(0)
    >>> tree.env(0) == SeedTree(0).env(0) != tree.env(1)
    True
    """

    seed: int | None

    def _word(self, phase: int, stream: int) -> int | None:
        if self.seed is None:
            return None
        return int(np.random.SeedSequence([self.seed, phase, stream]).generate_state(1)[0])

    def env(self, phase: int) -> int | None:
        """The seed phase `phase`'s environment is reset with at its first episode.

        Parameters
        ----------
        phase : int
            The phase's index in the run.

        Returns
        -------
        int or None
            The seed (None when the tree's seed is None).
        """
        return self._word(phase, 0)

    def starts(self, phase: int) -> np.random.Generator:
        """The generator start states of phase `phase` are drawn from.

        Parameters
        ----------
        phase : int
            The phase's index in the run.

        Returns
        -------
        numpy.random.Generator
            The phase's start-draw generator.
        """
        return np.random.default_rng(self._word(phase, 1))

    def schedule(self, phase: int) -> np.random.Generator:
        """The generator that orders the trials of a scheduled phase (independent of the env's).

        Parameters
        ----------
        phase : int
            The phase's index in the run.

        Returns
        -------
        numpy.random.Generator
            The phase's schedule generator.
        """
        seed = self.env(phase)
        if seed is None:
            return np.random.default_rng()
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SCHEDULE_STREAM,)))


Step = tuple[int, int, float, int, float]  # state, action, reward, next state, P(action) when chosen


@dataclass
class Episode:
    """What happened in one episode; `steps` only when they are recorded."""

    index: int
    reward: float
    length: int
    start_state: int  # as the agent's view records a state (the state index for tabular agents)
    first_action: int
    first_state: int  # the state the first action led to
    condition: str | None = None
    steps: list[Step] | None = field(default=None, repr=False)


def play(
    env: gym.Env,
    agent: Any,
    episodes: int,
    env_seed: int | None,
    options: Sequence[dict[str, Any] | None] | None = None,
    view: AgentView = INDEX,
    learn: bool = True,
    record_steps: bool = False,
    greedy: bool = False,
) -> Iterator[Episode]:
    """Play `episodes` episodes of `agent` on `env`, yielding each as it ends.

    The env is reset with `env_seed` at the first episode only (its stream goes on after
    that), as a run's phase is (`SeedTree.env`). With `record_steps`, each step's P(action)
    is taken before the step and the learning that follows it change the policy.

    Parameters
    ----------
    env : gymnasium.Env
        Any graphtasks env (or a wrapper of one).
    agent : object
        An agent: `begin_episode`, `act`, `action_probabilities`, `learn`.
    episodes : int
        How many episodes to play.
    env_seed : int or None
        The seed of the first reset (None: the env's stream as it is).
    options : sequence of dict or None, optional
        Episode e's reset options (a start, a condition); None: no options.
    view : AgentView, optional
        What the agent sees of an observation (default: the state index).
    learn : bool, optional
        False: the agent acts but does not learn (a test phase).
    record_steps : bool, optional
        Keep every step (state, action, reward, next state, P(action)) on the Episode.
    greedy : bool, optional
        Act greedily (a greedy test phase): the offered action of highest value
        (`gym_bridge.agents.base.greedy_choice`, ties broken by the agent's own stream); the
        recorded P(action) is then the greedy policy's (1 over the number of tied actions).

    Yields
    ------
    Episode
        Its return, length, start state, first action and where it led, condition, steps.

    Examples
    --------
    >>> from gym_bridge import make_env
    >>> from gym_bridge.agents import make_agent
    >>> from gym_bridge.episodes import SeedTree, play
    >>> env = make_env("neuronav/graph/two_step", store=":memory:")
    >>> agent = make_agent("q", 7, 2, seed=0)
    >>> [e.length for e in play(env, agent, 3, SeedTree(0).env(0))]
    [2, 2, 2]
    """
    if episodes < 1:
        raise ValueError(f"episodes: expected a positive number, got {episodes}")
    all_actions = offered_actions(env)
    state_of, recorded, action_index = view.state, view.recorded, view.action_index
    for episode in range(episodes):
        chosen = options[episode] if options is not None else None
        obs, info = env.reset(seed=env_seed if episode == 0 else None, options=chosen or None)
        state = state_of(obs, info)
        available = info.get("available_actions", all_actions)
        first = recorded(state)
        first_action, first_state = -1, -1
        agent.begin_episode()
        total, length = 0.0, 0
        steps: list[Step] | None = [] if record_steps else None
        while True:
            if greedy:
                action, p_action = greedy_choice(agent, state, available)
            else:
                action = agent.act(state, available)
                if steps is not None:
                    p_action = float(agent.action_probabilities(state, available)[action])
            obs, step_reward, terminated, truncated, info = env.step(action)
            reward = float(step_reward)
            next_state = state_of(obs, info)
            available = info.get("available_actions", all_actions)
            if steps is not None:
                steps.append((recorded(state), action_index(action), reward, recorded(next_state), p_action))
            if learn:
                agent.learn(state, action, reward, next_state, terminated, available)
            if length == 0:
                first_action, first_state = action_index(action), recorded(next_state)
            total += reward
            length += 1
            state = next_state
            if terminated or truncated:
                break
        condition = chosen.get("condition") if chosen else None
        yield Episode(episode, total, length, first, first_action, first_state, condition, steps)
