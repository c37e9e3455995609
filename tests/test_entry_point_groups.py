"""Every entry-point group the code reads is declared in pyproject.toml, and every group declared
there is read by the code (issue 37: 4 of the 6 groups read were not declared).

The groups read are found in the source: each `entry_points(group=NAME)` call of the packages,
NAME a module constant (`ENTRY_POINT_GROUP = "graphtasks.families"`) or a string."""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("graphstore", "ingest", "tasks", "gym_bridge", "graphtasks", "benchmarks")


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """The module's top-level `NAME = "text"` assignments."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


@functools.cache
def groups_read() -> dict[str, list[str]]:
    """Each group the code reads, with where (file:line)."""
    found: dict[str, list[str]] = {}
    unresolved = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text()
            if "entry_points" not in text:
                continue
            tree = ast.parse(text, str(path))
            strings = _module_strings(tree)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
                        == "entry_points"):
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                group = next((k.value for k in node.keywords if k.arg == "group"), None)
                if isinstance(group, ast.Constant):
                    names = [group.value]
                elif isinstance(group, ast.Name) and group.id in strings:
                    names = [strings[group.id]]
                else:  # a group handed in (graphstore.schema's Schema): the module's *GROUP constants
                    names = [v for k, v in strings.items() if k.endswith("GROUP") and v.startswith("graphtasks.")]
                if not names:
                    unresolved.append(where)
                for name in names:
                    found.setdefault(name, []).append(where)
    assert not unresolved, f"entry_points calls whose group the test cannot read: {unresolved}"
    return found


def groups_declared() -> dict[str, dict[str, str]]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    return {k: v for k, v in project.get("entry-points", {}).items() if k.startswith("graphtasks.")}


def test_the_source_reads_the_groups_it_documents():
    read = groups_read()
    # the eight groups of this round, each read where its registry is (a sanity check of the scan)
    assert {"graphtasks.schema", "graphtasks.knowledge", "graphtasks.outside_records", "graphtasks.query_sources",
            "graphtasks.stores", "graphtasks.families", "graphtasks.task_families", "graphtasks.commands"} <= set(read)
    assert any(w.startswith("gym_bridge/families.py") for w in read["graphtasks.families"])


def test_every_group_read_is_declared():
    missing = {group: where for group, where in groups_read().items() if group not in groups_declared()}
    assert not missing, f"entry-point groups read but not declared in pyproject.toml: {missing}"


def test_every_group_declared_is_read():
    unread = set(groups_declared()) - set(groups_read())
    assert not unread, f"entry-point groups declared in pyproject.toml that no code reads: {sorted(unread)}"


def test_the_installed_metadata_has_the_projects_entries():
    """What pyproject.toml registers is what the installed package offers (pip install -e . ran)."""
    from importlib.metadata import entry_points

    for group, entries in groups_declared().items():
        installed = {e.name: e.value for e in entry_points(group=group) if e.dist and e.dist.name == "graphtasks"}
        assert installed == entries, group
