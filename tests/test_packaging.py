"""The installed package carries every data file (a missing package-data pattern once lost some)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROBE = (
    "import json, tasks; root = tasks.data_dir(); "
    "print(json.dumps([str(root), sorted(p.relative_to(root).as_posix() for p in root.rglob('*') "
    "if p.is_file() and '__pycache__' not in p.parts)]))"
)


def run_installed(code: str, folder: Path):
    """JSON printed by `code` run against the installed copy: away from the checkout, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True)
    if "No module named" in probe.stderr:
        pytest.skip("graphtasks is not installed in this interpreter (the README's test command installs it)")
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


def test_installed_package_ships_all_data(tmp_path):
    root, installed = run_installed(PROBE, tmp_path)
    expected = sorted(
        p.relative_to(REPO / "data").as_posix()
        for p in (REPO / "data").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert installed == expected, f"installed data at {root} differs from the checkout's data/"


TOP_LEVEL = ("graphstore", "ingest", "tasks", "gym_bridge", "graphtasks", "benchmarks")
MODULE_PROBE = (
    "import importlib, json, pathlib; out = {}\n"
    f"for name in {TOP_LEVEL!r}:\n"
    "    root = pathlib.Path(importlib.import_module(name).__file__).parent\n"
    "    out[name] = sorted(p.relative_to(root).as_posix() for p in root.rglob('*.py'))\n"
    "print(json.dumps(out))"
)


def checkout_modules(name: str) -> list[str]:
    root = REPO / name
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_package_of_the_checkout_is_declared():
    import tomllib

    declared = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for name in TOP_LEVEL
        for init in (REPO / name).rglob("__init__.py")
    }
    assert found - declared == set(), "packages missing from pyproject.toml's [tool.setuptools] packages"


def test_installed_package_ships_every_module(tmp_path):
    installed = run_installed(MODULE_PROBE, tmp_path)
    for name in TOP_LEVEL:
        assert installed[name] == checkout_modules(name), f"the installed {name} differs from the checkout's"


def test_installed_copy_finds_its_conceptnet_snapshot(tmp_path):
    """`graphtasks ingest snapshot` from an installed copy reads the snapshot the package ships."""
    code = (
        "import json; from ingest.conceptnet_snapshot import snapshot_path; p = snapshot_path(); "
        "print(json.dumps([str(p), p.is_file()]))"
    )
    path, exists = run_installed(code, tmp_path)
    assert exists, f"the installed copy looks for its snapshot at {path}"
