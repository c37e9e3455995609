"""One run of an experiment: its agent through the phases of its condition, on its task's
versions, each episode played by the one episode loop (`gym_bridge.episodes.play`) with the
run's seed tree. `graphtasks run`, experiment cells, reproductions and simulated participants
are all runs played here, so one seed gives one sequence of episodes whichever asks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gym_bridge.agents import agent_for_env
from gym_bridge.episodes import Episode, play

from .protocol import run_plan
from .spec import AgentSpec, ExperimentSpec, PhaseSpec
from .versions import TaskVersion


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: a task, an agent setting and a seed, through every phase."""

    index: int
    task: str
    agent: AgentSpec
    seed: int
    condition: str = ""  # the protocol's condition ("": the spec has none)


@dataclass(frozen=True)
class PhaseEpisode:
    """One episode of a run, with the phase and task version it belongs to; `probe` is set on
    the last episode of a probed phase."""

    phase_index: int
    phase: PhaseSpec
    version: TaskVersion
    episode: Episode
    records_steps: bool
    probe: dict[str, Any] | None = None
    rts: tuple[float, ...] | None = None  # each step's response time (seconds) where the agent has a response model


def cells(spec: ExperimentSpec) -> list[Cell]:
    """Every run of the spec, numbered: tasks x conditions x agent settings x seeds, leaving out
    agents limited to other tasks (a spec without limits numbers its runs as it always has)."""
    combos = [
        (t, c, a, s)
        for t in spec.tasks
        for c in spec.condition_names()
        for a in spec.agents
        if a.runs_on(t)
        for s in spec.seeds
    ]
    return [Cell(i, t, a, s, c) for i, (t, c, a, s) in enumerate(combos)]


def probe(agent: Any, phase: PhaseSpec) -> dict[str, Any]:
    """The agent's preference among the phase's probe options at its end: the softmax, at the
    probe's temperature, of the values it gives each (state, action), for the first option
    (the revaluation measure of Momennejad et al. 2017, as neuro-nav's notebooks compute it)."""
    values = np.array([float(agent.values(s)[a]) for s, a in phase.probe])
    z = np.exp((values - values.max()) / phase.probe_temperature)
    return {"preference": float(z[0] / z.sum()), "values": [float(v) for v in values]}


def check_sizes(phase: PhaseSpec, version: TaskVersion, sizes: tuple[int, int], shape: Any) -> None:
    """A later phase's task must have the states and actions the agent was made for."""
    if sizes != shape:
        raise ValueError(
            f"phase {phase.name!r}: {version.task_id} has {sizes[0]} states and {sizes[1]} actions; "
            f"the agent was made for {shape}"
        )


def play_run(spec: ExperimentSpec, cell: Cell, versions: Mapping[str, TaskVersion]) -> Iterator[PhaseEpisode]:
    """Every episode of one run, phase after phase, as each ends.

    The agent is made once, for the first phase's env as the family's view shows it; each
    phase is played as the run's plan says (`protocol.run_plan`: its env and settings, the
    agent settings it sets, learning, greedy, its seed and reset options) through the one loop.

    An agent with a response model (`AgentSpec.response`) chooses and times each choice
    through it (`graphtasks.responses.TimedChooser`, drawing from `response_rng(seed)`): its
    steps are recorded, each with its response time (`PhaseEpisode.rts`, seconds).

    Parameters
    ----------
    spec : ExperimentSpec
        The experiment (its phases, env settings, what it records).
    cell : Cell
        The run: task, agent setting, seed, condition.
    versions : mapping of str to TaskVersion
        Every task version the spec's phases run, prepared (`versions.prepare_versions`).

    Yields
    ------
    PhaseEpisode
        Each episode with its phase, task version and (at a probed phase's end) its probe.

    Examples
    --------
    >>> from graphtasks.experiments.runs import cells, play_run
    >>> from graphtasks.experiments.spec import single_run_spec
    >>> from graphtasks.experiments.versions import prepare_versions
    >>> spec = single_run_spec("neuronav/graph/two_step", "q", seed=0, episodes=3)
    >>> [p.episode.reward for p in play_run(spec, cells(spec)[0], prepare_versions(spec))]
    [1.0, 0.5, 1.0]
    """
    agent: Any = None
    timed = None
    shape: tuple[int, int] | None = None
    for plan in run_plan(spec, cell, versions):
        env = plan.make_env()
        sizes = plan.view.sizes(env)
        if agent is None:
            agent = agent_for_env(cell.agent.name, env, plan.view, cell.seed, **cell.agent.params)
            if cell.agent.response:
                timed = timed_agent(agent, cell.agent.response, cell.seed)
                agent = timed
            shape = sizes
        else:
            check_sizes(plan.phase, plan.version, sizes, shape)
        for key, value in plan.agent.items():
            setattr(agent, key, value)
        options = plan.options(env)
        records = plan.records_steps or timed is not None  # response times are kept per step
        episodes = play(env, agent, plan.episodes, plan.env_seed, options, plan.view, plan.learn, records,
                        plan.greedy)
        for episode in episodes:
            last = episode.index == plan.episodes - 1
            found = probe(agent, plan.phase) if last and plan.probe else None
            rts = None if timed is None else tuple(timed.take_times())
            yield PhaseEpisode(plan.index, plan.phase, plan.version, episode, records, found, rts)


def timed_agent(agent: Any, response: Mapping[str, Any], seed: int) -> Any:
    """`agent` choosing through its response model (``{"rt": "ddm", ...settings}``), drawing
    from the run's response stream (`graphtasks.responses.response_rng`)."""
    from graphtasks.responses import RT_KEY, TimedChooser, response_rng, response_settings

    family = str(response[RT_KEY])
    return TimedChooser(agent, family, response_settings(family, response), response_rng(seed))
