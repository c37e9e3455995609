"""Load on one store from several processes: version-checked increments, whole puts, deletes, reads.

`hammer` (a Bolt server) and `tally_embedded` (an embedded store) run in each worker process
(spawned, so they are importable at module level) and return what they saw; the tests add
them up. Accepted means the store said yes (put returned, True or False); refused must be
ConflictError. Two kinds of version-checked increment:

- the counter: read the counter task, add one Reward entity in a group no other write uses,
  and write it back checked against the hash it read, through `extend` (tasks.create) or a
  whole `put`. No two writes have the same content.
- the tally: read the tally task (a number, its reward's value), write the number plus one
  checked against the hash read. Two writers that read the same number write the same
  content, so a store that answered "same content: unchanged" to the second one instead
  of ConflictError would lose an increment: at the end the number must equal the increments
  accepted.

Every read must be one whole version: the content hash recomputed from what was read equals
the hash stored with it.
"""

from __future__ import annotations

import random
import time
from typing import Any, Callable

import networkx as nx

from graphstore import ConflictError, TaskGraph, TaskNotFound
from tasks.entities import add_entities

from .test_store_semantics import small_task

COUNTER = "load/counter"
TALLY = "load/tally"
COUNTER_STATES = 200  # one reward per state: room for every increment of a run
SCRATCH = "load/scratch"


def whole(graph: TaskGraph) -> bool:
    """True if what was read is one version: its recomputed hash is the one stored with it."""
    return graph.content_hash() == graph.task.get("content_hash")


def torn(task_id: str, graph: TaskGraph) -> str:
    return f"{task_id}: read {graph.content_hash()}, stored {graph.task['content_hash']}"


def tally_task(value: int) -> TaskGraph:
    """The tally task holding `value` (its one reward's value)."""
    return small_task(TALLY, reward=float(value))


def tally_value(graph: TaskGraph) -> int:
    (reward,) = [props for local, props in graph.nodes() if graph.label(local) == "Reward"]
    return int(reward["values"][0])


def tally_once(read: Callable[[], TaskGraph], write: Callable[[TaskGraph, str], object], seen: dict[str, Any]) -> None:
    """One read-modify-write increment of the tally: counted as accepted or refused (ConflictError)."""
    graph = read()
    base = graph.task["content_hash"]
    try:
        write(tally_task(tally_value(graph) + 1), base)
    except ConflictError:
        seen["tally_conflicts"] += 1
        return
    seen["tallied"] += 1


def tally_embedded(location: str, worker: int, rounds: int, start: Any) -> dict[str, Any]:
    """One worker on an embedded store: `rounds` increments of the tally. Each reads in a
    read-only opening, waits at the barrier `start` until every worker has read, then writes in
    a writer opening: every worker read the same number, so all but the first write the same
    content on a version that is no longer stored."""
    from graphstore import open_store

    seen: dict[str, Any] = {"tallied": 0, "tally_conflicts": 0, "errors": []}

    def read() -> TaskGraph:
        with open_store(location, "r") as store:
            graph = store.get(TALLY)
        start.wait()
        return graph

    def write(graph: TaskGraph, base: str) -> object:
        with open_store(location, "w") as store:
            return store.put(graph, expected_hash=base)

    for _ in range(rounds):
        try:
            tally_once(read, write, seen)
        except Exception as exc:  # noqa: BLE001 - counted and reported by the test
            seen["errors"].append(f"worker {worker}: {type(exc).__name__}: {exc}"[:300])
    return seen


def hammer(server: dict[str, Any], worker: int, seconds: float, seed: int) -> dict[str, Any]:
    """One worker: random operations until `seconds` have passed; returns its counts and accepted groups."""
    from graphstore.neo4j_store import Neo4jStore

    rng = random.Random(seed * 1000 + worker)
    store = Neo4jStore(server["uri"], user=server["user"], password=server["password"], database=server["database"])
    seen: dict[str, Any] = {
        "accepted": [], "bases": [], "conflicts": 0, "errors": [], "reads": 0, "torn": [], "scratch_ops": 0,
        "tallied": 0, "tally_conflicts": 0,
    }
    deadline = time.monotonic() + seconds
    n = 0
    try:
        while time.monotonic() < deadline:
            n += 1
            group = f"w{worker}-{n}"
            op = rng.random()
            try:
                if op < 0.2:
                    tally_once(
                        lambda: store.get(TALLY), lambda graph, base: store.put(graph, expected_hash=base), seen
                    )
                elif op < 0.5:
                    graph = store.get(COUNTER)
                    base = graph.task["content_hash"]
                    rewarded = {s for s, _, d in graph.graph.edges(data=True) if d["rel"] == "HAS_REWARD"}
                    free = [i for i in range(COUNTER_STATES) if f"s{i}" not in rewarded]
                    request = {"Reward": {"params": {"state": rng.choice(free), "value": float(n)}, "group": group}}
                    (uid,) = add_entities(graph, request)
                    if op < 0.35:  # only the new node travels, checked against the hash read (as tasks.create)
                        # a local id of its own: two racing writes then touch no common node but the Task
                        local = f"created/reward/{group}"
                        nx.relabel_nodes(graph.graph, {uid[len(COUNTER) + 1 :]: local}, copy=False)
                        store.extend(graph, [local], expected_hash=base)
                    else:  # the whole task, checked
                        store.put(graph, expected_hash=base)
                    seen["accepted"].append(group)
                    seen["bases"].append(base)  # in one serial history no two accepted writes share a base
                elif op < 0.75:
                    graph = store.get(COUNTER)
                    seen["reads"] += 1
                    if not whole(graph):
                        seen["torn"].append(torn(COUNTER, graph))
                elif op < 0.85:
                    store.put(small_task(SCRATCH, reward=rng.random(), n=rng.randrange(2, 12)))
                    seen["scratch_ops"] += 1
                elif op < 0.9:
                    store.delete(SCRATCH)
                    seen["scratch_ops"] += 1
                else:
                    try:
                        graph = store.get(SCRATCH)
                    except TaskNotFound:
                        continue
                    seen["reads"] += 1
                    if not whole(graph):
                        seen["torn"].append(torn(SCRATCH, graph))
            except ConflictError:
                seen["conflicts"] += 1
            except Exception as exc:  # noqa: BLE001 - counted and reported by the test
                seen["errors"].append(f"{type(exc).__name__}: {exc}"[:300])
    finally:
        store.close()
    return seen
