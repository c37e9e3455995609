"""A run's phase plan: the one place that says what each phase of a run is.

Three drivers play a run's phases: the per-agent loop (`runs.play_run`), the batched lanes
(`batched_runs.play_batch_phases`) and the browser session (`graphtasks.serve.engine.
SessionPlayer`). Each asks `run_plan` for the run's phases and plays what it says:

- the task version the phase runs, its family and the view the agent (or person) sees it by;
- the env settings: the spec's, the view's and the phase's, with the phase's step limit for
  the run's task as the family's episode length;
- the agent settings to set as the phase starts: the phase's own (those for every agent and
  those for this agent by its label or name), and the run's own again where an earlier phase
  changed a setting this one does not set;
- whether the agent learns, whether it acts greedily, whether steps are recorded, the probe;
- the env seed of the phase's first reset (`SeedTree(seed).env(i)`) and each episode's reset
  options (its start, drawn from the run's seed tree, and its trial's condition when the phase
  plays the task's schedule).

A phase feature is written here once; what a driver adds is its own (the session draws grids
as text and shows the Room task's question screen).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gym_bridge import family as family_named
from gym_bridge.agents import AGENT_INFO, agent_settings
from gym_bridge.episodes import SeedTree
from gym_bridge.views import AgentView
from tasks import trial_schedule

from .spec import ExperimentSpec, PhaseSpec, agent_observation
from .versions import TaskVersion


@dataclass(frozen=True)
class PhasePlan:
    """One phase of one run, as every driver plays it (see the module docstring).

    Attributes
    ----------
    index : int
        The phase's place in the run's protocol (from 0).
    phase : PhaseSpec
        The phase as the spec gives it.
    version : TaskVersion
        The task version it runs.
    family : object
        The task's bridge family (`gym_bridge.family`).
    view : AgentView
        What the agent (or the person) sees of an observation.
    env : dict
        The env settings the phase's env is made with.
    agent : dict
        The agent settings to set as the phase starts (empty for a person).
    learn, greedy, records_steps : bool
        Whether the agent learns, acts greedily, and whether each step is recorded.
    env_seed : int or None
        The seed of the phase's first reset (`SeedTree(seed).env(index)`).
    tree : SeedTree
        The run's seed tree (start draws and trial orders come from it).
    """

    index: int
    phase: PhaseSpec
    version: TaskVersion
    family: Any
    view: AgentView
    env: dict[str, Any]
    agent: dict[str, Any]
    learn: bool
    greedy: bool
    records_steps: bool
    env_seed: int | None
    tree: SeedTree = field(repr=False)

    @property
    def probe(self) -> tuple[tuple[int, int], ...]:
        """The (state, action) options whose preference is recorded at the phase's end."""
        return self.phase.probe

    @property
    def episodes(self) -> int:
        return self.phase.episodes

    def make_env(self, **extra: Any) -> Any:
        """The phase's env, made with its settings (and `extra`, a driver's own such as render_mode)."""
        return self.family.make_env(self.version.prepared, **{**self.env, **extra})

    def make_vector_env(self, copies: int, **extra: Any) -> Any:
        """The phase's vector env of `copies` copies, made with its settings."""
        return self.family.make_vector_env(self.version.prepared, copies, **extra, **self.env)

    def options(self, env: Any) -> list[dict[str, Any]]:
        """Each episode's reset options: its start (the phase's `start`, drawn from the run's
        seed tree) and its trial's condition (the phase's `schedule`, in the order the run's
        tree shuffles). `env` is the phase's env (its compiled task holds the schedule)."""
        fam, phase, version, tree, index = self.family, self.phase, self.version, self.tree, self.index
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


def env_settings(spec: ExperimentSpec, phase: PhaseSpec, fam: Any, view: Any, task: str) -> dict[str, Any]:
    """A phase's env settings: the spec's, the agent view's and the phase's, with the phase's
    step limit for `task` as the family's episode length."""
    settings = {**spec.env, **view.env_settings, **phase.env}
    limit = phase.steps_limit(task)
    if limit is not None:
        settings[fam.episode_length] = limit
    return settings


def run_settings(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The run's own agent settings: the agent's defaults with the run's params (none for a
    person or an agent the registry does not hold)."""
    if name not in AGENT_INFO:
        return {}
    return {**agent_settings(name), **params}


def run_plan(
    spec: ExperimentSpec,
    cell: Any,
    versions: Mapping[str, TaskVersion],
    observation: str | None = None,
) -> list[PhasePlan]:
    """Every phase of `cell`'s run, planned (see the module docstring).

    Parameters
    ----------
    spec : ExperimentSpec
        The experiment.
    cell : Cell
        The run (`runs.Cell`): task, agent setting, seed, condition.
    versions : mapping of str to TaskVersion
        The task versions the phases run, prepared (`versions.prepare_versions`).
    observation : str, optional
        The view the phases are seen by (default: the observation the cell's agent acts on;
        "index" for a person).

    Returns
    -------
    list of PhasePlan
        One per phase, in order.

    Examples
    --------
    >>> from graphtasks.experiments.protocol import run_plan
    >>> from graphtasks.experiments.runs import cells
    >>> from graphtasks.experiments.spec import single_run_spec
    >>> from graphtasks.experiments.versions import prepare_versions
    >>> spec = single_run_spec("neuronav/graph/two_step", "q", seed=0, episodes=3, max_steps=5)
    >>> plan = run_plan(spec, cells(spec)[0], prepare_versions(spec))
    >>> [(p.version.task_id, p.env, p.learn, p.greedy) for p in plan]
    [('neuronav/graph/two_step', {'max_episode_steps': 5}, True, False)]
    """
    if observation is None:
        observation = agent_observation(cell.agent.name) if cell.agent.name in AGENT_INFO else "index"
    tree = SeedTree(cell.seed)
    base = run_settings(cell.agent.name, cell.agent.params)
    changed: set[str] = set()  # settings an earlier phase set: this one starts from the run's own
    out: list[PhasePlan] = []
    for index, phase in enumerate(spec.phases_of(cell.condition)):
        version = versions[phase.task_id(cell.task)]
        fam = family_named(version.family)
        view = fam.view(observation)
        if view is None:  # the spec refuses this pairing; a hand-made spec or cell may not
            who = f"the {cell.agent.name} agent" if cell.agent.name in AGENT_INFO else "a person"
            raise ValueError(f"{who} cannot play {version.task_id}: its family offers no {observation} view")
        own = phase.settings_for(cell.agent)
        agent = {key: own.get(key, base[key]) for key in sorted(changed | set(own)) if key in base}
        changed |= set(own)
        out.append(PhasePlan(
            index, phase, version, fam, view, env_settings(spec, phase, fam, view, cell.task), agent,
            phase.learn, phase.greedy, spec.records_steps(version.graph), tree.env(index), tree,
        ))
    return out
