"""An experiment's provenance as W3C PROV-O and its records as Turtle (`graphtasks experiment export
--format prov|turtle`): read back by rdflib with the counts the store gives by Cypher."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDF, Graph, Literal, Namespace

from graphstore import open_store
from graphstore.rdf import GT
from graphtasks.cli import main
from graphtasks.experiments.records import record_sources
from graphtasks.fitting import MODELS, simulate
from graphtasks.fitting.behaviour import events_text
from graphtasks.fitting.records import fit_runs, import_behaviour, record_fits

PROV = Namespace("http://www.w3.org/ns/prov#")
SPEC = """
[experiment]
name = "prov"
tasks = ["rewardgym/two-step"]
seeds = 2

[[agents]]
name = "hybrid"
grid = { w = [0.0, 1.0] }

[[phases]]
name = "trials"
episodes = 4
"""
RUNS_THAT_USED = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX gt: <https://graphtasks.dev/ns#>
SELECT (COUNT(DISTINCT ?run) AS ?runs) WHERE { ?run a prov:Activity, gt:Run ; prov:used ?v . ?v gt:task_hash ?hash }
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store with a simulated experiment (4 runs) and an imported participant with a fit."""
    folder = tmp_path_factory.mktemp("prov")
    (folder / "spec.toml").write_text(SPEC, encoding="utf-8")
    location = str(folder / "store.lbug")
    command = ["--store", location, "experiment", "run", str(folder / "spec.toml"), "--no-progress", "--workers", "1"]
    assert main(command) == 0
    choices = simulate("rewardgym/two-step", "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, 20, seed=3)
    events = folder / "sub-P1_task-twostep_events.tsv"
    events.write_text(events_text(choices, "P1"), encoding="utf-8")
    with open_store(location, "w") as opened:
        import_behaviour(opened, "people", [events])
        record_fits(opened, "people", fit_runs(opened, "people", [0], MODELS["q"], starts=1))
    return location


def _export(store: str, name: str, fmt: str, tmp_path: Path) -> Graph:
    path = tmp_path / f"{name}-{fmt}.ttl"
    assert main(["--store", store, "experiment", "export", name, "--format", fmt, "-o", str(path)]) == 0
    return Graph().parse(path, format="turtle")


def _cypher(store: str, query: str, **params: object) -> list[list]:
    with open_store(store, "r") as opened:
        return opened.cypher(query, params, record_sources(opened)).rows


@pytest.mark.slow
def test_prov_reads_back_with_the_stores_counts(store: str, tmp_path: Path) -> None:
    prov = _export(store, "prov", "prov", tmp_path)
    runs = set(prov.subjects(RDF.type, GT.Run))
    [[stored_runs]] = _cypher(store, "MATCH (x:Experiment)-[:HAS_RUN]->(r:Run) WHERE x.name = 'prov' RETURN count(r)")
    assert len(runs) == stored_runs == 4 and runs <= set(prov.subjects(RDF.type, PROV.Activity))
    [[versions]] = _cypher(store, "LOAD FROM $episodes WHERE experiment = 'prov' RETURN count(DISTINCT task_hash)")
    assert len(set(prov.subjects(RDF.type, PROV.Entity)) - set(prov.subjects(RDF.type, PROV.Plan))) == versions == 1
    [[labels]] = _cypher(store, "MATCH (r:Run) WHERE r.owner = 'experiment/prov' RETURN count(DISTINCT r.label)")
    assert len(set(prov.subjects(RDF.type, PROV.SoftwareAgent))) == labels == 2
    assert all(len(list(prov.objects(run, PROV.wasAssociatedWith))) == 1 for run in runs)
    [[timed]] = _cypher(
        store, "MATCH (r:Run) WHERE r.owner = 'experiment/prov' AND r.started_at IS NOT NULL RETURN count(r)"
    )
    assert len(list(prov.triples((None, PROV.startedAtTime, None)))) == timed == 4
    assert len(list(prov.triples((None, PROV.endedAtTime, None)))) == 4
    plans = {o for _, _, o in prov.triples((None, PROV.hadPlan, None))}
    assert plans == set(prov.subjects(GT.name, Literal("prov")))


def test_sparql_runs_that_used_a_task_hash_equal_the_cypher_count(store: str, tmp_path: Path) -> None:
    prov = _export(store, "prov", "prov", tmp_path)
    [[task_hash]] = _cypher(store, "LOAD FROM $episodes WHERE experiment = 'prov' RETURN DISTINCT task_hash")
    [[by_cypher]] = _cypher(
        store,
        "MATCH (r:Run) WHERE r.owner = 'experiment/prov' WITH r "
        "LOAD FROM $episodes WHERE experiment = 'prov' AND run = r.index AND task_hash = $hash "
        "RETURN count(DISTINCT r.index)",
        hash=task_hash,
    )
    [[by_sparql]] = prov.query(RUNS_THAT_USED, initBindings={"hash": Literal(task_hash)})
    assert int(by_sparql) == by_cypher == 4
    [[none]] = prov.query(RUNS_THAT_USED, initBindings={"hash": Literal("0" * 32)})
    assert int(none) == 0


def test_participants_are_prov_people_and_fits_activities_informed_by_their_run(store: str, tmp_path: Path) -> None:
    prov = _export(store, "people", "prov", tmp_path)
    [person] = set(prov.subjects(RDF.type, PROV.Person))
    assert (person, RDF.type, PROV.Agent) in prov and (person, GT.participant_id, Literal("P1")) in prov
    [run] = set(prov.subjects(RDF.type, GT.Run))
    assert (run, PROV.wasAssociatedWith, person) in prov
    [fit] = set(prov.subjects(RDF.type, GT.Fit))
    assert (fit, RDF.type, PROV.Activity) in prov and (fit, PROV.wasInformedBy, run) in prov
    [model] = set(prov.objects(fit, PROV.used))
    assert (model, GT.name, Literal("q")) in prov


def test_turtle_records_carry_params_as_structured_values(store: str, tmp_path: Path) -> None:
    records = _export(store, "prov", "turtle", tmp_path)
    assert len(set(records.subjects(RDF.type, GT.Run))) == 4
    [[trials]] = _cypher(store, "LOAD FROM $trials WHERE experiment = 'prov' RETURN count(*)")
    assert len(set(records.subjects(RDF.type, GT.Trial))) == trials == 4 * 4 * 2
    rows = records.query(
        "PREFIX gt: <https://graphtasks.dev/ns#> SELECT ?seed ?w WHERE { "
        "?run a gt:Run ; gt:seed ?seed ; gt:params/gt:entry [ gt:entryKey 'w' ; gt:entryValue ?w ] } ORDER BY ?w ?seed"
    )
    assert [(int(seed), w.toPython()) for seed, w in rows] == [(0, 0.0), (1, 0.0), (0, 1.0), (1, 1.0)]


def test_rdf_formats_refuse_table_options_in_one_line(store: str, capsys) -> None:
    assert main(["--store", store, "experiment", "export", "prov", "--format", "prov", "--trials"]) == 2
    assert capsys.readouterr().err == (
        "graphtasks: error: --format prov: --trials and --bids are for tables (csv, parquet)\n"
    )


def test_the_docstring_example_runs() -> None:
    import doctest

    import graphtasks.experiments.export

    result = doctest.testmod(graphtasks.experiments.export)
    assert result.attempted > 0 and result.failed == 0
