"""Every family is one object in one list, and each of its parts is where the object says."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path

import gymnasium as gym
import pytest

import tasks
from graphtasks.cli import MODULES, main
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
    assert fam.cli in MODULES
    for gym_id in fam.gym_ids():
        assert gym.spec(gym_id.id).entry_point == (fam.gym_entry or fam.env)  # gym_entry: make's, for max_episode_steps
        assert gym.spec(gym_id.id).vector_entry_point == fam.vector_env
    assert fam.episode_length in inspect.signature(fam.env_class()).parameters  # as Family reads its default
    assert fam.tasks is tasks.task_family(name)
    for catalogue in fam.tasks.catalogues:
        for task_id in catalogue.ids():
            assert family_of(task_id) is fam, task_id
            assert tasks.family_of(task_id) is fam.tasks, task_id
    if fam.bench:
        module, _, function = fam.bench.partition(":")
        assert callable(getattr(importlib.import_module(module), function))


def test_family_of_takes_the_longest_user_prefix() -> None:
    assert family_of("user/poge/maze").name == "poge"
    assert family_of("user/grid/maze/small").name == "grid"
    assert family_of("user/my-task").name == "graph"


def test_a_stored_task_is_of_the_kind_its_task_node_names(tmp_path) -> None:
    """Whatever its id: a grid stored as 'mine/maze' is a grid; a kind no family owns (a task
    written by hand) is run as a graph task; an id neither stored nor known is one clear error."""
    from graphstore import open_store

    location = str(tmp_path / "s.lbug")
    grid = tasks.build("neuronav/grid/empty/micro").copy("mine/maze")
    with open_store(location) as store:
        store.put(grid.seal())
        store.put(tasks.build("rewardgym/hcp").copy("lab/hcp").seal())
    assert family_of("mine/maze", location).name == "grid"
    assert type(make_env("mine/maze", store=location)).__name__ == "GridEnv"
    assert family_of("lab/hcp", location).name == "graph"
    with pytest.raises(tasks.UnknownTask, match="unknown task 'something/else'"):
        family_of("something/else", location)


def test_an_unknown_family_is_one_clear_error() -> None:
    with pytest.raises(UnknownFamily, match="unknown family 'gird'; did you mean 'grid'"):
        family("gird")


def test_a_family_added_at_run_time_registers_its_gym_ids() -> None:
    graph = family("graph")
    chain = dataclasses.replace(
        graph.tasks, name="chain-demo", kinds=("chain-demo",),
        catalogues=(dataclasses.replace(graph.tasks.catalogues[1], prefix="demo/chain/", kind="chain-demo"),),
        user_files=None,
    )
    extra = Family(
        tasks=chain, env=graph.env, make_env=graph.make_env, episode_length=graph.episode_length,
        gym_ids=lambda: [GymId("graphtasks/ChainDemo-v0", {"task": "rewardgym/hcp"})],
    )
    try:
        register_family(extra)
        env = gym.make("graphtasks/ChainDemo-v0", store=":memory:")
        assert env.unwrapped.compiled.task_id == "rewardgym/hcp"
        assert family_of("demo/chain/hcp") is extra
        assert tasks.family_of("demo/chain/hcp") is chain
    finally:
        _FAMILIES.pop("chain-demo")
        tasks.families._FAMILIES.pop("chain-demo")
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
