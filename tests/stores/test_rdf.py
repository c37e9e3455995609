"""The RDF view: exact round trips, SPARQL over stored tasks, vocabulary, and the rdf commands."""

from __future__ import annotations

import pytest
from rdflib import RDF, URIRef

import tasks
from graphstore import SchemaError, TaskGraph
from graphstore import rdf as R
from graphstore.ladybug_store import LadybugStore
from tests.conftest import FAMILY_SAMPLES, builtin_params

from .cli_helpers import run_cli
from .test_store_semantics import INJECTIONS, small_task

REWARDS_PER_TASK = """
PREFIX gt: <https://graphtasks.dev/ns#>
SELECT ?task (COUNT(?r) AS ?rewards) WHERE {
  ?t a gt:Task ; gt:uid ?task .
  ?s a gt:State ; gt:task ?task ; gt:HAS_REWARD ?r .
} GROUP BY ?task ORDER BY ?task
"""


# every built-in task; of the 18 large grids one: a large grid differs from its small version
# only in how many cells it has (the same labels, edges and terms), at 1 to 2.5 s a format
ROUND_TRIP_IDS = [t for t in tasks.builtin_ids() if not t.endswith("/large")] + ["neuronav/grid/four_rooms/large"]


@pytest.mark.parametrize("task_id", builtin_params(ROUND_TRIP_IDS))
@pytest.mark.parametrize("fmt", ["ttl", "nt"])
def test_round_trip_is_exact(task_id, fmt):
    graph = tasks.build(task_id).seal()
    text = R.serialize(R.to_rdf(graph), fmt)
    back = R.from_rdf(R.parse(text, "turtle" if fmt == "ttl" else "nt"))
    assert back == [graph]
    assert back[0].content_hash() == graph.content_hash()
    assert R.serialize(R.to_rdf(back[0]), fmt) == text  # deterministic text


def test_round_trip_of_awkward_values():
    g = small_task("odd/ids #1 % é", reward=0.1 + 0.2, params={"x": [1e-300, -0.0, 2**60]})
    for evil in INJECTIONS:
        g.add_node("n " + evil, "State", index=100 + INJECTIONS.index(evil), name=evil)
    g.add_node("empty", "Reward", kind="fixed", values=[])
    g.seal()
    ttl = R.to_turtle(R.to_rdf(g))
    (back,) = R.from_rdf(R.parse(ttl))
    assert back == g
    assert back.props("r")["values"] == [0.30000000000000004]


@pytest.mark.slow
def test_vocabulary_declares_every_term_used(loaded_rdf):
    """Every term the RDF view of the built-in tasks uses is declared."""
    check_vocabulary_covers(loaded_rdf)


def test_vocabulary_declares_every_term_one_task_of_each_family_uses(loaded_store):
    """The quick sibling: one built-in task of each family (the full RDF view takes seconds)."""
    check_vocabulary_covers(R.store_to_rdf(loaded_store, list(FAMILY_SAMPLES)))


def check_vocabulary_covers(loaded_rdf) -> None:
    vocab = R.vocabulary()
    declared = set(vocab.subjects(RDF.type, None))
    used = {p for p in loaded_rdf.predicates() if str(p).startswith(R.NS)}
    used |= {o for o in loaded_rdf.objects(None, RDF.type) if str(o).startswith(R.NS)}
    assert used, "nothing used?"
    assert used <= declared, sorted(map(str, used - declared))
    assert (URIRef(R.NS + "State"), RDF.type, URIRef("http://www.w3.org/2000/01/rdf-schema#Class")) in vocab


def test_sparql_over_all_some_and_one_task(loaded_store, loaded_rdf):
    all_tasks = R.sparql(loaded_rdf, REWARDS_PER_TASK)
    assert all_tasks.columns == ["task", "rewards"]
    cypher = loaded_store.cypher(
        "MATCH (s:State)-[:HAS_REWARD]->(r:Reward) RETURN s.task AS task, count(r) AS rewards ORDER BY task"
    )
    assert all_tasks.rows == cypher.rows
    some = R.sparql(R.store_to_rdf(loaded_store, ["rewardgym/hcp", "rewardgym/two-step"]), REWARDS_PER_TASK)
    assert some.rows == [["rewardgym/hcp", 2], ["rewardgym/two-step", 4]]
    moves = R.sparql(
        R.store_to_rdf(loaded_store, ["rewardgym/two-step"]),
        "PREFIX gt: <https://graphtasks.dev/ns#> SELECT ?a ?p WHERE { ?e a gt:Edge ; gt:relationship gt:MOVE ; "
        "gt:from ?s ; gt:action ?a ; gt:p ?p . ?s gt:index 0 } ORDER BY ?a ?p",
    )
    assert moves.rows == [[0, pytest.approx(0.3)], [0, 0.7], [1, pytest.approx(0.3)], [1, 0.7]]


def test_sparql_errors_are_query_errors(loaded_store):
    from graphstore import QueryError

    with pytest.raises(QueryError):
        R.sparql(R.store_to_rdf(loaded_store, ["rewardgym/hcp"]), "SELECT ?x WHERE { ?x ")


def test_import_explains_what_is_wrong():
    text = R.to_turtle(R.to_rdf(small_task("t/x").seal()))
    bad = text.replace("gt:index 1 ;", "gt:index 1 ;\n    gt:colour \"red\" ;", 1)
    with pytest.raises(SchemaError, match="unknown property gt:colour"):
        R.from_rdf(R.parse(bad))
    twice = text.replace("gt:index 1 ;", "gt:index 1 ;\n    gt:index 2 ;", 1)
    with pytest.raises(SchemaError, match="gt:index has several values"):
        R.from_rdf(R.parse(twice))
    with pytest.raises(SchemaError, match="cannot parse"):
        R.parse("this is not turtle")


CLI_IDS = ["rewardgym/hcp", "rewardgym/mid", "rewardgym/two-step", "neuronav/grid/four_rooms/micro"]


@pytest.mark.slow
def test_cli_sparql_export_import(tmp_path, capsys):
    store = str(tmp_path / "rdf.lbug")
    with LadybugStore(store) as filled:
        for task_id in CLI_IDS:
            filled.put(tasks.build(task_id))
    code, out, err = run_cli(
        ["--store", store, "sparql", REWARDS_PER_TASK, "--task", "rewardgym/hcp", "--task", "rewardgym/mid"],
        capsys,
    )
    assert code == 0, err
    assert out.splitlines()[0].split() == ["task", "rewards"]
    assert "rewardgym/hcp" in out and "(2 rows)" in out
    code, out, _ = run_cli(
        ["--store", store, "sparql", "SELECT (COUNT(?t) AS ?n) WHERE { ?t a gt:Task }", "--format", "json"],
        capsys,
    )
    assert code == 0 and f'"n": {len(CLI_IDS)}' in out

    ttl = tmp_path / "two-step.ttl"
    code, _, err = run_cli(["--store", store, "export", "rewardgym/two-step", "--format", "ttl", "-o", str(ttl)],
                           capsys)
    assert code == 0, err
    nt = tmp_path / "two-step.nt"
    assert run_cli(["--store", store, "export", "rewardgym/two-step", "--format", "nt", "-o", str(nt)],
                   capsys)[0] == 0
    assert "<https://graphtasks.dev/ns#MOVE>" in nt.read_text()

    fresh = str(tmp_path / "fresh.lbug")
    code, out, err = run_cli(["--store", fresh, "import", str(ttl)], capsys)
    assert code == 0, err
    assert "loaded    rewardgym/two-step" in out
    with LadybugStore(fresh) as s:
        assert s.get("rewardgym/two-step") == tasks.build("rewardgym/two-step")
    code, out, _ = run_cli(["--store", fresh, "import", str(nt)], capsys)
    assert code == 0 and "unchanged rewardgym/two-step" in out


def test_cli_import_of_invalid_task_names_file_and_writes_nothing(tmp_path, capsys):
    good = small_task("t/good").seal()
    bad = small_task("t/bad")
    bad.add_edge("s0", "s2", "MOVE", action=0, p=0.5)  # s0 action 0 now sums to 1.5
    rdf = R.to_rdf(good)
    R.to_rdf(bad, rdf)
    path = tmp_path / "tasks.ttl"
    path.write_text(R.to_turtle(rdf))
    store = str(tmp_path / "s.lbug")
    code, _, err = run_cli(["--store", store, "import", str(path)], capsys)
    assert code == 2
    assert str(path) in err and "t/bad" in err and "sum to 1.5" in err
    with LadybugStore(store) as s:
        assert s.list() == []


@pytest.mark.slow
def test_cli_import_round_trips_many_tasks(loaded_store_copy, tmp_path, capsys):
    store = str(loaded_store_copy)
    out_file = tmp_path / "all.ttl"
    # every family in one file; grids only in their micro size: the bigger ones are left to the
    # per-task round trips above (they would make this test 10x slower and test nothing more
    # about a file of many tasks)
    ids = [t for t in tasks.builtin_ids() if not t.startswith("neuronav/grid/") or t.endswith("/micro")]
    assert {t.split("/")[0] for t in ids} == {"decision", "neuronav", "poge", "rewardgym", "room"} and len(ids) > 40
    assert run_cli(["--store", store, "export", *ids, "-o", str(out_file)], capsys)[0] == 0
    fresh = str(tmp_path / "fresh.lbug")
    code, out, _ = run_cli(["--store", fresh, "import", str(out_file)], capsys)
    assert code == 0 and out.count("loaded") == len(ids)
    with LadybugStore(fresh) as s:
        for task_id in ids:
            assert s.get(task_id) == tasks.build(task_id)


def test_task_graph_type_is_used():
    assert isinstance(R.from_rdf(R.parse(R.to_turtle(R.to_rdf(small_task("t/y").seal()))))[0], TaskGraph)
