"""`graphtasks ingest api|dump|snapshot|status`: bring ConceptNet assertions into the store."""

from __future__ import annotations

import argparse

from .arguments import SEED, integer, one_line_errors, real, restrict
from .errors import CommandError
from .progress import shown


def register(subparsers: argparse._SubParsersAction) -> None:
    from ingest.conceptnet_api import add_api_arguments
    from ingest.conceptnet_dump import add_dump_arguments

    group = subparsers.add_parser("ingest", help="load ConceptNet assertions (API, dump, bundled snapshot)")
    sub = group.add_subparsers(dest="ingest_command", metavar="SOURCE")
    api = sub.add_parser("api", help="query the ConceptNet REST API, following every page (resumable)")
    add_api_arguments(api)
    restrict(  # the options' ranges: a timeout of 0, nan or inf, a negative backoff stopped in a traceback
        api, page_size=integer(1, 1000), timeout=real(0, 3600, above=True), retries=integer(1, 100),
        backoff=real(0, 3600), backoff_max=real(0, 3600), rate_limit=real(0, 1000), seed=SEED,
    )
    one_line_errors(api)
    api.set_defaults(func=_api)
    dump = sub.add_parser("dump", help="stream a ConceptNet assertions dump (gzip CSV), filtered (resumable)")
    add_dump_arguments(dump)
    dump.set_defaults(func=_dump)
    snap = sub.add_parser("snapshot", help="load the bundled 740 AtLocation edges (no network)")
    snap.add_argument("--file", default=None, help="another snapshot file in the same format")
    snap.add_argument("--restart", action="store_true", help="load again even if already loaded")
    snap.set_defaults(func=_snapshot)
    status = sub.add_parser("status", help="ingest jobs and their checkpoints, and assertion counts")
    status.set_defaults(func=_status)
    group.set_defaults(func=lambda args: group.print_help() or 2)


def _wrap(run, args: argparse.Namespace) -> int:
    from ingest import IngestError

    try:
        return run(args)
    except IngestError as exc:  # the CLI reports ValueErrors as one line
        raise CommandError(str(exc)) from None


def _api(args: argparse.Namespace) -> int:
    from ingest.conceptnet_api import run_api_command

    args.no_progress = not shown(args)  # a bar of pages only where someone watches
    return _wrap(run_api_command, args)


def _dump(args: argparse.Namespace) -> int:
    from ingest.conceptnet_dump import run_dump_command

    args.no_progress = not shown(args)  # a bar of lines read only where someone watches
    return _wrap(run_dump_command, args)


def _snapshot(args: argparse.Namespace) -> int:
    from graphstore import open_store
    from ingest.conceptnet_snapshot import ingest_snapshot

    def run(a: argparse.Namespace) -> int:
        store = open_store(a.store, "w")
        try:
            job, edges, new, already = ingest_snapshot(store, a.file, a.restart)
        finally:
            store.close()
        state = "already loaded (--restart loads it again)" if already else "loaded"
        print(f"{job}: {state}")
        print(f"summary: {edges} edges, {new} new assertions")
        return 0

    return _wrap(run, args)


def _status(args: argparse.Namespace) -> int:
    from graphstore import open_store

    store = open_store(args.store, "r")
    try:
        jobs = store.cypher("MATCH (j:IngestJob) RETURN j.uid, j.done, j.cursor, j.updated_at ORDER BY j.uid").rows
        counts = store.cypher("MATCH ()-[e:ASSERTS]->() RETURN e.relation, count(e) ORDER BY e.relation").rows
        concepts = store.cypher("MATCH (c:Concept) RETURN count(c)").rows[0][0]
    finally:
        store.close()
    for uid, done, cursor, updated in jobs:
        print(f"{'done   ' if done else 'partial'}  {uid}  cursor={cursor}  at {updated}")
    for rel, n in counts:
        print(f"{rel}: {n} assertions")
    print(f"{concepts} concepts")
    return 0
