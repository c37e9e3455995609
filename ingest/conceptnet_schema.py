"""Schema fragment of ConceptNet knowledge, shared by every task (Room reads its locations
from it), and of the checkpoints of the ingest jobs that write it (committed with each batch)."""

from __future__ import annotations

from graphstore.schema import Property, Schema


def add_schema(s: Schema) -> None:
    """Add the ConceptNet and ingest-job types to `s` (entry point `graphtasks.schema: conceptnet`)."""
    s.add_node(
        "Concept",
        [
            Property("name", "str", True, "bare term text, e.g. 'laptop' (uid is the concept URI '/c/en/laptop')"),
            Property("language", "str", True, "language code of the concept URI, e.g. 'en'"),
            Property("label", "str", False, "ConceptNet's display label, e.g. 'a laptop'"),
        ],
        "A ConceptNet concept (sense suffixes stripped); shared, never deleted with a task.",
        shared=True,
    )
    s.add_node(
        "IngestJob",
        [
            Property("kind", "str", True, "api | dump | snapshot"),
            Property("cursor", "json", False, "where to continue: next page URL or next line number"),
            Property("done", "bool", False, "the job reached the end of its input"),
            Property("stats", "json", False, "counters so far (pages, lines, assertions)"),
            Property("updated_at", "str", False, "UTC time of the last committed batch"),
        ],
        "Checkpoint of a resumable ingest job, written in the same transaction as its batch.",
        shared=True,
    )
    s.add_rel(
        "ASSERTS",
        [("Concept", "Concept")],
        [
            Property("key", "str", True, "'<relation URI>|<start concept>|<end concept>': one edge per key"),
            Property("relation", "str", True, "relation label, e.g. 'AtLocation'"),
            Property("weight", "float", True, "ConceptNet weight (the largest of merged duplicates)"),
            Property("dataset", "str", False, "ConceptNet dataset, e.g. '/d/conceptnet/4/en'"),
            Property("license", "str", False, "licence of the assertion, e.g. 'cc:by/4.0'"),
            Property("sources", "json", False, "ConceptNet sources of every merged edge"),
            Property("surface_text", "str", False, "natural-language sentence of the strongest edge"),
            Property("edge_uris", "str[]", False, "ConceptNet edge URIs merged into this assertion"),
            Property("start_senses", "str[]", False, "sense suffixes seen on the start, e.g. 'n/wn/artifact'"),
            Property("end_senses", "str[]", False, "sense suffixes seen on the end"),
            Property("origin", "str", False, "how it came in: api <url> | dump <file> | snapshot <file>"),
            Property("fetched_at", "str", False, "UTC time the assertion was first fetched or loaded"),
        ],
        "A weighted ConceptNet assertion between two concepts, with its provenance.",
    )
