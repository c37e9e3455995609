"""The typed property-graph schema shared by every store.

Node types and relationship types are declared once here; the embedded store generates
its tables from them, the Bolt store its constraints, the RDF view its vocabulary.
Labels and relationship types used in queries come only from this module, never from
user strings.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Iterable

from .errors import SchemaError


def quote_name(name: str) -> str:
    """Backtick a label, type or property name that comes from the schema (never from users):
    a name such as `starts` or `order` is a Cypher keyword otherwise."""
    return f"`{name}`"

TASK_PROPERTY = "task"  # a task's nodes: the id of their task
OWNER_PROPERTY = "owner"  # shared records: the id of what owns them (an experiment's uid)

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
    """A node label. Every node has `uid` (globally unique) and the id of what it belongs to,
    in the property `owner_property` names: `task` (the task id) for a task's nodes, `owner`
    for shared records (an experiment's uid, 'experiment/<name>'), whose own `task`, where they
    have one, is the task they ran on.

    `entity` types are the registry's entity classes (everything a task holds except its
    Task node): they carry the optional `group` property and can be selected by id,
    group and type. `renamed`: (old, new) property names of stores written by an earlier
    schema, in the order a store applies them when it opens one (see `renames`).
    """

    label: str
    properties: tuple[Property, ...]
    doc: str = ""
    shared: bool = False  # shared nodes (e.g. ConceptNet concepts) outlive any one task
    entity: bool = True
    also: tuple[str, ...] = ()  # IRIs of published classes this label also is (the RDF view types nodes with them)
    owner_property: str = TASK_PROPERTY  # the property holding the id of what the node belongs to
    renamed: tuple[tuple[str, str], ...] = ()  # (old, new) names of earlier schemas, applied in order

    def property(self, name: str) -> Property | None:
        return _by_name(self.properties).get(name)

    def indexes(self) -> tuple[Index, ...]:
        """uid unique; the owner (`task`) of a task's nodes, the `owner` of records; entity types
        also (task, group) for group selections."""
        low = self.label.lower()
        owner = self.owner_property
        out = [Index(f"graphtasks_{low}_uid", self.label, ("uid",), True)]
        if not self.shared or owner != TASK_PROPERTY:
            out.append(Index(f"graphtasks_{low}_{owner}", self.label, (owner,)))
        if self.entity and not self.shared:
            out.append(Index(f"graphtasks_{low}_task_group", self.label, (owner, GROUP_PROPERTY)))
        return tuple(out)

    def renames(self, columns: Iterable[str]) -> list[tuple[str, str]]:
        """The renames (old, new) that bring a stored label with these property names up to this
        schema: each of `renamed` whose old name is there and new name is not, in order.

        Examples
        --------
        >>> from graphstore import SCHEMA
        >>> SCHEMA.nodes["Run"].renames(["uid", "task", "task_id", "index"])
        [('task', 'owner'), ('task_id', 'task')]
        >>> SCHEMA.nodes["Run"].renames(["uid", "owner", "task", "index"])
        []
        """
        have = set(columns)
        out = []
        for old, new in self.renamed:
            if old in have and new not in have:
                out.append((old, new))
                have.discard(old)
                have.add(new)
        return out


@dataclass(frozen=True)
class RelType:
    """A relationship type with the (from, to) label pairs it may connect."""

    name: str
    endpoints: tuple[tuple[str, str], ...]
    properties: tuple[Property, ...] = ()
    doc: str = ""
    also: tuple[str, ...] = ()  # IRIs of published properties this relationship also is (stated in the RDF view)

    def property(self, name: str) -> Property | None:
        return _by_name(self.properties).get(name)


def _by_name(props: Iterable[Property]) -> dict[str, Property]:
    return {p.name: p for p in props}


GROUP_PROPERTY = "group"
GROUP_DOC = (
    "registry group of an entity created after the task was built (`create`); "
    "absent for the task's own entities, which form the group 'default'"
)

# Stores written before records named their owner `owner`: the owner was in `task` (and a
# run's task in `task_id`); opening such a store renames them (NodeType.renamed).
OWNER_RENAMED = ((TASK_PROPERTY, OWNER_PROPERTY),)
UID_PROPERTY = Property("uid", "str", True, "globally unique id: '<task id>/<local id>' (the task id for Task nodes)")
BASE_PROPERTIES = (UID_PROPERTY, Property(TASK_PROPERTY, "str", True, "id of the task the node belongs to"))
OWNER_DOC = "id of what the record belongs to: its experiment's uid, 'experiment/<name>'"


def base_properties(owner: str = TASK_PROPERTY) -> tuple[Property, ...]:
    """`uid` and the owner property every node of a label has (`task` or `owner`)."""
    if owner == TASK_PROPERTY:
        return BASE_PROPERTIES
    return (UID_PROPERTY, Property(owner, "str", True, OWNER_DOC))


class Schema:
    """The set of node and relationship types; families extend it with `add_*`.

    graphstore declares only the `Task` node. Every family adds its own types from its own
    module through a schema fragment, a function `(schema) -> None` calling `add_node` and
    `add_rel`, listed as an entry point in the group `graphtasks.schema` (see pyproject.toml).
    A schema made with `fragments=` loads them the first time its types are read, so any
    process that opens a store knows every installed family's tables.
    """

    def __init__(self, fragments: str | None = None) -> None:
        self._nodes: dict[str, NodeType] = {}
        self._rels: dict[str, RelType] = {}
        self._fragment_group = fragments
        self._loading = False

    @property
    def nodes(self) -> dict[str, NodeType]:
        self._load_fragments()
        return self._nodes

    @property
    def rels(self) -> dict[str, RelType]:
        self._load_fragments()
        return self._rels

    @property
    def loaded(self) -> bool:
        """All fragments are loaded (reading `nodes` or `rels` loads them)."""
        return self._fragment_group is None and not self._loading

    def _load_fragments(self) -> None:
        group, self._fragment_group = self._fragment_group, None  # once, and not again from inside a fragment
        if group is None:
            return
        entries = entry_points(group=group)
        if not entries:
            raise SchemaError(
                f"no schema fragments installed (entry point group {group!r}): install the package "
                "(`pip install .`, or `pip install -e .` in a checkout) so its families register their types"
            )
        self._loading = True
        try:
            for entry in entries:
                try:
                    add_fragment = entry.load()
                except ImportError as exc:
                    where = f"schema fragment {entry.name!r} ({entry.value})"
                    raise SchemaError(f"{where} cannot be imported: {exc}") from exc
                add_fragment(self)
        finally:
            self._loading = False

    def add_node(
        self,
        label: str,
        properties: Iterable[Property],
        doc: str = "",
        shared: bool = False,
        entity: bool = True,
        also: Iterable[str] = (),
        owner: str | None = None,
        renamed: Iterable[tuple[str, str]] = (),
    ) -> NodeType:
        """Declare a node type, or add properties to a declared one.

        `owner`: the property holding the id of what a node belongs to: `task` (the default) for
        a task's nodes, `owner` for shared records (then `task` is free to name the task a
        record ran on). Every declaration of a label must agree on it. `renamed`: (old, new)
        property names of earlier schemas, which a store renames when it opens an old store.
        """
        entity = entity and not shared
        existing = self._nodes.get(label)
        if owner is None:
            owner = existing.owner_property if existing is not None else TASK_PROPERTY
        elif existing is not None and existing.owner_property != owner:
            raise ValueError(f"{label}: owner property declared as {existing.owner_property!r} and {owner!r}")
        renames = tuple(renamed)
        props = base_properties(owner) + tuple(properties)
        if entity:
            props += (Property(GROUP_PROPERTY, "str", False, GROUP_DOC),)
        if existing is not None:
            merged = {p.name: p for p in existing.properties}
            for p in props:
                if p.name in merged and merged[p.name].kind != p.kind:
                    raise ValueError(f"{label}.{p.name} declared as {merged[p.name].kind} and {p.kind}")
                merged.setdefault(p.name, p)
            props = tuple(merged.values())
            doc = existing.doc or doc
            entity = existing.entity
            also = tuple(existing.also) + tuple(i for i in also if i not in existing.also)
            renames = existing.renamed + tuple(r for r in renames if r not in existing.renamed)
        node_type = NodeType(label, props, doc, shared, entity, tuple(also), owner, renames)
        self._nodes[label] = node_type
        return node_type

    def add_rel(
        self,
        name: str,
        endpoints: Iterable[tuple[str, str]],
        properties: Iterable[Property] = (),
        doc: str = "",
        also: Iterable[str] = (),
    ) -> RelType:
        endpoints = tuple(endpoints)
        existing = self._rels.get(name)
        if existing is not None:
            endpoints = existing.endpoints + tuple(e for e in endpoints if e not in existing.endpoints)
            merged = {p.name: p for p in existing.properties}
            for p in properties:
                merged.setdefault(p.name, p)
            properties = tuple(merged.values())
            doc = existing.doc or doc
            also = tuple(existing.also) + tuple(i for i in also if i not in existing.also)
        rel = RelType(name, endpoints, tuple(properties), doc, tuple(also))
        self._rels[name] = rel
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


_EXACT = {"str": str, "int": int, "float": float, "bool": bool}  # values of these types need no normalising


_NAMES: dict[int, tuple[tuple[Property, ...], frozenset[str]]] = {}


def _names(declared: tuple[Property, ...]) -> frozenset[str]:
    """The declared names, cached by identity (hashing the properties costs more than the check)."""
    cached = _NAMES.get(id(declared))
    if cached is None or cached[0] is not declared:
        cached = _NAMES[id(declared)] = (declared, frozenset(p.name for p in declared))
    return cached[1]


def plain_rows(declared: tuple[Property, ...], rows: list[dict[str, Any]], extra: frozenset[str] = frozenset()) -> bool:
    """Whether `rows` need no checking row by row: declared keys (and `extra`) only, required
    values present, every value already of its column's plain type (str, int, float, bool).
    Checked column by column, which is what makes bulk writes of records cheap."""
    if not rows:
        return True
    keys: set[str] = set().union(*rows)
    if not keys <= _names(declared) | extra:
        return False
    for p in declared:
        exact = _EXACT.get(p.kind)
        column = [row.get(p.name) for row in rows]
        kinds = set(map(type, column))
        if exact is None:
            if kinds != {type(None)}:
                return False
            continue
        if not kinds <= {exact, type(None)} or (p.required and type(None) in kinds):
            return False
        if exact is float and any(v != v for v in column if v is not None):  # NaN
            return False
    return True


def validate_properties(owner: str, declared: tuple[Property, ...], props: dict[str, Any]) -> dict[str, Any]:
    """Check `props` against `declared`; return the normalised dict. `owner` names the node or edge."""
    unknown = sorted(set(props) - _names(declared)) if not props.keys() <= _names(declared) else []
    if unknown:
        raise SchemaError(f"{owner}: unknown propert{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for p in declared:
        value = props.get(p.name)
        if value is None:
            if p.required:
                raise SchemaError(f"{owner}: required property {p.name!r} ({p.kind}) is missing")
            continue
        exact = _EXACT.get(p.kind)
        if exact is not None and type(value) is exact and value == value:  # the common case, fast (NaN != NaN)
            out[p.name] = value
            continue
        try:
            out[p.name] = check_value(p.kind, value)
        except TypeError as exc:
            raise SchemaError(f"{owner}: property {p.name!r}: {exc}") from None
    return out


FRAGMENT_GROUP = "graphtasks.schema"


def build_schema(fragments: str | None = FRAGMENT_GROUP) -> Schema:
    """The graphtasks schema: the `Task` node, plus every installed family's fragment."""
    s = Schema(fragments)
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
    return s


SCHEMA = build_schema()
