"""`graphtasks bench`: the benchmark suite (benchmarks/run_all.py) from the command line.

The suite ships with the package (the `benchmarks` package) and is imported only when the
command runs: building the command line's parser (e.g. for `graphtasks --help`) never
imports it. Its options are declared by the suite itself and parsed when it runs, so
`graphtasks bench --help` shows them.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

from .errors import CommandError
from .examples import ExamplesFormatter, epilog

HELP = "benchmark every installed family: single env, vector env at N = 1..4096, compile time, memory"
DESCRIPTION = "Runs benchmarks/run_all.py: one table with ratios to the reference projects, and a JSON file."


def _suite() -> ModuleType:
    try:
        return importlib.import_module("benchmarks.run_all")
    except ImportError as exc:
        if exc.name not in ("benchmarks", "benchmarks.run_all"):
            raise  # the suite is there but something it needs is not: a real error
        raise CommandError(
            "bench: the benchmark suite (package `benchmarks`) is not installed; reinstall graphtasks"
        ) from None


def register(subparsers: argparse._SubParsersAction) -> None:
    # '+' as the option prefix: every typed word, '--quick' included, reaches the suite's own parser
    parser = subparsers.add_parser("bench", help=HELP, description=DESCRIPTION, prefix_chars="+", add_help=False)
    parser.add_argument("typed", nargs="*")
    parser.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    suite = _suite()
    parser = argparse.ArgumentParser(
        prog="graphtasks bench", description=DESCRIPTION, epilog=epilog("bench"), formatter_class=ExamplesFormatter
    )
    suite.add_arguments(parser)
    suite.run_from_args(parser.parse_args(args.typed))
    return 0
