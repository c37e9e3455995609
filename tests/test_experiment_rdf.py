"""Experiment records in the RDF view: typed with the gt: vocabulary and W3C ML-Schema, queried with SPARQL."""

from __future__ import annotations

from pathlib import Path

from graphstore import open_store
from graphstore.rdf import GT, sparql, store_to_rdf, vocabulary
from graphtasks.cli import main
from graphtasks.experiments.schema import MLS

SPEC = """
[experiment]
name = "rdf-view"
tasks = ["rewardgym/two-step"]
seeds = 2

[[agents]]
name = "hybrid"
grid = { w = [0.0, 1.0] }

[[phases]]
name = "trials"
episodes = 5
"""

RUNS_PER_EXPERIMENT = """
PREFIX mls: <http://www.w3.org/ns/mls#>
PREFIX gt: <https://graphtasks.dev/ns#>
SELECT ?name (COUNT(?run) AS ?runs) (SUM(?trials) AS ?steps) WHERE {
  ?x a mls:Experiment ; gt:name ?name ; mls:hasPart ?run .
  ?run a mls:Run ; gt:status "completed" .
  { SELECT ?run (COUNT(?t) AS ?trials) WHERE { ?run gt:HAS_EPISODE/gt:HAS_TRIAL ?t } GROUP BY ?run }
} GROUP BY ?name
"""


def test_runs_are_ml_schema_runs_of_an_ml_schema_experiment(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    store = str(tmp_path / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    with open_store(store, "r") as opened:
        rdf = store_to_rdf(opened)
    assert sparql(rdf, RUNS_PER_EXPERIMENT).rows == [["rdf-view", 4, 4 * 5 * 2]]
    capsys.readouterr()
    query = "SELECT (COUNT(?r) AS ?n) WHERE { ?r a mls:Run ; gt:seed 1 }"  # mls: is predeclared
    assert main(["--store", store, "sparql", query, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", "2"]


def test_the_vocabulary_says_which_gt_classes_are_ml_schema_classes() -> None:
    from rdflib import RDFS, URIRef

    terms = vocabulary()
    assert (GT.Run, RDFS.subClassOf, URIRef(MLS + "Run")) in terms
    assert (GT.Experiment, RDFS.subClassOf, URIRef(MLS + "Experiment")) in terms
    assert (GT.HAS_RUN, RDFS.subPropertyOf, URIRef(MLS + "hasPart")) in terms
