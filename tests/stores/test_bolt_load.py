"""8 processes put, extend, delete and read one Bolt store (the session's ArcadeDB on 127.0.0.1) at once.

Nothing may be lost: every accepted increment is visible at the end and no two were accepted
on the same version, the tally (increments that two writers may write with the same content)
ends at the number of increments accepted, every refused one is a ConflictError, every read
is one whole version.
Bounded in time (GRAPHTASKS_LOAD_SECONDS, default 20 s of load). Not in the quick run (a Bolt test).
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import Counter

import pytest

from graphstore.entities import select

from .bolt_load import COUNTER, COUNTER_STATES, TALLY, hammer, tally_task, tally_value, whole
from .conftest import open_bolt, wipe
from .test_store_semantics import small_task

WORKERS = 8


@pytest.mark.slow
def test_eight_writer_processes_lose_nothing(arcadedb_server):
    seconds = float(os.environ.get("GRAPHTASKS_LOAD_SECONDS", "20"))
    server = {"uri": arcadedb_server.uri, "user": arcadedb_server.user, "password": arcadedb_server.password,
              "database": arcadedb_server.database}
    store = open_bolt(arcadedb_server)
    wipe(store)
    try:
        store.put(small_task(COUNTER, n=COUNTER_STATES))
        store.put(tally_task(0))
        with mp.get_context("spawn").Pool(WORKERS) as pool:
            results = pool.starmap(hammer, [(server, w, seconds, 11) for w in range(WORKERS)])
        accepted = [g for r in results for g in r["accepted"]]
        torn = [t for r in results for t in r["torn"]]
        errors = [e for r in results for e in r["errors"]]
        visible = {e.group for e in select(store, COUNTER) if e.group.startswith("w")}
        lost = sorted(set(accepted) - visible)
        bases = Counter(b for r in results for b in r["bases"])
        lost += [f"{n - 1} more write(s) accepted on base {b}" for b, n in bases.items() if n > 1]
        tallied = sum(r["tallied"] for r in results)
        tally_lost = tallied - tally_value(store.get(TALLY))
        report = (
            f"{len(accepted)} accepted, {sum(r['conflicts'] for r in results)} refused (ConflictError), "
            f"{len(lost)} lost; tally: {tallied} accepted, {sum(r['tally_conflicts'] for r in results)} refused, "
            f"{tally_lost} lost; {sum(r['reads'] for r in results)} reads, {len(torn)} torn, {len(errors)} other errors"
        )
        print(report)
        assert not errors, f"{report}; first: {errors[:3]}"
        assert not lost and not torn, f"{report}; lost {lost[:5]}, torn {torn[:3]}"
        assert tally_lost == 0, report
        assert sum(r["tally_conflicts"] for r in results) > 0, f"{report}: no two tally increments raced"
        assert visible == set(accepted), f"{report}; visible but refused: {sorted(visible - set(accepted))[:5]}"
        assert len(accepted) >= WORKERS, report  # the load really wrote
        assert whole(store.get(COUNTER))
    finally:
        wipe(store)
        store.close()
