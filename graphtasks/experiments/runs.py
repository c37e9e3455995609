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

from gym_bridge import family
from gym_bridge.agents import agent_for_env, agent_settings
from gym_bridge.episodes import Episode, SeedTree, play
from tasks import trial_schedule

from .spec import AgentSpec, ExperimentSpec, PhaseSpec, agent_observation
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


def env_settings(spec: ExperimentSpec, phase: PhaseSpec, fam: Any, view: Any, task: str) -> dict[str, Any]:
    """A phase's env settings: the spec's, the agent view's and the phase's, with the phase's
    step limit for `task` as the family's episode length."""
    settings = {**spec.env, **view.env_settings, **phase.env}
    limit = phase.steps_limit(task)
    if limit is not None:
        settings[fam.episode_length] = limit
    return settings


def check_sizes(phase: PhaseSpec, version: TaskVersion, sizes: tuple[int, int], shape: Any) -> None:
    """A later phase's task must have the states and actions the agent was made for."""
    if sizes != shape:
        raise ValueError(
            f"phase {phase.name!r}: {version.task_id} has {sizes[0]} states and {sizes[1]} actions; "
            f"the agent was made for {shape}"
        )


def phase_options(
    fam: Any, phase: PhaseSpec, version: TaskVersion, tree: SeedTree, index: int, env: Any
) -> list[dict[str, Any]]:
    """Each episode's reset options in phase `index` of a run: its start (the phase's `start`,
    drawn from the run's seed tree) and its trial's condition (the phase's `schedule`, in the
    order the run's tree shuffles). The per-agent and the batched loop both ask here."""
    options = fam.starts.options(
        fam.starts.parse(phase.start, version.graph), version.graph, lambda: tree.starts(index), phase.episodes
    )
    if phase.schedule:
        schedule = getattr(getattr(env.unwrapped, "compiled", None), "schedule", None)
        if not schedule:
            raise ValueError(f"phase {phase.name!r}: {version.task_id} has no trial schedule")
        order = trial_schedule(schedule, tree.schedule(index))
        options = [{**o, "condition": order[e % len(order)]} for e, o in enumerate(options)]
    return list(options)


def play_run(spec: ExperimentSpec, cell: Cell, versions: Mapping[str, TaskVersion]) -> Iterator[PhaseEpisode]:
    """Every episode of one run, phase after phase, as each ends.

    The agent is made once, for the first phase's env as the family's view shows it; each
    phase makes its env from its task version with the spec's, the view's and the phase's
    settings, sets the phase's agent settings (the run's own again where a later phase does
    not set them), and plays through the one loop with the run's seed tree.

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
    [0.0, 0.0, 0.0]
    """
    tree = SeedTree(cell.seed)
    observation = agent_observation(cell.agent.name)
    base = {**agent_settings(cell.agent.name), **cell.agent.params}
    phase_set: set[str] = set()  # settings some phase changed: the next phase starts from the run's own
    agent = None
    shape: tuple[int, int] | None = None
    for index, phase in enumerate(spec.phases_of(cell.condition)):
        version = versions[phase.task_id(cell.task)]
        fam = family(version.family)
        view = fam.view(observation)
        if view is None:  # the spec refuses this pairing; a hand-made spec or cell may not
            raise ValueError(f"the {cell.agent.name} agent cannot run on {version.task_id}")
        env = fam.make_env(version.prepared, **env_settings(spec, phase, fam, view, cell.task))
        sizes = view.sizes(env)
        if agent is None:
            agent = agent_for_env(cell.agent.name, env, view, cell.seed, **cell.agent.params)
            shape = sizes
        else:
            check_sizes(phase, version, sizes, shape)
        for key in phase_set | set(phase.agent):
            if key in base:
                setattr(agent, key, phase.agent.get(key, base[key]))
        phase_set |= set(phase.agent)
        options = phase_options(fam, phase, version, tree, index, env)
        record = spec.records_steps(version.graph)
        episodes = play(env, agent, phase.episodes, tree.env(index), options, view, phase.learn, record)
        for episode in episodes:
            last = episode.index == phase.episodes - 1
            found = probe(agent, phase) if last and phase.probe else None
            yield PhaseEpisode(index, phase, version, episode, record, found)

