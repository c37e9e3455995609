"""merge_shared on every store: merging the same records again changes what differs and nothing else."""

from __future__ import annotations

from graphstore import GraphStore

EXPERIMENT = {"uid": "experiment/x", "task": "experiment/x", "name": "x", "spec_hash": "h1"}


def run(status: str) -> dict:
    return {
        "uid": "experiment/x/run/0", "task": "experiment/x", "index": 0, "status": status, "task_id": "t",
        "agent": "q", "label": "q", "params": {}, "seed": 0,
    }


def merge(store: GraphStore, status: str) -> tuple[int, int]:
    key = {"s": EXPERIMENT["uid"], "t": "experiment/x/run/0", "key": "experiment/x|experiment/x/run/0"}
    return store.merge_shared([("Experiment", [EXPERIMENT]), ("Run", [run(status)])],
                              [("HAS_RUN", "Experiment", "Run", [key])])


def test_merging_again_updates_nodes_and_keeps_key_only_edges(store: GraphStore) -> None:
    assert merge(store, "interrupted") == (2, 1)
    assert merge(store, "done") == (0, 0)  # the edge exists and carries nothing but its key
    rows = store.cypher("MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) RETURN x.name, r.status").rows
    assert rows == [["x", "done"]]


def test_delete_shared_removes_one_owners_records_and_their_edges(store: GraphStore) -> None:
    merge(store, "done")
    other = dict(EXPERIMENT, uid="experiment/y", task="experiment/y", name="y")
    store.merge_shared([("Experiment", [other])])
    assert store.delete_shared("experiment/x", ["Run", "Experiment"]) == {"Run": 1, "Experiment": 1}
    assert store.cypher("MATCH (x:Experiment) RETURN x.name").rows == [["y"]]
    assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[0]]
    assert store.delete_shared("experiment/x", ["Run"]) == {"Run": 0}
