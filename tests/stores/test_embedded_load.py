"""8 processes increment one number in one embedded store, each reading it and writing it back
checked against the version read: no accepted increment may be lost.

Each increment reads in a read-only opening and writes in a writer opening; in each round every
process reads before any writes (a barrier), so all of them write the same content and all but
the first write it on a version that is no longer stored. The store must refuse those with
ConflictError, not answer "same content, unchanged". Bounded by a number of rounds, not by time.
"""

from __future__ import annotations

import multiprocessing as mp

import pytest

from graphstore import open_store

from .bolt_load import TALLY, tally_embedded, tally_task, tally_value

WORKERS = 8
ROUNDS = 6  # increments per process: each round one is accepted, the others are refused


@pytest.mark.slow
def test_eight_processes_lose_no_version_checked_increment(tmp_path):
    location = str(tmp_path / "tally.lbug")
    with open_store(location, "w") as store:
        store.put(tally_task(0))
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(WORKERS)
        with ctx.Pool(WORKERS) as pool:
            results = pool.starmap(tally_embedded, [(location, w, ROUNDS, start) for w in range(WORKERS)])
    errors = [e for r in results for e in r["errors"]]
    tallied = sum(r["tallied"] for r in results)
    refused = sum(r["tally_conflicts"] for r in results)
    with open_store(location, "r") as store:
        final = tally_value(store.get(TALLY))
    report = f"{tallied} increments accepted, {refused} refused (ConflictError), the number is {final}"
    print(report)
    assert not errors, f"{report}; first: {errors[:3]}"
    assert tallied + refused == WORKERS * ROUNDS, report
    assert final == tallied == ROUNDS, f"{report}: {tallied - final} accepted increment(s) lost"
