"""`graphtasks validate [TASK ...|--all|--file FILE.ttl]`: check tasks against the SHACL shapes
of the RDF view (graphstore/shapes.ttl plus the schema's node shapes) with pyshacl, the `shacl` extra."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .arguments import one_line_errors
from .errors import CommandError

MAX_RDF_BYTES = 64 * 2**20  # as `graphtasks import`


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check tasks against the RDF view's SHACL shapes (pyshacl: the shacl extra)",
        description="Validate the RDF view of tasks with the published SHACL shapes: a state's MOVE "
        "probabilities per action sum to 1 and lie in [0, 1], no link dangles, a task with transitions "
        "has a start, every property is typed and the required ones are there. Exit 1 if any does not conform.",
    )
    parser.add_argument("tasks", nargs="*", metavar="TASK", help="task ids (built in, or any task in the store)")
    parser.add_argument("--all", action="store_true", help="every task in the store")
    parser.add_argument("--file", metavar="FILE", help="a Turtle (.ttl) or N-Triples (.nt) file, e.g. before import")
    parser.add_argument("--shapes", action="store_true", help="print the shapes (Turtle) and exit")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the tasks that do not conform")
    parser.set_defaults(func=cmd_validate)
    one_line_errors(parser)


def _report(name: str, violations: list[Any], quiet: bool) -> None:
    if not violations:
        if not quiet:
            print(f"conforms  {name}")
        return
    print(f"FAILS     {name}: {len(violations)} violation{'s' if len(violations) != 1 else ''}")
    for violation in violations:
        print(f"  {violation.line()}")


def cmd_validate(args: argparse.Namespace) -> int:
    from graphstore import open_store, shacl

    if args.shapes:
        shapes = shacl.shapes()
        sys.stdout.write(shapes.serialize(format="turtle"))
        return 0
    if not (args.tasks or args.all or args.file):
        raise CommandError("validate: give task ids, --all (every stored task) or --file FILE.ttl")
    if args.all and args.tasks:
        raise CommandError("validate: give task ids or --all, not both")
    shacl._pyshacl()  # before any work: one line naming the extra
    shape_graph = shacl.shapes()
    failed = checked = 0
    if args.file:
        from graphstore import rdf as rdf_view
        from tasks.data import decode_utf8, read_input

        from .rdf_cmd import RDF_FORMATS

        path = Path(args.file)
        fmt = RDF_FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise CommandError(f"{path}: expected a .ttl or .nt file")
        text = decode_utf8(read_input(path, MAX_RDF_BYTES, CommandError), str(path), CommandError)
        violations = shacl.validate(rdf_view.parse(text, fmt), shape_graph)
        _report(str(path), violations, args.quiet)
        failed, checked = failed + bool(violations), checked + 1
    if args.all:
        with open_store(args.store, "r") as store:
            ids = [t.task_id for t in store.list()]
            if not ids:
                raise CommandError("validate --all: the store holds no task (graphtasks tasks load --all)")
            for task_id in ids:
                violations = shacl.validate(store.get(task_id), shape_graph)
                _report(task_id, violations, args.quiet)
                failed, checked = failed + bool(violations), checked + 1
    elif args.tasks:
        from gym_bridge.loading import load_task_graph

        for task_id in args.tasks:
            violations = shacl.validate(load_task_graph(task_id, args.store), shape_graph)
            _report(task_id, violations, args.quiet)
            failed, checked = failed + bool(violations), checked + 1
    print(f"{checked - failed} of {checked} conform", file=sys.stderr)
    return 1 if failed else 0
