"""The records' Turtle export is written by Oxigraph's serializer: the same graph as the
hand-written writer it replaced gave (rdflib isomorphism), the same text for the same
store, and a fraction of its CPU time. The old writer is kept only as the reference, in
benchmarks/export_bench.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest
from rdflib import Graph
from rdflib.compare import isomorphic

from benchmarks.export_bench import SPEC, reference_export, reference_turtle
from graphstore import open_store
from graphstore.rdf import store_to_rdf, to_turtle
from graphtasks.cli import main
from graphtasks.experiments.export import PROV_PREFIXES, prov_rdf, rdf_text, records_rdf
from graphtasks.experiments.ids import experiment_uid
from graphtasks.experiments.schema import MLS


def recorded(folder: Path, seeds: int, episodes: int) -> str:
    spec = folder / "turtle.toml"
    spec.write_text(SPEC.format(seeds=seeds, episodes=episodes), encoding="utf-8")
    store = str(folder / "store.lbug")
    assert main(["--store", store, "experiment", "run", str(spec), "--no-progress", "--workers", "1"]) == 0
    return store


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    return recorded(tmp_path_factory.mktemp("small"), seeds=2, episodes=6)


def turtle(text: str) -> Graph:
    return Graph().parse(data=text, format="turtle")


def test_the_records_turtle_is_the_graph_the_old_writer_wrote(small: str, tmp_path: Path, capsys) -> None:
    with open_store(small, "r") as store:
        old, new = reference_export(store, "turtle"), rdf_text(store, "turtle", "turtle")
        old_prov = reference_turtle(prov_rdf(store, "turtle"), PROV_PREFIXES)
        new_prov = rdf_text(store, "turtle", "prov")
    assert new != old  # another writer (tabs, grouped objects) ...
    graph = turtle(new)
    assert len(graph) > 500 and isomorphic(graph, turtle(old))  # ... the same graph
    assert isomorphic(turtle(new_prov), turtle(old_prov))
    capsys.readouterr()
    path = tmp_path / "records.ttl"
    assert main(["--store", small, "experiment", "export", "turtle", "--format", "turtle", "-o", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == new  # the command writes that text, the same every time
    with open_store(small, "r") as store:
        assert rdf_text(store, "turtle", "turtle") == new


def cpu(fn: Callable[[], Any]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


@pytest.mark.slow
def test_the_writer_takes_a_fraction_of_the_old_writers_cpu(tmp_path: Path) -> None:
    """The same records (about 30,000 triples) written by each writer from its own graph: the
    old one from rdflib's memory store, where the export built it, the new one from Oxigraph."""
    store = recorded(tmp_path, seeds=4, episodes=300)
    with open_store(store, "r") as opened:
        memory = store_to_rdf(opened, [], rdf_store="default", owners=[experiment_uid("turtle")])
        oxigraph = records_rdf(opened, "turtle")
    assert len(memory) == len(oxigraph) > 25_000
    old = min(cpu(lambda: reference_turtle(memory, {"mls": MLS})) for _ in range(3))
    new = min(cpu(lambda: to_turtle(oxigraph, {"mls": MLS})) for _ in range(3))
    assert old / new > 3, (old, new)  # 4x to 7x on 2 busy cores
