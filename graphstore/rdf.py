"""The RDF view of task graphs: a published vocabulary, conversion both ways, SPARQL, Turtle / N-Triples.

Vocabulary (namespace `https://graphtasks.dev/ns#`, prefix `gt:`), generated from the schema:
- every node is the IRI `https://graphtasks.dev/id/<uid, percent-encoded>` with
  `rdf:type gt:<Label>` (gt:Task, gt:State, gt:Reward, gt:Condition) and `gt:uid`, `gt:task`
  (an experiment record: `gt:owner`, its experiment's uid; a run's `gt:task` is the task it ran on);
- every attribute is the property `gt:<attribute>` (gt:index, gt:name, gt:p, ...), typed
  xsd:string / xsd:integer / xsd:double / xsd:boolean; list attributes are RDF collections
  (`gt:values (1.0 0.0)`); JSON attributes of a task's nodes are `rdf:JSON` literals (they
  round-trip exactly), those of shared records (a run's `params`, a fit's `stderr`) structured
  values: an object is a `gt:Map` of `gt:entry [ gt:entryKey "w" ;
  gt:entryValue 0.5 ]`, an array an RDF
  list, null `gt:null`;
- every relationship is the property `gt:<TYPE>` in its Cypher spelling (gt:MOVE,
  gt:HAS_REWARD, gt:START, gt:OVERRIDE, gt:HAS_CONDITION) from source to target;
- a relationship that carries properties (MOVE, OVERRIDE) is also reified as a
  `gt:Edge` node `<task IRI>#e<n>` with `gt:relationship gt:MOVE`, `gt:from`, `gt:to` and its
  attributes (`gt:action`, `gt:p`, `gt:executed`); the direct `gt:MOVE` triple stays for
  easy navigation, the Edge node is what import reads.
`vocabulary()` returns the vocabulary itself as RDFS with the schema's documentation.

SPARQL runs on Oxigraph through `oxrdflib` (`rdflib.Graph(store="Oxigraph")`). Turtle
is written by Oxigraph's serializer (`to_turtle`: every literal in its lexical form, where
rdflib's own Turtle writer prints doubles with 6 digits and would break the exact round
trip); N-Triples by rdflib.
"""

from __future__ import annotations

import hashlib
import json
import math
import weakref
from collections import defaultdict
from typing import Any, Iterable, Sequence, cast
from urllib.parse import quote

import pyoxigraph as ox
from oxrdflib import OxigraphStore
from pyparsing import ParseResults  # rdflib's SPARQL parser is built on pyparsing
from rdflib import RDF, RDFS, XSD, BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.query import ResultRow

from .errors import QueryError, SchemaError
from .schema import SCHEMA, Property, Schema, quote_name
from .store import GraphStore, QueryResult
from .taskgraph import TASK_LOCAL_ID, TaskGraph, uid_of

NS = "https://graphtasks.dev/ns#"
ID_BASE = "https://graphtasks.dev/id/"
GT = Namespace(NS)
EDGE = GT.Edge
SHARED_EDGE_BASE = "https://graphtasks.dev/id/shared-edge/"
REIFICATION = ("relationship", "from", "to")  # predicates of a reified edge: no attribute may use them


def _check_vocabulary(schema: Schema) -> None:
    clashes = [f"{r.name}.{p.name}" for r in schema.rels.values() for p in r.properties if p.name in REIFICATION]
    if clashes:
        raise SchemaError(
            f"relationship properties {', '.join(clashes)} collide with the RDF edge predicates {REIFICATION}"
        )


RELATION, FROM, TO = GT.relationship, GT["from"], GT.to
OXIGRAPH = "Oxigraph"
_XSD_OF_KIND = {"str": XSD.string, "int": XSD.integer, "float": XSD.double, "bool": XSD.boolean, "json": RDF.JSON}


def node_iri(uid: str) -> URIRef:
    """The IRI of the node with global id `uid` (reversible: every unsafe character is percent-encoded)."""
    return URIRef(ID_BASE + quote(uid, safe="/"))


# the Oxigraph store behind each graph `new_graph` made: the view's triples go into it in bulk
_OXIGRAPH_OF: weakref.WeakKeyDictionary[OxigraphStore, ox.Store] = weakref.WeakKeyDictionary()


def new_graph(store: str = OXIGRAPH) -> Graph:
    """An empty rdflib graph on Oxigraph (default) or rdflib's own memory store (`store='default'`)."""
    if store == OXIGRAPH:
        inner = ox.Store()
        wrapper = OxigraphStore(store=inner)
        _OXIGRAPH_OF[wrapper] = inner
        graph = Graph(store=wrapper)
    else:
        graph = Graph(store=store)
    graph.bind("gt", GT, override=True)
    return graph


XSD_STRING, XSD_INTEGER, XSD_DOUBLE, XSD_BOOLEAN, RDF_JSON = (
    str(XSD.string), str(XSD.integer), str(XSD.double), str(XSD.boolean), str(RDF.JSON)
)


def _lexical(kind: str, value: Any) -> tuple[str, str]:
    """A scalar value's lexical form and datatype IRI, as the view writes it."""
    if kind == "str":
        return str(value), XSD_STRING
    if kind == "float":
        return repr(float(value)), XSD_DOUBLE
    if kind == "int":
        return str(int(value)), XSD_INTEGER
    if kind == "bool":
        return ("true" if value else "false"), XSD_BOOLEAN
    if kind == "json":
        return json.dumps(value, sort_keys=True), RDF_JSON
    return str(value), XSD_STRING


def _literal(kind: str, value: Any) -> Literal:
    lexical, datatype = _lexical(kind, value)
    return Literal(lexical, datatype=URIRef(datatype))


class _Triples:
    """Where the view's triples go. Into a graph `new_graph` made on Oxigraph they are built as
    Oxigraph terms and added in one bulk call when the view is done (`flush`): five times faster
    than rdflib terms added one by one, which are what any other graph gets."""

    def __init__(self, rdf: Graph) -> None:
        self.rdf = rdf
        self.oxigraph = _OXIGRAPH_OF.get(rdf.store) if isinstance(rdf.store, OxigraphStore) else None
        self.pending: list[ox.Quad] = []
        self.iris: dict[str, Any] = {}
        self.graph_name: Any = None
        if self.oxigraph is not None:  # the graph's own name, as oxrdflib names it when adding one triple
            identifier = rdf.identifier
            if identifier == DATASET_DEFAULT_GRAPH_ID:
                self.graph_name = ox.DefaultGraph()
            elif isinstance(identifier, BNode):
                self.graph_name = ox.BlankNode(str(identifier))
            else:
                self.graph_name = ox.NamedNode(str(identifier))

    def iri(self, text: str) -> Any:
        term = self.iris.get(text)
        if term is None:
            term = self.iris[text] = URIRef(text) if self.oxigraph is None else ox.NamedNode(text)
        return term

    def gt(self, name: str) -> Any:
        return self.iri(NS + name)

    def node(self, uid: str) -> Any:
        return self.iri(ID_BASE + quote(uid, safe="/"))

    def blank(self, label: str) -> Any:
        return BNode(label) if self.oxigraph is None else ox.BlankNode(label)

    def literal(self, kind: str, value: Any) -> Any:
        lexical, datatype = _lexical(kind, value)
        if self.oxigraph is None:
            return Literal(lexical, datatype=URIRef(datatype))
        return ox.Literal(lexical, datatype=self.iri(datatype))

    def add(self, subject: Any, predicate: Any, obj: Any) -> None:
        if self.oxigraph is None:
            self.rdf.add((subject, predicate, obj))
        else:
            self.pending.append(ox.Quad(subject, predicate, obj, self.graph_name))

    def flush(self) -> None:
        if self.oxigraph is not None and self.pending:
            self.oxigraph.extend(self.pending)
            self.pending = []


RDF_TYPE, RDF_FIRST, RDF_REST, RDF_NIL = str(RDF.type), str(RDF.first), str(RDF.rest), str(RDF.nil)


def _add_value(out: _Triples, subject: Any, subject_text: str, prop: Property, value: Any) -> None:
    if prop.kind.endswith("[]"):
        # an RDF collection with blank-node labels derived from the owner: same task, same text
        digest = hashlib.sha1(f"{subject_text}|{prop.name}".encode()).hexdigest()[:16]
        cells = [out.blank(f"l{digest}x{i}") for i in range(len(value))]
        for i, (cell, item) in enumerate(zip(cells, value)):
            out.add(cell, out.iri(RDF_FIRST), out.literal(prop.kind[:-2], item))
            out.add(cell, out.iri(RDF_REST), cells[i + 1] if i + 1 < len(cells) else out.iri(RDF_NIL))
        out.add(subject, out.gt(prop.name), cells[0] if cells else out.iri(RDF_NIL))
        return
    out.add(subject, out.gt(prop.name), out.literal(prop.kind, value))


def _reified_edge(out: _Triples, edge_text: str, rel_name: str, source: Any, target: Any) -> Any:
    """The gt:Edge node of a relationship that carries properties: its type and its ends."""
    edge = out.iri(edge_text)
    out.add(edge, out.iri(RDF_TYPE), out.gt("Edge"))
    out.add(edge, out.gt("relationship"), out.gt(rel_name))
    out.add(edge, out.gt("from"), source)
    out.add(edge, out.gt("to"), target)
    return edge


def to_rdf(task: TaskGraph, rdf: Graph | None = None, store: str = OXIGRAPH) -> Graph:
    """Add `task` to `rdf` (a new Oxigraph-backed graph if None) and return it."""
    rdf = rdf if rdf is not None else new_graph(store)
    out = _Triples(rdf)
    _task_triples(task, out)
    out.flush()
    return rdf


def _task_triples(task: TaskGraph, out: _Triples) -> None:
    _check_vocabulary(task.schema)
    schema = task.schema
    task_id = task.task_id
    rdf_type = out.iri(RDF_TYPE)
    task_literal = out.literal("str", task_id)
    for local_id, props in task.nodes():
        label = task.label(local_id)
        node_type = schema.node_type(label)
        uid = uid_of(task_id, local_id)
        subject_text = ID_BASE + quote(uid, safe="/")
        subject = out.iri(subject_text)
        out.add(subject, rdf_type, out.gt(label))
        for iri in node_type.also:
            out.add(subject, rdf_type, out.iri(iri))
        out.add(subject, out.gt("uid"), out.literal("str", uid))
        out.add(subject, out.gt("task"), task_literal)
        for prop in node_type.properties:
            value = props.get(prop.name)
            if value is not None and prop.name not in ("uid", "task"):
                _add_value(out, subject, subject_text, prop, value)
    edges = sorted(
        ((s, t, d["rel"], d["props"]) for s, t, d in task.graph.edges(data=True)),
        key=lambda e: json.dumps([e[0], e[1], e[2], e[3]], sort_keys=True),
    )
    task_iri = str(node_iri(task_id))
    for n, (source, target, rel_name, props) in enumerate(edges):
        rel = schema.rel_type(rel_name)
        s, t = out.node(uid_of(task_id, source)), out.node(uid_of(task_id, target))
        out.add(s, out.gt(rel_name), t)
        for iri in rel.also:
            out.add(s, out.iri(iri), t)
        if rel.properties:
            edge_text = f"{task_iri}#e{n}"
            edge = _reified_edge(out, edge_text, rel_name, s, t)
            out.add(edge, out.gt("task"), task_literal)
            for prop in rel.properties:
                if props.get(prop.name) is not None:
                    _add_value(out, edge, edge_text, prop, props[prop.name])


def store_to_rdf(
    store: GraphStore,
    task_ids: Iterable[str] | None = None,
    rdf_store: str = OXIGRAPH,
    shared: bool | None = None,
    owners: Sequence[str] | None = None,
) -> Graph:
    """One RDF graph holding the given stored tasks (every task if `task_ids` is None).

    Shared records a store keeps outside the graph (an experiment's episode and trial chunks)
    come with the shared nodes, from the readers registered in the entry-point group
    `graphtasks.outside_records` (`outside_rows`), as the same triples nodes would give.

    `shared` adds the knowledge shared by all tasks (ConceptNet concepts and assertions,
    experiment records); by default it comes with the whole store and stays out of a
    selection of tasks. `owners` adds only the shared nodes those owners own (an
    experiment's uid: its records), which is far smaller than all of them.
    """
    ids = [t.task_id for t in store.list()] if task_ids is None else list(task_ids)
    rdf = new_graph(rdf_store)
    out = _Triples(rdf)
    for task in store.get_many(ids):
        _task_triples(task, out)
    out.flush()
    if owners is not None:
        shared_to_rdf(store, rdf, owners=owners)
        for nodes, edges in outside_rows(store, owners):
            add_shared_rows(rdf, nodes, edges)
    elif shared if shared is not None else task_ids is None:
        shared_to_rdf(store, rdf)
        for nodes, edges in outside_rows(store, None):
            add_shared_rows(rdf, nodes, edges)
    return rdf


OUTSIDE_RECORDS_GROUP = "graphtasks.outside_records"


def outside_rows(store: GraphStore, owners: Sequence[str] | None) -> list[tuple[Any, Any]]:
    """Shared records kept outside the graph, as (nodes, edges) rows in `merge_shared`'s form:
    what each reader of the entry-point group `graphtasks.outside_records` returns for these
    owners (None: all). A reader is `reader(store, owners) -> (nodes, edges) or None`; the
    experiment records register the one that reads their chunks."""
    from importlib.metadata import entry_points

    found = []
    for entry in sorted(entry_points(group=OUTSIDE_RECORDS_GROUP), key=lambda e: e.name):
        rows = entry.load()(store, owners)
        if rows is not None:
            found.append(rows)
    return found


def shared_to_rdf(
    store: GraphStore, rdf: Graph, schema: Schema = SCHEMA, owners: Sequence[str] | None = None
) -> Graph:
    """Add the shared nodes and the relationships between them, read with Cypher (any store);
    with `owners`, only the nodes those owners own and the relationships among them.

    Same vocabulary as tasks: one class per label, one property per attribute, the
    relationship as a direct triple plus a reified gt:Edge carrying its properties.
    """
    shared = {label for label, t in schema.nodes.items() if t.shared}

    def owner(var: str, label: str) -> str:  # records' owner is `owner`, other shared nodes' `task`
        return f"{var}.{quote_name(schema.nodes[label].owner_property)}"

    params = {} if owners is None else {"owners": list(owners)}
    out = _Triples(rdf)
    for label in sorted(shared):
        declared = schema.nodes[label].properties
        owned = "" if owners is None else f" WHERE {owner('n', label)} IN $owners"
        columns = ", ".join(f"n.{quote_name(p.name)}" for p in declared)
        for row in store.cypher(f"MATCH (n:{label}){owned} RETURN {columns}", params).rows:
            _shared_node(out, schema, label, dict(zip((p.name for p in declared), row)))
    for rel_name, rel in sorted(schema.rels.items()):
        for a, b in rel.endpoints:
            if a not in shared or b not in shared:
                continue
            columns = "".join(f", e.{quote_name(p.name)}" for p in rel.properties)
            both = "" if owners is None else f" WHERE {owner('x', a)} IN $owners AND {owner('y', b)} IN $owners"
            query = f"MATCH (x:{a})-[e:{rel_name}]->(y:{b}){both} RETURN x.uid, y.uid{columns}"
            for row in store.cypher(query, params).rows:
                values = dict(zip((p.name for p in rel.properties), row[2:]))
                _shared_edge(out, schema, rel_name, row[0], row[1], values)
    out.flush()
    return rdf


def add_shared_rows(
    rdf: Graph,
    nodes: Sequence[tuple[str, list[dict[str, Any]]]],
    edges: Sequence[tuple[str, str, str, list[dict[str, Any]]]] = (),
    schema: Schema = SCHEMA,
) -> Graph:
    """Add shared records given as rows (`merge_shared`'s form: (label, rows), (relationship,
    from, to, rows with `s` and `t`)) exactly as `shared_to_rdf` adds the same rows read from a
    store: how records kept outside the graph (an experiment's episode chunks) join the view."""
    out = _Triples(rdf)
    for label, rows in nodes:
        declared = schema.nodes[label].properties
        for row in rows:
            _shared_node(out, schema, label, {p.name: row.get(p.name) for p in declared} | {"uid": row["uid"]})
    for rel_name, _, _, rows in edges:
        rel = schema.rels[rel_name]
        for row in rows:
            _shared_edge(out, schema, rel_name, row["s"], row["t"], {p.name: row.get(p.name) for p in rel.properties})
    out.flush()
    return rdf


def _shared_node(out: _Triples, schema: Schema, label: str, values: dict[str, Any]) -> None:
    subject_text = ID_BASE + quote(values["uid"], safe="/")
    subject = out.iri(subject_text)
    out.add(subject, out.iri(RDF_TYPE), out.gt(label))
    for iri in schema.nodes[label].also:
        out.add(subject, out.iri(RDF_TYPE), out.iri(iri))
    for prop in schema.nodes[label].properties:
        if values.get(prop.name) is not None:
            _add_record_value(out, subject, subject_text, prop, _stored_value(prop, values[prop.name]))


def _shared_edge(
    out: _Triples, schema: Schema, rel_name: str, source: str, target: str, values: dict[str, Any]
) -> None:
    rel = schema.rels[rel_name]
    s, t = out.node(source), out.node(target)
    out.add(s, out.gt(rel_name), t)
    for iri in rel.also:
        out.add(s, out.iri(iri), t)
    if not rel.properties:
        return
    key = values.get("key") or f"{source}|{target}"
    edge_text = f"{SHARED_EDGE_BASE}{quote(rel_name + '/' + key, safe='')}"
    edge = _reified_edge(out, edge_text, rel_name, s, t)
    for prop in rel.properties:
        if values.get(prop.name) is not None:
            _add_record_value(out, edge, edge_text, prop, _stored_value(prop, values[prop.name]))


def _json_term(out: _Triples, value: Any, key: str) -> Any:
    """A JSON value as RDF: an object is a gt:Map of gt:entry [gt:entryKey; gt:entryValue], an array an RDF
    list, null gt:null, a number, string or boolean a typed literal. Blank-node labels come from
    `key` (owner, property, path), so the same record gives the same text."""
    if isinstance(value, dict):
        node = out.blank("m" + hashlib.sha1(key.encode()).hexdigest()[:16])
        out.add(node, out.iri(RDF_TYPE), out.gt("Map"))
        for name in sorted(value):
            entry = out.blank("m" + hashlib.sha1(f"{key}|{name}".encode()).hexdigest()[:16])
            out.add(node, out.gt("entry"), entry)
            out.add(entry, out.gt("entryKey"), out.literal("str", str(name)))
            out.add(entry, out.gt("entryValue"), _json_term(out, value[name], f"{key}|{name}"))
        return node
    if isinstance(value, list):
        if not value:
            return out.iri(RDF_NIL)
        digest = hashlib.sha1(key.encode()).hexdigest()[:16]
        cells = [out.blank(f"l{digest}x{i}") for i in range(len(value))]
        for i, (cell, item) in enumerate(zip(cells, value)):
            out.add(cell, out.iri(RDF_FIRST), _json_term(out, item, f"{key}|{i}"))
            out.add(cell, out.iri(RDF_REST), cells[i + 1] if i + 1 < len(cells) else out.iri(RDF_NIL))
        return cells[0]
    if value is None:
        return out.gt("null")
    if isinstance(value, bool):
        return out.literal("bool", value)
    if isinstance(value, int):
        return out.literal("int", value)
    if isinstance(value, float):
        return out.literal("float", value)
    return out.literal("str", str(value))


def _add_record_value(out: _Triples, subject: Any, subject_text: str, prop: Property, value: Any) -> None:
    """A shared node's attribute: JSON ones (a run's `params`, a fit's `stderr`) as structured values."""
    if prop.kind == "json":
        out.add(subject, out.gt(prop.name), _json_term(out, value, f"{subject_text}|{prop.name}"))
    else:
        _add_value(out, subject, subject_text, prop, value)


def _stored_value(prop: Property, value: Any) -> Any:
    """A value as a store returns it: JSON properties come back as text."""
    if prop.kind == "json" and isinstance(value, str):
        return json.loads(value)
    return value


# -- from RDF ---------------------------------------------------------------------------------
# A literal read into a task (docs/limits.md): the built-in tasks' longest is 1,615 characters (a
# rewardGym schedule); a 60 MB string in a 64 MiB file is a broken or hostile file, not a task.
MAX_LITERAL_CHARS = 1 << 20


def _python(kind: str, obj: Any, where: str, rdf: Graph) -> Any:
    if kind.endswith("[]"):
        if obj == RDF.nil:
            return []
        if not isinstance(obj, BNode):
            raise SchemaError(f"{where}: expected an RDF list ( ... ), got {obj}")
        return [_python(kind[:-2], item, where, rdf) for item in Collection(rdf, obj)]
    if not isinstance(obj, Literal):
        raise SchemaError(f"{where}: expected a literal, got {obj}")
    if len(obj) > MAX_LITERAL_CHARS:
        raise SchemaError(f"{where}: a literal of {len(obj):,} characters; an imported literal has at most "
                          f"{MAX_LITERAL_CHARS:,} (graphstore.rdf.MAX_LITERAL_CHARS)")
    try:
        if kind == "json":
            return json.loads(str(obj))
        if kind == "str":
            return str(obj)
        if kind == "bool":
            if str(obj) not in ("true", "false", "1", "0"):
                raise ValueError(f"not a boolean: {str(obj)!r}")
            return str(obj) in ("true", "1")
        if kind == "int":
            value = obj.toPython()
            if isinstance(value, bool) or not isinstance(value, int):
                value = int(str(obj))
            return value
        if kind == "float":
            value = float(str(obj))
            if math.isnan(value):
                raise ValueError("NaN")
            return value
    except ValueError as exc:
        raise SchemaError(f"{where}: {str(obj)!r} is not a valid {kind}: {exc}") from None
    raise SchemaError(f"{where}: unsupported kind {kind}")


def _attributes(rdf: Graph, subject: Any, declared: tuple[Property, ...], skip: set[str], where: str) -> dict[str, Any]:
    """The declared gt: attributes of `subject`; unknown gt: predicates and repeated values are errors."""
    known = {p.name: p for p in declared}
    out: dict[str, Any] = {}
    for pred, obj in rdf.predicate_objects(subject):
        if pred == RDF.type or not str(pred).startswith(NS):
            continue
        name = str(pred)[len(NS) :]
        if name in skip:
            continue
        prop = known.get(name)
        if prop is None:
            raise SchemaError(f"{where}: unknown property gt:{name} (declared: {', '.join(sorted(known))})")
        if name in out:
            raise SchemaError(f"{where}: gt:{name} has several values; it takes one")
        out[name] = _python(prop.kind, obj, f"{where}, gt:{name}", rdf)
    return out


def from_rdf(rdf: Graph, schema: Schema = SCHEMA) -> list[TaskGraph]:
    """Every task described in `rdf`, as TaskGraphs (not yet validated; `put` or `seal` does that).

    Errors name the subject and the property that is wrong.
    """
    rel_names = set(schema.rels)
    nodes: dict[Any, tuple[str, str, str]] = {}  # subject -> (task id, local id, label)
    by_task: dict[str, list[Any]] = defaultdict(list)
    for label, node_type in schema.nodes.items():
        if node_type.shared:  # shared knowledge belongs to no task; ingest jobs load it
            continue
        for subject in rdf.subjects(RDF.type, GT[label]):
            where = f"{label} {subject}"
            uid_term = rdf.value(subject, GT.uid)
            task_term = rdf.value(subject, GT.task)
            if uid_term is None or task_term is None:
                raise SchemaError(f"{where}: gt:uid and gt:task are required")
            uid, task_id = str(uid_term), str(task_term)
            if label == "Task":
                if uid != task_id:
                    raise SchemaError(f"{where}: a Task's gt:uid ({uid!r}) must equal its gt:task ({task_id!r})")
                local = TASK_LOCAL_ID
            elif uid.startswith(task_id + "/") and len(uid) > len(task_id) + 1:
                local = uid[len(task_id) + 1 :]
            else:
                raise SchemaError(f"{where}: gt:uid {uid!r} must be '<task>/<local id>' with task {task_id!r}")
            if subject in nodes:
                raise SchemaError(f"{subject}: typed as both {nodes[subject][2]} and {label}")
            nodes[subject] = (task_id, local, label)
            by_task[task_id].append(subject)
    graphs: dict[str, TaskGraph] = {}
    for task_id, subjects in sorted(by_task.items()):
        task_subjects = [s for s in subjects if nodes[s][2] == "Task"]
        if not task_subjects:
            raise SchemaError(f"task {task_id!r}: nodes refer to it but there is no gt:Task with gt:uid {task_id!r}")
        task_props = _attributes(
            rdf, task_subjects[0], schema.nodes["Task"].properties, {"uid", "task"} | rel_names, f"Task {task_id!r}"
        )
        for required in ("family", "name"):
            if required not in task_props:
                raise SchemaError(f"Task {task_id!r}: required property gt:{required} is missing")
        family, name = task_props.pop("family"), task_props.pop("name")
        graph = TaskGraph(task_id, family, name, schema=schema, **task_props)
        for subject in subjects:
            _, local, label = nodes[subject]
            if label == "Task":
                continue
            where = f"task {task_id!r}, {label} {local!r}"
            props = _attributes(rdf, subject, schema.nodes[label].properties, {"uid", "task"} | rel_names, where)
            graph.add_node(local, label, **props)
        graphs[task_id] = graph
    for subject, (task_id, local, _label) in nodes.items():  # property-less relationships: direct triples
        for rel_name in rel_names:
            if schema.rels[rel_name].properties:
                continue
            for obj in rdf.objects(subject, GT[rel_name]):
                if obj not in nodes or nodes[obj][0] != task_id:
                    raise SchemaError(
                        f"task {task_id!r}: gt:{rel_name} from {local or '(task)'!r} to unknown node {obj}"
                    )
                graphs[task_id].add_edge(local, nodes[obj][1], rel_name)
    shared_subjects = {
        subject for label, t in schema.nodes.items() if t.shared for subject in rdf.subjects(RDF.type, GT[label])
    }
    for edge in rdf.subjects(RDF.type, EDGE):
        if rdf.value(edge, FROM) in shared_subjects:  # knowledge shared by all tasks, not part of one
            continue
        rel_iri = rdf.value(edge, RELATION)
        rel_name = str(rel_iri)[len(NS) :] if rel_iri is not None and str(rel_iri).startswith(NS) else ""
        if rel_name not in rel_names:
            raise SchemaError(
                f"Edge {edge}: gt:relationship {rel_iri} is not one of gt:{', gt:'.join(sorted(rel_names))}"
            )
        ends = [rdf.value(edge, FROM), rdf.value(edge, TO)]
        for end, pred in zip(ends, ("from", "to")):
            if end not in nodes:
                raise SchemaError(f"{rel_name} Edge {edge}: gt:{pred} {end} is not a node of any task")
        task_id = nodes[ends[0]][0]
        if nodes[ends[1]][0] != task_id:
            raise SchemaError(f"{rel_name} Edge {edge}: connects two different tasks")
        props = _attributes(
            rdf,
            edge,
            schema.rels[rel_name].properties,
            {"relationship", "from", "to", "task"},
            f"{rel_name} Edge {edge}",
        )
        graphs[task_id].add_edge(nodes[ends[0]][1], nodes[ends[1]][1], rel_name, **props)
    return list(graphs.values())


def parse(data: str, fmt: str = "turtle") -> Graph:
    """Parse Turtle / N-Triples text into an Oxigraph-backed graph."""
    rdf = new_graph()
    try:
        rdf.parse(data=data, format=fmt)
    except Exception as exc:  # the parsers raise many types; all mean bad input
        raise SchemaError(f"cannot parse {fmt}: {exc}") from None
    return rdf


# -- SPARQL ------------------------------------------------------------------------------------
def _value(term: Any) -> Any:
    if term is None:
        return None
    if isinstance(term, Literal):
        if term.datatype == RDF.JSON:
            return str(term)
        value = term.toPython()
        return value if not isinstance(value, Literal) else str(value)
    if isinstance(term, BNode):
        return f"_:{term}"
    return str(term)


def _remote_parts(node: Any, found: list[str]) -> list[str]:
    """SERVICE patterns and FROM / FROM NAMED dataset clauses anywhere in a parsed query."""
    if isinstance(node, CompValue):
        if node.name == "ServiceGraphPattern":
            found.append(f"SERVICE {node['term'].n3()}")
        elif node.name == "DatasetClause":
            named = "named" in node
            found.append(f"FROM {'NAMED ' if named else ''}<{node['named' if named else 'default']}>")
        children: Iterable[Any] = node.values()
    elif isinstance(node, (list, tuple, ParseResults)):
        children = node
    else:
        return found
    for child in children:
        _remote_parts(child, found)
    return found


def check_local(query: str) -> None:
    """Raise QueryError if `query` would reach beyond the local RDF view.

    SERVICE sends the query to any address (Oxigraph runs it as an HTTP request) and FROM /
    FROM NAMED name datasets that rdflib fetches from the web. The query is parsed with
    rdflib's SPARQL parser (which also expands \\uXXXX escapes) and its tree searched, so comments,
    case and escapes cannot hide either; a query that does not parse is refused too.
    """
    try:
        parsed = parseQuery(query)
    except Exception as exc:  # pyparsing's errors carry the line and column
        raise QueryError(f"SPARQL query does not parse: {exc}") from None
    remote = _remote_parts(parsed, [])
    if remote:
        raise QueryError(
            f"SPARQL query reaches outside the local store ({', '.join(remote)}); "
            "pass allow_service=True (`graphtasks sparql --allow-service`) to allow it"
        )


def sparql(rdf: Graph, query: str, allow_service: bool = False) -> QueryResult:
    """Run a SPARQL SELECT / ASK / CONSTRUCT / DESCRIBE query; rows of plain Python values.

    SERVICE and FROM clauses are refused unless `allow_service` (see `check_local`).
    """
    if not allow_service:
        check_local(query)
    try:
        result = rdf.query(query)
        if result.type == "ASK":
            return QueryResult(["ask"], [[bool(result.askAnswer)]])
        if result.type in ("CONSTRUCT", "DESCRIBE"):
            return QueryResult(
                ["subject", "predicate", "object"],
                [[_value(t) for t in cast(tuple[Any, ...], triple)] for triple in result],
            )
        columns = [str(v) for v in result.vars or []]
        return QueryResult(
            columns, [[_value(cast(ResultRow, row)[i]) for i in range(len(columns))] for row in result]
        )
    except Exception as exc:
        raise QueryError(f"SPARQL query failed: {exc}") from None


# -- serialisation -----------------------------------------------------------------------------
def _ox_term(term: Any) -> Any:
    """The Oxigraph term of an rdflib term (IRI, blank node or literal, its lexical form kept)."""
    if isinstance(term, Literal):
        datatype = ox.NamedNode(str(term.datatype)) if term.datatype is not None and not term.language else None
        return ox.Literal(str(term), language=term.language or None, datatype=datatype)
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    return ox.NamedNode(str(term))


def _oxigraph_graph(rdf: Graph) -> tuple[ox.Store, Any] | None:
    """The Oxigraph store holding `rdf` and the name of its graph there, if it is on Oxigraph."""
    store = rdf.store
    if not isinstance(store, OxigraphStore):
        return None
    inner = _OXIGRAPH_OF.get(store) or store._inner
    identifier = rdf.identifier
    if identifier == DATASET_DEFAULT_GRAPH_ID:
        return inner, ox.DefaultGraph()
    return inner, (ox.BlankNode(str(identifier)) if isinstance(identifier, BNode) else ox.NamedNode(str(identifier)))


def to_turtle(rdf: Graph, extra_prefixes: dict[str, str] | None = None) -> str:
    """The graph as Turtle, written by Oxigraph's serializer: every literal in its own lexical
    form (doubles exact, so the view round-trips), triples sorted by subject (blank nodes
    last), predicate and object, so the same graph gives the same text and a subject's triples
    are written together. A graph on Oxigraph (`new_graph`, `parse`, `store_to_rdf`) is read
    from its store as Oxigraph terms; one on another rdflib store is converted term by term.

    Parameters
    ----------
    rdf : rdflib.Graph
        The graph.
    extra_prefixes : dict of str to str, optional
        Prefixes (name -> namespace) declared and used besides gt:, rdf:, xsd: and rdfs:.

    Returns
    -------
    str
        The Turtle text.

    Examples
    --------
    >>> from rdflib import Graph, Literal
    >>> from graphstore.rdf import GT, node_iri, parse, to_turtle
    >>> graph = Graph()
    >>> _ = graph.add((node_iri("t/a"), GT.p, Literal(0.1 + 0.2)))
    >>> print(to_turtle(graph).splitlines()[-1])
    <https://graphtasks.dev/id/t/a> gt:p "0.30000000000000004"^^xsd:double .
    >>> len(parse(to_turtle(graph)))
    1
    """
    prefixes = {"gt": NS, "rdf": str(RDF), "xsd": str(XSD), "rdfs": str(RDFS), **(extra_prefixes or {})}
    on_oxigraph = _oxigraph_graph(rdf)
    if on_oxigraph is not None:
        inner, name = on_oxigraph
        triples = [quad.triple for quad in inner.quads_for_pattern(None, None, None, name)]
    else:
        triples = [ox.Triple(_ox_term(s), _ox_term(p), _ox_term(o)) for s, p, o in rdf]
    triples.sort(key=str)  # N-Triples order: subject, predicate, object; IRIs before blank nodes
    data = ox.serialize(triples, format=ox.RdfFormat.TURTLE, prefixes=prefixes)
    return cast(bytes, data).decode("utf-8")


def serialize(rdf: Graph, fmt: str) -> str:
    """Text of `rdf` in 'ttl' / 'turtle' or 'nt' / 'ntriples' (sorted lines)."""
    if fmt in ("ttl", "turtle"):
        return to_turtle(rdf)
    if fmt in ("nt", "ntriples", "n-triples"):
        text = rdf.serialize(format="nt")
        return "\n".join(sorted(line for line in text.splitlines() if line.strip())) + "\n"
    raise ValueError(f"--format: expected ttl or nt, got {fmt!r}")


def vocabulary(schema: Schema = SCHEMA) -> Graph:
    """The gt: vocabulary as RDFS: classes, attribute and relationship properties, with their docs."""
    rdf = new_graph()
    rdf.add((EDGE, RDF.type, RDFS.Class))
    rdf.add((EDGE, RDFS.comment, Literal("A relationship that carries properties, reified.")))
    for pred, doc in ((RELATION, "The relationship type of an Edge."), (FROM, "Source node of an Edge."),
                      (TO, "Target node of an Edge.")):
        rdf.add((pred, RDF.type, RDF.Property))
        rdf.add((pred, RDFS.comment, Literal(doc)))
        rdf.add((pred, RDFS.domain, EDGE))
    rdf.add((GT.Map, RDF.type, RDFS.Class))
    rdf.add((GT.Map, RDFS.comment, Literal("A JSON object of a shared record (a run's params): its gt:entry pairs.")))
    for pred, doc in ((GT.entry, "One key-value pair of a gt:Map."), (GT.entryKey, "The key of a gt:Map entry."),
                      (GT.entryValue, "The value of a gt:Map entry: a literal, a gt:Map, an RDF list or gt:null.")):
        rdf.add((pred, RDF.type, RDF.Property))
        rdf.add((pred, RDFS.comment, Literal(doc)))
    rdf.add((GT.null, RDFS.comment, Literal("JSON null in a structured value.")))
    for label, node_type in schema.nodes.items():
        rdf.add((GT[label], RDF.type, RDFS.Class))
        rdf.add((GT[label], RDFS.comment, Literal(node_type.doc)))
        for iri in node_type.also:
            rdf.add((GT[label], RDFS.subClassOf, URIRef(iri)))
        for prop in node_type.properties:
            rdf.add((GT[prop.name], RDF.type, RDF.Property))
            rdf.add((GT[prop.name], RDFS.domain, GT[label]))
            if prop.doc:
                rdf.add((GT[prop.name], RDFS.comment, Literal(prop.doc)))
            kind = prop.kind[:-2] if prop.kind.endswith("[]") else prop.kind
            rdf.add((GT[prop.name], RDFS.range, RDF.List if prop.kind.endswith("[]") else _XSD_OF_KIND[kind]))
    for name, rel in schema.rels.items():
        rdf.add((GT[name], RDF.type, RDF.Property))
        rdf.add((GT[name], RDFS.comment, Literal(rel.doc)))
        for iri in rel.also:
            rdf.add((GT[name], RDFS.subPropertyOf, URIRef(iri)))
        for a, b in rel.endpoints:
            rdf.add((GT[name], RDFS.domain, GT[a]))
            rdf.add((GT[name], RDFS.range, GT[b]))
        for prop in rel.properties:
            rdf.add((GT[prop.name], RDF.type, RDF.Property))
            rdf.add((GT[prop.name], RDFS.domain, EDGE))
            if prop.doc:
                rdf.add((GT[prop.name], RDFS.comment, Literal(prop.doc)))
    return rdf
