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
SECONDS_PER_TEST = 0.05  # a unit not measured below: its number of tests times this

# Seconds of each unit on 2 workers (`pytest --durations=0`, summed per unit), 2026-11-27.
MEASURED_SECONDS = {
    "tests/test_fitting_group.py": 129,
    "tests/test_reproduce.py": 123,
    "docs/fitting.md": 78,
    "docs/experiments.md": 63,
    "tests/test_experiments.py": 62,
    "tests/test_experiment_sweeps.py": 40,
    "docs/index.md": 40,
    "tests/test_record_faults.py": 37,
    "docs/stores.md": 36,
    "tests/test_fitting_bayes.py": 32,
    "tests/test_serve.py": 32,
    "tests/stores/test_bolt_load.py": 27,
    "tests/stores/test_disk_full.py": 24,
    "tests/test_serve_browser.py": 22,
    "tests/stores/test_rdf.py": 19,
    "docs/participants.md": 19,
    "tests/test_fitting.py": 17,
    "tests/stores/test_queries_doc.py": 17,
    "tests/grid/test_grid_agents.py": 16,
    "docs/queries.md": 14,
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
