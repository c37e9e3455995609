"""`graphtasks bench`: the benchmark suite (benchmarks/run_all.py) from the command line.

The suite lives in the source checkout's `benchmarks/` folder (it is a development tool and
is not installed with the package), so this command finds it next to the `graphtasks`
package and says so clearly when it is missing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path


def _suite():
    """benchmarks.run_all from an importable checkout, the checkout holding this package
    (editable installs), or the current directory (a checkout with a regular install)."""
    try:
        return importlib.import_module("benchmarks.run_all")
    except ImportError:
        for checkout in (Path(__file__).resolve().parents[2], Path.cwd()):
            if (checkout / "benchmarks" / "run_all.py").is_file():
                sys.path.insert(0, str(checkout))
                return importlib.import_module("benchmarks.run_all")
    raise ValueError(
        "bench: benchmarks/run_all.py was not found; run this command in a source checkout of graphtasks"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    help_text = "benchmark every installed family: single env, vector env at N = 1..4096, compile time, memory"
    description = "Runs benchmarks/run_all.py: one table with ratios to the reference projects, and a JSON file."
    try:
        suite = _suite()
    except ValueError:
        # no suite, so no options to declare: take whatever was typed (no '-' prefix) and say why it cannot run
        parser = subparsers.add_parser(
            "bench", help=help_text, description=description, prefix_chars="+", add_help=False
        )
        parser.add_argument("typed", nargs="*")
    else:
        parser = subparsers.add_parser("bench", help=help_text, description=description)
        suite.add_arguments(parser)
    parser.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    suite = _suite()
    suite.run_from_args(args)
    return 0
