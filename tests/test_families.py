"""Every family is one object in one list, and each of its parts is where the object says."""

from __future__ import annotations

import importlib
from pathlib import Path

import gymnasium as gym
import pytest

import tasks
from graphtasks.cli import COMMAND_MODULES, main
from gym_bridge import Family, GymId, families, family, family_of, make_env, register_family
from gym_bridge.families import _FAMILIES, UnknownFamily

REPO = Path(__file__).resolve().parents[1]
NAMES = ["graph", "grid", "poge", "room"]


def test_the_built_in_families_in_order() -> None:
    assert [f.name for f in families()][:4] == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_part_is_where_the_family_says(name: str) -> None:
    fam = family(name)
    assert (REPO / fam.docs).is_file()
    assert fam.cli in COMMAND_MODULES
    for gym_id in fam.gym_ids():
        assert gym.spec(gym_id.id).entry_point == fam.env
        assert gym.spec(gym_id.id).vector_entry_point == fam.vector_env
    assert fam.episode_length in fam.env_class().__init__.__code__.co_varnames
    for catalog in fam.catalogs:
        for task_id in tasks.builtin_ids(catalog):
            assert family_of(task_id) is fam, task_id
    if fam.bench:
        module, _, function = fam.bench.partition(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_family_of_takes_the_longest_prefix() -> None:
    assert family_of("user/poge/maze").name == "poge"
    assert family_of("user/my-task").name == "graph"
    assert family_of("something/else").name == "graph"  # tasks written by hand are graph tasks


def test_an_unknown_family_is_one_clear_error() -> None:
    with pytest.raises(UnknownFamily, match="unknown family 'gird'; did you mean 'grid'"):
        family("gird")


def test_a_family_added_at_run_time_registers_its_gym_ids() -> None:
    graph = family("graph")
    extra = Family(
        name="chain-demo", prefixes=("demo/chain/",), env=graph.env, make_env=graph.make_env,
        episode_length=graph.episode_length,
        gym_ids=lambda: [GymId("graphtasks/ChainDemo-v0", {"task": "rewardgym/hcp"})],
    )
    try:
        register_family(extra)
        env = gym.make("graphtasks/ChainDemo-v0", store=":memory:")
        assert env.unwrapped.compiled.task_id == "rewardgym/hcp"
        assert family_of("demo/chain/x") is extra
    finally:
        _FAMILIES.pop("chain-demo")
        gym.registry.pop("graphtasks/ChainDemo-v0")


def test_make_env_picks_the_family(tmp_path) -> None:
    env = make_env("neuronav/grid/empty/micro", store=str(tmp_path / "s.lbug"))
    assert type(env).__name__ == "GridEnv"


def test_the_families_command(capsys) -> None:
    assert main(["families", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("family,task ids,built-in tasks")
    assert [line.split(",")[0] for line in lines[1:5]] == NAMES


def private_reads_of_others(package: str) -> list[str]:
    """`x._name` where x is not `self` or `cls`, in the modules of one family's package."""
    import ast

    found = []
    for path in sorted((REPO / "gym_bridge" / package).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
    return found


@pytest.mark.parametrize("package", ["graph", "grid", "poge", "room"])
def test_no_class_reads_another_classes_private_attributes(package: str) -> None:
    assert private_reads_of_others(package) == []
