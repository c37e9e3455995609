"""Experiment spec files (TOML): what to run, checked before anything runs.

    [experiment]
    name = "reward-transfer"
    tasks = ["neuronav/grid/t_maze/small"]
    seeds = 5                      # 0..4, or a list such as [0, 7, 11]

    [env]                          # environment settings for every phase
    time_penalty = 0.01

    [[agents]]
    name = "q"                     # an agent (graphtasks agents lists them and the tasks each takes)
    params = { lr = 0.1 }
    grid = { beta = [1.0, 5.0] }   # one run per value (per combination for several)
    tasks = ["neuronav/grid/t_maze/small"]   # optional: only these of the experiment's tasks
    response = "ddm"               # optional: "ddm" or "lba" choose and time each choice from the
                                   # agent's values (its settings in params/grid: drift_scale, threshold,
                                   # t0, ...; graphtasks.responses); its runs record an rt per step

    [[phases]]
    name = "learning"
    episodes = 200
    max_episode_steps = 100        # the episode length of this phase (or { "task id" = steps, ... })
    [[phases]]
    name = "goal moved"
    episodes = 200
    learn = true                   # false: a test phase, the agent acts but does not learn
    greedy = false                 # true: every agent acts greedily (the argmax of its values)
    agent = { epsilon = 0.0 }      # agent settings for this phase only (every agent must have them)
                                   # or one agent's, by its label or name: agent = { q = { lr = 0.2 } }
    env = { time_penalty = 0.0 }   # environment settings for this phase only
    start = [9, 5]                 # "default", "random", a cell / state, or a list to cycle through
    changes = { rewards = [{ cell = [1, 1], value = 1.0 }] }   # what the task's family can change
    probe = { options = [[0, 0], [1, 0]], temperature = 5.0 }  # a preference recorded at the phase's end

    [[conditions]]                 # optional: runs in several conditions (between runs)
    name = "reward"
    [conditions.phases."goal moved"]   # fields that differ from the phase of that name
    start = [2, 3]

    [study]                        # optional: what people see when the spec is served as a study
    title = "A two-step task"      # (graphtasks serve, docs/participants.md); kept, agents ignore it

Tasks are any stored task: built-in ids are built from their files, others are read from the
store (`graphtasks tasks load --file`, `graphtasks poge load`), and `id@hash` pins a version
(see `graphtasks.experiments.versions`). Every error is one line naming the file, the line
and the field.
"""

from __future__ import annotations

import inspect
import itertools
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from graphstore import GraphStore, TaskGraph, did_you_mean
from graphstore.errors import GraphtasksError
from gym_bridge import family_of
from gym_bridge.agents import AGENT_INFO, AGENTS, AgentSettingError, agent_settings, check_agent_settings
from gym_bridge.agents.base import can_act_greedily
from gym_bridge.starts import StartError
from tasks import unpinned, variant_id
from tasks.data import data_dir, decode_utf8, read_input

from ..responses import RT_KEY, RT_SETTINGS, response_setting_error
from .versions import TaskSource

TOP_TABLES = ("experiment", "env", "agents", "phases", "conditions", "study")
EXPERIMENT_KEYS = ("name", "description", "reference", "tasks", "seeds", "record")
RECORD = ("auto", "episodes", "steps")
AGENT_KEYS = ("name", "label", "params", "grid", "tasks", "response")
PHASE_KEYS = (
    "name", "episodes", "max_episode_steps", "task", "learn", "greedy", "agent", "env", "start", "schedule",
    "changes", "probe", "max_steps",  # max_steps: max_episode_steps's old name, taken with a warning
)
CONDITION_KEYS = ("name", "phases")
PROBE_KEYS = ("options", "temperature")
ENV_FIXED = ("self", "task", "store", "render_mode", "knowledge")  # not settings a spec gives
# Limits, checked before anything is built (docs/limits.md): a spec is small text, and what it
# asks for must fit in memory and time before the first run starts.
MAX_SPEC_BYTES = 2**20  # 1 MiB of TOML
MAX_DEPTH = 16  # nesting of tables and arrays in a spec (the shipped specs reach 5)
MAX_COUNT = 10_000_000  # episodes of a phase, steps of an episode
MAX_SEED = 2**63 - 1
MAX_SEEDS = 100_000
MAX_AGENT_SETTINGS = 10_000  # agent settings after grids are expanded
MAX_RUNS = 1_000_000  # tasks x conditions x agent settings x seeds


class ExperimentSpecError(GraphtasksError, ValueError):
    """A spec file is wrong; the message names the file, line and field."""


@dataclass(frozen=True)
class AgentSpec:
    """One agent with one setting of its parameters (a grid gives several), on `tasks` (none: all)."""

    name: str
    label: str
    params: dict[str, Any]
    tasks: tuple[str, ...] = ()
    written: str = ""  # the label as written in [[agents]], before a grid's suffix ("": the label)
    response: Mapping[str, Any] = field(default_factory=dict)  # {"rt": "ddm", its settings...}; {}: none

    @property
    def recorded(self) -> dict[str, Any]:
        """The settings a run records: the agent's, and its response model's (``rt`` and its settings)."""
        return {**self.params, **self.response}

    def answers_to(self, key: str) -> bool:
        """Whether a per-agent phase setting keyed `key` names this agent by its label (as
        written, or with its grid's suffix)."""
        return key in (self.label, self.written)

    def runs_on(self, task: str) -> bool:
        return not self.tasks or task in self.tasks


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    episodes: int
    max_steps: int | dict[str, int] | None = None  # one length, or one per task id (others: the env's)
    task: str | None = None  # None: the run's task
    learn: bool = True
    start: Any = None  # None (the task's start), "random", a list cycled through, or {"random": [...]}
    schedule: bool = False
    changes: dict[str, Any] = field(default_factory=dict)
    probe: tuple[tuple[int, int], ...] = ()  # (state, action) options whose preference is recorded at the end
    probe_temperature: float = 1.0
    agent: dict[str, Any] = field(default_factory=dict)  # agent settings in this phase only, as written
    env: dict[str, Any] = field(default_factory=dict)  # env settings in this phase only
    greedy: bool = False  # every agent acts greedily (the argmax of its values; ties by its own stream)
    by_agent: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-agent settings, by full label

    def settings_for(self, agent: AgentSpec) -> dict[str, Any]:
        """The agent settings this phase sets for `agent`: those for every agent, then its own
        (`agent.NAME = {...}`, by its label or name)."""
        shared = {k: v for k, v in self.agent.items() if not isinstance(v, Mapping)}
        return {**shared, **self.by_agent.get(agent.label, {})}

    def task_id(self, run_task: str) -> str:
        """The id of the task version this phase runs when the run's task is `run_task`."""
        base = unpinned(self.task or run_task)
        return variant_id(base, self.changes) if self.changes else base

    def steps_limit(self, run_task: str) -> int | None:
        """The episode length of this phase for runs of `run_task` (None: the env's default)."""
        if isinstance(self.max_steps, dict):
            return self.max_steps.get(self.task or run_task)
        return self.max_steps


@dataclass(frozen=True)
class ConditionSpec:
    """A condition of the protocol: the phases as the runs in this condition go through them."""

    name: str
    phases: tuple[PhaseSpec, ...]


@dataclass(frozen=True)
class ExperimentSpec:
    name: str
    path: str
    tasks: tuple[str, ...]
    seeds: tuple[int, ...]
    agents: tuple[AgentSpec, ...]
    phases: tuple[PhaseSpec, ...]
    env: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    reference: str = ""
    record: str = "auto"  # "steps": a Trial per step too; "auto": as the task's family says (trial tasks)
    conditions: tuple[ConditionSpec, ...] = ()  # none: one unnamed condition, the phases as given
    graphs: Mapping[str, TaskGraph] = field(default_factory=dict, compare=False, repr=False)  # by version id
    study: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # [study]: agents ignore it

    def condition_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.conditions) or ("",)

    def phases_of(self, condition: str) -> tuple[PhaseSpec, ...]:
        """The phases that runs in `condition` go through ("": the phases as given)."""
        for c in self.conditions:
            if c.name == condition:
                return c.phases
        if condition:
            raise KeyError(f"no condition {condition!r}")
        return self.phases

    def records_steps(self, graph: TaskGraph) -> bool:
        """Whether runs record a Trial per step on this task version."""
        return self.record == "steps" or (self.record == "auto" and family_of(graph).records_steps(graph))


class _Lines:
    """Which line of the file a field is on (tomllib gives values, not positions)."""

    HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\"]+)\s*\]\]?")
    KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"]+(?:\s*\.\s*[A-Za-z0-9_\-\"]+)*)\s*=")  # a key, or a dotted one

    def __init__(self, text: str) -> None:
        self.keys: dict[str, int] = {}
        table, counts = "", dict[str, int]()
        for number, line in enumerate(text.splitlines(), 1):
            header = self.HEADER.match(line)
            if header:
                name = header.group(1).strip('"')
                if line.lstrip().startswith("[["):
                    counts[name] = counts.get(name, -1) + 1
                    table = f"{name}[{counts[name]}]"
                else:
                    parent, _, rest = name.partition(".")
                    table = f"{parent}[{counts[parent]}].{rest}" if parent in counts and rest else name
                self.keys.setdefault(table, number)
                continue
            key = self.KEY.match(line)
            if key:
                name = ".".join(part.strip().strip(chr(34)) for part in key.group(1).split("."))
                self.keys.setdefault(f"{table}.{name}" if table else name, number)

    def line(self, path: str) -> int | None:
        """The line of `path` (e.g. 'phases[1].changes.rewards[0]'), or of its nearest parent."""
        while path:
            if path in self.keys:
                return self.keys[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None


class _Checker:
    def __init__(self, path: str, text: str, source: TaskSource) -> None:
        self.path = path
        self.lines = _Lines(text)
        self.source = source
        self.versions: dict[str, TaskGraph] = {}  # every task version a phase runs, by id
        self.old_names: list[str] = []  # a deprecated name's warning line each (load_spec shows them)

    def where(self, field_path: str) -> str:
        line = self.lines.line(field_path)
        return f"{self.path}, line {line}: {field_path}" if line else f"{self.path}: {field_path}"

    def fail(self, field_path: str, message: str) -> ExperimentSpecError:
        return ExperimentSpecError(f"{self.where(field_path)}: {message}")

    def keys(self, value: Any, known: tuple[str, ...], field_path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(field_path, f"expected a table, got {value!r}")
        for key in value:
            if key not in known:
                raise self.fail(
                    f"{field_path}.{key}" if field_path else key,
                    f"unknown field{did_you_mean(key, known)} (fields: {', '.join(known)})",
                )
        return value

    def integer(self, value: Any, field_path: str, low: int = 1, high: int = MAX_COUNT) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(field_path, f"expected an integer from {low} to {high:,}, got {value!r}")
        return value

    def text(self, value: Any, field_path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field_path, f"expected a non-empty string, got {value!r}")
        return value


def shipped_specs() -> dict[str, Path]:
    """The spec files that ship with graphtasks (data/experiments/), by name."""
    return {p.stem: p for p in sorted((data_dir() / "experiments").glob("*.toml"))}


def spec_path(name_or_path: str | Path) -> Path:
    """A spec file: the path given, or the shipped spec of that name (e.g. 'daw2011-two-step')."""
    p = Path(name_or_path)
    if p.exists() or p.suffix:
        return p
    shipped = shipped_specs()
    if str(name_or_path) in shipped:
        return shipped[str(name_or_path)]
    hint = did_you_mean(str(name_or_path), shipped)
    raise ExperimentSpecError(f"{name_or_path}: no such file, nor a shipped spec{hint} (shipped: {', '.join(shipped)})")


def read_spec_text(path: str | Path) -> str:
    """The text of a spec file: a regular file of at most MAX_SPEC_BYTES, UTF-8 (an error names
    the byte); a device such as /dev/zero, a FIFO or a directory is refused before it is read."""
    p = spec_path(path)
    return decode_utf8(read_input(p, MAX_SPEC_BYTES, ExperimentSpecError), str(p), ExperimentSpecError)


def load_spec(path: str | Path, store: GraphStore | str | None = None) -> ExperimentSpec:
    """Read and check a spec file (or a shipped spec by name); ExperimentSpecError names what is wrong.

    Tasks that are not built in are read from `store` (None: the default store).
    """
    return parse_spec(read_spec_text(path), str(spec_path(path)), store, warn_old=True)


def parse_spec(text: str, path: str = "<spec>", store: GraphStore | str | None = None,
               warn_old: bool = False) -> ExperimentSpec:
    """Check a spec's text (see the module docstring); `path` names it in errors, `store` holds
    the tasks that are not built in; with `warn_old` (a file a person writes: `load_spec`), a
    FutureWarning line for each deprecated name (`max_steps`) it uses, read as its new name
    (a spec stored with an experiment is read again without them)."""
    if len(text) > MAX_SPEC_BYTES:
        raise ExperimentSpecError(f"{path}: {len(text):,} characters; a spec is at most {MAX_SPEC_BYTES:,}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentSpecError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ExperimentSpecError(f"{path}: nested deeper than a spec may be ({MAX_DEPTH} levels)") from None
    deepest = _depth(data)
    if deepest > MAX_DEPTH:
        raise ExperimentSpecError(f"{path}: nested {deepest} levels deep; a spec may nest {MAX_DEPTH}")
    check = _Checker(path, text, TaskSource(store))
    check.keys(data, TOP_TABLES, "")
    experiment = check.keys(data.get("experiment", {}), EXPERIMENT_KEYS, "experiment")
    if "experiment" not in data:
        raise ExperimentSpecError(f"{path}: missing the [experiment] table (name, tasks, seeds)")
    name = check.text(experiment.get("name"), "experiment.name")
    tasks = _tasks(check, experiment.get("tasks"))
    seeds = _seeds(check, experiment.get("seeds", 1))
    env = _env_settings(check, data.get("env", {}), "env", tasks)
    agents = _agents(check, data.get("agents"), tasks)
    phases = _phases(check, data.get("phases"), tasks, agents)
    conditions = _conditions(check, data.get("conditions"), data["phases"], tasks, agents)
    study = data.get("study", {})  # what people see (graphtasks.serve.study checks it); agents ignore it
    if not isinstance(study, Mapping):
        raise check.fail("study", f"expected a table, got {study!r}")
    record = experiment.get("record", "auto")
    if record not in RECORD:
        raise check.fail("experiment.record", f"expected one of {', '.join(RECORD)}, got {record!r}")
    runs = len(conditions or (None,)) * len(seeds) * sum(a.runs_on(t) for t in tasks for a in agents)
    if runs > MAX_RUNS:
        raise ExperimentSpecError(f"{path}: {runs:,} runs; a spec makes at most {MAX_RUNS:,}")
    if warn_old:
        import warnings

        for line in dict.fromkeys(check.old_names):
            warnings.warn(line, FutureWarning, stacklevel=2)
    return ExperimentSpec(
        name,
        path,
        tasks,
        seeds,
        agents,
        phases,
        env,
        str(experiment.get("description", "")),
        str(experiment.get("reference", "")),
        record,
        conditions,
        dict(check.versions),
        dict(study),
    )


def _tasks(check: _Checker, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise check.fail("experiment.tasks", f"expected a list of task ids, got {value!r}")
    for i, task_id in enumerate(value):
        _known_task(check, task_id, f"experiment.tasks[{i}]")
    if len(set(value)) != len(value):
        raise check.fail("experiment.tasks", "a task is listed twice")
    return tuple(value)


def _known_task(check: _Checker, task_id: Any, field_path: str) -> TaskGraph:
    check.text(task_id, field_path)
    try:
        return check.source.graph(task_id)
    except GraphtasksError as exc:
        raise check.fail(field_path, str(exc)) from None


def _env_settings(
    check: _Checker, value: Any, field_path: str, tasks: tuple[str, ...], sep: str = "."
) -> dict[str, Any]:
    """Environment settings: each must be a setting of the env of every task they apply to."""
    settings = dict(check.keys(value, tuple(value) if isinstance(value, Mapping) else (), field_path))
    for task_id in tasks:
        family = family_of(check.source.graph(task_id))
        known = [k for k in inspect.signature(family.env_class()).parameters if k not in ENV_FIXED]
        for key in settings:
            if key not in known:
                raise check.fail(
                    f"{field_path}{sep}{key}",
                    f"{task_id} ({family.name} tasks) has no setting {key!r}{did_you_mean(key, known)} "
                    f"(settings: {', '.join(known)})",
                )
        if settings:  # the values too: the env is made once with them, as a run will make it
            graph = check.source.graph(task_id)
            try:
                family.make_env(family.prepare(graph, check.source.store, settings), **settings).close()
            except (ValueError, TypeError) as exc:
                raise check.fail(field_path, f"{task_id}: {exc}") from None
    return settings


def _seeds(check: _Checker, value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return tuple(range(check.integer(value, "experiment.seeds", high=MAX_SEEDS)))
    if not isinstance(value, list) or not value:
        raise check.fail("experiment.seeds", f"expected a count or a list of seeds, got {value!r}")
    if len(value) > MAX_SEEDS:
        raise check.fail("experiment.seeds", f"{len(value):,} seeds; a spec runs at most {MAX_SEEDS:,}")
    seeds = tuple(check.integer(s, f"experiment.seeds[{i}]", low=0, high=MAX_SEED) for i, s in enumerate(value))
    if len(set(seeds)) != len(seeds):
        raise check.fail("experiment.seeds", "a seed is listed twice")
    return seeds


def agent_observation(name: str) -> str:
    """The observation agent `name` acts on ('index' for the tabular agents)."""
    return AGENT_INFO[name].observation


def _agents(check: _Checker, value: Any, tasks: tuple[str, ...]) -> tuple[AgentSpec, ...]:
    if not isinstance(value, list) or not value:
        raise ExperimentSpecError(f"{check.path}: no [[agents]]: list at least one agent")
    out: list[AgentSpec] = []
    for i, item in enumerate(value):
        at = f"agents[{i}]"
        item = check.keys(item, AGENT_KEYS, at)
        name = check.text(item.get("name"), f"{at}.name")
        if name not in AGENTS:
            raise check.fail(
                f"{at}.name",
                f"unknown agent {name!r}{did_you_mean(name, AGENTS)} (agents: {', '.join(sorted(AGENTS))})",
            )
        params = dict(check.keys(item.get("params", {}), tuple(item.get("params", {})), f"{at}.params"))
        grid = dict(check.keys(item.get("grid", {}), tuple(item.get("grid", {})), f"{at}.grid"))
        response = _response(check, name, item, at)
        for key, values in grid.items():
            if not isinstance(values, list) or not values:
                raise check.fail(f"{at}.grid.{key}", f"expected a non-empty list of values, got {values!r}")
            if key in params:
                raise check.fail(f"{at}.grid.{key}", f"{key!r} is also set in {at}.params; give it in one place")
        for key, value_ in [*params.items(), *((k, v) for k, vs in grid.items() for v in vs)]:
            section = "params" if key in params else "grid"
            if response and key in RT_SETTINGS[response]:
                why = response_setting_error(response, key, value_)
                if why:
                    raise check.fail(f"{at}.{section}.{key}", f"the {response} response model: {why}")
                continue
            if response and key not in agent_settings(name):
                raise check.fail(f"{at}.{section}.{key}", f"{key!r} is a setting of neither the {name} agent "
                                 f"({', '.join(agent_settings(name))}) nor its {response} response model "
                                 f"({', '.join(RT_SETTINGS[response])})")
            _agent_setting(check, name, key, value_, f"{at}.{section}.{key}")
        runs_on = _agent_tasks(check, item.get("tasks"), f"{at}.tasks", tasks)
        for task_id in runs_on or tasks:
            _takes(check, name, task_id, f"{at}.name")
        label = str(item.get("label") or name)
        keys = sorted(grid)
        settings = math.prod(len(grid[k]) for k in keys)
        if len(out) + settings > MAX_AGENT_SETTINGS:
            raise check.fail(
                f"{at}.grid", f"{len(out) + settings:,} agent settings; a spec sweeps at most {MAX_AGENT_SETTINGS:,}"
            )
        for combination in itertools.product(*(grid[k] for k in keys)):
            chosen = {**params, **dict(zip(keys, combination))}
            suffix = " ".join(f"{k}={v}" for k, v in zip(keys, combination))
            timed: dict[str, Any] = {}
            if response:
                own = RT_SETTINGS[response]
                timed = {RT_KEY: response, **{k: float(chosen.pop(k, v)) for k, v in own.items()}}
            out.append(AgentSpec(name, f"{label} {suffix}".strip(), chosen, runs_on, label, timed))
    labels = [a.label for a in out]
    duplicate = _first_repeat(labels)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two agents are labelled {duplicate!r}; give them distinct labels")
    return tuple(out)


def _response(check: _Checker, name: str, item: Mapping[str, Any], at: str) -> str:
    """The response model an agent declares ("": none); it needs an agent with values to drive it."""
    response = item.get("response")
    if response is None:
        return ""
    if response not in RT_SETTINGS:
        raise check.fail(f"{at}.response", f"expected one of {', '.join(map(repr, RT_SETTINGS))}, got {response!r}")
    if not can_act_greedily(AGENT_INFO[name].cls):
        raise check.fail(f"{at}.response", f"the {name} agent has no values(state) to drive a response model")
    return str(response)


def _agent_tasks(check: _Checker, value: Any, field_path: str, tasks: tuple[str, ...]) -> tuple[str, ...]:
    """The experiment's tasks an agent is limited to (none given: all of them)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise check.fail(field_path, f"expected a list of the experiment's task ids, got {value!r}")
    for j, task_id in enumerate(value):
        if task_id not in tasks:
            raise check.fail(f"{field_path}[{j}]", f"{task_id!r} is not one of experiment.tasks ({', '.join(tasks)})")
    return tuple(value)


def _takes(check: _Checker, agent: str, task_id: str, field_path: str, hint: str = " (limit it with tasks = [...])"
           ) -> None:
    """Refuse an agent on a task whose family offers no observation of the kind the agent takes."""
    family = family_of(check.source.graph(task_id))
    observation = agent_observation(agent)
    if family.view(observation) is None:
        offered = ", ".join(v.observation for v in family.views)
        raise check.fail(
            field_path,
            f"the {agent} agent cannot run on {task_id}: it takes {observation} observations, "
            f"{family.name} tasks offer {offered}{hint}",
        )


def _agent_setting(check: _Checker, agent: str, key: str, value: Any, field_path: str) -> None:
    try:
        check_agent_settings(agent, {key: value})
    except AgentSettingError as exc:
        raise check.fail(field_path, str(exc)) from None


def _phases(
    check: _Checker, value: Any, tasks: tuple[str, ...], agents: tuple[AgentSpec, ...]
) -> tuple[PhaseSpec, ...]:
    if not isinstance(value, list) or not value:
        raise ExperimentSpecError(f"{check.path}: no [[phases]]: list at least one phase")
    out = tuple(_phase(check, item, f"phases[{i}]", tasks, agents, i) for i, item in enumerate(value))
    names = [p.name for p in out]
    duplicate = _first_repeat(names)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two phases are named {duplicate!r}")
    return out


def _phase(
    check: _Checker, item: Any, at: str, tasks: tuple[str, ...], agents: tuple[AgentSpec, ...], i: int,
    fields: str = "",
) -> PhaseSpec:
    """One phase; `fields` is where its fields are written when that differs from `at` (a condition's
    changes to a phase are checked as that phase with those fields)."""
    item = check.keys(item, PHASE_KEYS, at)
    where = fields or at
    name = check.text(item.get("name", f"phase {i + 1}"), f"{at}.name")
    if "episodes" not in item:
        raise check.fail(at, "missing field episodes")
    episodes = check.integer(item["episodes"], f"{where}.episodes")
    task = item.get("task")
    if task is not None:
        _known_task(check, task, f"{where}.task")
        for agent in agents:  # every run goes through this phase on this task
            _takes(check, agent.name, task, f"{where}.task")
    runs = [task] if task else list(tasks)
    length_key = "max_episode_steps"
    if "max_steps" in item:  # the old name: still read, with one warning line
        if "max_episode_steps" in item:
            raise check.fail(f"{where}.max_steps", "give max_episode_steps only (max_steps is its old name)")
        length_key = "max_steps"
        check.old_names.append(f"{check.where(f'{where}.max_steps')}: max_steps is deprecated: write max_episode_steps")
    max_steps = _max_steps(check, item.get(length_key), f"{where}.{length_key}", runs)
    for flag in ("learn", "greedy", "schedule"):
        if flag in item and not isinstance(item[flag], bool):
            raise check.fail(f"{where}.{flag}", f"expected true or false, got {item[flag]!r}")
    changes = dict(check.keys(item.get("changes", {}), tuple(item.get("changes", {})), f"{where}.changes"))
    versions = []
    for task_id in runs:
        base = check.source.graph(task_id)
        try:
            version = family_of(base).tasks.change(base, changes, check.where(f"{where}.changes"))
        except GraphtasksError as exc:
            raise ExperimentSpecError(str(exc)) from None
        check.versions.setdefault(version.task_id, version)
        versions.append(version)
    env = _env_settings(check, item.get("env", {}), f"{where}.env", tuple(runs))
    agent_settings, by_agent = _phase_agent(check, item.get("agent", {}), f"{where}.agent", agents)
    if item.get("greedy", False):
        _greedy(check, f"{where}.greedy", agents)
    start = _start(check, item.get("start"), f"{where}.start", versions)
    probe, temperature = _probe(check, item.get("probe"), f"{where}.probe", versions, agents)
    return PhaseSpec(
        name,
        episodes,
        max_steps,
        task,
        item.get("learn", True),
        start,
        item.get("schedule", False),
        changes,
        probe,
        temperature,
        agent_settings,
        env,
        item.get("greedy", False),
        by_agent,
    )


def _max_steps(check: _Checker, value: Any, field_path: str, runs: list[str]) -> int | dict[str, int] | None:
    """One episode length, or a table of them by task id."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        out = {}
        for task_id, steps in value.items():
            if task_id not in runs:
                raise check.fail(
                    f"{field_path}.{task_id}", f"{task_id!r} is not a task of this phase ({', '.join(runs)})"
                )
            out[task_id] = check.integer(steps, f"{field_path}.{task_id}")
        return out
    return check.integer(value, field_path)


def _phase_agent(
    check: _Checker, value: Any, field_path: str, agents: tuple[AgentSpec, ...]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Agent settings for one phase, as written, and the per-agent ones by each agent's full label.

    A setting for every agent (`agent = { epsilon = 0.0 }`) must be a setting of every agent of
    the spec; a table keyed by an agent's label or, failing that, its name (`agent.q = { epsilon
    = 0.0 }`) sets its settings for those agents alone. Each is checked against the agents it
    applies to; a setting an agent reads only when it is made is refused.
    """
    settings = dict(check.keys(value, tuple(value) if isinstance(value, Mapping) else (), field_path))
    by_agent: dict[str, dict[str, Any]] = {}
    known = sorted({k for a in agents for k in agent_settings(a.name)})
    names = sorted({a.name for a in agents})
    labels = sorted({a.label for a in agents} | {a.written for a in agents if a.written})
    for key, setting in settings.items():
        at = f"{field_path}.{key}"
        targets = [a for a in agents if a.answers_to(key)] or [a for a in agents if a.name == key]
        if isinstance(setting, Mapping):
            if not targets:
                hint = did_you_mean(key, [*labels, *names])
                raise check.fail(at, f"{key!r} is no agent's label or name{hint} (agents: {', '.join(labels)})")
            own = dict(check.keys(setting, tuple(setting), at))
            for target in targets:
                for name, value_ in own.items():
                    _phase_setting(check, target.name, name, value_, f"{at}.{name}")
                by_agent.setdefault(target.label, {}).update(own)
            continue
        if targets:
            raise check.fail(at, f"expected a table of settings for the {key} agent (agent.{key} = {{ ... }}), "
                                 f"got {setting!r}")
        having = sorted({a.name for a in agents if key in agent_settings(a.name)})
        if not having:
            hint = did_you_mean(key, [*known, *labels, *names])
            raise check.fail(at, f"none of the agents ({', '.join(names)}) has a setting {key!r}, "
                                 f"nor is it an agent's label or name{hint}")
        lacking = sorted({a.name for a in agents} - set(having))
        if lacking:
            raise check.fail(
                at,
                f"the {', '.join(lacking)} agent{'s' if len(lacking) > 1 else ''} of this spec "
                f"{'have' if len(lacking) > 1 else 'has'} no setting {key!r}; set it per agent "
                f"(agent.{having[0]} = {{ {key} = {setting!r} }}){GREEDY_HINT if key in GREEDY_KEYS else ''}",
            )
        for name in having:
            _phase_setting(check, name, key, setting, at)
    return settings, by_agent


GREEDY_KEYS = ("epsilon", "beta")  # settings a greedy test sets: `greedy = true` does it for every agent
GREEDY_HINT = ", or make the phase greedy for every agent (greedy = true)"


def _phase_setting(check: _Checker, agent: str, key: str, value: Any, field_path: str) -> None:
    """A phase's setting for `agent`: one it has, of the right type, and one a phase may change."""
    _agent_setting(check, agent, key, value, field_path)
    if key in getattr(AGENT_INFO[agent].cls, "fixed", ()):
        said = f"the {agent} agent reads {key} only when it is made; a phase cannot change it"
        raise check.fail(field_path, said)


def _greedy(check: _Checker, field_path: str, agents: tuple[AgentSpec, ...]) -> None:
    """Every agent of a greedy phase must have values to take the argmax of."""
    timed = sorted({a.label for a in agents if a.response})
    if timed:  # its response model chooses each choice (and times it): no argmax
        raise check.fail(field_path, f"agent {timed[0]!r} chooses through its response model; a greedy phase "
                         "would take the argmax and draw no response time (leave greedy out)")
    unable = sorted({a.name for a in agents if not can_act_greedily(AGENT_INFO[a.name].cls)})
    if unable:
        raise check.fail(
            field_path,
            f"the {', '.join(unable)} agent{'s' if len(unable) > 1 else ''} cannot act greedily: "
            f"{'they have' if len(unable) > 1 else 'it has'} no action values to take the argmax of "
            "(leave greedy out and set the others' choice per agent: agent.NAME = { epsilon = 0.0 })",
        )


def _conditions(
    check: _Checker, value: Any, phases: list[Any], tasks: tuple[str, ...], agents: tuple[AgentSpec, ...]
) -> tuple[ConditionSpec, ...]:
    """Each condition's phases: the spec's phases with the fields the condition changes."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise check.fail("conditions", "expected [[conditions]] tables, each with a name")
    by_name = {str(p.get("name", f"phase {i + 1}")): (i, p) for i, p in enumerate(phases)}
    out: list[ConditionSpec] = []
    for j, item in enumerate(value):
        at = f"conditions[{j}]"
        item = check.keys(item, CONDITION_KEYS, at)
        name = check.text(item.get("name"), f"{at}.name")
        changed = check.keys(item.get("phases", {}), tuple(by_name), f"{at}.phases")
        own = []
        for i, phase in enumerate(phases):
            phase_name = str(phase.get("name", f"phase {i + 1}"))
            fields = changed.get(phase_name, {})
            where = f"{at}.phases.{phase_name}"
            check.keys(fields, tuple(k for k in PHASE_KEYS if k != "name"), where)
            own.append(_phase(check, {**phase, **fields}, where if fields else f"phases[{i}]", tasks, agents, i))
        out.append(ConditionSpec(name, tuple(own)))
    names = [c.name for c in out]
    duplicate = _first_repeat(names)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two conditions are named {duplicate!r}")
    return tuple(out)


def _probe(
    check: _Checker, value: Any, field_path: str, versions: list[TaskGraph], agents: tuple[AgentSpec, ...]
) -> tuple[tuple[tuple[int, int], ...], float]:
    """The (state, action) options of a preference probe and the softmax temperature that compares them."""
    if value is None:
        return (), 1.0
    probe = check.keys(value, PROBE_KEYS, field_path)
    options: Any = probe.get("options")
    pairs = (
        isinstance(options, list)
        and len(options) >= 2
        and all(isinstance(o, list) and len(o) == 2 and all(_is_index(x) for x in o) for o in options)
    )
    if not pairs:
        raise check.fail(f"{field_path}.options", f"expected two or more [state, action] pairs, got {options!r}")
    for graph in versions:
        n = graph.count("State")
        for state, _ in options:
            if n and state >= n:
                raise check.fail(
                    f"{field_path}.options", f"state {state} does not exist in {graph.task_id} (states 0..{n - 1})"
                )
    valueless = sorted({a.name for a in agents if agent_observation(a.name) != "index"})
    if valueless:
        raise check.fail(field_path, f"a probe compares state-action values; the {', '.join(valueless)} agent has none")
    temperature = probe.get("temperature", 1.0)
    positive = isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 0
    if not positive or not math.isfinite(temperature):
        raise check.fail(f"{field_path}.temperature", f"expected a positive finite number, got {temperature!r}")
    return tuple((o[0], o[1]) for o in options), float(temperature)


def _start(check: _Checker, value: Any, field_path: str, versions: list[TaskGraph]) -> Any:
    """The start as written (None for the task's own), once each version's family has checked it:
    a state index for graph tasks, a cell [r, c] for grids and POGE worlds, "random",
    { random = [...] } or a list cycled through (see `gym_bridge.starts`)."""
    if value is None or value == "default":
        return None
    for graph in versions:
        try:
            family_of(graph).starts.parse(value, graph)
        except StartError as exc:
            raise check.fail(f"{field_path}.{exc.field}" if exc.field else field_path, str(exc)) from None
    return value


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def single_run_spec(
    task_id: str,
    agent: str,
    seed: int,
    episodes: int,
    params: Mapping[str, Any] | None = None,
    env: Mapping[str, Any] | None = None,
    max_steps: int | None = None,
    schedule: bool = False,
    store: GraphStore | str | None = None,
) -> ExperimentSpec:
    """The experiment of one run (what `graphtasks run` plays): one task, one agent, one seed,
    one phase. Checked as a spec is; errors name the command-line option of the part.

    Parameters
    ----------
    task_id : str
        Any task id (built in, or in `store`; `@hash` pins a version).
    agent : str
        An agent's name (`graphtasks agents`).
    seed, episodes : int
        The run's seed and its number of episodes.
    params, env : mapping, optional
        Agent and env settings.
    max_steps : int, optional
        The episode length (default: the env's).
    schedule : bool, optional
        Play the task's trial schedule.
    store : GraphStore or str, optional
        Where tasks that are not built in are read.

    Returns
    -------
    ExperimentSpec
        A spec of one task, one agent, one seed and one phase named "run".

    Examples
    --------
    >>> from graphtasks.experiments.spec import single_run_spec
    >>> spec = single_run_spec("rewardgym/two-step", "hybrid", seed=0, episodes=10)
    >>> spec.tasks, [a.name for a in spec.agents], spec.seeds, spec.phases[0].episodes
    (('rewardgym/two-step',), ['hybrid'], (0,), 10)
    """
    check = _Checker("run", "", TaskSource(store))
    task = _known_task(check, task_id, "TASK")
    if agent not in AGENTS:
        raise check.fail("--agent", f"unknown agent {agent!r}{did_you_mean(agent, AGENTS)}")
    for key, value in (params or {}).items():
        _agent_setting(check, agent, key, value, f"--agent-param {key}")
    _takes(check, agent, task_id, "--agent", "")
    settings = _env_settings(check, dict(env or {}), "--env-param", (task_id,), " ")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise check.fail("--episodes", f"expected a positive number, got {episodes!r}")
    if max_steps is not None:
        check.integer(max_steps, "--max-episode-steps")
    if schedule and not task.task.get("schedule"):
        raise check.fail("--schedule", f"{task_id} has no trial schedule")
    check.versions[task.task_id] = task
    phase = PhaseSpec("run", episodes, max_steps, schedule=schedule)
    return ExperimentSpec(
        "run", "graphtasks run", (task_id,), (seed,), (AgentSpec(agent, agent, dict(params or {})),), (phase,),
        settings, graphs=dict(check.versions),
    )


def _first_repeat(items: list[str]) -> str | None:
    """The first item that appears twice (in one pass)."""
    seen: set[str] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    return None


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in parsed TOML (iteratively: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        if isinstance(item, Mapping):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest
