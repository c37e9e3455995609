"""Shared fixtures: every test runs against its own real store, never the user's default."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import tasks
from graphstore import open_store
from graphstore.ladybug_store import LadybugStore

# Reference data the tests compare against, with its sources and licences (tests/data/README.md).
TEST_DATA = Path(__file__).resolve().parent / "data"

# JAX's persistent compilation cache, shared by every test process and the subprocesses they start
# (documentation blocks, CLI runs): the NUTS and GRU tests compile the same programs again and again,
# about a third of their CPU time. Compiled code is the same program, so no result changes.
for _name, _value in {
    "JAX_COMPILATION_CACHE_DIR": str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "jax"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}.items():
    os.environ.setdefault(_name, _value)


@pytest.fixture(autouse=True)
def isolated_store_location(tmp_path, monkeypatch):
    """Point the default store at a fresh temporary folder for each test."""
    location = tmp_path / "store.lbug"
    monkeypatch.setenv("GRAPHTASKS_STORE", str(location))
    return location


@pytest.fixture
def memory_store():
    with open_store(":memory:") as store:
        yield store


@pytest.fixture(scope="session")
def builtin_store_file(tmp_path_factory) -> Path:
    """An embedded store file holding every built-in task, written once per run and closed.

    Loading all the built-ins takes seconds; tests share this file (`loaded_store`) or a copy
    of it (`loaded_store_copy`) instead of loading them again.
    """
    location = tmp_path_factory.mktemp("builtins") / "store.lbug"
    with open_store(location) as store:
        for task_id in tasks.builtin_ids():
            assert store.put(tasks.build(task_id)) is True, task_id  # a fresh store writes every task
    return location


@pytest.fixture(scope="session")
def loaded_store(builtin_store_file):
    """Every built-in task, opened read-only: shared by the whole run, so no test can change it."""
    store = LadybugStore(str(builtin_store_file), read_only=True)
    yield store
    store.close()


@pytest.fixture
def loaded_store_copy(builtin_store_file, tmp_path) -> Path:
    """A private copy of the store file of every built-in task, to write to or hand to the CLI."""
    target = tmp_path / "builtins.lbug"
    for source in builtin_store_file.parent.iterdir():  # the database and any files beside it
        shutil.copy2(source, target.with_name(source.name.replace(builtin_store_file.name, target.name)))
    return target


# One task of each built-in family, for the quick variants of checks that go over every
# built-in task (those run in full only without -m "not slow").
FAMILY_SAMPLES = (
    "neuronav/graph/t_graph", "neuronav/grid/four_rooms/micro", "rewardgym/two-step", "poge/world1", "room/small",
)


def builtin_params(ids: list[str] | None = None) -> list:
    """Built-in task ids as pytest parameters; all but FAMILY_SAMPLES are marked slow."""
    ids = tasks.builtin_ids() if ids is None else ids
    return [task_id if task_id in FAMILY_SAMPLES else pytest.param(task_id, marks=pytest.mark.slow) for task_id in ids]


def pytest_configure(config: pytest.Config) -> None:
    """A run without the slow tests is a quick one: property tests draw fewer examples (tests/budget.py)."""
    from tests.budget import QUICK_ENV_VAR

    if "not slow" in (config.option.markexpr or ""):
        os.environ[QUICK_ENV_VAR] = "1"


QUICK_CASES = 2  # the cases of each parametrized test that a quick run takes; the full run takes them all
QUICK_SAMPLED = pytest.StashKey[int]()
NOT_SAMPLED = ("tests/test_docs.py",)  # its cases are a page's blocks, run in order: not samples of one check


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A quick run (`-m "not slow"`) samples each parametrized test: its first QUICK_CASES cases
    not already marked slow, in the order they are declared; the others are marked slow, so the
    full run still takes every case. The header says how many were left out."""
    if "not slow" not in (config.option.markexpr or ""):
        return
    cases: dict[str, list[pytest.Item]] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if item.nodeid.startswith(NOT_SAMPLED):
            continue
        if callspec is not None and item.get_closest_marker("slow") is None:
            cases.setdefault(item.nodeid.partition("[")[0], []).append(item)
    sampled = 0
    for group in cases.values():
        group.sort(key=lambda item: tuple(item.callspec.indices.values()))  # type: ignore[attr-defined]
        for item in group[QUICK_CASES:]:
            item.add_marker(pytest.mark.slow)
            sampled += 1
    config.stash[QUICK_SAMPLED] = sampled


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    sampled = config.stash.get(QUICK_SAMPLED, 0)
    if not sampled:
        return None
    return f"quick run: {sampled} parametrized cases past the first {QUICK_CASES} of each test are left to the full run"


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say which Bolt servers the store tests run against, and that a quick run samples."""
    lines = ["bolt servers: ArcadeDB (local) and Neo4j (NEO4J_URI)" if os.environ.get("NEO4J_URI") else
             "bolt servers: ArcadeDB (local); set NEO4J_URI to run the store tests against Neo4j as well"]
    if "not slow" in (config.option.markexpr or ""):
        lines.append(f"quick run: the first {QUICK_CASES} cases of each parametrized test (tests/conftest.py)")
    return lines


def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """With the default `--dist loadfile`: documentation pages as units too, longest first (tests/scheduling.py)."""
    if config.getoption("dist") != "loadfile":
        return None
    from tests.scheduling import LongestFirstScheduling

    return LongestFirstScheduling(config, log)


CPU_LOG_VAR = "GRAPHTASKS_TEST_CPU_LOG"  # a file: each test's CPU seconds are appended to it


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """With GRAPHTASKS_TEST_CPU_LOG set, append each test's CPU seconds (its process's and its
    subprocesses', set-up and tear-down included) to that file: what a test costs a saturated
    2-core CI machine, measured even on a busy one where wall times mislead. tests/scheduling.py
    sums them per unit (`python -m tests.scheduling LOG`)."""
    path = os.environ.get(CPU_LOG_VAR)
    if not path:
        yield
        return
    import resource

    def spent() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    before = spent()
    yield
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"{item.nodeid}\t{spent() - before:.3f}\n")
