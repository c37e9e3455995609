"""merge_shared on every store: merging the same records again changes what differs and nothing else."""

from __future__ import annotations

import pytest

from graphstore import GraphStore

EXPERIMENT = {"uid": "experiment/x", "owner": "experiment/x", "name": "x", "spec_hash": "h1"}


def run(status: str) -> dict:
    return {
        "uid": "experiment/x/run/0", "owner": "experiment/x", "index": 0, "status": status, "task": "t",
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
    other = dict(EXPERIMENT, uid="experiment/y", owner="experiment/y", name="y")
    store.merge_shared([("Experiment", [other])])
    assert store.delete_shared("experiment/x", ["Run", "Experiment"]) == {"Run": 1, "Experiment": 1}
    assert store.cypher("MATCH (x:Experiment) RETURN x.name").rows == [["y"]]
    assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[0]]
    assert store.delete_shared("experiment/x", ["Run"]) == {"Run": 0}


@pytest.mark.parametrize("via", ["arrow", "csv"])
def test_create_shared_loads_new_rows_and_refuses_existing_ones_writing_nothing(
    store: GraphStore, via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded store loads from Arrow tables when pyarrow is installed, else from CSV files."""
    from graphstore import ladybug_store
    from graphstore.errors import GraphtasksError

    monkeypatch.setattr(ladybug_store, "USE_ARROW", via == "arrow")

    merge(store, "done")
    runs = [
        dict(run("failed"), uid=f"experiment/x/run/{i}", index=i, error="Traceback\nline two" if i == 1 else "")
        for i in (1, 2)
    ]
    keys = [{"s": "experiment/x", "t": r["uid"], "key": f"experiment/x|{r['uid']}"} for r in runs]
    assert store.create_shared([("Run", runs)], [("HAS_RUN", "Experiment", "Run", keys)]) == (2, 2)
    rows = store.cypher("MATCH (:Experiment)-[:HAS_RUN]->(r:Run) RETURN r.index, r.error, r.params ORDER BY r.index")
    assert rows.rows[1:] == [[1, "Traceback\nline two", "{}"], [2, "", "{}"]]  # text kept as it was
    if type(store).create_shared is not GraphStore.create_shared:  # a bulk loader refuses what exists
        with pytest.raises(GraphtasksError, match="nothing written"):
            store.create_shared([("Run", [run("done"), dict(run("done"), uid="experiment/x/run/9", index=9)])])
        assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[3]]


@pytest.mark.parametrize("location", ["disk", ":memory:"])
def test_create_shared_refuses_edges_to_nodes_that_are_not_stored(tmp_path, location: str) -> None:
    """A bulk loader checks every relationship's ends first: an edge to a deleted Experiment is
    one error naming it, and nothing of the request is written (on LadybugDB 0.22 COPY FROM
    refusing it inside the transaction could crash the process after a delete)."""
    from graphstore import open_store
    from graphstore.errors import GraphtasksError

    store = open_store(tmp_path / "s.lbug" if location == "disk" else location)
    merge(store, "done")
    store.delete_shared("experiment/x", ["Run", "Experiment"])
    fresh = dict(run("done"), uid="experiment/x/run/5", index=5)
    key = {"s": "experiment/x", "t": fresh["uid"], "key": f"experiment/x|{fresh['uid']}"}
    with pytest.raises(GraphtasksError, match=r"HAS_RUN 'experiment/x\|experiment/x/run/5' names Experiment "
                                              r"'experiment/x', which is not stored"):
        store.create_shared([("Run", [fresh])], [("HAS_RUN", "Experiment", "Run", [key])])
    assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[0]]
    store.merge_shared([("Experiment", [EXPERIMENT])])  # the store goes on working
    assert store.create_shared([("Run", [fresh])], [("HAS_RUN", "Experiment", "Run", [key])]) == (1, 1)
    store.close()
