"""Every query in docs/queries.md runs and gives what its `expect` comment says.

Cypher queries run on the embedded store and on the Bolt server(s) with equal results.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import tasks
from graphstore import rdf as R

from .conftest import bolt_names, open_bolt, resolve_server, wipe

DOC = Path(__file__).resolve().parents[2] / "docs" / "queries.md"
BLOCK = re.compile(r"<!-- expect: (?P<expect>.*?) -->\s*```(?P<lang>cypher|sparql)\n(?P<query>.*?)```", re.DOTALL)
QUERIES = [(m["lang"], m["query"].strip(), m["expect"]) for m in BLOCK.finditer(DOC.read_text())]


def check(expect: str, rows: list[list]) -> None:
    count = re.search(r"rows(>=|=)(\d+)", expect)
    assert count, f"bad expect comment {expect!r}"
    n = int(count[2])
    assert (len(rows) >= n) if count[1] == ">=" else (len(rows) == n), f"{len(rows)} rows, expected {expect}"
    first = re.search(r"first=(\[.*\])", expect)
    if first:
        assert rows[0] == pytest.approx(json.loads(first[1])), rows[0]


def test_doc_has_queries_of_both_kinds():
    assert sum(lang == "cypher" for lang, _, _ in QUERIES) >= 5
    assert sum(lang == "sparql" for lang, _, _ in QUERIES) >= 3


@pytest.fixture(scope="module")
def embedded(loaded_store):
    return loaded_store


@pytest.fixture(scope="module")
def rdf_graph(loaded_rdf):
    return loaded_rdf


@pytest.fixture(scope="module", params=bolt_names())
def bolt(request, embedded):
    store = open_bolt(resolve_server(request, request.param))
    wipe(store)
    for task_id in tasks.builtin_ids():
        store.put(tasks.build(task_id))
    yield store
    wipe(store)
    store.close()


@pytest.mark.parametrize("query,expect", [(q, e) for lang, q, e in QUERIES if lang == "cypher"])
def test_cypher_examples(embedded, query, expect):
    check(expect, embedded.cypher(query).rows)


@pytest.mark.slow  # loads every built-in into the Bolt server; the quick run checks the embedded store
@pytest.mark.parametrize("query", [q for lang, q, _ in QUERIES if lang == "cypher"])
def test_cypher_examples_give_the_same_rows_over_bolt(embedded, bolt, query):
    assert bolt.cypher(query).rows == embedded.cypher(query).rows


@pytest.mark.parametrize("query,expect", [(q, e) for lang, q, e in QUERIES if lang == "sparql"])
def test_sparql_examples(rdf_graph, query, expect):
    check(expect, R.sparql(rdf_graph, query).rows)
