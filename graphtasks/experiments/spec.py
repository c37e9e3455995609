"""Experiment spec files (TOML): what to run, checked before anything runs.

    [experiment]
    name = "reward-transfer"
    tasks = ["neuronav/grid/t_maze/small"]
    seeds = 5                      # 0..4, or a list such as [0, 7, 11]

    [env]                          # environment settings for every phase
    time_penalty = 0.01

    [[agents]]
    name = "q"                     # a reference agent (graphtasks run --help lists them)
    params = { lr = 0.1 }
    grid = { beta = [1.0, 5.0] }   # one run per value (per combination for several)

    [[phases]]
    name = "learning"
    episodes = 200
    max_steps = 100                # the episode length of this phase
    [[phases]]
    name = "goal moved"
    episodes = 200
    learn = true                   # false: a test phase, the agent acts but does not learn
    start = [9, 5]                 # "default", "random", a cell / state, or a list to cycle through
    changes = { rewards = [{ cell = [1, 1], value = 1.0 }] }   # see tasks.variants
    probe = { options = [[0, 0], [1, 0]], temperature = 5.0 }  # a preference recorded at the phase's end

    [[conditions]]                 # optional: runs in several conditions (between runs)
    name = "reward"
    [conditions.phases."goal moved"]   # fields that differ from the phase of that name
    start = [2, 3]

Every error is one line naming the file, the line and the field.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from graphstore import TaskGraph, did_you_mean
from graphstore.errors import GraphtasksError
from gym_bridge.agents import AGENTS, AgentSettingError, check_agent_settings
from tasks import build as build_task
from tasks.data import data_dir
from tasks.variants import task_variant, variant_id

FAMILIES = ("neuronav/grid/", "neuronav/graph/", "rewardgym/")  # tasks whose phases can change them
TOP_TABLES = ("experiment", "env", "agents", "phases", "conditions")
EXPERIMENT_KEYS = ("name", "description", "reference", "tasks", "seeds", "record")
RECORD = ("auto", "episodes", "steps")
AGENT_KEYS = ("name", "label", "params", "grid")
PHASE_KEYS = ("name", "episodes", "max_steps", "task", "learn", "start", "schedule", "changes", "probe")
CONDITION_KEYS = ("name", "phases")
PROBE_KEYS = ("options", "temperature")


class ExperimentSpecError(GraphtasksError, ValueError):
    """A spec file is wrong; the message names the file, line and field."""


@dataclass(frozen=True)
class AgentSpec:
    """One agent with one setting of its parameters (a grid gives several)."""

    name: str
    label: str
    params: dict[str, Any]


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    episodes: int
    max_steps: int | None = None
    task: str | None = None  # None: the run's task
    learn: bool = True
    start: Any = None  # None (the task's start), "random", a list cycled through, or {"random": [...]}
    schedule: bool = False
    changes: dict[str, Any] = field(default_factory=dict)
    probe: tuple[tuple[int, int], ...] = ()  # (state, action) options whose preference is recorded at the end
    probe_temperature: float = 1.0

    def task_id(self, run_task: str) -> str:
        """The id of the task version this phase runs when the run's task is `run_task`."""
        base = self.task or run_task
        return variant_id(base, self.changes) if self.changes else base


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
    record: str = "auto"  # "steps": a Trial per step too; "auto": steps for trial tasks (rewardgym/)
    conditions: tuple[ConditionSpec, ...] = ()  # none: one unnamed condition, the phases as given

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

    def records_steps(self, task_id: str) -> bool:
        return self.record == "steps" or (self.record == "auto" and task_id.startswith("rewardgym/"))


class _Lines:
    """Which line of the file a field is on (tomllib gives values, not positions)."""

    HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\"]+)\s*\]\]?")
    KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"]+)\s*=")

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
                self.keys.setdefault(f"{table}.{key.group(1).strip(chr(34))}" if table else key.group(1), number)

    def line(self, path: str) -> int | None:
        """The line of `path` (e.g. 'phases[1].changes.rewards[0]'), or of its nearest parent."""
        while path:
            if path in self.keys:
                return self.keys[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None


class _Checker:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = _Lines(text)

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

    def integer(self, value: Any, field_path: str, low: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(field_path, f"expected an integer >= {low}, got {value!r}")
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


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and check a spec file (or a shipped spec by name); ExperimentSpecError names what is wrong."""
    p = spec_path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExperimentSpecError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return parse_spec(text, str(p))


def parse_spec(text: str, path: str = "<spec>") -> ExperimentSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentSpecError(f"{path}: not valid TOML: {exc}") from None
    check = _Checker(path, text)
    check.keys(data, TOP_TABLES, "")
    experiment = check.keys(data.get("experiment", {}), EXPERIMENT_KEYS, "experiment")
    if "experiment" not in data:
        raise ExperimentSpecError(f"{path}: missing the [experiment] table (name, tasks, seeds)")
    name = check.text(experiment.get("name"), "experiment.name")
    tasks = _tasks(check, experiment.get("tasks"))
    seeds = _seeds(check, experiment.get("seeds", 1))
    env = dict(check.keys(data.get("env", {}), tuple(data.get("env", {})), "env"))
    agents = _agents(check, data.get("agents"))
    phases = _phases(check, data.get("phases"), tasks)
    conditions = _conditions(check, data.get("conditions"), data["phases"], tasks)
    record = experiment.get("record", "auto")
    if record not in RECORD:
        raise check.fail("experiment.record", f"expected one of {', '.join(RECORD)}, got {record!r}")
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
    )


def _tasks(check: _Checker, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise check.fail("experiment.tasks", f"expected a list of task ids, got {value!r}")
    for i, task_id in enumerate(value):
        _known_task(check, task_id, f"experiment.tasks[{i}]")
    return tuple(value)


def _known_task(check: _Checker, task_id: Any, field_path: str) -> None:
    check.text(task_id, field_path)
    if not task_id.startswith(FAMILIES):
        raise check.fail(field_path, f"{task_id!r}: experiments run grid and graph tasks ({', '.join(FAMILIES)}...)")
    try:
        build_task(task_id)
    except GraphtasksError as exc:
        raise check.fail(field_path, str(exc)) from None


def _seeds(check: _Checker, value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return tuple(range(check.integer(value, "experiment.seeds")))
    if not isinstance(value, list) or not value:
        raise check.fail("experiment.seeds", f"expected a count or a list of seeds, got {value!r}")
    seeds = tuple(check.integer(s, f"experiment.seeds[{i}]", low=0) for i, s in enumerate(value))
    if len(set(seeds)) != len(seeds):
        raise check.fail("experiment.seeds", "a seed is listed twice")
    return seeds


def _agents(check: _Checker, value: Any) -> tuple[AgentSpec, ...]:
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
        grid = check.keys(item.get("grid", {}), tuple(item.get("grid", {})), f"{at}.grid")
        for key, values in grid.items():
            if not isinstance(values, list) or not values:
                raise check.fail(f"{at}.grid.{key}", f"expected a non-empty list of values, got {values!r}")
        for key, value_ in [*params.items(), *((k, v[0]) for k, v in grid.items())]:
            section = "params" if key in params else "grid"
            _agent_setting(check, name, key, value_, f"{at}.{section}.{key}")
        label = str(item.get("label") or name)
        keys = sorted(grid)
        for combination in itertools.product(*(grid[k] for k in keys)):
            chosen = {**params, **dict(zip(keys, combination))}
            suffix = " ".join(f"{k}={v}" for k, v in zip(keys, combination))
            out.append(AgentSpec(name, f"{label} {suffix}".strip(), chosen))
    labels = [a.label for a in out]
    duplicate = next((x for x in labels if labels.count(x) > 1), None)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two agents are labelled {duplicate!r}; give them distinct labels")
    return tuple(out)


def _agent_setting(check: _Checker, agent: str, key: str, value: Any, field_path: str) -> None:
    try:
        check_agent_settings(agent, {key: value})
    except AgentSettingError as exc:
        raise check.fail(field_path, str(exc)) from None


def _phases(check: _Checker, value: Any, tasks: tuple[str, ...]) -> tuple[PhaseSpec, ...]:
    if not isinstance(value, list) or not value:
        raise ExperimentSpecError(f"{check.path}: no [[phases]]: list at least one phase")
    out = tuple(_phase(check, item, f"phases[{i}]", tasks, i) for i, item in enumerate(value))
    names = [p.name for p in out]
    duplicate = next((x for x in names if names.count(x) > 1), None)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two phases are named {duplicate!r}")
    return out


def _phase(check: _Checker, item: Any, at: str, tasks: tuple[str, ...], i: int, fields: str = "") -> PhaseSpec:
    """One phase; `fields` is where its fields are written when that differs from `at` (a condition's
    changes to a phase are checked as that phase with those fields)."""
    item = check.keys(item, PHASE_KEYS, at)
    where = fields or at
    name = check.text(item.get("name", f"phase {i + 1}"), f"{at}.name")
    if "episodes" not in item:
        raise check.fail(at, "missing field episodes")
    episodes = check.integer(item["episodes"], f"{where}.episodes")
    max_steps = check.integer(item["max_steps"], f"{where}.max_steps") if "max_steps" in item else None
    task = item.get("task")
    if task is not None:
        _known_task(check, task, f"{where}.task")
    for flag in ("learn", "schedule"):
        if flag in item and not isinstance(item[flag], bool):
            raise check.fail(f"{where}.{flag}", f"expected true or false, got {item[flag]!r}")
    changes = dict(check.keys(item.get("changes", {}), tuple(item.get("changes", {})), f"{where}.changes"))
    versions = []
    for task_id in [task] if task else tasks:
        try:
            versions.append(task_variant(task_id, changes, check.where(f"{where}.changes")))
        except GraphtasksError as exc:
            raise ExperimentSpecError(str(exc)) from None
    start = _start(check, item.get("start"), f"{where}.start", versions)
    probe, temperature = _probe(check, item.get("probe"), f"{where}.probe", versions)
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
    )


def _conditions(
    check: _Checker, value: Any, phases: list[Any], tasks: tuple[str, ...]
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
            own.append(_phase(check, {**phase, **fields}, where if fields else f"phases[{i}]", tasks, i))
        out.append(ConditionSpec(name, tuple(own)))
    names = [c.name for c in out]
    duplicate = next((x for x in names if names.count(x) > 1), None)
    if duplicate:
        raise ExperimentSpecError(f"{check.path}: two conditions are named {duplicate!r}")
    return tuple(out)


def _state_count(graph: TaskGraph) -> int:
    return sum(1 for _ in graph.nodes("State"))


def _states(check: _Checker, states: list[int], field_path: str, versions: list[TaskGraph]) -> None:
    for graph in versions:
        n = _state_count(graph)
        for state in states:
            if not 0 <= state < n:
                raise check.fail(
                    field_path, f"state {state} does not exist in {graph.task_id} (states 0..{n - 1})"
                )


def _probe(
    check: _Checker, value: Any, field_path: str, versions: list[TaskGraph]
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
    _states(check, [o[0] for o in options], f"{field_path}.options", versions)
    temperature = probe.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature <= 0:
        raise check.fail(f"{field_path}.temperature", f"expected a positive number, got {temperature!r}")
    return tuple((o[0], o[1]) for o in options), float(temperature)


def _start(check: _Checker, value: Any, field_path: str, versions: list[TaskGraph]) -> Any:
    """None (the task's start), "random", {"random": [states]} (drawn from the set), or the value
    as given: a state, a list of states, a cell [r, c] or a list of cells (read by the run with the
    task's family in mind)."""
    if value is None or value == "default":
        return None
    if value == "random":
        return "random"
    if isinstance(value, Mapping):
        drawn = check.keys(value, ("random",), field_path).get("random")
        if not isinstance(drawn, list) or not drawn or not all(_is_index(v) for v in drawn):
            raise check.fail(f"{field_path}.random", f"expected a list of states to draw from, got {drawn!r}")
        if not any(g.task_id.startswith("neuronav/grid/") for g in versions):
            _states(check, drawn, f"{field_path}.random", versions)
        return {"random": list(drawn)}
    if _is_index(value):
        value = [value]
    ints = isinstance(value, list) and value and all(_is_index(v) for v in value)
    cells = (
        isinstance(value, list)
        and value
        and all(isinstance(v, list) and len(v) == 2 and all(_is_index(x) for x in v) for v in value)
    )
    if ints and not any(g.task_id.startswith("neuronav/grid/") for g in versions):
        _states(check, value, field_path, versions)
    if ints or cells:
        return value if len(value) > 1 or cells else value[0]
    raise check.fail(
        field_path,
        'expected "default", "random", { random = [states] }, a state, a cell [r, c] or a list of them, '
        f"got {value!r}",
    )


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
