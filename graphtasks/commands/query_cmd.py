"""`graphtasks cypher QUERY`: read-only Cypher against the store, printed as a table."""

from __future__ import annotations

import argparse
import sys

from graphstore import SCHEMA, open_store
from graphstore.cypher_text import check_read_only, renamed_property_notes

from .output import add_format_argument, parse_params, print_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cypher", help="run a read-only Cypher query",
        description="Run a read-only Cypher query. Experiment records kept as chunks are scanned with "
        "LOAD FROM $episodes or LOAD FROM $trials (e.g. MATCH (r:Run) WITH r LOAD FROM $episodes "
        "WHERE experiment = r.owner ... ); no other file can be loaded.",
    )
    parser.add_argument("query")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="query parameter ($KEY); JSON values")
    add_format_argument(parser)
    parser.set_defaults(func=cmd_cypher)


RECORD_SOURCES = ("episodes", "trials")  # `LOAD FROM $episodes`: the store's own record chunks


def cmd_cypher(args: argparse.Namespace) -> int:
    check_read_only(args.query, RECORD_SOURCES)  # a writing query is refused before any store is opened
    for note in renamed_property_notes(args.query, SCHEMA):  # an old property name finds nothing: say so
        print(f"note: {note}", file=sys.stderr)
    with open_store(args.store, "r") as store:  # $episodes and $trials: the store's registered sources
        result = store.cypher(args.query, parse_params(args.param))
    print_rows(result.columns, result.rows, args.format)
    return 0
