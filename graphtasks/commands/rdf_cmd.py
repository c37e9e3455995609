"""RDF commands: `sparql`, `export`, `import` (see graphstore/rdf.py for the vocabulary)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from graphstore import GraphStoreError, SchemaError, open_store
from graphstore import rdf as rdf_view
from tasks.data import decode_utf8, read_input

from .errors import CommandError
from .files import write_output
from .output import add_format_argument, print_rows

RDF_FORMATS = {".ttl": "turtle", ".turtle": "turtle", ".nt": "nt"}
MAX_RDF_BYTES = 64 * 2**20  # a Turtle or N-Triples file to import (every built-in task together: 31 MB)
MAX_QUERY_BYTES = 2**20  # a SPARQL query file (`sparql @FILE`)


def register(subparsers: argparse._SubParsersAction) -> None:
    sparql = subparsers.add_parser(
        "sparql",
        help="run a SPARQL query over stored tasks (RDF view, Oxigraph)",
        description="Run SPARQL over the RDF view of one, several or all stored tasks. "
        "Prefixes gt:, rdf:, rdfs:, xsd:, mls: are predeclared.",
    )
    sparql.add_argument("query", help="the SPARQL query text (or @FILE to read it from a file)")
    sparql.add_argument(
        "--task", action="append", dest="tasks", metavar="ID", help="task to include (repeatable; default all)"
    )
    sparql.add_argument(
        "--experiment",
        action="append",
        dest="experiments",
        metavar="NAME",
        help="only this recorded experiment's records (repeatable; no tasks unless --task names them)",
    )
    sparql.add_argument(
        "--allow-service",
        action="store_true",
        help="allow SERVICE and FROM clauses, which send the query to (or load data from) other machines",
    )
    add_format_argument(sparql)
    sparql.set_defaults(func=cmd_sparql)

    export = subparsers.add_parser("export", help="write a stored task as Turtle or N-Triples")
    export.add_argument("task_ids", nargs="+", metavar="ID")
    export.add_argument("--format", choices=("ttl", "nt"), default="ttl")
    export.add_argument("-o", "--output", help="output file (default: standard output)")
    export.set_defaults(func=cmd_export)

    imp = subparsers.add_parser("import", help="load tasks from a Turtle (.ttl) or N-Triples (.nt) file into the store")
    imp.add_argument("file")
    imp.set_defaults(func=cmd_import)


PREFIXES = {
    "gt": rdf_view.NS,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "mls": "http://www.w3.org/ns/mls#",  # W3C ML-Schema, which experiment records also use
}


def with_prefixes(query: str) -> str:
    """Prepend the standard prefixes the query does not declare itself."""
    missing = [p for p in PREFIXES if not re.search(rf"(?i)\bPREFIX\s+{p}\s*:", query)]
    return "".join(f"PREFIX {p}: <{PREFIXES[p]}>\n" for p in missing) + query


def read_query(text: str) -> str:
    """The query itself, or the text of FILE for '@FILE'."""
    if not text.startswith("@"):
        return text
    path = Path(text[1:])

    def refuse(message: str) -> CommandError:
        return CommandError(f"sparql: the query file {message}")

    return decode_utf8(read_input(path, MAX_QUERY_BYTES, refuse), str(path), refuse)


def cmd_sparql(args: argparse.Namespace) -> int:
    query = with_prefixes(read_query(args.query))
    if not args.allow_service:
        rdf_view.check_local(query)  # before the store is opened: a refused query costs nothing
    with open_store(args.store, "r") as store:
        if args.experiments:
            from graphtasks.experiments.records import experiment_uid

            from .lookups import require_experiment

            for name in args.experiments:
                require_experiment(store, name)
            owners = [experiment_uid(name) for name in args.experiments]
            graph = rdf_view.store_to_rdf(store, args.tasks or [], owners=owners)
        else:
            graph = rdf_view.store_to_rdf(store, args.tasks)
    result = rdf_view.sparql(graph, query, allow_service=args.allow_service)
    print_rows(result.columns, result.rows, args.format, out=sys.stdout)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with open_store(args.store, "r") as store:
        graph = rdf_view.store_to_rdf(store, args.task_ids)
    text = rdf_view.serialize(graph, args.format)
    if args.output:
        write_output(args.output, text)
        print(f"wrote {', '.join(args.task_ids)} to {args.output} ({len(graph)} triples)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    path = Path(args.file)
    fmt = RDF_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CommandError(f"{path}: expected a .ttl or .nt file")
    text = decode_utf8(read_input(path, MAX_RDF_BYTES, CommandError), str(path), CommandError)  # RDF 1.1: UTF-8
    try:
        graphs = rdf_view.from_rdf(rdf_view.parse(text, fmt))
        if not graphs:
            raise SchemaError("no gt:Task in the file")
        for graph in graphs:  # validate every task before writing any
            graph.seal()
    except GraphStoreError as exc:
        raise SchemaError(f"{path}: {exc}") from None
    with open_store(args.store, "w") as store:
        for graph in graphs:
            changed = store.put(graph)
            print(f"{'loaded   ' if changed else 'unchanged'} {graph.task_id}")
    return 0
