"""One registry type for every plug-in table (issue 37: "24 tables in 4 styles ... one registry
style, as rdflib's one plugin table"): `graphstore.registry.Registry`."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

import pytest

from graphstore.registry import Registry, UnknownName

# Every plug-in table of the project: (module, attribute). Each is a Registry.
TABLES = [
    ("graphstore.backends", "_BACKENDS"),
    ("graphstore.providers", "_PROVIDERS"),
    ("tasks.families", "_FAMILIES"),
    ("tasks.rewards", "REWARD_KINDS"),
    ("tasks.entities", "_USER_CLASSES"),
    ("gym_bridge.families", "_FAMILIES"),
    ("gym_bridge.graph.observations", "GRAPH_OBSERVATIONS"),
    ("gym_bridge.grid.observations", "GRID_OBSERVATIONS"),
    ("gym_bridge.poge.observations", "POGE_OBSERVATIONS"),
    ("gym_bridge.agents.registry", "AGENT_INFO"),
    ("graphtasks.fitting.models", "MODELS"),
    ("graphtasks.fitting.hbayesdm", "LAYOUTS"),
]


def test_a_duplicate_is_refused_on_one_line_unless_replaced():
    colours = Registry[int]("colour")
    assert colours.register("red", 1) == 1
    with pytest.raises(ValueError) as caught:
        colours.register("red", 2)
    assert str(caught.value) == "colour 'red' exists; pass replace=True to replace it"
    assert colours["red"] == 1  # the refused one left nothing behind
    assert colours.register("red", 2, replace=True) == 2
    assert colours.lookup("red") == 2 and len(colours) == 1


def test_an_unknown_name_is_one_line_naming_the_kind_the_name_and_the_known_ones():
    colours = Registry[int]("colour")
    colours.register("red", 1)
    colours.register("green", 2)
    with pytest.raises(UnknownName) as caught:
        colours.lookup("gren")
    message = str(caught.value)
    assert message == "unknown colour 'gren'; did you mean 'green'?; known: red, green"
    assert "\n" not in message
    with pytest.raises(KeyError):  # a KeyError, as a dict's, also through []
        colours["blue"]
    assert str(Registry[int]("colour").unknown("blue")) == "unknown colour 'blue'; known: none"


def test_a_table_may_give_its_own_error_and_message():
    class Refused(ValueError):
        pass

    sizes = Registry[int]("size", error=Refused, message=lambda name, known: f"no size {name!r} ({'/'.join(known)})")
    sizes.register("s", 1)
    sizes.register("m", 2)
    with pytest.raises(Refused, match=r"^no size 'xl' \(s/m\)$"):
        sizes.lookup("xl")


def test_it_reads_as_a_dict():
    colours = Registry[int]("colour")
    for name, value in (("red", 1), ("green", 2), ("blue", 3)):
        colours.register(name, value)
    assert isinstance(colours, dict)
    assert colours.names() == list(colours) == ["red", "green", "blue"]
    assert "green" in colours and "grey" not in colours
    assert dict(colours) == {"red": 1, "green": 2, "blue": 3}
    assert list(colours.values()) == [1, 2, 3] and colours.get("grey") is None


def test_an_entry_point_group_is_read_once_and_lazily():
    """The project's own `graphtasks.schema` entry points (pyproject.toml), read through a counter."""
    reads = []

    def entries():
        reads.append(1)
        return entry_points(group="graphtasks.schema")

    fragments = Registry[str]("schema fragment", entries=entries,
                              load_entry=lambda entry: fragments.register(entry.name, entry.value))
    fragments.register("mine", "mypackage:add_schema")  # registering reads no entry point
    assert reads == [] and not fragments.loaded
    assert fragments.lookup("tasks") == "tasks.families:add_schema"
    assert reads == [1] and fragments.loaded
    assert {"mine", "tasks", "conceptnet", "experiments", "serve"} <= set(fragments.names())
    assert "serve" in fragments and len(fragments) >= 5
    with pytest.raises(UnknownName, match="unknown schema fragment 'nope'"):
        fragments.lookup("nope")
    assert reads == [1]


def test_the_default_entry_loader_registers_each_entry_under_its_name():
    fragments = Registry[object]("schema fragment", entries=lambda: entry_points(group="graphtasks.schema"))
    from tasks.families import add_schema

    assert fragments["tasks"] is add_schema  # [] reads the group too


def test_built_in_items_come_first_and_a_plugin_that_fails_is_not_read_again():
    reads = []

    def entries():
        reads.append(1)
        return entry_points(group="graphtasks.schema")

    def broken(entry):
        raise ImportError(f"{entry.name}: no module")

    table = Registry[int]("thing", entries=entries, load_entry=broken,
                          before_entries=lambda registry: registry.register("built-in", 0))
    with pytest.raises(ImportError, match="no module"):
        table.names()
    assert table.names() == ["built-in"] and reads == [1]  # as the tables did: not read a second time


@pytest.mark.parametrize(("module", "name"), TABLES, ids=[f"{m}.{n}" for m, n in TABLES])
def test_every_plug_in_table_is_a_registry(module, name):
    table = getattr(importlib.import_module(module), name)
    assert isinstance(table, Registry)
    assert table.kind


def test_an_agent_model_or_layout_is_added_with_one_call():
    from graphtasks.fitting import MODELS, FitModel, fit_model
    from graphtasks.fitting.hbayesdm import LAYOUTS, Layout, register_layout
    from graphtasks.fitting.models import register_model
    from gym_bridge.agents import AGENT_INFO, AGENTS, BATCHED, QAgent, make_agent, register_agent
    from gym_bridge.agents.q_learning import BatchedQ
    from gym_bridge.agents.registry import AgentInfo

    try:
        register_agent(AgentInfo("q-test", QAgent, "Q-learning under another name", "-", batched=BatchedQ))
        assert AGENTS["q-test"] is QAgent and BATCHED["q-test"] is BatchedQ
        assert make_agent("q-test", 3, 2, lr=0.25).lr == 0.25
        register_model(FitModel.of("q-test", free={"lr": (0.0, 1.0)}, name="q-test-model"))
        assert fit_model("q-test-model").agent == "q-test"
        register_layout(Layout("prl-test", "reversal again", ("choice", "outcome"), "decision/reversal-learning", 2,
                               "outcome"))
        assert "prl-test" in LAYOUTS
    finally:
        for table, key in ((AGENT_INFO, "q-test"), (AGENTS, "q-test"), (BATCHED, "q-test"),
                           (MODELS, "q-test-model"), (LAYOUTS, "prl-test")):
            table.pop(key, None)
