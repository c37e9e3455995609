"""Ingest from the ConceptNet assertions dump (`conceptnet-assertions-5.7.0.csv.gz`).

The dump is 34 million gzip'd tab-separated rows of 5 columns (edge URI, relation, start,
end, JSON info). Streamed line by line: the relation and the languages are checked on the
raw columns before any JSON is decoded, so filtering stays cheap; matching rows are merged
by key (sense-qualified URIs fold into their concept, the sense kept) and loaded in
batches, each committed with the job's checkpoint (the number of lines consumed). Running
the same command again after an interruption skips the committed lines and adds nothing
twice. Run `graphtasks ingest dump FILE --help`.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import sys
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Iterator

from graphstore import GraphStore, open_store

from .conceptnet import Assertion, IngestError, commit_batch, from_dump_columns, merge_into, read_checkpoint

DEFAULT_BATCH = 5000  # assertions per committed batch
REPORTED_BAD_LINES = 20  # messages kept for the report; the count covers all of them
CHECKPOINT_LINES = 2_000_000  # also commit (possibly empty) after this many lines, to save progress


@dataclass
class BadLines:
    """What to do with a line that cannot be read: stop the job (default) or skip it, counted."""

    skip: bool = False
    count: int = 0
    messages: list[str] = field(default_factory=list)

    def handle(self, error: IngestError) -> None:
        if not self.skip:
            raise error
        self.count += 1
        if len(self.messages) < REPORTED_BAD_LINES:
            self.messages.append(str(error))


STOP = BadLines()  # the default: the first bad line stops the job


def open_lines(path: str | Path) -> Iterator[str]:
    """Text lines of a .gz (or plain) file."""
    p = Path(path)
    try:
        raw = gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb")
    except OSError as exc:
        raise IngestError(f"{p}: cannot open: {exc.strerror}") from None
    with raw, io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as text:
        try:
            yield from text
        except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip.BadGzipFile is an OSError
            raise IngestError(f"{p}: cannot read: {exc}") from None


def filter_rows(
    lines: Iterator[str], relations: frozenset[str] | None, languages: frozenset[str] | None, where: str,
    skip: int = 0, tick: int = CHECKPOINT_LINES, offset: int = 0, bad: BadLines = STOP,
) -> Iterator[tuple[int, Assertion | None]]:
    """(line number, assertion) for every matching line after `skip`, and (line number, None)
    every `tick` lines and at the end, so the caller can checkpoint by line.

    Why it is fast: a line is only split when the relation column can match (a substring
    test on the raw line), and JSON is decoded only for rows that pass every filter.
    """
    needles = tuple(f"\t{rel}\t" for rel in relations) if relations is not None else None
    prefixes = tuple(f"/c/{lang}/" for lang in languages) if languages is not None else None
    number = skip
    next_tick = skip + tick
    if skip:
        for _ in islice(lines, skip):
            pass
    for number, line in enumerate(lines, skip + 1 + offset):
        if number - offset >= next_tick:  # lines before this one are fully consumed
            next_tick = number - offset + tick
            yield number - 1, None
        if needles is not None:
            for needle in needles:
                if needle in line:
                    break
            else:
                if line.count("\t") != 4 and line.strip():
                    bad.handle(IngestError(
                        f"{where}, line {number}: expected 5 tab-separated columns, found {line.count(chr(9)) + 1}"
                    ))
                continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 5:
            if line.strip():
                bad.handle(IngestError(f"{where}, line {number}: expected 5 tab-separated columns, found {len(cols)}"))
            continue
        if relations is not None and cols[1] not in relations:
            continue
        if prefixes is not None and not (cols[2].startswith(prefixes) and cols[3].startswith(prefixes)):
            continue
        try:
            assertion = from_dump_columns(cols, f"{where}, line {number}")
        except IngestError as exc:
            bad.handle(exc)
            continue
        yield number, assertion
    yield number, None


CHUNK = 1 << 22  # bytes of decompressed text scanned at once


def scan_dump(
    path: str | Path, relations: frozenset[str] | None, languages: frozenset[str] | None,
    skip: int = 0, tick: int = CHECKPOINT_LINES, bad: BadLines = STOP,
) -> Iterator[tuple[int, Assertion | None]]:
    """Same output as `filter_rows(open_lines(path), ...)`, scanning whole chunks of bytes.

    Why: with a relation filter, only lines that contain '<TAB>/r/Rel<TAB>' matter, and
    `bytes.find`/`bytes.count` locate them and count lines in C; Python touches a line only
    when it can match. A chunk whose tab count is not 4 per line (a malformed or blank
    line) is handed to the line-by-line filter, which reports the file and line.
    """
    if relations is None:
        yield from filter_rows(open_lines(path), relations, languages, str(path), skip, tick, bad=bad)
        return
    p = Path(path)
    where = str(p)
    needles = [f"\t{rel}\t".encode() for rel in sorted(relations)]
    try:
        raw = gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb")
    except OSError as exc:
        raise IngestError(f"{p}: cannot open: {exc.strerror}") from None
    base = 0  # lines before the current block
    last_tick = skip
    carry = b""
    with raw:
        while True:
            try:
                data = raw.read(CHUNK)
            except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
                raise IngestError(f"{p}: cannot read: {exc}") from None
            if not data:
                block, carry = carry + (b"\n" if carry else b""), b""
            else:
                buf = carry + data
                cut = buf.rfind(b"\n") + 1
                block, carry = buf[:cut], buf[cut:]
            if block:
                n = block.count(b"\n")
                if base + n > skip:
                    offset = 0
                    first = base + 1
                    if base < skip:  # resume inside this block
                        for _ in range(skip - base):
                            offset = block.index(b"\n", offset) + 1
                        first = skip + 1
                    part = block[offset:] if offset else block
                    yield from _scan_block(part, first, needles, relations, languages, where, bad)
                base += n
                if base - last_tick >= tick and base > skip:
                    last_tick = base
                    yield base, None
            if not data:
                break
    yield max(base, skip), None


def _scan_block(block: bytes, first: int, needles: list[bytes], relations: frozenset[str],
                languages: frozenset[str] | None, where: str, bad: BadLines = STOP,
                ) -> Iterator[tuple[int, Assertion | None]]:
    """Matches in a block of whole lines whose first line is number `first`."""
    if block.count(b"\t") != 4 * block.count(b"\n"):  # a malformed or blank line somewhere: go slowly
        lines = block.decode("utf-8", errors="replace").splitlines(True)
        for number, a in filter_rows(iter(lines), relations, languages, where, 0, len(lines) + 2, first - 1, bad):
            if a is not None:
                yield number, a
        return
    prefixes = tuple(f"/c/{lang}/" for lang in languages) if languages is not None else None
    prefix_bytes = tuple(x.encode() for x in prefixes) if prefixes is not None else None
    starts = set()
    for needle in needles:
        size = len(needle)
        pos = block.find(needle)
        while pos >= 0:
            start_col = pos + size  # column 3 starts here; test both ends' language on the bytes
            if prefix_bytes is None or (
                block.startswith(prefix_bytes, start_col)
                and block.startswith(prefix_bytes, block.index(b"\t", start_col) + 1)
            ):
                starts.add(block.rfind(b"\n", 0, pos) + 1)
            pos = block.find(needle, start_col)
    counted, number = 0, first - 1
    for start in sorted(starts):
        number += block.count(b"\n", counted, start)
        counted = start
        end = block.index(b"\n", start)
        try:
            cols = block[start:end].decode("utf-8").split("\t")
        except UnicodeDecodeError as exc:
            bad.handle(IngestError(f"{where}, line {number + 1}: not UTF-8 text: {exc.reason}"))
            continue
        if cols[1] not in relations:
            continue
        if prefixes is not None and not (cols[2].startswith(prefixes) and cols[3].startswith(prefixes)):
            continue
        try:
            assertion = from_dump_columns(cols, f"{where}, line {number + 1}")
        except IngestError as exc:
            bad.handle(exc)
            continue
        yield number + 1, assertion


def count_matching(
    path: str | Path, relations: frozenset[str] | None, languages: frozenset[str] | None
) -> tuple[int, int]:
    """(lines, matching rows) without writing anything: the filter benchmark's loop."""
    lines = kept = 0
    for lines, a in scan_dump(path, relations, languages):
        if a is not None:
            kept += 1
    return lines, kept


@dataclass
class DumpRunResult:
    job_id: str
    lines: int
    rows_kept: int
    new_assertions: int
    batches: int
    done: bool
    resumed_at: int
    bad_lines: int = 0  # lines skipped with --skip-bad-lines in this run
    bad_messages: list[str] = field(default_factory=list)  # the first REPORTED_BAD_LINES of them


def job_id_for(path: str | Path, relations: frozenset[str] | None, languages: frozenset[str] | None) -> str:
    p = Path(path).resolve()
    size = p.stat().st_size if p.exists() else 0
    rel = ",".join(sorted(relations)) if relations is not None else "*"
    lang = ",".join(sorted(languages)) if languages is not None else "*"
    return f"dump {p} size={size} rel={rel} lang={lang}"


def ingest_dump(
    store: GraphStore,
    path: str | Path,
    relations: frozenset[str] | None = frozenset({"/r/AtLocation"}),
    languages: frozenset[str] | None = frozenset({"en"}),
    batch_size: int = DEFAULT_BATCH,
    restart: bool = False,
    progress: bool = False,
    stop_after_batches: int | None = None,
    skip_bad_lines: bool = False,
) -> DumpRunResult:
    """Load the matching rows of a dump into `store`, continuing an interrupted run.

    A line that cannot be read stops the job (nothing after the last commit is written) unless
    `skip_bad_lines`: then it is counted, its message (file and line) kept, and the job goes on.
    """
    if batch_size < 1:
        raise IngestError(f"batch_size: expected a positive integer, got {batch_size}")
    p = Path(path)
    if not p.is_file():
        raise IngestError(f"{p}: no such file")
    if p.stat().st_size == 0:
        raise IngestError(f"{p}: empty file (0 bytes); expected a ConceptNet assertions dump")
    bad = BadLines(skip=skip_bad_lines)
    job_id = job_id_for(p, relations, languages)
    checkpoint = None if restart else read_checkpoint(store, job_id)
    stats = dict(checkpoint["stats"]) if checkpoint else {"lines": 0, "rows_kept": 0, "new": 0}
    if checkpoint and checkpoint["done"]:
        return DumpRunResult(job_id, 0, 0, 0, 0, True, int(checkpoint["cursor"] or 0))
    skip = int(checkpoint["cursor"]) if checkpoint else 0
    origin = f"dump {p.name}"
    bar = None
    if progress:
        from tqdm.auto import tqdm  # a text bar in a terminal, a widget in a notebook

        bar = tqdm(desc=p.name, unit=" lines", unit_scale=True, initial=skip)
    batch: dict[str, Assertion] = {}
    line = skip
    kept = new = batches = 0
    last_commit = skip
    rows_in_batch = 0

    def commit(done: bool) -> None:
        nonlocal new, batches, last_commit, rows_in_batch
        stats.update(lines=line, rows_kept=stats["rows_kept"] + rows_in_batch)
        created = commit_batch(store, job_id, "dump", origin, batch, line, done, stats)
        stats["new"] += created
        new += created
        batches += 1
        batch.clear()
        rows_in_batch = 0
        if bar is not None:
            bar.update(line - last_commit)
            bar.set_postfix(kept=stats["rows_kept"], new=stats["new"])
        last_commit = line

    try:
        for line, a in scan_dump(p, relations, languages, skip, CHECKPOINT_LINES, bad):
            if a is not None:
                kept += 1
                rows_in_batch += 1
                merge_into(batch, a)
                if len(batch) >= batch_size:
                    commit(False)
                    if stop_after_batches is not None and batches >= stop_after_batches:
                        return DumpRunResult(
                            job_id, line - skip, kept, new, batches, False, skip, bad.count, bad.messages
                        )
            elif line - last_commit >= CHECKPOINT_LINES:
                commit(False)
        if line == 0:
            raise IngestError(f"{p}: no lines; expected a ConceptNet assertions dump (5 tab-separated columns a line)")
        commit(True)
    finally:
        if bar is not None:
            bar.close()
    return DumpRunResult(job_id, line - skip, kept, new, batches, True, skip, bad.count, bad.messages)


def add_dump_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="conceptnet-assertions-*.csv.gz (or a plain .csv in the same format)")
    parser.add_argument("--rel", action="append", default=None,
                        help="relation URI to keep (repeatable; default /r/AtLocation; 'all' for every relation)")
    parser.add_argument("--language", action="append", default=None,
                        help="language both ends must have (repeatable; default en; 'all' for any)")
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH, help=f"assertions per commit (default {DEFAULT_BATCH})"
    )
    parser.add_argument("--restart", action="store_true", help="read again from the first line")
    parser.add_argument("--skip-bad-lines", action="store_true",
                        help="skip a line that cannot be read (counted, reported with file and line) "
                        "instead of stopping")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (of lines read; drawn only on a terminal, or in Jupyter)")


def run_dump_command(args: argparse.Namespace) -> int:
    rels = args.rel or ["/r/AtLocation"]
    langs = args.language or ["en"]
    relations = None if "all" in rels else frozenset(rels)
    languages = None if "all" in langs else frozenset(langs)
    store = open_store(args.store, "w")
    try:
        r = ingest_dump(store, args.file, relations, languages, args.batch_size, args.restart, not args.no_progress,
                        skip_bad_lines=getattr(args, "skip_bad_lines", False))
    finally:
        store.close()
    for message in r.bad_messages:
        print(f"skipped: {message}", file=sys.stderr)
    if r.bad_lines > len(r.bad_messages):
        print(f"skipped: ... and {r.bad_lines - len(r.bad_messages)} more bad lines", file=sys.stderr)
    if r.done and r.lines == 0 and r.batches == 0:
        print(f"{r.job_id}: already complete ({r.resumed_at} lines); --restart reads it again")
    else:
        resumed = f"resumed at line {r.resumed_at}, " if r.resumed_at else ""
        print(f"{r.job_id}: {resumed}{'complete' if r.done else 'stopped'}")
    skipped = f", {r.bad_lines} bad lines skipped" if r.bad_lines else ""
    print(f"summary: {r.lines} lines read, {r.rows_kept} rows kept, {r.new_assertions} new assertions, "
          f"{r.batches} batches{skipped}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest.conceptnet_dump", description=__doc__.split("\n")[0])
    parser.add_argument("--store", default=os.environ.get("GRAPHTASKS_STORE"))
    add_dump_arguments(parser)
    args = parser.parse_args(argv)
    args.no_progress = args.no_progress or not sys.stderr.isatty()  # a bar only on a terminal
    return run_dump_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
