"""Runs of an experiment played as batches: cells that share a task, an agent and a protocol
go through their phases together, as the lanes of a batched agent on a native vector env
(`gym_bridge.batched_episodes.play_lanes`).

A cell is batched when its agent has a batched form (`gym_bridge.agents.batched`), acts on
the state index, its task's family has a vector env, and no phase changes an agent setting
the batched form holds once for all lanes; any other cell is played per agent
(`runs.play_run`), and the sweep's
summary says how many went which way. A batched cell yields what `play_run` yields, so its
records, probes and trials are written exactly as a per-agent run's are.

Each lane draws from streams keyed by its cell's seed alone, so a cell's numbers are the same
alone or in a batch of any size, on any number of workers. They are not the numbers of the
per-agent run of the same seed (other streams): the two agree in distribution
(`tests/test_batched_agents.py`). Phases with per-episode starts or a trial schedule give
each lane its own reset options (`runs.phase_options`, from the cell's seed tree).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from gym_bridge import family
from gym_bridge.agents import BATCHED, agent_settings, batched_bytes, has_batched_form, make_batched
from gym_bridge.batched_episodes import LaneEpisodes, play_lanes
from gym_bridge.views import index_state

from .protocol import env_settings, run_plan, run_settings
from .runs import Cell, PhaseEpisode, check_sizes, play_run, probe
from .spec import ExperimentSpec, PhaseSpec, agent_observation
from .versions import TaskVersion

MAX_LANES = 1024  # lanes of one batch, at most
BATCH_BYTES = 256 * 2**20  # agent tables of one batch, at most


def batch_key(spec: ExperimentSpec, cell: Cell, versions: Mapping[str, TaskVersion]) -> tuple[Any, ...] | None:
    """What cells must share to run as one batch, or None if this cell runs per agent.

    Cells batch together when they share the task, the protocol condition, the agent and
    every setting that is not a number held per lane (a word such as `bootstrap`, whether
    `beta` is set).
    """
    name = cell.agent.name
    if not has_batched_form(name) or agent_observation(name) != "index" or cell.agent.response:
        return None  # (the lanes draw no response times: an agent with a response model plays per agent)
    merged = run_settings(name, cell.agent.params)
    if not BATCHED[name].supports(merged):
        return None
    changeable = set(BATCHED[name].numbers) | ({"beta"} if merged.get("beta") is not None else set())
    for phase in spec.phases_of(cell.condition):
        if set(phase.settings_for(cell.agent)) - changeable:
            return None
        fam = family(versions[phase.task_id(cell.task)].family)
        view = fam.view("index")
        if fam.vector_env is None or view is None or view.state is not index_state:
            return None  # the batched loop reads info["state"], the index view's state
    words = tuple(sorted((k, repr(v)) for k, v in merged.items() if k not in BATCHED[name].numbers and k != "beta"))
    return (cell.task, cell.condition, name, words, merged.get("beta") is None)


def lanes_per_batch(name: str, n_states: int, n_actions: int, settings: Mapping[str, Any] | None = None) -> int:
    """How many lanes fit the memory budget (`BATCH_BYTES`), at most `MAX_LANES`."""
    per_lane = max(1, batched_bytes(name, n_states, n_actions, settings))
    return max(1, min(MAX_LANES, BATCH_BYTES // per_lane))


def group_cells(
    spec: ExperimentSpec, cells: Sequence[Cell], versions: Mapping[str, TaskVersion], workers: int = 1
) -> list[Cell | tuple[Cell, ...]]:
    """The sweep's units of work: batches of cells (tuples) and single cells, in cell order.

    Batches are split so that every worker has one (`workers`) and none is larger than the
    memory budget allows; which cells share a batch never changes their numbers.
    """
    timed = sorted({c.agent.label for c in cells if c.agent.response and has_batched_form(c.agent.name)})
    if timed:  # said, not silent: these runs would otherwise have been lanes
        import warnings

        warnings.warn(f"{', '.join(timed)}: an agent with a response model plays per agent (the batched lanes "
                      "draw no response times)", UserWarning, stacklevel=2)
    groups: dict[tuple[Any, ...], list[Cell]] = {}
    units: list[Cell | tuple[Cell, ...]] = []
    keys: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}  # cells of one agent setting share their key
    for cell in cells:
        same = (cell.task, cell.condition, cell.agent.name, cell.agent.label, cell.agent.written,
                repr(sorted(cell.agent.params.items())))
        if same not in keys:
            keys[same] = batch_key(spec, cell, versions)
        key = keys[same]
        if key is None:
            units.append(cell)
        else:
            groups.setdefault(key, []).append(cell)
    for members in groups.values():
        phase = spec.phases_of(members[0].condition)[0]
        _, sizes, _ = phase_env(spec, phase, versions[phase.task_id(members[0].task)], members[0].task)
        name = members[0].agent.name
        limit = lanes_per_batch(name, *sizes, {**agent_settings(name), **members[0].agent.params})
        pieces = max(-(-len(members) // limit), min(workers, len(members)))
        size = -(-len(members) // pieces)
        units.extend(tuple(members[i : i + size]) for i in range(0, len(members), size))
    return sorted(units, key=lambda u: u[0].index if isinstance(u, tuple) else u.index)


def phase_env(
    spec: ExperimentSpec, phase: Any, version: TaskVersion, task: str
) -> tuple[Any, tuple[int, int], dict[str, Any]]:
    """A phase's family, the agent's table sizes on its env, and the env settings (the spec's,
    the index view's and the phase's, with the phase's step limit), as `play_run` makes them."""
    fam = family(version.family)
    view = fam.view("index")
    assert view is not None  # batch_key checked it
    settings = env_settings(spec, phase, fam, view, task)
    return fam, view.sizes(fam.make_env(version.prepared, **settings)), settings


@dataclass(frozen=True)
class PhaseLanes:
    """One phase of a batch: every lane's episodes as columns (`LaneEpisodes`, lane i is the
    batch's cell i) with the phase, its task version, whether steps were recorded, and each
    lane's probe at the phase's end (None where the phase is not probed)."""

    phase_index: int
    phase: PhaseSpec
    version: TaskVersion
    records_steps: bool
    lanes: LaneEpisodes
    probes: list[dict[str, Any]] | None = None


def play_batch(
    spec: ExperimentSpec, batch: Sequence[Cell], versions: Mapping[str, TaskVersion], compiled: bool = True
) -> dict[int, list[PhaseEpisode]]:
    """Every episode of these cells (one batch: `group_cells`), phase after phase, by cell index.

    The batch's agent is made once, for the first phase's env; each phase is played as each
    cell's plan says (`protocol.run_plan`): a vector env of one copy per cell with the phase's
    env settings, each lane's agent settings for the phase, and every lane through `play_lanes`
    with its cell's env seed and reset options.

    Parameters
    ----------
    spec : ExperimentSpec
        The experiment.
    batch : sequence of Cell
        Cells that share a `batch_key`.
    versions : mapping of str to TaskVersion
        Every task version the phases run, prepared.
    compiled : bool, optional
        Let `play_lanes` use its compiled loop where it applies (the same numbers); False: numpy.

    Returns
    -------
    dict of int to list of PhaseEpisode
        Each cell's episodes, in order, as `play_run` yields them.

    Examples
    --------
    >>> from graphtasks.experiments.batched_runs import play_batch
    >>> from graphtasks.experiments.runs import cells
    >>> from graphtasks.experiments.spec import single_run_spec
    >>> from graphtasks.experiments.versions import prepare_versions
    >>> spec = single_run_spec("neuronav/graph/two_step", "q", seed=0, episodes=3)
    >>> played = play_batch(spec, cells(spec), prepare_versions(spec))
    >>> [p.episode.length for p in played[0]]
    [2, 2, 2]
    """
    out: dict[int, list[PhaseEpisode]] = {cell.index: [] for cell in batch}
    for played in play_batch_phases(spec, batch, versions, compiled):
        last = played.phase.episodes - 1
        probes: Sequence[dict[str, Any] | None] = [None] * len(batch) if played.probes is None else played.probes
        for cell, episodes, found in zip(batch, played.lanes, probes):
            out[cell.index].extend(
                PhaseEpisode(played.phase_index, played.phase, played.version, episode, played.records_steps,
                             found if episode.index == last else None)
                for episode in episodes
            )
    return out


def play_batch_phases(
    spec: ExperimentSpec, batch: Sequence[Cell], versions: Mapping[str, TaskVersion], compiled: bool = True,
    progress: Callable[[int], object] | None = None,
) -> list[PhaseLanes]:
    """`play_batch` with each phase's episodes kept as columns (`PhaseLanes`): what a sweep
    writes as record chunks without making an object per episode. `progress` is told the
    episodes that end as they end (`play_lanes`)."""
    first = batch[0]
    name = first.agent.name
    plans = [run_plan(spec, cell, versions, "index") for cell in batch]
    bases = [run_settings(name, cell.agent.params) for cell in batch]
    out: list[PhaseLanes] = []
    agent = None
    shape: tuple[int, int] | None = None
    for lanes_plan in zip(*plans):
        plan = lanes_plan[0]  # what the lanes share: the phase, its task version, its env and its flags
        env = plan.make_vector_env(len(batch), autoreset_mode="disabled")
        sizes = plan.view.sizes(plan.make_env())
        if agent is None:
            agent = make_batched(name, sizes[0], sizes[1], [cell.seed for cell in batch],
                                 [cell.agent.params for cell in batch])
            shape = sizes
        else:
            check_sizes(plan.phase, plan.version, sizes, shape)
        for key in sorted({key for lane in lanes_plan for key in lane.agent}):
            agent.set_setting(key, np.array([lane.agent.get(key, base[key]) for lane, base in zip(lanes_plan, bases)]))
        seeds = [lane.env_seed for lane in lanes_plan]
        options = [lane.options(env) for lane in lanes_plan]
        lanes = play_lanes(env, agent, plan.episodes, [int(s) for s in seeds if s is not None], plan.learn,
                           plan.records_steps, compiled, options, plan.greedy, progress)
        probes = [probe(agent.lane(lane), plan.phase) for lane in range(len(batch))] if plan.probe else None
        out.append(PhaseLanes(plan.index, plan.phase, plan.version, plan.records_steps, lanes, probes))
    return out


def play_cell(
    spec: ExperimentSpec, cell: Cell, versions: Mapping[str, TaskVersion], batched: bool = True
) -> Iterator[PhaseEpisode]:
    """Every episode of one cell, as the sweep plays it: as a batch of one lane where the cell
    batches (`batch_key`), else per agent (`play_run`); `batched=False` plays it per agent.
    `graphtasks run` plays its one cell here, so it walks the episodes of the sweep's cell."""
    if batched and batch_key(spec, cell, versions) is not None:
        yield from play_batch(spec, [cell], versions)[cell.index]
    else:
        yield from play_run(spec, cell, versions)
