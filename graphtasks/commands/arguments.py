"""Numbers on the command line: argparse types that state an option's range where it is declared.

    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--workers", type=integer(1, MAX_WORKERS), default=1)

A value out of range, not a whole number or not finite stops the parse with one line, naming the
command and the option: `graphtasks: error: run: --seed: expected a whole number from 0 to ...`
(exit code 2), by `one_line_errors` on the command's parser. The ranges are listed in
docs/limits.md.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable, NoReturn

MAX_SEED = 2**63 - 1  # seeds are stored as 64-bit integers (as in experiment specs)
MAX_COUNT = 10_000_000  # episodes, trials, steps (as experiment specs' counts)
MAX_WORKERS = 1024  # processes of one command
MAX_STARTS = 1000  # optimiser starts per fit


def _refuse(wanted: str, text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"expected {wanted}, got {text!r:.60}")


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """A whole number in low..high (an end is open when None)."""
    if low is not None and high is not None:
        wanted = f"a whole number from {low:,} to {high:,}"
    else:
        wanted = "a whole number" + (f" >= {low:,}" if low is not None else f" <= {high:,}" if high is not None else "")

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise _refuse(wanted, text) from None
        if "_" in text or (low is not None and value < low) or (high is not None and value > high):
            raise _refuse(wanted, text)
        return value

    return whole_number


def real(low: float | None = None, high: float | None = None, above: bool = False) -> Callable[[str], float]:
    """A finite number in low..high; with `above`, more than `low` (not equal)."""
    if low is not None and high is not None:
        wanted = f"a finite number > {low:g} and <= {high:g}" if above else f"a finite number from {low:g} to {high:g}"
    elif low is not None:
        wanted = f"a finite number {'>' if above else '>='} {low:g}"
    else:
        wanted = "a finite number" + (f" <= {high:g}" if high is not None else "")

    def finite_number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise _refuse(wanted, text) from None
        too_low = low is not None and (value <= low if above else value < low)
        if "_" in text or not math.isfinite(value) or too_low or (high is not None and value > high):
            raise _refuse(wanted, text)
        return value

    return finite_number


def integers(low: int | None = None, high: int | None = None) -> Callable[[str], list[int]]:
    """Comma-separated whole numbers, each in low..high; at least one."""
    one = integer(low, high)

    def convert(text: str) -> list[int]:
        parts = [p for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r:.60}")
        values = []
        for part in parts:
            try:
                values.append(one(part))
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(f"{exc} (in {text!r:.60})" if len(parts) > 1 else str(exc)) from None
        return values

    return convert


def numbers(text: str) -> dict[str, float]:
    """NAME=NUMBER pairs, comma-separated ('lr=0.3,beta=4'); every number finite."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not key.strip() or not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"expected NAME=NUMBER with a finite number, got {part!r:.60}")
        out[key.strip()] = number
    return out


POSITIVE = integer(1)
NON_NEGATIVE = integer(0)
SEED = integer(0, MAX_SEED)
COUNT = integer(1, MAX_COUNT)
WORKERS = integer(1, MAX_WORKERS)
STARTS = integer(1, MAX_STARTS)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Report this parser's argument errors (a value out of range, an unknown choice, a missing
    argument) as the command line reports every bad input: one `graphtasks: error:` line, exit 2."""
    command = parser.prog.partition(" ")[2] or parser.prog

    def error(message: str) -> NoReturn:
        import sys

        from graphtasks.colour import error_line

        text = message.removeprefix("argument ")
        parser.exit(2, error_line(f"{command}: {text}", sys.stderr) + "\n")

    parser.error = error  # type: ignore[method-assign]
    return parser


def restrict(parser: argparse.ArgumentParser, **types: Callable[[str], object]) -> None:
    """Give options that another module declared (by their dest) one of the types above."""
    for action in parser._actions:
        if action.dest in types:
            action.type = types.pop(action.dest)
    if types:
        raise KeyError(f"{parser.prog}: no option(s) {', '.join(types)}")  # a bug: the options were renamed


def max_episode_steps(args: argparse.Namespace) -> int | None:
    """`--max-episode-steps`, or its old spelling `--max-steps` (with one warning line).

    Parameters
    ----------
    args : argparse.Namespace
        A parsed command line with both options (`graphtasks run`, `participants text`).

    Returns
    -------
    int or None
        The episode length given (None: the env's).

    Raises
    ------
    CommandError
        Both spellings given.
    """
    if args.old_max_steps is None:
        return args.max_episode_steps
    if args.max_episode_steps is not None:
        from .errors import CommandError

        raise CommandError("--max-steps: give --max-episode-steps only (--max-steps is its old name)")
    import warnings

    warnings.warn("--max-steps is deprecated: use --max-episode-steps", FutureWarning, stacklevel=2)
    return args.old_max_steps
