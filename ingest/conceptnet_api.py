"""Ingest from the ConceptNet REST API (`/query?rel=...&start=...`), page by page.

The public API is often down (502 for long stretches), rate-limited (429) and sometimes
answers with truncated JSON, so every one of those is a normal event: retried with
exponential backoff and seeded jitter, then a clear IngestError once the retry budget is
spent. Each page is committed together with the job's checkpoint (the next page URL), so
running the same command again continues after the last committed page and adds nothing
twice. Run `python -m ingest.conceptnet_api --help` or `graphtasks ingest api --help`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import requests
import urllib3

from graphstore import GraphStore, open_store

from .conceptnet import Assertion, IngestError, commit_batch, from_jsonld, matches, merge_into, read_checkpoint

DEFAULT_BASE_URL = "http://api.conceptnet.io"
MAX_PAGE_SIZE = 1000
READ_CHUNK = 1 << 16  # bytes asked of the socket at once; read1 returns whatever has arrived


@dataclass
class RetryPolicy:
    """How hard to try one request: attempts, exponential backoff with jitter, timeouts."""

    max_attempts: int = 6
    backoff_base: float = 0.5  # seconds before the 2nd attempt; doubles each time
    backoff_max: float = 30.0
    timeout: float = 20.0  # per request: connect, each read, and the whole answer
    seed: int = 0  # jitter comes from a seeded generator: runs are reproducible


@dataclass
class ApiClient:
    """GET JSON from the API with retries and a client-side rate limit (requests per second)."""

    base_url: str = DEFAULT_BASE_URL
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    rate_limit: float = 1.6  # requests/s: the public API allows 600/min and 6000/hour; <= 0 disables
    sleep: Callable[[float], None] = time.sleep
    session: requests.Session = field(default_factory=requests.Session)
    attempts_made: int = 0
    retries_made: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.retry.seed)
        self._last_request = 0.0

    def _throttle(self) -> None:
        if self.rate_limit > 0:
            wait = self._last_request + 1.0 / self.rate_limit - time.monotonic()
            if wait > 0:
                self.sleep(wait)
        self._last_request = time.monotonic()

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based): full jitter."""
        ceiling = min(self.retry.backoff_max, self.retry.backoff_base * 2 ** (attempt - 1))
        delay = ceiling * (0.5 + 0.5 * self._rng.random())
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.retry.backoff_max))
        return delay

    def absolute(self, url: str) -> str:
        """`url` as fetched: absolute, or relative to base_url."""
        if url.startswith(("http://", "https://")):
            return url
        return urljoin(self.base_url.rstrip("/") + "/", url.lstrip("/"))

    def get_json(self, url: str) -> dict[str, Any]:
        """The decoded JSON object at `url` (absolute, or relative to base_url)."""
        full = self.absolute(url)
        last = "no attempt made"
        for attempt in range(1, self.retry.max_attempts + 1):
            self._throttle()
            self.attempts_made += 1
            retry_after = None
            deadline = time.monotonic() + self.retry.timeout
            try:
                resp = self.session.get(
                    full, timeout=self.retry.timeout, headers={"Accept": "application/json"}, stream=True
                )
                with resp:
                    body = _read_body(resp, deadline, self.retry.timeout)
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                    requests.exceptions.ContentDecodingError) as exc:  # includes a body cut short or too slow
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status_code == 429 or resp.status_code >= 500:
                    last = f"HTTP {resp.status_code} {resp.reason}"
                    retry_after = _retry_after(resp.headers.get("Retry-After"))
                elif resp.status_code != 200:
                    text = body[:200].decode("utf-8", errors="replace")
                    raise IngestError(f"{full}: HTTP {resp.status_code} {resp.reason}: {text!r} (not retried)")
                else:
                    try:
                        data = json.loads(body)
                    except ValueError as exc:  # truncated or broken JSON: the server died mid-answer
                        last = f"invalid JSON ({len(body)} bytes): {exc}"
                    else:
                        if not isinstance(data, dict) or not isinstance(data.get("edges"), list):
                            raise IngestError(f"{full}: response has no 'edges' list; is this a ConceptNet /query URL?")
                        return data
            if attempt < self.retry.max_attempts:
                self.retries_made += 1
                self.sleep(self.backoff(attempt, retry_after))
        raise IngestError(
            f"{full}: giving up after {self.retry.max_attempts} attempts; last error: {last}. "
            "Progress up to the previous page is committed: run the same command again to resume, "
            "or load the dump (`graphtasks ingest dump`) or the bundled snapshot (`graphtasks ingest snapshot`)."
        )


def _read_body(resp: requests.Response, deadline: float, timeout: float) -> bytes:
    """The whole body, or requests.Timeout once `deadline` passes.

    Why: requests' timeout bounds each socket read, so a server sending a byte every so often
    holds a request forever; reading whatever has arrived (read1) lets the total time be checked.
    urllib3's errors are raised as the requests errors a non-streamed get would raise.
    """
    parts: list[bytes] = []
    while True:
        chunk = _read_some(resp)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        if time.monotonic() > deadline:
            raise requests.Timeout(
                f"the answer took longer than {timeout:g} s in total ({sum(map(len, parts))} bytes so far)"
            )


def _read_some(resp: requests.Response) -> bytes:
    """What has arrived of the body (b"" at its end), with urllib3's errors as requests' errors."""
    try:
        return resp.raw.read1(READ_CHUNK, decode_content=True)
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.ConnectionError(exc) from None
    except urllib3.exceptions.DecodeError as exc:
        raise requests.exceptions.ContentDecodingError(exc) from None
    except (urllib3.exceptions.ProtocolError, urllib3.exceptions.SSLError, OSError) as exc:
        raise requests.exceptions.ChunkedEncodingError(exc) from None


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def query_path(rel: str | None = None, start: str | None = None, end: str | None = None, node: str | None = None,
               page_size: int = MAX_PAGE_SIZE) -> str:
    """The first page's relative URL; the job id is built from it, so it is canonical."""
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise IngestError(f"page_size: expected 1..{MAX_PAGE_SIZE} (the API's maximum), got {page_size}")
    params = {k: v for k, v in (("rel", rel), ("start", start), ("end", end), ("node", node)) if v}
    if not params:
        raise IngestError("give at least one of rel, start, end, node: the API cannot list everything")
    for k, v in params.items():
        prefix = "/r/" if k == "rel" else "/c/"
        if not v.startswith(prefix):
            raise IngestError(f"{k}: expected a URI starting with {prefix!r}, got {v!r}")
    return "/query?" + urlencode(sorted(params.items())) + f"&offset=0&limit={page_size}"


@dataclass
class ApiRunResult:
    job_id: str
    pages: int
    edges_seen: int
    edges_kept: int
    new_assertions: int
    retries: int
    done: bool
    resumed: bool


def ingest_api(
    store: GraphStore,
    rel: str | None = "/r/AtLocation",
    start: str | None = None,
    end: str | None = None,
    node: str | None = None,
    languages: tuple[str, ...] | None = ("en",),
    page_size: int = MAX_PAGE_SIZE,
    client: ApiClient | None = None,
    restart: bool = False,
    max_pages: int | None = None,
    progress: bool = False,
    allow_other_hosts: bool = False,
) -> ApiRunResult:
    """Fetch one query to its last page into `store`; resumes a job that stopped midway.

    A `view.nextPage` that leads back to a page of this run, or (unless `allow_other_hosts`)
    to another host than `client.base_url`'s, stops the job with an IngestError.
    """
    client = client or ApiClient()
    first = query_path(rel, start, end, node, page_size)
    job_id = f"api {client.base_url.rstrip('/')}{first}"
    checkpoint = None if restart else read_checkpoint(store, job_id)
    stats = dict(checkpoint["stats"]) if checkpoint else {"pages": 0, "edges_seen": 0, "edges_kept": 0, "new": 0}
    if checkpoint and checkpoint["done"]:
        return ApiRunResult(job_id, 0, 0, 0, 0, 0, True, True)
    url = checkpoint["cursor"] if checkpoint else first
    resumed = checkpoint is not None
    bar = _progress_bar(progress, job_id)
    pages = seen = kept = new = 0
    relations = {rel} if rel else None
    home = _origin(client.absolute(first))
    fetched: set[tuple] = set()
    try:
        while url is not None:
            if max_pages is not None and pages >= max_pages:
                break
            fetched.add(_canonical(client.absolute(url)))
            data = client.get_json(url)
            batch: dict[str, Assertion] = {}
            for i, edge in enumerate(data["edges"]):
                a = from_jsonld(edge, f"{url} edge {i}")
                seen += 1
                if matches(a, relations, languages):
                    kept += 1
                    merge_into(batch, a)
            view = data.get("view") or {}
            next_url = view.get("nextPage") if isinstance(view, dict) else None
            if next_url is not None and not isinstance(next_url, str):
                raise IngestError(f"{url}: field view.nextPage must be a URL string, got {next_url!r}")
            if next_url is not None:
                _check_next(url, next_url, client.absolute(next_url), fetched, home, allow_other_hosts)
            pages += 1
            stats = {"pages": stats["pages"] + 1, "edges_seen": stats["edges_seen"] + len(data["edges"]),
                     "edges_kept": stats["edges_kept"] + len(batch), "new": stats["new"]}
            created = commit_batch(
                store, job_id, "api", f"api {client.base_url}", batch, next_url, next_url is None, stats
            )
            stats["new"] += created
            new += created
            url = next_url
            if bar is not None:
                bar.update(1)
                bar.set_postfix(edges=stats["edges_kept"], new=stats["new"], retries=client.retries_made)
    finally:
        if bar is not None:
            bar.close()
    return ApiRunResult(job_id, pages, seen, kept, new, client.retries_made, url is None, resumed)


def _canonical(url: str) -> tuple:
    """A URL as compared for cycles: escaping and parameter order do not matter."""
    parts = urlsplit(url)
    return _origin(url), parts.path, tuple(sorted(parse_qsl(parts.query, keep_blank_values=True)))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _check_next(
    url: str, next_url: str, absolute: str, fetched: set[tuple], home: tuple, allow_other_hosts: bool
) -> None:
    """Stop a page chain that loops or wanders off to another server."""
    if _canonical(absolute) in fetched:
        what = "the same page" if next_url == url else "a page fetched earlier in this run"
        raise IngestError(f"{url}: field view.nextPage {next_url!r} points at {what}; stopping instead of looping")
    if not allow_other_hosts and _origin(absolute) != home:
        scheme, host, port = home
        raise IngestError(
            f"{url}: field view.nextPage {next_url!r} leads to another host than {scheme}://{host}:{port}; "
            "not followed (--allow-other-hosts follows it)"
        )


def _progress_bar(enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm  # a text bar in a terminal, a widget in a notebook

    return tqdm(desc=desc[:60], unit="page")


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (the same options as `graphtasks ingest api`)."""
    parser = argparse.ArgumentParser(prog="python -m ingest.conceptnet_api", description=__doc__.split("\n")[0])
    parser.add_argument("--store", default=None)
    add_api_arguments(parser)
    args = parser.parse_args(argv)
    args.no_progress = args.no_progress or not sys.stderr.isatty()  # a bar only on a terminal
    return run_api_command(args)


def add_api_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL, help=f"API root (default {DEFAULT_BASE_URL})")
    parser.add_argument("--rel", default="/r/AtLocation", help="relation URI (default /r/AtLocation); '' for any")
    parser.add_argument(
        "--start", action="append", default=[], help="start concept URI, e.g. /c/en/laptop (repeatable)"
    )
    parser.add_argument("--start-file", help="file with one start term per line (e.g. MS-COCO categories)")
    parser.add_argument("--end", default=None, help="end concept URI")
    parser.add_argument("--node", default=None, help="concept URI at either end")
    parser.add_argument("--language", default="en", help="keep edges with both ends in this language ('' for any)")
    parser.add_argument("--page-size", type=int, default=MAX_PAGE_SIZE, help="edges per page, 1..1000 (default 1000)")
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds per request, in total: connecting, every read and the whole answer (default 20)")
    parser.add_argument("--retries", type=int, default=6, help="attempts per page before giving up (default 6)")
    parser.add_argument("--backoff", type=float, default=0.5, help="first backoff in seconds, doubling (default 0.5)")
    parser.add_argument("--backoff-max", type=float, default=30.0, help="longest backoff in seconds (default 30)")
    parser.add_argument("--rate-limit", type=float, default=1.6,
                        help="requests per second, 0 = unlimited (default 1.6: under the API's 6000/hour)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the backoff jitter")
    parser.add_argument("--restart", action="store_true", help="fetch again from the first page")
    parser.add_argument("--allow-other-hosts", action="store_true",
                        help="follow a view.nextPage link to another host than --base-url's (default: stop)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (of pages fetched; drawn only on a terminal, or in Jupyter)")


def _starts(args: argparse.Namespace) -> list[str | None]:
    starts = list(args.start)
    if args.start_file:
        try:
            lines = open(args.start_file, encoding="utf-8").read().splitlines()
        except OSError as exc:
            raise IngestError(f"{args.start_file}: cannot read: {exc.strerror}") from None
        lang = args.language or "en"
        for number, line in enumerate(lines, 1):
            term = line.strip()
            if term and not term.startswith("#"):
                starts.append(term if term.startswith("/c/") else f"/c/{lang}/{term.replace(' ', '_').lower()}")
    return starts or [None]


def run_api_command(args: argparse.Namespace) -> int:
    client = ApiClient(
        args.base_url,
        RetryPolicy(args.retries, args.backoff, args.backoff_max, args.timeout, args.seed),
        rate_limit=args.rate_limit,
    )
    languages = (args.language,) if args.language else None
    store = open_store(args.store, "w")
    totals = {"jobs": 0, "pages": 0, "kept": 0, "new": 0}
    try:
        for start in _starts(args):
            r = ingest_api(store, args.rel or None, start, args.end, args.node, languages, args.page_size, client,
                           args.restart, progress=not args.no_progress,
                           allow_other_hosts=getattr(args, "allow_other_hosts", False))
            totals["jobs"] += 1
            totals["pages"] += r.pages
            totals["kept"] += r.edges_kept
            totals["new"] += r.new_assertions
            state = (
                "already complete"
                if r.done and r.resumed and r.pages == 0
                else ("resumed, " if r.resumed else "") + "complete"
            )
            print(f"{r.job_id}: {state}; {r.pages} pages, {r.edges_kept} edges kept, {r.new_assertions} new assertions")
    finally:
        store.close()
    print(f"summary: {totals['jobs']} queries, {totals['pages']} pages, {totals['kept']} edges kept, "
          f"{totals['new']} new assertions, {client.retries_made} retries, {client.attempts_made} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
