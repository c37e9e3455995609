"""The typed property-graph schema shared by every store.

Node types and relationship types are declared once here; the embedded store generates
its tables from them, the Bolt store its constraints, the RDF view its vocabulary.
Labels and relationship types used in queries come only from this module, never from
user strings.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from .errors import SchemaError

# Property kinds and the store type each maps to. JSON values travel as strings.
KINDS: dict[str, str] = {
    "str": "STRING",
    "int": "INT64",
    "float": "DOUBLE",
    "bool": "BOOL",
    "float[]": "DOUBLE[]",
    "int[]": "INT64[]",
    "str[]": "STRING[]",
    "json": "STRING",
}


@dataclass(frozen=True)
class Property:
    """One typed property; `required` properties must be present and not None."""

    name: str
    kind: str
    required: bool = False
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown property kind {self.kind!r} for {self.name!r}")


@dataclass(frozen=True)
class Index:
    """An index the Bolt store creates (the embedded store indexes only `uid`, its primary key).

    Declared here so every store and the documentation agree on what lookups are cheap.
    """

    name: str
    label: str
    properties: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class NodeType:
    """A node label. Every node has `uid` (globally unique) and `task` (owning task id).

    `entity` types are the registry's entity classes (everything a task holds except its
    Task node): they carry the optional `group` property and can be selected by id,
    group and type.
    """

    label: str
    properties: tuple[Property, ...]
    doc: str = ""
    shared: bool = False  # shared nodes (e.g. ConceptNet concepts) outlive any one task
    entity: bool = True

    def property(self, name: str) -> Property | None:
        return _by_name(self.properties).get(name)

    def indexes(self) -> tuple[Index, ...]:
        """uid unique, task; entity types also (task, group) for group selections."""
        low = self.label.lower()
        out = [Index(f"graphtasks_{low}_uid", self.label, ("uid",), True)]
        if not self.shared:
            out.append(Index(f"graphtasks_{low}_task", self.label, ("task",)))
        if self.entity and not self.shared:
            out.append(Index(f"graphtasks_{low}_task_group", self.label, ("task", GROUP_PROPERTY)))
        return tuple(out)


@dataclass(frozen=True)
class RelType:
    """A relationship type with the (from, to) label pairs it may connect."""

    name: str
    endpoints: tuple[tuple[str, str], ...]
    properties: tuple[Property, ...] = ()
    doc: str = ""

    def property(self, name: str) -> Property | None:
        return _by_name(self.properties).get(name)


def _by_name(props: Iterable[Property]) -> dict[str, Property]:
    return {p.name: p for p in props}


GROUP_PROPERTY = "group"
GROUP_DOC = (
    "registry group of an entity created after the task was built (`create`); "
    "absent for the task's own entities, which form the group 'default'"
)

BASE_PROPERTIES = (
    Property("uid", "str", True, "globally unique id: '<task id>/<local id>' (the task id for Task nodes)"),
    Property("task", "str", True, "id of the task the node belongs to"),
)


@dataclass
class Schema:
    """The set of node and relationship types; families extend it with `add_*`."""

    nodes: dict[str, NodeType] = field(default_factory=dict)
    rels: dict[str, RelType] = field(default_factory=dict)

    def add_node(
        self, label: str, properties: Iterable[Property], doc: str = "", shared: bool = False, entity: bool = True
    ) -> NodeType:
        entity = entity and not shared
        props = tuple(BASE_PROPERTIES) + tuple(properties)
        if entity:
            props += (Property(GROUP_PROPERTY, "str", False, GROUP_DOC),)
        existing = self.nodes.get(label)
        if existing is not None:
            merged = {p.name: p for p in existing.properties}
            for p in props:
                if p.name in merged and merged[p.name].kind != p.kind:
                    raise ValueError(f"{label}.{p.name} declared as {merged[p.name].kind} and {p.kind}")
                merged.setdefault(p.name, p)
            props = tuple(merged.values())
            doc = existing.doc or doc
            entity = existing.entity
        node_type = NodeType(label, props, doc, shared, entity)
        self.nodes[label] = node_type
        return node_type

    def add_rel(
        self, name: str, endpoints: Iterable[tuple[str, str]], properties: Iterable[Property] = (), doc: str = ""
    ) -> RelType:
        endpoints = tuple(endpoints)
        existing = self.rels.get(name)
        if existing is not None:
            endpoints = existing.endpoints + tuple(e for e in endpoints if e not in existing.endpoints)
            merged = {p.name: p for p in existing.properties}
            for p in properties:
                merged.setdefault(p.name, p)
            properties = tuple(merged.values())
            doc = existing.doc or doc
        rel = RelType(name, endpoints, tuple(properties), doc)
        self.rels[name] = rel
        return rel

    def node_type(self, label: str) -> NodeType:
        try:
            return self.nodes[label]
        except KeyError:
            raise SchemaError(f"unknown node type {label!r}; known: {', '.join(sorted(self.nodes))}") from None

    def entity_types(self) -> list[str]:
        """Labels of the registry's entity classes, in declaration order."""
        return [label for label, t in self.nodes.items() if t.entity]

    def indexes(self) -> list[Index]:
        """Every declared index (see `Index`)."""
        return [index for t in self.nodes.values() for index in t.indexes()]

    def rel_type(self, name: str) -> RelType:
        try:
            return self.rels[name]
        except KeyError:
            raise SchemaError(f"unknown relationship type {name!r}; known: {', '.join(sorted(self.rels))}") from None


def check_value(kind: str, value: Any) -> Any:
    """Return `value` normalised to `kind`, or raise TypeError saying what was expected."""
    if kind == "str":
        if isinstance(value, str):
            return value
    elif kind == "int":
        if isinstance(value, bool):
            raise TypeError(f"expected an integer, got the boolean {value!r}")
        if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"):
            return int(value)
    elif kind == "float":
        if isinstance(value, bool):
            raise TypeError(f"expected a number, got the boolean {value!r}")
        if isinstance(value, (int, float)) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf"):
            out = float(value)
            if math.isnan(out):
                raise TypeError("expected a number, got NaN")
            return out
    elif kind == "bool":
        if isinstance(value, bool) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "b"):
            return bool(value)
    elif kind.endswith("[]"):
        if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
            items = value.tolist() if hasattr(value, "tolist") else list(value)
            return [check_value(kind[:-2], v) for v in items]
    elif kind == "json":
        try:
            text = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"expected a JSON-serialisable value: {exc}") from None
        return json.loads(text)
    raise TypeError(f"expected {kind}, got {type(value).__name__} {value!r}")


def validate_properties(owner: str, declared: tuple[Property, ...], props: dict[str, Any]) -> dict[str, Any]:
    """Check `props` against `declared`; return the normalised dict. `owner` names the node or edge."""
    known = {p.name: p for p in declared}
    unknown = sorted(set(props) - set(known))
    if unknown:
        raise SchemaError(f"{owner}: unknown propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for p in declared:
        value = props.get(p.name)
        if value is None:
            if p.required:
                raise SchemaError(f"{owner}: required property {p.name!r} ({p.kind}) is missing")
            continue
        try:
            out[p.name] = check_value(p.kind, value)
        except TypeError as exc:
            raise SchemaError(f"{owner}: property {p.name!r}: {exc}") from None
    return out


def build_schema() -> Schema:
    """The graphtasks schema: every family's node and relationship types."""
    s = Schema()
    s.add_node(
        "Task",
        [
            Property("family", "str", True, "task family, e.g. 'neuronav/graph' or 'rewardgym'"),
            Property("name", "str", True, "short human name"),
            Property("source", "str", False, "where the definition came from (data file, reference, user)"),
            Property("description", "str"),
            Property("params", "json", False, "parameters the task was built with"),
            Property("provenance", "json", False, "references and licences"),
            Property("content_hash", "str", False, "hash of every node and edge; equal hash = equal task"),
            Property("reward_on", "str", False, "'arrival' (neuro-nav) or 'terminal' (rewardGym)"),
            Property("n_states", "int"),
            Property("n_actions", "int"),
            Property("schedule", "json", False, "trial-schedule specification (block structure)"),
        ],
        "One node per task: its id, family, parameters and provenance.",
        entity=False,
    )
    s.add_node(
        "State",
        [
            Property("index", "int", True, "state index used by the environment"),
            Property("name", "str"),
            Property("terminal", "bool", False, "no outgoing MOVE edges: the episode ends here"),
            Property("skip", "bool", False, "auto-advances with action 0 whenever reached"),
            Property("info", "json", False, "free-form annotations returned in the environment's info"),
        ],
        "A state of a graph task.",
    )
    s.add_node(
        "Reward",
        [
            Property("kind", "str", True, "fixed | probabilistic | drifting | pseudorandom"),
            Property("values", "float[]", True, "outcome values"),
            Property("probs", "float[]", False, "probabilities of `values` (probabilistic)"),
            Property("borders", "float[]", False, "bounds of the drifting probability"),
            Property("sd", "float", False, "step size of the drifting probability"),
        ],
        "A reward source attached to a state.",
    )
    s.add_node(
        "Condition",
        [
            Property("name", "str", True),
            Property("reward", "float", False, "fixed outcome of the trial, overriding the reward source"),
            Property("available", "json", False, "actions offered per state index in this trial"),
        ],
        "A trial condition: per-trial edge overrides (OVERRIDE edges) and fixed outcomes.",
    )
    s.add_rel(
        "MOVE",
        [("State", "State")],
        [
            Property("action", "int", True, "action label"),
            Property("p", "float", True, "probability of this target given (source, action)"),
            Property("executed", "int", False, "action actually carried out (differs under slips)"),
        ],
        "Transition: taking `action` in the source leads to the target with probability `p`.",
    )
    s.add_rel("HAS_REWARD", [("State", "Reward")], doc="The reward source paid at this state.")
    s.add_rel("START", [("Task", "State")], doc="The start state of the task.")
    s.add_rel(
        "OVERRIDE",
        [("Condition", "State")],
        [
            Property("source", "int", True, "state index whose edge is overridden"),
            Property("action", "int", True),
            Property("p", "float", True),
        ],
        "In this condition, `action` at state `source` goes to the target with probability `p`.",
    )
    s.add_rel("HAS_CONDITION", [("Task", "Condition")], doc="The task's named trial conditions.")
    s.add_node(
        "Tile",
        [
            Property("row", "int", True, "row of the tile (0 at the top)"),
            Property("col", "int", True, "column of the tile (0 at the left)"),
            Property("index", "int", True, "row-major tile index: row * cols + col"),
            Property("kind", "str", True, "floor | wall | door | start | goal | terminal | toggle"),
            Property("char", "str", True, "the tile's character in the Layout map"),
            Property("symbol", "str", False, "abstraction symbol (character of the Abstraction map; absent: blank)"),
            Property("abstraction", "str", False, "readable abstraction name (its `id:name`, else the symbol)"),
            Property("reward_symbol", "str", False, "character of the Rewards map on this tile"),
            Property("reward", "int", False, "reward paid on entering (from the symbol's `symbol:int`)"),
            Property("rule", "str", False, "character of the Behaviour map on this tile (a slip rule id)"),
        ],
        "A POGE gridworld tile.",
    )
    s.add_rel("MOVE", [("Tile", "Tile")], [Property("via", "str", False, "local id of a door passed on the way")])
    s.add_rel("START", [("Task", "Tile")])
    _add_conceptnet_types(s)
    add_grid_types(s)
    return s


def add_grid_types(s: Schema) -> None:
    """Grid worlds (neuro-nav GridEnv family): cells, their objects, moves between cells."""
    s.add_node(
        "Cell",
        [
            Property("row", "int", True, "0 is the north row"),
            Property("col", "int", True, "0 is the west column"),
            Property("index", "int", True, "row * n + col"),
            Property("wall", "bool", True, "walls cannot be entered"),
        ],
        "A cell of a grid world.",
    )
    s.add_node(
        "Reward",
        [
            Property("visible", "bool", False, "grid rewards: shown in pictures and symbolic observations"),
            Property(
                "terminate",
                "bool",
                False,
                "grid rewards: ends the episode when collected (unset: the env's terminate_on_reward)",
            ),
        ],
    )
    s.add_node("Key", [], "A consumable key lying on a cell; a door takes one to open.")
    s.add_node(
        "Door", [Property("orientation", "str", True, "'h' or 'v' (how it is drawn)")], "A locked door on a cell."
    )
    s.add_node("Warp", [], "Teleports the agent to the WARPS_TO cell after reward and key handling.")
    s.add_node("Marker", [Property("color", "int[]", True, "RGB 0-255")], "A coloured cell in pictures only.")
    s.add_rel("MOVE", [("Cell", "Cell")])
    s.add_rel("START", [("Task", "Cell")])
    s.add_rel("HAS_REWARD", [("Cell", "Reward")])
    s.add_rel(
        "HAS_OBJECT",
        [("Cell", "Key"), ("Cell", "Door"), ("Cell", "Warp"), ("Cell", "Marker")],
        doc="A grid object lying on a cell.",
    )
    s.add_rel("WARPS_TO", [("Warp", "Cell")], doc="Where a warp takes the agent.")


def _add_conceptnet_types(s: Schema) -> None:
    """ConceptNet knowledge shared by every task (Room reads its locations from it) and
    the checkpoints of the ingest jobs that write it (committed with each batch)."""
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
    s.add_node(
        "RoomPerson",
        [Property("name", "str", True, "first name, e.g. 'James'"), Property("order", "int", True)],
        "A person of a Room task (RoomEnv-v0).",
    )
    s.add_node(
        "RoomObject",
        [
            Property("name", "str", True, "object term, e.g. 'laptop'"),
            Property("concept", "str", True, "uid of the ConceptNet Concept whose AtLocation tails are its locations"),
            Property("locations", "str[]", False, "allowed location terms (curated rooms); absent = every stored tail"),
            Property("order", "int", True),
        ],
        "An object of a Room task; its commonsense locations are read from the stored assertions.",
    )
    s.add_rel("HAS_PERSON", [("Task", "RoomPerson")], doc="The people of a Room task.")
    s.add_rel("HAS_OBJECT", [("Task", "RoomObject")], doc="The objects of a Room task.")


SCHEMA = build_schema()
