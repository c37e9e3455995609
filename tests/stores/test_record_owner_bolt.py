"""A Bolt store written before records named their owner `owner` (issue 37): its records are
renamed, in batches, the first time a store object uses it, a reader too; then a run is found by
its task. (The embedded store's renaming: tests/test_record_owner.py.)"""

from __future__ import annotations

import pytest

from graphstore import neo4j_store
from graphstore.neo4j_store import SCHEMA_VERSION, SCHEMA_VERSION_LABEL

from .conftest import BoltServer, open_bolt, wipe

OLD = "experiment/old"


def write_old_records(server: BoltServer) -> None:
    """Records as the release before wrote them: the owner in `task`, a run's task in `task_id`."""
    store = open_bolt(server)
    try:
        wipe(store)
        with store._driver.session(database=store.database) as session:  # type: ignore[attr-defined]
            session.run(f"MATCH (m:{SCHEMA_VERSION_LABEL}) DELETE m").consume()
            session.run("CREATE (:Experiment {uid: $x, task: $x, name: 'old', spec_hash: 'h'})", x=OLD).consume()
            for index, task in enumerate(("rewardgym/two-step", "neuronav/graph/linear", "rewardgym/two-step")):
                run = f"{OLD}/run/{index}"
                session.run(
                    "MATCH (x:Experiment {uid: $x}) CREATE (x)-[:HAS_RUN {key: $x + '|' + $r}]->"
                    "(:Run {uid: $r, task: $x, task_id: $t, index: $i, status: 'completed', agent: 'q', label: 'q', "
                    "params: '{}', seed: 0})", x=OLD, r=run, t=task, i=index).consume()
                session.run(
                    "MATCH (r:Run {uid: $r}) CREATE (r)-[:HAS_EPISODE {key: $r + '|e'}]->(:Episode {uid: $r + '/e', "
                    "task: $x, experiment: 'old', run: $i, phase: 'p', phase_index: 0, index: 0, reward: 1.0, "
                    "length: 1, start_state: 0, task_version: $t, task_hash: 'h'})", x=OLD, r=run, t=task, i=index,
                ).consume()
    finally:
        store.close()


def test_an_old_bolt_store_is_renamed_in_batches_when_first_read(
    bolt_server: BoltServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_old_records(bolt_server)
    monkeypatch.setattr(neo4j_store, "RENAME_BATCH", 2)  # three runs: two batches
    store = open_bolt(bolt_server, read_only=True)
    try:
        runs = store.cypher("MATCH (r:Run) WHERE r.task = $t RETURN r.index, r.owner ORDER BY r.index",
                            {"t": "rewardgym/two-step"}).rows
        assert runs == [[0, OLD], [2, OLD]]
        assert store.cypher("MATCH (r:Run) WHERE r.task_id IS NOT NULL RETURN count(r)").rows == [[0]]
        episodes = store.cypher("MATCH (e:Episode) RETURN e.owner, e.task ORDER BY e.uid").rows
        assert episodes == [[OLD, None]] * 3
        assert store.cypher(f"MATCH (m:{SCHEMA_VERSION_LABEL}) RETURN m.version").rows == [[SCHEMA_VERSION]]
        assert store.schema_warnings == []  # type: ignore[attr-defined]
    finally:
        store.close()
    writer = open_bolt(bolt_server)
    try:
        assert writer.delete_shared(OLD, ["Episode", "Run", "Experiment"]) == {"Episode": 3, "Run": 3, "Experiment": 1}
    finally:
        wipe(writer)
        writer.close()
