"""Compile a stored graph task into arrays, once: `step` never touches the database.

The arrays are the single description the environments (single and vectorised) run on.
Successors of each (state, action) are sorted by target index, so the same seed gives the
same trajectory whatever order a store returns edges in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphstore import GraphStore, SchemaError, TaskGraph
from tasks import Condition, RewardSpec, spec_from_props

from ..loading import load_task_graph


@dataclass(frozen=True, eq=False)
class CompiledGraphTask:
    """Arrays of one graph task. `targets[s, a, k]` with probability `probs[s, a, k]` (padded -1 / 0)."""

    task_id: str
    content_hash: str
    family: str
    reward_on: str  # 'arrival' or 'terminal'
    start: int
    terminal: np.ndarray  # bool (n,)
    skip: np.ndarray  # bool (n,)
    defined: np.ndarray  # bool (n, A): the node defines this action
    targets: np.ndarray  # int64 (n, A, K)
    probs: np.ndarray  # float64 (n, A, K)
    reward_value: np.ndarray  # float64 (n,): fixed reward (expected value for stochastic sources)
    reward_specs: tuple[RewardSpec | None, ...]
    conditions: dict[str, Condition] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    info: tuple[dict[str, Any] | None, ...] = ()
    schedule: dict[str, Any] | None = None

    @property
    def n_states(self) -> int:
        return int(self.terminal.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.defined.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array, by name (for equality checks across stores)."""
        return {
            "terminal": self.terminal,
            "skip": self.skip,
            "defined": self.defined,
            "targets": self.targets,
            "probs": self.probs,
            "reward_value": self.reward_value,
            "start": np.array(self.start),
        }

    def outcomes(self, condition: Condition | None = None) -> dict[tuple[int, int], list[tuple[int, float]]]:
        """(state, action) -> [(target, p), ...] for every action offered, under `condition`: its
        overrides replace an action's outcomes (adding the action if the state lacked it), its
        `available` lists keep only those actions at their states. The one statement of what a
        condition does; the single and the vector env both step what it returns."""
        n, a_count = self.n_states, self.n_actions
        outcomes: dict[tuple[int, int], list[tuple[int, float]]] = {}
        for s, a in zip(*np.nonzero(self.defined)):
            k = int((self.targets[s, a] >= 0).sum())
            outcomes[(int(s), int(a))] = list(zip(self.targets[s, a, :k].tolist(), self.probs[s, a, :k].tolist()))
        if condition is None:
            return outcomes
        for (s, a), override in condition.overrides.items():
            if not 0 <= s < n or not 0 <= a < a_count:
                raise ValueError(f"condition {condition.name!r}: state {s}, action {a} is not in the task")
            outcomes[(s, a)] = [(int(t), float(p)) for t, p in override]
        for s, actions in condition.available.items():
            for a in range(a_count):
                if a not in actions:
                    outcomes.pop((s, a), None)
        return outcomes

    def transition_matrix(self) -> np.ndarray:
        """P[s, a, s'] (undefined actions stay in place)."""
        n, a_count, _ = self.targets.shape
        matrix = np.zeros((n, a_count, n))
        for s in range(n):
            for a in range(a_count):
                if not self.defined[s, a]:
                    matrix[s, a, s] = 1.0
                    continue
                for t, p in zip(self.targets[s, a], self.probs[s, a]):
                    if t >= 0:
                        matrix[s, a, t] += p
        return matrix


def compile_task(graph: TaskGraph) -> CompiledGraphTask:
    """Arrays from a TaskGraph (as returned by any store's `get`).

    The environments step on arrays, not on the graph: compiling once turns the task's State
    nodes, MOVE edges and rewards into transition and reward tables indexed by state number.

    Parameters
    ----------
    graph : TaskGraph
        A graph task: State nodes indexed 0..n-1, with their moves and rewards.

    Returns
    -------
    CompiledGraphTask
        Its transition table (``targets``, ``probs``), rewards, start and terminal states.

    Raises
    ------
    SchemaError
        The task has no State nodes (it is not a graph task), or its state indices are not
        0..n-1, naming the task.

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge import compile_task
    >>> compiled = compile_task(tasks.build("neuronav/graph/linear"))
    >>> compiled.n_states, compiled.n_actions, compiled.start
    (6, 1, 0)
    """
    index_of: dict[str, int] = {}
    names: dict[int, str] = {}
    infos: dict[int, Any] = {}
    skip_set: set[int] = set()
    for local_id, props in graph.nodes("State"):
        i = props["index"]
        if i in names:
            raise SchemaError(f"task {graph.task_id!r}: two states have index {i}")
        index_of[local_id] = i
        names[i] = props.get("name") or str(i)
        infos[i] = props.get("info")
        if props.get("skip"):
            skip_set.add(i)
    n = len(index_of)
    if n == 0:
        raise SchemaError(
            f"task {graph.task_id!r} (family {graph.family!r}) has no State nodes: it is not a graph task; "
            "gym_bridge.make_env (and `graphtasks run`) picks the environment for its family"
        )
    if sorted(names) != list(range(n)):
        raise SchemaError(f"task {graph.task_id!r}: state indices must be 0..n-1, got {sorted(names)}")
    outcomes: dict[tuple[int, int], list[tuple[int, float]]] = {}
    start = None
    reward_specs: list[RewardSpec | None] = [None] * n
    overrides: dict[str, dict[tuple[int, int], list[tuple[int, float]]]] = {}
    for source, target, props in _edges_with_rel(graph):
        rel = props.pop("__rel")
        if rel == "MOVE":
            key = (index_of[source], props["action"])
            outcomes.setdefault(key, []).append((index_of[target], props["p"]))
        elif rel == "START":
            start = index_of[target]
        elif rel == "HAS_REWARD":
            if (
                reward_specs[index_of[source]] is not None
            ):  # one source per state: the payout must not depend on read order
                raise SchemaError(f"task {graph.task_id!r}: state {index_of[source]} has more than one Reward")
            reward_specs[index_of[source]] = spec_from_props(graph.props(target))
        elif rel == "OVERRIDE":
            name = graph.props(source)["name"]
            key = (props["source"], props["action"])
            overrides.setdefault(name, {}).setdefault(key, []).append((index_of[target], props["p"]))
    if start is None:
        raise SchemaError(f"task {graph.task_id!r}: no START edge from the Task node to a state")
    n_actions = max((a + 1 for _, a in outcomes), default=1)
    width = max((len(v) for v in outcomes.values()), default=1)
    targets = np.full((n, n_actions, width), -1, dtype=np.int64)
    probs = np.zeros((n, n_actions, width))
    defined = np.zeros((n, n_actions), dtype=bool)
    for (s, a), items in outcomes.items():
        items.sort()
        defined[s, a] = True
        for k, (t, p) in enumerate(items):
            targets[s, a, k] = t
            probs[s, a, k] = p
    terminal = np.logical_not(defined.any(axis=1))
    conditions = {}
    for local_id, props in graph.nodes("Condition"):
        name = props["name"]
        available = {int(k): tuple(v) for k, v in (props.get("available") or {}).items()}
        table = {k: tuple(sorted(v)) for k, v in overrides.get(name, {}).items()}
        conditions[name] = Condition(name, table, props.get("reward"), available)
    reward_value = np.array([spec.expected if spec is not None else 0.0 for spec in reward_specs])
    return CompiledGraphTask(
        task_id=graph.task_id,
        content_hash=graph.task.get("content_hash") or graph.content_hash(),
        family=graph.family,
        reward_on=graph.task.get("reward_on") or "arrival",
        start=start,
        terminal=terminal,
        skip=np.array([i in skip_set for i in range(n)]),
        defined=defined,
        targets=targets,
        probs=probs,
        reward_value=reward_value,
        reward_specs=tuple(reward_specs),
        conditions=dict(sorted(conditions.items())),
        names=tuple(names[i] for i in range(n)),
        info=tuple(infos[i] for i in range(n)),
        schedule=graph.task.get("schedule"),
    )


def _edges_with_rel(graph: TaskGraph):
    for source, target, data in graph.graph.edges(data=True):
        yield source, target, {**data["props"], "__rel": data["rel"]}


def compile_from_store(store: GraphStore, task_id: str) -> CompiledGraphTask:
    """Read a stored task and compile it: `compile_task` of ``store.get(task_id)``.

    Parameters
    ----------
    store : GraphStore
        An open store.
    task_id : str
        The stored graph task.

    Returns
    -------
    CompiledGraphTask
        The task's arrays, as `compile_task` makes them.

    Raises
    ------
    TaskNotFound
        No such task is stored (a built-in one is not put here: `tasks.build` it and put it).
    SchemaError
        The task is not a graph task.

    Examples
    --------
    >>> import tasks
    >>> from graphstore import open_store
    >>> from gym_bridge import compile_from_store
    >>> with open_store(":memory:") as store:
    ...     store.put(tasks.build("neuronav/graph/linear"))
    ...     compile_from_store(store, "neuronav/graph/linear").n_states
    True
    6
    """
    return compile_task(store.get(task_id))


def load_compiled(task: str, store: Any = None, **params: Any) -> CompiledGraphTask:
    """The compiled form of a stored or built-in task (a built-in is put or updated first)."""
    return compile_task(load_task_graph(task, store, **params))
