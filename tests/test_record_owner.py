"""Records name what they hold (issue 37): a record's experiment is its `owner`, a run's task its
`task`; a store written before (the owner in `task`, a run's task in `task_id`) is renamed when it
is opened, for reading too, and `graphtasks cypher` says so when a query uses an old name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphstore import SCHEMA, open_store
from graphstore.ladybug_store import LadybugStore
from graphtasks.cli import main
from graphtasks.experiments.schema import RECORD_LABELS

DATA = Path(__file__).parent / "data" / "stores"
RUNS_ON = "MATCH (r:Run) WHERE r.task = $task RETURN r.index, r.owner ORDER BY r.index"


@pytest.fixture
def old_store(tmp_path: Path) -> str:
    """A copy of the store written before records named their owner `owner`."""
    path = tmp_path / "old-release.lbug"
    shutil.copyfile(DATA / "old-release.lbug", path)
    return str(path)


def test_record_labels_name_their_owner_owner_and_a_run_its_task_task() -> None:
    for label in (*RECORD_LABELS, "StudyEvent"):
        node_type = SCHEMA.nodes[label]
        owner = node_type.property("owner")
        assert node_type.owner_property == "owner" and owner is not None and owner.required, label
        assert f"graphtasks_{label.lower()}_owner" in {i.name for i in node_type.indexes()}
    task = SCHEMA.nodes["Run"].property("task")
    assert task is not None and task.required and SCHEMA.nodes["Run"].property("task_id") is None
    assert SCHEMA.nodes["Episode"].property("task") is None  # its task version is `task_version`
    for label in ("Task", "State", "Reward", "Cell", "Concept"):  # a task's nodes (and ConceptNet's) keep `task`
        assert SCHEMA.nodes[label].owner_property == "task" and SCHEMA.nodes[label].property("owner") is None


def test_an_old_store_opened_to_read_answers_a_run_by_its_task(old_store: str) -> None:
    with open_store(old_store, "r") as store:
        assert store.cypher(RUNS_ON, {"task": "rewardgym/two-step"}).rows == [[0, "experiment/old-release"]]
        assert store.cypher(RUNS_ON, {"task": "neuronav/graph/linear"}).rows == [[2, "experiment/old-release"]]
        owners = store.cypher("MATCH (e:Episode)-[:HAS_TRIAL]->(t:Trial) RETURN DISTINCT e.owner, t.owner").rows
        assert owners == [["experiment/old-release", "experiment/old-release"]]
    # renamed once: a second opening finds nothing to change, and writing keeps the new names
    reader = LadybugStore(old_store, read_only=True)
    try:
        assert not reader._sync_schema(apply=False)
    finally:
        reader.close()
    assert main(["--store", old_store, "experiment", "run", "old-release", "--no-progress", "--workers", "1"]) == 0
    with open_store(old_store, "r") as store:
        assert store.cypher(RUNS_ON, {"task": "rewardgym/two-step"}).rows == [
            [0, "experiment/old-release"], [1, "experiment/old-release"]]


def test_a_new_store_records_the_run_s_task_in_task_and_deletes_by_owner(tmp_path: Path) -> None:
    path = str(tmp_path / "new.lbug")
    spec = str(DATA / "old-release.toml")
    assert main(["--store", path, "experiment", "run", spec, "--no-progress", "--workers", "1"]) == 0
    with open_store(path, "r") as store:
        assert [r[0] for r in store.cypher(RUNS_ON, {"task": "neuronav/graph/linear"}).rows] == [2, 3]
        assert store.cypher("MATCH (n:Experiment) RETURN n.owner, n.uid").rows == [
            ["experiment/old-release", "experiment/old-release"]]
    assert main(["--store", path, "experiment", "delete", "old-release"]) == 0
    with open_store(path, "r") as store:
        assert store.cypher("MATCH (r:Run) RETURN count(r)").rows == [[0]]


def test_cypher_names_a_renamed_property_in_one_line(old_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--store", old_store, "cypher", "MATCH (r:Run) WHERE r.task = 'experiment/old-release' "
                 "RETURN r.index"])
    err = capsys.readouterr().err
    assert code == 0 and err.splitlines() == [
        "note: Run.task is the run's task id; its experiment's uid is Run.owner"]
    main(["--store", old_store, "cypher", "MATCH (r:Run) RETURN r.task_id"])
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "note: Run.task_id is now Run.task (renamed; the old name finds nothing)"
    assert main(["--store", old_store, "cypher", "MATCH (s:State) WHERE s.task = 'rewardgym/two-step' "
                 "RETURN count(s)"]) == 0
    assert capsys.readouterr().err == ""
