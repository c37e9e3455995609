"""One policy for every family: a built-in's definition file wins over an older stored version.

The stored version is made different from what the file builds now (as after an edit of the
file, or a store written by an older release); making the env must put the file's version.
"""

from __future__ import annotations

import pytest

import tasks
from graphstore import open_store
from gym_bridge import make_env
from ingest.conceptnet_snapshot import ingest_snapshot

ONE_PER_FAMILY = ["rewardgym/two-step", "neuronav/graph/neighborhood", "neuronav/grid/empty/micro", "poge/world0",
                  "room/small"]


@pytest.mark.parametrize("task_id", ONE_PER_FAMILY)
@pytest.mark.slow
def test_a_stale_stored_builtin_is_replaced_by_the_files_version(task_id: str, tmp_path) -> None:
    location = str(tmp_path / "store.lbug")
    stale = tasks.build(task_id)
    stale.task["description"] = "an older version"
    stale.seal()
    current = tasks.build(task_id).seal().task["content_hash"]
    assert stale.task["content_hash"] != current
    with open_store(location, "w") as store:
        if task_id.startswith("room/"):
            ingest_snapshot(store, None, False)
        store.put(stale)
    make_env(task_id, store=location).close()
    with open_store(location) as store:
        assert store.content_hash(task_id) == current


def test_an_up_to_date_builtin_is_only_read(tmp_path) -> None:
    """Nothing is written when the stored version is the file's: a read-only store suffices."""
    location = str(tmp_path / "store.lbug")
    with open_store(location, "w") as store:
        store.put(tasks.build("rewardgym/two-step"))
    with open_store(location) as store:  # read-only: a put would fail
        make_env("rewardgym/two-step", store=store).close()
