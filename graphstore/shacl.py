"""SHACL shapes of the RDF view and their validation (pyshacl, the `shacl` extra).

The shapes are published with the vocabulary: `shapes.ttl`, shipped next to this module,
holds the rules every task keeps (an Edge has one source, one target and a probability in
[0, 1]; a state's MOVE probabilities per action sum to 1, as do a condition's OVERRIDE
probabilities per source state and action; a task with transitions has a start; no link
points outside its task). `shapes()` adds a shape per node type of the schema (each
property typed, required ones present, one value each), generated as `vocabulary()` is, so
a family a user adds is covered too.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Iterable

from rdflib import RDF, RDFS, BNode, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection

from .errors import GraphStoreError
from .rdf import _XSD_OF_KIND, GT, to_rdf
from .schema import SCHEMA, Schema
from .store import GraphStore
from .taskgraph import TaskGraph

SH = Namespace("http://www.w3.org/ns/shacl#")
SHAPES_FILE = "shapes.ttl"
SHAPES_IRI = "https://graphtasks.dev/ns#shapes"


class ShaclUnavailable(GraphStoreError):
    """pyshacl is not installed."""


@dataclass(frozen=True)
class Violation:
    """One SHACL validation result: the node it is about, the shape's message, the severity."""

    focus: str
    message: str
    shape: str
    path: str | None = None
    value: str | None = None
    severity: str = "Violation"

    def line(self) -> str:
        """The result as one line: `focus: message`."""
        return f"{self.focus}: {self.message}"


def shapes_text() -> str:
    """The shipped rules (`graphstore/shapes.ttl`) as Turtle text."""
    return files("graphstore").joinpath(SHAPES_FILE).read_text(encoding="utf-8")


def _datatype(kind: str) -> URIRef | None:
    return None if kind.endswith("[]") else _XSD_OF_KIND[kind]


def shapes(schema: Schema = SCHEMA) -> Graph:
    """Every shape: the shipped rules plus one node shape per node type of `schema`.

    Parameters
    ----------
    schema
        The schema whose node types get a shape (default: every registered family's).

    Returns
    -------
    rdflib.Graph
        The shapes graph (rdflib's memory store), ready for `validate`.

    Examples
    --------
    >>> from graphstore.shacl import SH, shapes
    >>> from graphstore.rdf import GT
    >>> graph = shapes()
    >>> (GT.StateShape, SH.targetClass, GT.State) in graph
    True
    """
    graph = Graph()
    graph.bind("gt", GT)
    graph.bind("sh", SH)
    graph.parse(data=shapes_text(), format="turtle")
    for label, node_type in schema.nodes.items():
        shape = GT[f"{label}Shape"]
        graph.add((shape, RDF.type, SH.NodeShape))
        graph.add((shape, SH.targetClass, GT[label]))
        graph.add((shape, RDFS.comment, Literal(f"A {label}: its properties typed, the required ones present.")))
        for prop in node_type.properties:
            constraint = BNode()
            graph.add((shape, SH.property, constraint))
            graph.add((constraint, SH.path, GT[prop.name]))
            graph.add((constraint, SH.maxCount, Literal(1)))
            datatype = _datatype(prop.kind)
            if datatype is not None:
                graph.add((constraint, SH.datatype, datatype))
                kind = datatype.n3(graph.namespace_manager)
            else:  # an RDF list: rdf:nil or a blank node that starts one
                graph.add((constraint, SH.nodeKind, SH.BlankNodeOrIRI))
                kind = "an RDF list"
            required = " (required)" if prop.required else ""
            if prop.required:
                graph.add((constraint, SH.minCount, Literal(1)))
            graph.add(
                (constraint, SH.message, Literal(f"a {label} has one gt:{prop.name}, {kind}{required}"))
            )
    edge_kinds: dict[str, set[str]] = {}
    for rel in schema.rels.values():
        for prop in rel.properties:
            edge_kinds.setdefault(prop.name, set()).add(prop.kind)
    edge_shape = GT.EdgeShape
    for name, kinds in sorted(edge_kinds.items()):
        datatype = _datatype(next(iter(kinds))) if len(kinds) == 1 else None
        if name == "p" or datatype is None:  # gt:p has its own constraint in shapes.ttl
            continue
        constraint = BNode()
        graph.add((edge_shape, SH.property, constraint))
        graph.add((constraint, SH.path, GT[name]))
        graph.add((constraint, SH.maxCount, Literal(1)))
        graph.add((constraint, SH.datatype, datatype))
        graph.add(
            (constraint, SH.message, Literal(f"an Edge has one gt:{name}, {datatype.n3(graph.namespace_manager)}"))
        )
    for rel_name, rel in sorted(schema.rels.items()):
        needed = [p.name for p in rel.properties if p.required]
        if needed:
            _add_required_edge_properties(graph, rel_name, needed)
        pairs = [(a, b) for a, b in rel.endpoints if not (schema.nodes[a].shared or schema.nodes[b].shared)]
        if pairs:
            _add_endpoint_classes(graph, rel_name, pairs)
    return graph


def _add_endpoint_classes(graph: Graph, rel_name: str, pairs: list[tuple[str, str]]) -> None:
    """A SPARQL constraint on gt:Task: every `rel_name` link of the task joins node types the schema allows."""
    allowed = " || ".join(f"(?from = gt:{a} && ?to = gt:{b})" for a, b in pairs)
    ends = ", ".join(f"{a} -> {b}" for a, b in pairs)
    constraint = BNode()
    graph.add((GT.TaskShape, SH.sparql, constraint))
    graph.add((constraint, RDF.type, SH.SPARQLConstraint))
    graph.add((constraint, SH.prefixes, URIRef(SHAPES_IRI)))
    graph.add((constraint, SH.message, Literal(f"{{?subject}} gt:{rel_name} {{?value}}: a {rel_name} joins {ends}")))
    query = (
        f"SELECT $this ?subject ?value WHERE {{ $this gt:uid ?task . ?subject gt:task ?task ; gt:{rel_name} ?value . "
        "FILTER EXISTS { ?value a ?class } "  # an untyped target is a dangling link, reported as such
        f"FILTER NOT EXISTS {{ ?subject a ?from . ?value a ?to . FILTER ({allowed}) }} }}"
    )
    graph.add((constraint, SH.select, Literal(query)))


def _add_required_edge_properties(graph: Graph, rel_name: str, required: list[str]) -> None:
    """A SPARQL constraint on gt:Task: every `rel_name` Edge of the task has its required properties."""
    missing = " || ".join(f"!BOUND(?{name})" for name in required)
    optional = " ".join(f"OPTIONAL {{ ?value gt:{name} ?{name} }}" for name in required)
    constraint = BNode()
    graph.add((GT.TaskShape, SH.sparql, constraint))
    graph.add((constraint, RDF.type, SH.SPARQLConstraint))
    graph.add((constraint, SH.prefixes, URIRef(SHAPES_IRI)))
    names = ", ".join(f"gt:{name}" for name in required)
    graph.add((constraint, SH.message, Literal(f"the {rel_name} Edge {{?value}} needs {names}")))
    query = (
        "SELECT $this ?value WHERE { $this gt:uid ?task . "
        f"?value gt:relationship gt:{rel_name} ; gt:task ?task . {optional} FILTER ({missing}) }}"
    )
    graph.add((constraint, SH.select, Literal(query)))


def _pyshacl() -> Any:
    try:
        import pyshacl
    except ImportError:
        raise ShaclUnavailable("validation needs pyshacl: pip install 'graphtasks[shacl]'") from None
    return pyshacl


def _text(term: Any, data: Graph) -> str | None:
    if term is None:
        return None
    if isinstance(term, Literal):
        return str(term)
    if isinstance(term, BNode) and (term, RDF.first, None) in data:
        return "(" + " ".join(str(item) for item in Collection(data, term)) + ")"
    return str(term)


def validate(data: Graph | TaskGraph, shapes_graph: Graph | None = None) -> list[Violation]:
    """Validate an RDF graph (or a task, converted first) against the shapes.

    Parameters
    ----------
    data
        An RDF view (`graphstore.rdf.to_rdf`, a parsed Turtle file) or a TaskGraph.
    shapes_graph
        The shapes (default: `shapes()`); pass it when validating many graphs.

    Returns
    -------
    list of Violation
        Every result, sorted by focus node and message; empty when the graph conforms.

    Examples
    --------
    >>> from graphstore.shacl import validate
    >>> from tasks.families import build
    >>> validate(build("rewardgym/two-step"))
    []
    """
    pyshacl = _pyshacl()
    graph = to_rdf(data) if isinstance(data, TaskGraph) else data
    shape_graph = shapes_graph if shapes_graph is not None else shapes()
    _, report, text = pyshacl.validate(
        graph, shacl_graph=shape_graph, inference="none", advanced=False, allow_warnings=True
    )
    if not isinstance(report, Graph):  # the shapes themselves are wrong (pyshacl's ValidationFailure)
        raise GraphStoreError(f"SHACL validation could not run: {' '.join(str(text).split())}")
    out = []
    for result in report.subjects(RDF.type, SH.ValidationResult):
        messages = sorted(str(m) for m in report.objects(result, SH.resultMessage))
        severity = report.value(result, SH.resultSeverity)
        source = report.value(result, SH.sourceShape)
        out.append(
            Violation(
                focus=str(report.value(result, SH.focusNode)),
                message="; ".join(messages) or "does not conform",
                shape=_shape_name(source, shape_graph),
                path=_text(report.value(result, SH.resultPath), report),
                value=_text(report.value(result, SH.value), graph),
                severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
            )
        )
    return sorted(out, key=lambda v: (v.focus, v.message, v.value or ""))


def _shape_name(shape: Any, shape_graph: Graph) -> str:
    """The named node shape a result comes from (a property shape's owner for blank ones)."""
    if isinstance(shape, URIRef):
        return str(shape)
    for owner in shape_graph.subjects(SH.property, shape):
        return str(owner)
    for owner in shape_graph.subjects(SH.sparql, shape):
        return str(owner)
    return str(shape)


def validate_store(store: GraphStore, task_ids: Iterable[str] | None = None) -> dict[str, list[Violation]]:
    """Validate stored tasks one at a time: task id -> its violations (every task if `task_ids` is None).

    Parameters
    ----------
    store
        An open store.
    task_ids
        The tasks to validate; None: every stored task.

    Returns
    -------
    dict
        Each task id with its list of violations (empty: it conforms), in the order given.
    """
    shape_graph = shapes()
    ids = [t.task_id for t in store.list()] if task_ids is None else list(task_ids)
    return {task_id: validate(store.get(task_id), shape_graph) for task_id in ids}


__all__ = ["SH", "ShaclUnavailable", "Violation", "shapes", "shapes_text", "validate", "validate_store"]
