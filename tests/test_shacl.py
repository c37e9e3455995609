"""SHACL shapes of the RDF view (graphstore/shapes.ttl + the schema's node shapes), run by pyshacl:
every built-in conforms, each broken fixture in tests/data/shacl is reported with its shape's message."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDF, Graph

from graphstore import open_store
from graphstore.rdf import GT
from graphstore.schema import SCHEMA
from graphstore.shacl import SH, shapes, shapes_text, validate
from graphtasks.cli import main
from tasks.families import build, builtin_ids

FIXTURES = Path(__file__).parent / "data" / "shacl"
TINY = "https://graphtasks.dev/id/fixture/tiny"

# each fixture, broken on purpose, and the lines `graphtasks validate --file` prints for it
BROKEN = {
    "sum-not-one.ttl": [f"{TINY}: MOVE probabilities of {TINY}/s0 under action 0 sum to 1.1, not 1"],
    "p-out-of-range.ttl": [
        f"{TINY}#e1: an edge probability gt:p is one xsd:double in [0, 1]",
        f"{TINY}#e2: an edge probability gt:p is one xsd:double in [0, 1]",
    ],
    "dangling.ttl": [
        f"{TINY}: dangling link: {TINY}#e3 https://graphtasks.dev/ns#to {TINY}/s9, which is not a node of this task",
        f"{TINY}: dangling link: {TINY}/s0 https://graphtasks.dev/ns#MOVE {TINY}/s9, which is not a node of this task",
    ],
    "no-start.ttl": [f"{TINY}: no start state: the task has transitions (MOVE edges) but no gt:START"],
    "untyped.ttl": [f"{TINY}/s1: a State has one gt:index, xsd:integer (required)"],
    "missing-required.ttl": [f"{TINY}/s2: a State has one gt:index, xsd:integer (required)"],
    "edge-without-action.ttl": [f"{TINY}: the MOVE Edge {TINY}#e3 needs gt:action, gt:p"],
    "start-at-a-reward.ttl": [
        f"{TINY}: {TINY} gt:START {TINY}/r1: a START joins Task -> State, Task -> Cell, Task -> Tile"
    ],
    "override-sum.ttl": [
        f"{TINY}: OVERRIDE probabilities of {TINY}/condition/rare from state 0 under action 0 sum to 0.9, not 1"
    ],
}


def test_one_task_of_each_family_conforms() -> None:
    """The quick run's sample of `test_every_built_in_task_conforms`."""
    from tests.conftest import FAMILY_SAMPLES

    shape_graph = shapes()
    assert {task_id: v for task_id in FAMILY_SAMPLES if (v := validate(build(task_id), shape_graph))} == {}


@pytest.mark.slow  # every built-in: the quick run validates one task of each family
def test_every_built_in_task_conforms() -> None:
    """Every built-in of every family but the grids, and the grid templates at their smallest size.

    `graphtasks validate --all` on a store of all 88 built-ins finds every one conforming (measured: 29 to
    50 s on two busy cores); the other grid sizes (and poge/scaled_world0) are the same maps drawn bigger.
    """
    shape_graph = shapes()
    grids = {"neuronav/grid/four_rooms/small", "neuronav/grid/two_step/small", "decision/grid/tolman/small"}
    ids = [t for t in builtin_ids() if "/grid/" not in t or t.endswith("/micro") or t in grids]
    ids = [t for t in ids if not t.startswith("poge/scaled_")]  # poge/world0 drawn bigger
    families = {build(task_id).family for task_id in ids}
    assert families >= {"neuronav/grid", "neuronav/graph", "rewardgym", "decision", "poge", "room"}
    failing = {task_id: v for task_id in ids if (v := validate(build(task_id), shape_graph))}
    assert failing == {}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_each_broken_fixture_is_reported_with_its_shapes_message(name: str, capsys) -> None:
    assert main(["validate", "--file", str(FIXTURES / name)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"FAILS     {FIXTURES / name}: {len(BROKEN[name])} violation{'s' if len(BROKEN[name]) > 1 else ''}"
    assert [line.strip() for line in out[1:]] == BROKEN[name]


def test_the_fixture_they_were_broken_from_conforms(capsys) -> None:
    assert main(["validate", "--file", str(FIXTURES / "valid.ttl")]) == 0
    assert capsys.readouterr().out == f"conforms  {FIXTURES / 'valid.ttl'}\n"


def test_validate_all_checks_every_stored_task(tmp_path: Path, capsys) -> None:
    store = str(tmp_path / "store.lbug")
    with open_store(store, "w") as opened:
        for task_id in ("rewardgym/two-step", "neuronav/graph/human_a"):
            opened.put(build(task_id))
    assert main(["--store", store, "validate", "--all"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "conforms  neuronav/graph/human_a", "conforms  rewardgym/two-step"
    ]
    assert captured.err.strip() == "2 of 2 conform"


def test_bad_arguments_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["validate"]) == 2
    assert capsys.readouterr().err == (
        "graphtasks: error: validate: give task ids, --all (every stored task) or --file FILE.ttl\n"
    )
    (tmp_path / "task.json").write_text("{}", encoding="utf-8")
    assert main(["validate", "--file", str(tmp_path / "task.json")]) == 2
    assert capsys.readouterr().err == f"graphtasks: error: {tmp_path / 'task.json'}: expected a .ttl or .nt file\n"


def test_the_published_shapes_cover_every_node_type_and_use_sparql_for_sums(capsys) -> None:
    assert "sh:sparql" in shapes_text() and "SUM(?p)" in shapes_text()
    assert main(["validate", "--shapes"]) == 0
    printed = Graph().parse(data=capsys.readouterr().out, format="turtle")
    assert len(printed) == len(shapes())
    targets = set(printed.objects(None, SH.targetClass))
    assert targets == {GT[label] for label in SCHEMA.nodes} | {GT.Edge, GT.Task}
    assert len(list(printed.subjects(RDF.type, SH.SPARQLConstraint))) >= 5


def test_the_docstring_examples_run() -> None:
    import doctest

    import graphstore.shacl

    result = doctest.testmod(graphstore.shacl)
    assert result.attempted >= 2 and result.failed == 0


def test_validate_store_and_the_shape_each_result_comes_from() -> None:
    from graphstore.shacl import validate_store
    from graphstore.taskgraph import TASK_LOCAL_ID
    from tasks.families import build as build_task

    with open_store(":memory:", "w") as store:
        store.put(build_task("rewardgym/two-step"))
        assert validate_store(store) == {"rewardgym/two-step": []}
    broken = build_task("neuronav/graph/human_a")
    move = next(d for _, _, d in broken.graph.out_edges("s0", data=True) if d["rel"] == "MOVE")
    move["props"]["p"] = 0.25
    start = [t for _, t, d in broken.graph.out_edges(TASK_LOCAL_ID, data=True) if d["rel"] == "START"]
    assert start == ["s0"]
    [violation] = validate(broken)
    assert violation.shape == str(GT.TaskShape) and violation.severity == "Violation"
    assert violation.value == "https://graphtasks.dev/id/neuronav/graph/human_a/s0"
    assert violation.message.endswith("under action 0 sum to 0.25, not 1")
