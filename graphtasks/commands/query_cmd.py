"""`graphtasks cypher QUERY`: read-only Cypher against the store, printed as a table."""

from __future__ import annotations

import argparse

from graphstore import open_store
from graphstore.cypher_text import check_read_only

from .output import add_format_argument, parse_params, print_rows


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("cypher", help="run a read-only Cypher query")
    parser.add_argument("query")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="query parameter ($KEY); JSON values")
    add_format_argument(parser)
    parser.set_defaults(func=cmd_cypher)


def cmd_cypher(args: argparse.Namespace) -> int:
    check_read_only(args.query)  # a writing query is refused before any store is opened
    with open_store(args.store, "r") as store:
        result = store.cypher(args.query, parse_params(args.param))
    print_rows(result.columns, result.rows, args.format)
    return 0
