"""How pytest-xdist shares the suite between workers (the conftest's `pytest_xdist_make_scheduler`).

Work goes out in units that stay on one worker: a test file (its module fixtures are made
once), except tests/test_docs.py, whose unit is one documentation page (a page's blocks run in
order in one folder, but different pages don't share anything). Units start longest first, by
the seconds measured below, so that no long unit starts last while the other worker idles
(greedy longest-first scheduling). The figures only order the work: a stale or missing one
makes the run slower, never wrong.
"""

from __future__ import annotations

from collections import OrderedDict

from xdist.scheduler import LoadScopeScheduling

DOCS_TESTS = "tests/test_docs.py"
SECONDS_PER_TEST = 0.1  # a unit not measured below: its number of tests times this

# Seconds of each unit on 2 workers (the junit XML of a whole run, summed per unit), 2026-11-27.
# Late on 2026-11-28 six units whose tests were made faster were scaled by their CPU seconds on one
# process before and after (they were: fitting_group 130, experiments 70, parallel 64, serve 48,
# fitting 33, record_chunks 10).
MEASURED_SECONDS = {
    "tests/test_reproduce.py": 125,
    "tests/test_fitting_group.py": 122,
    "docs/fitting.md": 88,
    "docs/experiments.md": 61,
    "tests/stores/test_cross_store.py": 59,
    "tests/stores/test_store_semantics.py": 56,
    "tests/test_experiments.py": 55,
    "tests/stores/test_rdf.py": 55,
    "tests/vector/test_grid_vector_env.py": 53,
    "tests/test_serve.py": 47,
    "tests/test_parallel.py": 46,
    "tests/stores/test_disk_full.py": 46,
    "tests/grid/test_grid_env.py": 42,
    "tests/test_record_faults.py": 39,
    "tests/test_fitting_bayes.py": 36,
    "docs/index.md": 35,
    "tests/poge/test_env.py": 35,
    "tests/test_fitting.py": 31,
    "tests/test_graph_env.py": 30,
    "tests/stores/test_bolt_load.py": 30,
    "tests/test_serve_browser.py": 28,
    "docs/stores.md": 27,
    "tests/validation/test_env_parameters.py": 25,
    "tests/test_experiment_sweeps.py": 24,
    "tests/stores/test_queries_doc.py": 23,
    "tests/room/test_ingest.py": 21,
    "tests/vector/test_graph_vector_env.py": 20,
    # units added 2026-11-28, from a whole run on a loaded machine scaled to the figures above
    "docs/participants.md": 17,
    "tests/test_serve_guard.py": 15,
    "tests/test_serve_hardening.py": 15,
    "tests/stores/test_lock_waits.py": 14,
    "tests/test_serve_throughput.py": 14,
    "tests/test_import_atomic.py": 12,
    "tests/test_fitting_selection.py": 12,
    "tests/test_run_status.py": 11,
    "tests/room/test_room.py": 11,
    "tests/test_record_chunks.py": 7,
}


def unit_of(nodeid: str) -> str:
    """The unit a test goes out in: its file, or its page for a documentation block."""
    path = nodeid.split("::", 1)[0]
    if path == DOCS_TESTS and "[" in nodeid:  # test_block_runs_as_written[docs/fitting.md:337]
        return nodeid.split("[", 1)[1].rsplit(":", 1)[0]
    return path


class LongestFirstQueue(OrderedDict[str, dict[str, bool]]):
    """xdist's queue of units (unit -> its tests), handing out the longest unit first."""

    def seconds(self, unit: str) -> float:
        return MEASURED_SECONDS.get(unit, len(self[unit]) * SECONDS_PER_TEST)

    def popitem(self, last: bool = True) -> tuple[str, dict[str, bool]]:
        if last:
            return super().popitem(last=True)
        unit = max(self, key=self.seconds)  # the scheduler takes from the front: give it the longest
        return unit, self.pop(unit)


class LongestFirstScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with pages as units and the longest units first."""

    def __init__(self, config, log=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(config, log)
        self.workqueue = LongestFirstQueue()

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


def unit_seconds(log: str) -> dict[str, float]:
    """CPU seconds per unit from a GRAPHTASKS_TEST_CPU_LOG file (tests/conftest.py), longest first."""
    totals: dict[str, float] = {}
    with open(log, encoding="utf-8") as lines:
        for line in lines:
            nodeid, seconds = line.rstrip("\n").rsplit("\t", 1)
            totals[unit_of(nodeid)] = totals.get(unit_of(nodeid), 0.0) + float(seconds)
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


if __name__ == "__main__":  # python -m tests.scheduling LOG: the units' CPU seconds, to refresh MEASURED_SECONDS
    import sys

    for unit, seconds in unit_seconds(sys.argv[1]).items():
        print(f"{seconds:8.1f}  {unit}")
