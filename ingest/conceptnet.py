"""ConceptNet assertions: parsing both source formats into one normal form, merging
duplicates, and the checkpointed batch writer every ingest job shares.

Why one module: the API, the dump and the bundled snapshot must store exactly the same
assertions for the same edges, so they share the parser of node URIs, the merge rule and
the write path (`GraphStore.merge_shared`, which commits a batch together with the job's
checkpoint: an interrupted job restarts from its last committed page or line and adds
nothing twice).

Normal form of an assertion (one stored ASSERTS edge per key):
- key `<relation URI>|<start concept URI>|<end concept URI>`; sense suffixes such as
  `/n/wn/artifact` are stripped from the concept and kept in `start_senses`/`end_senses`.
- duplicates (same key, e.g. several senses) merge: the largest weight wins and brings its
  surface text, dataset and licence; sources, edge URIs and senses are unioned (sorted).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

from graphstore import GraphStore
from graphstore.errors import GraphtasksError

KEY_SEPARATOR = "|"  # assertion keys are 'relation|start|end'; a concept URI holding it is refused
CONCEPT_TASK = "conceptnet"  # the `task` property of shared Concept nodes
JOB_TASK = "ingest"  # the `task` property of IngestJob checkpoints


class IngestError(GraphtasksError, ValueError):
    """An ingest job cannot continue; the message names the URL, file and line, or field."""


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ConceptRef:
    """A node URI split into its concept and its sense: /c/en/road/n/wn/artifact."""

    uri: str  # '/c/en/road'
    language: str  # 'en'
    name: str  # 'road'
    sense: str  # 'n/wn/artifact' or ''


def parse_concept(uri: Any, where: str = "") -> ConceptRef:
    """Split a ConceptNet node URI; `where` (file:line or URL) goes into the error."""
    if not isinstance(uri, str) or not uri.startswith("/c/"):
        raise IngestError(f"{where}: expected a concept URI such as '/c/en/laptop', got {uri!r}")
    if KEY_SEPARATOR in uri:
        raise IngestError(
            f"{where}: concept URI {uri!r} contains {KEY_SEPARATOR!r}, which separates the parts of an assertion key"
        )
    parts = uri.split("/")  # ['', 'c', 'en', 'road', 'n', 'wn', 'artifact']
    if len(parts) < 4 or not parts[2] or not parts[3]:
        raise IngestError(f"{where}: concept URI {uri!r} has no language or term")
    return ConceptRef("/".join(parts[:4]), parts[2], parts[3], "/".join(parts[4:]))


def relation_label(rel_uri: str) -> str:
    return rel_uri.rsplit("/", 1)[-1] if rel_uri.startswith("/r/") else rel_uri


@dataclass
class Assertion:
    """One merged assertion (see the module docstring)."""

    relation_uri: str
    start: ConceptRef
    end: ConceptRef
    weight: float
    surface_text: str | None = None
    dataset: str | None = None
    license: str | None = None
    sources: list[Any] = field(default_factory=list)
    edge_uris: list[str] = field(default_factory=list)
    start_senses: list[str] = field(default_factory=list)
    end_senses: list[str] = field(default_factory=list)
    start_label: str | None = None
    end_label: str | None = None

    @property
    def key(self) -> str:
        return f"{self.relation_uri}|{self.start.uri}|{self.end.uri}"

    def _rank(self) -> tuple[float, str]:
        return (self.weight, min(self.edge_uris) if self.edge_uris else "")

    def merge(self, other: "Assertion") -> "Assertion":
        """The merge of two assertions with the same key; independent of order."""
        strong = self if self._rank() >= other._rank() else other
        return Assertion(
            self.relation_uri,
            self.start,
            self.end,
            strong.weight,
            strong.surface_text,
            strong.dataset,
            strong.license,
            _union_json(self.sources, other.sources),
            sorted(set(self.edge_uris) | set(other.edge_uris)),
            sorted(set(self.start_senses) | set(other.start_senses)),
            sorted(set(self.end_senses) | set(other.end_senses)),
            self.start_label or other.start_label,
            self.end_label or other.end_label,
        )

    def comparable(self) -> dict[str, Any]:
        """Everything but provenance of the channel (origin, fetch time): equal across API, dump, snapshot."""
        return {
            "key": self.key, "relation": relation_label(self.relation_uri), "weight": self.weight,
            "surface_text": self.surface_text, "dataset": self.dataset, "license": self.license,
            "sources": self.sources, "edge_uris": self.edge_uris, "start_senses": self.start_senses,
            "end_senses": self.end_senses,
        }


def _union_json(a: list[Any], b: list[Any]) -> list[Any]:
    seen = {json.dumps(x, sort_keys=True): x for x in list(a) + list(b)}
    return [seen[k] for k in sorted(seen)]


def _weight(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise IngestError(f"{where}: field 'weight' must be a number, got {value!r}")
    return float(value)


def _sources(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise IngestError(f"{where}: field 'sources' must be a list, got {type(value).__name__}")
    return list(value) if len(value) < 2 else _union_json(value, [])


def from_jsonld(edge: Any, where: str) -> Assertion:
    """An edge of an API response (or the snapshot, which keeps that format)."""
    if not isinstance(edge, dict):
        raise IngestError(f"{where}: an edge must be a JSON object, got {type(edge).__name__}")
    for name in ("start", "end"):
        if not isinstance(edge.get(name), dict) or "@id" not in edge[name]:
            raise IngestError(f"{where}: edge {edge.get('@id')!r}: field {name!r} must be a node with '@id'")
    rel = edge.get("rel")
    rel_uri = rel.get("@id") if isinstance(rel, dict) else rel
    if not isinstance(rel_uri, str) or not rel_uri.startswith("/r/"):
        raise IngestError(f"{where}: edge {edge.get('@id')!r}: field 'rel' must name a relation '/r/...', got {rel!r}")
    start = parse_concept(edge["start"]["@id"], where)
    end = parse_concept(edge["end"]["@id"], where)
    uri = edge.get("@id") or f"/a/[{rel_uri}/,{edge['start']['@id']}/,{edge['end']['@id']}/]"
    return Assertion(
        rel_uri, start, end, _weight(edge.get("weight"), f"{where}: edge {uri!r}"), edge.get("surfaceText"),
        edge.get("dataset"), edge.get("license"), _sources(edge.get("sources"), f"{where}: edge {uri!r}"), [uri],
        [start.sense] if start.sense else [], [end.sense] if end.sense else [],
        edge["start"].get("label"), edge["end"].get("label"),
    )


def from_dump_columns(cols: list[str], where: str) -> Assertion:
    """A row of the assertions dump: edge URI, relation, start, end, JSON info."""
    uri, rel_uri, start_uri, end_uri, info_text = cols
    try:
        info = json.loads(info_text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"{where}: column 5 (JSON info) is not valid JSON: {exc.msg} at character {exc.pos}"
        ) from None
    if not isinstance(info, dict):
        raise IngestError(f"{where}: column 5 (JSON info) must be an object, got {type(info).__name__}")
    start = parse_concept(start_uri, f"{where}: column 3 (start)")
    end = parse_concept(end_uri, f"{where}: column 4 (end)")
    return Assertion(
        rel_uri, start, end, _weight(info.get("weight"), where), info.get("surfaceText"), info.get("dataset"),
        info.get("license"), _sources(info.get("sources"), where), [uri],
        [start.sense] if start.sense else [], [end.sense] if end.sense else [],
    )


def merge_into(batch: dict[str, Assertion], assertion: Assertion) -> None:
    old = batch.get(assertion.key)
    batch[assertion.key] = assertion if old is None else old.merge(assertion)


# -- the store side ---------------------------------------------------------------------------
_STORED = (
    "UNWIND $rows AS r MATCH (a:Concept)-[e:ASSERTS]->(b:Concept) WHERE a.uid = r.s AND b.uid = r.t AND e.key = r.key "
    "RETURN e.key, e.weight, e.surface_text, e.dataset, e.license, e.sources, e.edge_uris, e.start_senses, "
    "e.end_senses, e.fetched_at, a.label, b.label"
)


def stored_assertions(store: GraphStore, keys: list[str]) -> dict[str, tuple[Assertion, str | None]]:
    """The stored assertions with these keys, and their first fetch times (looked up by endpoints)."""
    out: dict[str, tuple[Assertion, str | None]] = {}
    for i in range(0, len(keys), 5000):
        rows = []
        for key in keys[i : i + 5000]:
            _, s, t = key.split("|")
            rows.append({"s": s, "t": t, "key": key})
        for row in store.cypher(_STORED, {"rows": rows}).rows:
            rel_uri, s, e = row[0].split("|")
            a = Assertion(
                rel_uri, parse_concept(s), parse_concept(e), row[1], row[2], row[3], row[4],
                json.loads(row[5]) if row[5] else [], list(row[6] or []), list(row[7] or []), list(row[8] or []),
                row[10], row[11],
            )
            out[row[0]] = (a, row[9])
    return out


def read_checkpoint(store: GraphStore, job_id: str) -> dict[str, Any] | None:
    """The committed checkpoint of a job: {'cursor', 'done', 'stats'} or None if it never committed."""
    rows = store.cypher(
        "MATCH (j:IngestJob) WHERE j.uid = $id RETURN j.cursor, j.done, j.stats", {"id": job_id}
    ).rows
    if not rows:
        return None
    cursor, done, stats = rows[0]
    return {
        "cursor": json.loads(cursor) if cursor else None,
        "done": bool(done),
        "stats": json.loads(stats) if stats else {},
    }


def commit_batch(
    store: GraphStore, job_id: str, kind: str, origin: str, batch: dict[str, Assertion], cursor: Any, done: bool,
    stats: dict[str, Any], fetched_at: str | None = None,
) -> int:
    """Merge `batch` with what is stored and write it together with the job's checkpoint.

    Returns the number of new assertions. One transaction: the checkpoint never runs ahead
    of (or behind) the data.
    """
    now = utc_now()
    stored = stored_assertions(store, sorted(batch))
    concepts: dict[str, dict[str, Any]] = {}
    edges = []
    for key in sorted(batch):
        a = batch[key]
        first_fetch = fetched_at or now
        if key in stored:
            old, old_time = stored[key]
            a = old.merge(a)
            first_fetch = old_time or first_fetch
        for ref, label in ((a.start, a.start_label), (a.end, a.end_label)):
            row = concepts.setdefault(
                ref.uri, {"uid": ref.uri, "task": CONCEPT_TASK, "name": ref.name, "language": ref.language}
            )
            if label and not row.get("label"):
                row["label"] = label
        edges.append(
            {
                "s": a.start.uri,
                "t": a.end.uri,
                "key": key,
                "relation": relation_label(a.relation_uri),
                "weight": a.weight,
                "dataset": a.dataset,
                "license": a.license,
                "sources": a.sources,
                "surface_text": a.surface_text,
                "edge_uris": a.edge_uris,
                "start_senses": a.start_senses,
                "end_senses": a.end_senses,
                "origin": origin,
                "fetched_at": first_fetch,
            }
        )
    job = {
        "uid": job_id,
        "task": JOB_TASK,
        "kind": kind,
        "cursor": cursor,
        "done": done,
        "stats": stats,
        "updated_at": now,
    }
    _, created = store.merge_shared(
        [("Concept", list(concepts.values())), ("IngestJob", [job])], [("ASSERTS", "Concept", "Concept", edges)]
    )
    return created


def all_assertions(store: GraphStore, relation: str | None = None) -> dict[str, dict[str, Any]]:
    """Every stored assertion in comparable form (tests and `graphtasks ingest status`)."""
    where = "WHERE e.relation = $rel " if relation else ""
    rows = store.cypher(f"MATCH ()-[e:ASSERTS]->() {where}RETURN e.key", {"rel": relation} if relation else {}).rows
    keys = [r[0] for r in rows]
    return {k: a.comparable() for k, (a, _) in stored_assertions(store, keys).items()}


def matches(a: Assertion, relations: Iterable[str] | None, languages: Iterable[str] | None) -> bool:
    """The job's filter: relation URI and the language of both ends."""
    if relations is not None and a.relation_uri not in relations:
        return False
    if languages is not None and (a.start.language not in languages or a.end.language not in languages):
        return False
    return True
