"""Load on one Bolt store from several processes: version-checked increments, whole puts, deletes, reads.

`hammer` runs in each worker process (spawned, so it is importable at module level) and
returns what it saw; the test adds them up. An increment reads the counter task, adds one
Reward entity in a group no other write uses, and writes it back checked against the hash
it read, through `extend` (tasks.create) or a whole `put`. Accepted means the store said
yes; refused must be ConflictError. Every read must be one whole version: the content hash
recomputed from what was read equals the hash stored with it.
"""

from __future__ import annotations

import random
import time
from typing import Any

import networkx as nx

from graphstore import ConflictError, TaskGraph, TaskNotFound
from tasks.entities import add_entities

from .test_store_semantics import small_task

COUNTER = "load/counter"
COUNTER_STATES = 200  # one reward per state: room for every increment of a run
SCRATCH = "load/scratch"


def whole(graph: TaskGraph) -> bool:
    """True if what was read is one version: its recomputed hash is the one stored with it."""
    return graph.content_hash() == graph.task.get("content_hash")


def torn(task_id: str, graph: TaskGraph) -> str:
    return f"{task_id}: read {graph.content_hash()}, stored {graph.task['content_hash']}"


def hammer(server: dict[str, Any], worker: int, seconds: float, seed: int) -> dict[str, Any]:
    """One worker: random operations until `seconds` have passed; returns its counts and accepted groups."""
    from graphstore.neo4j_store import Neo4jStore

    rng = random.Random(seed * 1000 + worker)
    store = Neo4jStore(server["uri"], user=server["user"], password=server["password"], database=server["database"])
    seen: dict[str, Any] = {
        "accepted": [], "bases": [], "conflicts": 0, "errors": [], "reads": 0, "torn": [], "scratch_ops": 0,
    }
    deadline = time.monotonic() + seconds
    n = 0
    try:
        while time.monotonic() < deadline:
            n += 1
            group = f"w{worker}-{n}"
            op = rng.random()
            try:
                if op < 0.5:
                    graph = store.get(COUNTER)
                    base = graph.task["content_hash"]
                    rewarded = {s for s, _, d in graph.graph.edges(data=True) if d["rel"] == "HAS_REWARD"}
                    free = [i for i in range(COUNTER_STATES) if f"s{i}" not in rewarded]
                    request = {"Reward": {"params": {"state": rng.choice(free), "value": float(n)}, "group": group}}
                    (uid,) = add_entities(graph, request)
                    if op < 0.3:  # only the new node travels, checked against the hash read (as tasks.create)
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
