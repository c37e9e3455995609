"""The Room memory task's builder and knowledge (RoomEnv-v0 of "A Machine With Human-Like Memory Systems").

A Room task in the store is a Task node with its people (RoomPerson) and objects
(RoomObject, each pointing at a ConceptNet Concept). Its locations are NOT copied into the
task: `room_knowledge` reads the objects' AtLocation assertions from the store's shared
ConceptNet graph when an environment is created, so ingesting more ConceptNet changes
the task. A store with no AtLocation assertion at all gets the bundled snapshot first, from
the knowledge provider `KNOWLEDGE_PROVIDER` (see `gym_bridge.room.env.load_room`).
Ids: 'room/small' (the paper's 10 people, 10 curated object-location pairs) and 'room/big'
(20 people, the MS-COCO categories, every stored location).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphstore import GraphStore, TaskGraph
from graphstore.errors import GraphtasksError

from ..data import TaskFileError, data_dir, read_json

ROOMS_FILE = "room/rooms.json"
RELATION = "AtLocation"
# the knowledge provider (graphstore.providers) that loads the assertions into a store without any:
# ingest registers the bundled ConceptNet snapshot under this name
KNOWLEDGE_PROVIDER = "conceptnet-atlocation"

KNOWLEDGE_QUERY = (
    "MATCH (h:Concept)-[a:ASSERTS]->(t:Concept) "
    "WHERE a.relation = $rel AND h.uid IN $heads AND t.language = h.language "
    "RETURN h.uid, t.name, a.weight ORDER BY h.uid, a.weight DESC, t.name"
)


def _rooms() -> dict[str, Any]:
    path = data_dir() / ROOMS_FILE
    rooms = read_json(path)
    if not isinstance(rooms, dict):
        raise TaskFileError(f"{path}: expected an object of rooms")
    return rooms


def _read_names(file_name: str) -> list[str]:
    path = data_dir() / "room" / file_name
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read: {exc.strerror}") from None
    names = [line.strip() for line in lines if line.strip()]
    if len(set(names)) != len(names):
        raise TaskFileError(f"{path}: names must be distinct")
    return names


def build_room_task(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
    """The Task node with the room's people and objects (locations stay in ConceptNet)."""
    rooms = _rooms()
    room = rooms[name]
    where = f"{data_dir() / ROOMS_FILE}: room {name!r}"
    objects = room.get("objects")
    if not isinstance(objects, dict) or not objects:
        raise TaskFileError(f"{where}: field 'objects' must map object names to location lists or null")
    g = TaskGraph(task_id, "room", name, source=f"data/{ROOMS_FILE}", description=room.get("description"),
                  params={"room": name, **params},
                  provenance={"semantics": "RoomEnv-v0 (room-env 0.1.5), arXiv 2204.01611",
                              "knowledge": "ConceptNet 5.7 AtLocation (CC BY-SA 4.0), read from the store"})
    for i, person in enumerate(_read_names(room.get("names", ""))):
        g.add_node(f"person/{person}", "RoomPerson", name=person, order=i)
        g.add_edge("", f"person/{person}", "HAS_PERSON")
    for i, (obj, locations) in enumerate(objects.items()):
        if locations is not None and (
            not isinstance(locations, list) or not all(isinstance(x, str) for x in locations)
        ):
            raise TaskFileError(f"{where}: object {obj!r}: locations must be a list of terms or null")
        g.add_node(f"object/{obj}", "RoomObject", name=obj, concept=f"/c/en/{obj}", locations=locations, order=i)
        g.add_edge("", f"object/{obj}", "HAS_OBJECT")
    return g.seal()


@dataclass
class RoomKnowledge:
    """What an environment needs: names, objects (heads), locations (tails), commonsense.

    `commonsense[h]` lists (location index, weight) of head `h`, strongest first.
    """

    names: list[str]
    heads: list[str]
    tails: list[str]
    commonsense: list[list[tuple[int, float]]] = field(default_factory=list)

    def top(self) -> list[tuple[str, str]]:
        """(head, strongest tail) per head, in the task's object order (pretrained semantic memory)."""
        return [(h, self.tails[cs[0][0]]) for h, cs in zip(self.heads, self.commonsense)]


class RoomKnowledgeError(GraphtasksError, ValueError):
    """The store does not hold the knowledge a Room task needs; says which and how to fix it."""


def room_knowledge(store: GraphStore, graph: TaskGraph, allow_spaces: bool = False,
                   disjoint_entities: bool = True) -> RoomKnowledge:
    """Read the room's people and objects from its TaskGraph and its locations from the store.

    Mirrors room-env's loading: tails that are heads (or names) are dropped when the entities
    must be disjoint; terms with '_' are dropped unless `allow_spaces`; objects left without a
    location are dropped; names are limited to the number of objects.
    """
    people = sorted((p["order"], p["name"]) for _, p in graph.nodes("RoomPerson"))
    objects = sorted((p["order"], p["name"], p["concept"], p.get("locations")) for _, p in graph.nodes("RoomObject"))
    if not allow_spaces:
        objects = [o for o in objects if "_" not in o[1]]
    head_names = [o[1] for o in objects]
    rows = store.cypher(KNOWLEDGE_QUERY, {"rel": RELATION, "heads": [o[2] for o in objects]}).rows
    by_concept: dict[str, list[tuple[str, float]]] = {}
    for uid, tail, weight in rows:
        by_concept.setdefault(uid, []).append((tail, float(weight)))
    names = [n for _, n in people]
    excluded = set(head_names) | set(names) if disjoint_entities else set()
    heads: list[str] = []
    per_head: list[list[tuple[str, float]]] = []
    for _, name, concept, allowed in objects:
        kept = [(t, w) for t, w in by_concept.get(concept, []) if t not in excluded
                and (allow_spaces or "_" not in t) and (allowed is None or t in allowed)]
        if kept:
            heads.append(name)
            per_head.append(kept)
    if not heads:
        raise RoomKnowledgeError(
            f"task {graph.task_id!r}: the store {getattr(store, 'location', '')!r} holds no AtLocation assertions for "
            f"its objects ({', '.join(head_names[:5])}, ...); load them with `graphtasks ingest snapshot` "
            "(offline) or `graphtasks ingest api` / `graphtasks ingest dump`"
        )
    tails = sorted({t for ts in per_head for t, _ in ts})
    index = {t: i for i, t in enumerate(tails)}
    names = names[: len(heads)]
    return RoomKnowledge(names, heads, tails, [[(index[t], w) for t, w in ts] for ts in per_head])
