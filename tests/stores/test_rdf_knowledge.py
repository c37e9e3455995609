"""Shared ConceptNet knowledge is in the RDF view: SPARQL answers what Cypher answers."""

from graphstore import open_store
from graphstore.rdf import from_rdf, sparql, store_to_rdf
from ingest.conceptnet_snapshot import ingest_snapshot

LAPTOP_SPARQL = """
PREFIX gt: <https://graphtasks.dev/ns#>
SELECT ?location ?weight WHERE {
  ?laptop a gt:Concept ; gt:name "laptop" .
  ?e gt:relationship gt:ASSERTS ; gt:from ?laptop ; gt:to ?place ; gt:weight ?weight .
  ?place gt:name ?location .
} ORDER BY ?location
"""
LAPTOP_CYPHER = (
    "MATCH (c:Concept)-[a:ASSERTS]->(l:Concept) WHERE c.name = 'laptop' "
    "RETURN l.name AS location, a.weight AS weight ORDER BY location"
)


def test_where_is_a_laptop_usually_found():
    with open_store(":memory:") as store:
        ingest_snapshot(store)
        cypher_rows = store.cypher(LAPTOP_CYPHER).rows
        rdf = store_to_rdf(store)
        assert sparql(rdf, LAPTOP_SPARQL).rows == cypher_rows
        assert [row[0] for row in cypher_rows] == ["desk", "internet_cafe"]
        assert from_rdf(rdf) == []  # shared knowledge is not mistaken for a task
        n_assertions = store.cypher("MATCH ()-[a:ASSERTS]->() RETURN count(a)").rows[0][0]
        counted = sparql(
            rdf,
            "PREFIX gt: <https://graphtasks.dev/ns#> SELECT (COUNT(?e) AS ?n) WHERE { ?e gt:relationship gt:ASSERTS }",
        )
        assert counted.rows == [[n_assertions]]
