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

# CPU seconds of each unit (GRAPHTASKS_TEST_CPU_LOG of the .ci/run of 2026-11-29, summed per unit by
# `python -m tests.scheduling LOG`; units under 8 s are left to SECONDS_PER_TEST). A unit's
# subprocesses count when they are reaped, so a figure can hold another unit's: test_reproduce_order
# showed 96 s and takes 8 alone.
MEASURED_SECONDS = {
    "docs/fitting.md": 226,
    "tests/test_experiments.py": 90,
    "tests/test_reproduce.py": 78,
    "tests/test_parallel.py": 78,
    "docs/experiments.md": 75,
    "tests/test_sparql_experiment.py": 66,
    "tests/stores/test_rdf.py": 57,
    "tests/test_fitting_nuts_rt.py": 57,
    "tests/test_fitting_bayes.py": 53,
    "tests/vector/test_grid_vector_env.py": 52,
    "tests/test_serve.py": 51,
    "tests/grid/test_grid_env.py": 48,
    "tests/stores/test_cross_store.py": 48,
    "tests/stores/test_store_semantics.py": 47,
    "tests/test_fitting_group.py": 46,
    "tests/test_record_faults.py": 42,
    "docs/at-a-glance.md": 38,
    "tests/test_fitting_nuts_chains.py": 37,
    "tests/test_fitting.py": 31,
    "tests/stores/test_bolt_load.py": 30,
    "tests/stores/test_disk_full.py": 30,
    "tests/test_graph_env.py": 26,
    "tests/poge/test_env.py": 26,
    "tests/test_progress_commands.py": 25,
    "docs/stores.md": 25,
    "tests/stores/test_embedded_load.py": 23,
    "tests/test_experiment_sweeps.py": 22,
    "docs/participants.md": 21,
    "tests/room/test_ingest.py": 21,
    "tests/vector/test_run_all.py": 20,
    "tests/test_any_task_experiments.py": 19,
    "tests/stores/test_lock_waits.py": 19,
    "tests/test_shacl.py": 18,
    "tests/grid/test_grid_agents.py": 18,
    "tests/test_serve_browser.py": 16,
    "tests/test_serve_guard.py": 14,
    "docs/queries.md": 14,
    "tests/test_batched_agents.py": 14,
    "tests/test_fitting_gru.py": 14,
    "tests/test_notebooks.py": 14,
    "tests/room/test_room.py": 14,
    "tests/test_hostile_inputs.py": 13,
    "tests/test_serve_throughput.py": 13,
    "tests/test_fitting_selection.py": 12,
    "docs/language-participants.md": 12,
    "tests/test_export_turtle.py": 12,
    "tests/test_fitting_cv.py": 12,
    "tests/test_figures_split.py": 11,
    "tests/test_episode_length.py": 11,
    "tests/test_serve_hardening.py": 11,
    "docs/tutorial.md": 11,
    "tests/validation/test_env_parameters.py": 11,
    "tests/stores/test_entity_edits.py": 10,
    "tests/test_run_status.py": 10,
    "tests/poge/test_properties.py": 10,
    "docs/room-v2-v3.md": 10,
    "tests/validation/test_episode_limits.py": 10,
    "tests/test_cli_errors.py": 10,
    "tests/test_import_atomic.py": 9,
    "README.md": 9,
    "tests/test_api_docstrings.py": 9,
    "tests/stores/test_injection.py": 9,
    "tests/test_agents_vs_neuronav_bench.py": 9,
    "tests/test_serve_limits.py": 9,
    "tests/test_serve_touch.py": 9,
    "tests/test_twin_drivers.py": 8,
    "tests/test_render_tasks.py": 8,
    "tests/stores/test_query_security.py": 8,
    "tests/test_reproduce_order.py": 8,
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
