"""The bundled ConceptNet snapshot: 740 real AtLocation edges, loadable without network.

Source: `conceptnet-data.json` of room-env 0.1.5 (the edges the ConceptNet 5.7 API returned
in 2022 for the MS-COCO categories). `build_snapshot` normalises it into the API's own edge
format (edge `@id`, `rel`, nodes with `@id`/`term`/`label`/`language`), so the snapshot goes
through the same parser as the API and the dump. Data: CC BY-SA 4.0 (see
data/conceptnet/ATTRIBUTION.md).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from graphstore import GraphStore
from graphstore.providers import KnowledgeProvider

from .conceptnet import Assertion, IngestError, commit_batch, from_jsonld, merge_into, read_checkpoint

SNAPSHOT_NAME = "atlocation-room-env.json"
SNAPSHOT_FETCHED = "2022"  # when the edges were fetched from the API (room-env 0.1.5 data)
SNAPSHOT_ASSERTIONS = 740  # what the snapshot adds to an empty store (tests/room/test_knowledge_provider.py)


def data_dir() -> Path:
    """`data/conceptnet` of the installed package or of the checkout."""
    try:
        # joinpath, not str(): graphtasks.data has no __init__.py, so files() gives a
        # MultiplexedPath whose str() is its repr, not a path
        root = resources.files("graphtasks.data").joinpath("conceptnet")
        if root.is_dir():
            return Path(str(root))
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[1] / "data" / "conceptnet"


def snapshot_path() -> Path:
    return data_dir() / SNAPSHOT_NAME


def build_snapshot(raw: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Normalise room-env's {category: [edge, ...]} into a sorted list of API-format edges."""
    edges = []
    for category, items in raw.items():
        for i, e in enumerate(items):
            where = f"conceptnet-data.json: {category!r} edge {i}"
            for name in ("start", "end"):
                if not isinstance(e.get(name), dict) or "@id" not in e[name]:
                    raise IngestError(f"{where}: field {name!r} must be a node with '@id'")
            start, end = e["start"], e["end"]
            edge = {
                "@id": f"/a/[/r/AtLocation/,{start['@id']}/,{end['@id']}/]",
                "@type": "Edge",
                "rel": {"@id": "/r/AtLocation", "@type": "Relation", "label": "AtLocation"},
                "start": dict(start),
                "end": dict(end),
                "weight": e["weight"],
                "surfaceText": e.get("surfaceText"),
                "query": f"/query?rel=/r/AtLocation&start=/c/en/{category.replace(' ', '_')}",
            }
            edges.append(edge)
    edges.sort(key=lambda x: x["@id"])
    return {
        "source": "room-env 0.1.5 room_env/data/conceptnet-data.json (ConceptNet 5.7 API responses, 2022)",
        "license": "CC BY-SA 4.0; see ATTRIBUTION.md",
        "fetched": SNAPSHOT_FETCHED,
        "relation": "/r/AtLocation",
        "edges": edges,
    }


def write_snapshot(raw_path: str | Path, out_path: str | Path) -> int:
    """Regenerate the bundled file from the reference data; one edge per line for readable diffs."""
    raw = json.loads(Path(raw_path).read_text(encoding="utf-8"))
    snap = build_snapshot(raw)
    head = {k: v for k, v in snap.items() if k != "edges"}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    lines.append('  "edges": [')
    lines.append(",\n".join("    " + json.dumps(e, ensure_ascii=False, sort_keys=True) for e in snap["edges"]))
    lines.append("  ]")
    lines.append("}")
    Path(out_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(snap["edges"])


def read_snapshot(path: str | Path | None = None) -> list[Assertion]:
    p = Path(path) if path is not None else snapshot_path()
    try:
        snap = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise IngestError(f"{p}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise IngestError(f"{p}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(snap, dict) or not isinstance(snap.get("edges"), list):
        raise IngestError(f"{p}: expected an object with an 'edges' list")
    return [from_jsonld(e, f"{p}: edge {i}") for i, e in enumerate(snap["edges"])]


def ingest_snapshot(
    store: GraphStore, path: str | Path | None = None, restart: bool = False
) -> tuple[str, int, int, bool]:
    """Load the snapshot in one committed batch: (job id, edges, new assertions, already loaded)."""
    p = Path(path) if path is not None else snapshot_path()
    job_id = f"snapshot {p.name}"
    checkpoint = None if restart else read_checkpoint(store, job_id)
    assertions = read_snapshot(p)
    if checkpoint and checkpoint["done"]:
        return job_id, len(assertions), 0, True
    batch: dict[str, Assertion] = {}
    for a in assertions:
        merge_into(batch, a)
    stats = {"edges": len(assertions), "assertions": len(batch)}
    new = commit_batch(
        store, job_id, "snapshot", f"snapshot {p.name}", batch, len(assertions), True, stats, SNAPSHOT_FETCHED
    )
    return job_id, len(assertions), new, False


# -- the knowledge provider: the Room task's ConceptNet, loaded on first use -------------------
ATLOCATION_PRESENT = "MATCH ()-[e:ASSERTS]->() WHERE e.relation = $rel RETURN e.key LIMIT 1"


def has_atlocation(store: GraphStore) -> bool:
    """Whether the store holds any ConceptNet AtLocation assertion (from any job)."""
    return bool(store.cypher(ATLOCATION_PRESENT, {"rel": "AtLocation"}).rows)


def load_atlocation(store: GraphStore) -> int:
    """The snapshot, loaded again even if its checkpoint says done (the assertions may have been
    deleted since); assertions merge by key, so nothing is added twice. The number added."""
    return ingest_snapshot(store, restart=True)[2]


# registered under the entry point group graphtasks.knowledge (pyproject.toml): `graphstore.providers`
ATLOCATION_SNAPSHOT = KnowledgeProvider(
    name="conceptnet-atlocation",
    knowledge="ConceptNet AtLocation knowledge",
    source=f"the bundled snapshot ({SNAPSHOT_ASSERTIONS} assertions)",
    present=has_atlocation,
    load=load_atlocation,
)
