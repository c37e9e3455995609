"""The Bolt store against the embedded store: operations per second, measured in the same run.

Each row runs on ArcadeDB over Bolt (started in a process of its own on 127.0.0.1, as the
store tests start it: `tests/stores/arcadedb_process.py`; or the server of
`$GRAPHTASKS_BENCH_BOLT`, with GRAPHTASKS_NEO4J_USER / _PASSWORD / _DATABASE) and on an
embedded LadybugDB store on disk, and the table gives the ratio Bolt / embedded:

- reads: get + compile four_rooms small (`store.get` + `compile_grid`), and a Cypher read of
  a recorded sweep's Run nodes; operations per second over `--read-seconds`;
- version-checked writes: read a small task, add one to its reward and write it back checked
  against the hash read (a ConflictError: read again), by one process holding the store, then
  by 1 and 8 writer processes for `--writer-seconds` from a common start (an embedded store has
  one writer at a time: its writer processes open it for each increment); accepted increments
  per second, every one checked applied;
- a recorded sweep: `run_and_record` of a Q sweep on four_rooms small (`--runs` x `--episodes`,
  one worker), the way `graphtasks experiment run` records it; runs per second, then every
  episode read back (`recorded_episodes`), counted, and compared between the two stores.

About 2 minutes on a 2-core machine; `--quick` (a few seconds per row) checks the script.

    python benchmarks/bolt_bench.py [--quick] [--runs 50] [--episodes 20] 2>/dev/null
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# light imports only: every writer process imports this module again (spawn)
from graphstore import ConflictError, GraphStore, TaskGraph, open_store  # noqa: E402
from graphstore.neo4j_store import DATABASE_ENV_VAR, PASSWORD_ENV_VAR, USER_ENV_VAR, Neo4jStore  # noqa: E402

TASK = "neuronav/grid/four_rooms/small"
SERVER_SCRIPT = Path(__file__).resolve().parents[1] / "tests" / "stores" / "arcadedb_process.py"
Target = dict[str, Any]  # {"name": "bolt" | "embedded", "location": str, and for Bolt user/password/database}
TALLY = "bench/tally"


class _Statements(logging.Handler):
    """Counts the Cypher statements the driver sends (its debug log's "C: RUN" lines)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += " C: RUN " in record.getMessage()


def statements(fn) -> int:
    counter, logger = _Statements(), logging.getLogger("neo4j")
    level = logger.level
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    try:
        fn()
    finally:
        logger.removeHandler(counter)
        logger.setLevel(level)
    return counter.count


def tally_task(value: int) -> TaskGraph:
    """A 3-state chain whose one reward holds `value`: the counter the checked writers increment."""
    g = TaskGraph(TALLY, "neuronav/graph", params={"n": 3}, reward_on="arrival", n_states=3, n_actions=1)
    for i in range(3):
        g.add_node(f"s{i}", "State", index=i, name=str(i), terminal=i == 2, skip=False)
    for i in range(2):
        g.add_edge(f"s{i}", f"s{i + 1}", "MOVE", action=0, p=1.0)
    g.add_node("r", "Reward", kind="fixed", values=[float(value)])
    g.add_edge("s2", "r", "HAS_REWARD")
    g.add_edge("", "s0", "START")
    return g


def tally_value(graph: TaskGraph) -> int:
    (reward,) = [props for local, props in graph.nodes() if graph.label(local) == "Reward"]
    return int(reward["values"][0])


@contextmanager
def arcadedb(folder: str) -> Iterator[Target]:
    """ArcadeDB with its Bolt plugin in a process of its own (the store tests' script), stopped on exit;
    or the server of $GRAPHTASKS_BENCH_BOLT."""
    uri = os.environ.get("GRAPHTASKS_BENCH_BOLT")
    if uri:
        probe = Neo4jStore(uri)
        try:
            yield {"name": "bolt", "location": uri, "user": probe.user, "password": probe._password,
                   "database": probe.database, "server": probe.location}
        finally:
            probe.close()
        return
    if not SERVER_SCRIPT.is_file():
        raise SystemExit(f"bolt_bench: {SERVER_SCRIPT} not found: run from a clone, or set GRAPHTASKS_BENCH_BOLT")
    password, database = "bench-" + os.urandom(6).hex(), "bench"
    with open(Path(folder) / "server.err", "wb") as err:
        process = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), folder, password, database],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
    assert process.stdout is not None and process.stdin is not None
    try:
        line = process.stdout.readline()
        ports = json.loads(line) if line else {"error": "the server process exited"}
        if "error" in ports:
            raise SystemExit(f"bolt_bench: {ports['error']}; see {Path(folder) / 'server.err'}")
        uri = f"bolt://127.0.0.1:{ports['bolt_port']}"
        yield {"name": "bolt", "location": uri, "user": "root", "password": password, "database": database,
               "server": f"ArcadeDB (arcadedb-embedded) on {uri}"}
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def open_target(target: Target) -> GraphStore:
    if target["name"] == "bolt":
        return Neo4jStore(target["location"], user=target["user"], password=target["password"],
                          database=target["database"])
    return open_store(target["location"])


def rate(fn: Callable[[], Any], seconds: float) -> float:
    """Calls per second of `fn` over about `seconds` (after one call not counted)."""
    fn()
    count, start = 0, time.perf_counter()
    while (took := time.perf_counter() - start) < seconds or count < 3:
        fn()
        count += 1
    return count / took


def bench_reads(store: GraphStore, experiment: str, seconds: float) -> dict[str, float]:
    """Get + compile four_rooms small; a Cypher read of the experiment's Run nodes."""
    from graphtasks.experiments.ids import experiment_uid
    from gym_bridge.grid.compiled import compile_grid

    uid = experiment_uid(experiment)
    query = "MATCH (r:Run) WHERE r.owner = $uid RETURN r.index, r.status, r.seed, r.agent ORDER BY r.index"
    runs = len(store.cypher(query, {"uid": uid}).rows)
    return {
        "get_compile_per_s": rate(lambda: compile_grid(store.get(TASK)), seconds),
        "run_records_per_s": rate(lambda: store.cypher(query, {"uid": uid}), seconds),
        "run_records_read": runs,
    }


def increment(store: GraphStore) -> bool:
    """Read the tally and write it plus one, checked against the hash read; False if refused."""
    graph = store.get(TALLY)
    try:
        store.put(tally_task(tally_value(graph) + 1), expected_hash=graph.task["content_hash"])
    except ConflictError:
        return False
    return True


def checked_writer(target: Target, seconds: float, ready: Any, results: Any) -> None:
    """One writer process: checked increments of the tally for `seconds` from the common start.
    Over Bolt it keeps one connection; an embedded store has one writer at a time, so the
    writer opens it (taking its lock) for each increment and closes it again."""
    accepted = refused = 0
    try:
        if target["name"] == "bolt":
            store = open_target(target)
            store.get(TALLY)  # connected and warm before the clock starts
            step = lambda: increment(store)  # noqa: E731
        else:
            store = None

            def step() -> bool:
                with open_target(target) as opened:
                    return increment(opened)

            with open_target(target) as opened:  # the store's modules loaded before the clock starts
                opened.get(TALLY)
        ready.wait(timeout=600)
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                if step():
                    accepted += 1
                else:
                    refused += 1
        finally:
            if store is not None:
                store.close()
    except BaseException as exc:
        ready.abort()  # the others stop waiting for this one
        results.put(f"{type(exc).__name__}: {exc}")
        raise
    results.put((accepted, refused))


def bench_writers(target: Target, seconds: float, counts: tuple[int, ...] = (1, 8)) -> dict[str, Any]:
    """Checked increments per second by 1 and 8 writer processes on one task of the store."""

    out: dict[str, Any] = {}
    with open_target(target) as store:
        store.put(tally_task(0))
        out["held_per_s"] = rate(lambda: increment(store), seconds)  # one process, the store held open
        if target["name"] == "bolt":
            graph = store.get(TALLY)
            out["statements_per_read"] = statements(lambda: store.get(TALLY))
            out["statements_per_checked_write"] = statements(
                lambda: store.put(tally_task(tally_value(graph) + 1), expected_hash=graph.task["content_hash"]))
        before = tally_value(store.get(TALLY))
    context = mp.get_context("spawn")
    for n in counts:
        ready, results = context.Barrier(n), context.Queue()
        workers = [context.Process(target=checked_writer, args=(target, seconds, ready, results)) for _ in range(n)]
        for worker in workers:
            worker.start()
        done = [results.get(timeout=seconds + 900) for _ in workers]
        for worker in workers:
            worker.join()
        failed = [d for d in done if isinstance(d, str)]
        assert not failed, f"{target['name']}, {n} writers: {failed[0]}"
        accepted = sum(a for a, _ in done)
        with open_target(target) as store:
            after = tally_value(store.get(TALLY))
        applied = after - before
        assert applied == accepted, f"{target['name']}, {n} writers: {accepted} accepted, {applied} applied"
        before = after
        out[f"writers_{n}"] = {"increments_per_s": accepted / seconds, "refused": sum(r for _, r in done)}
    with open_target(target) as store:
        store.delete(TALLY)
    return out


def bench_sweep(target: Target, runs: int, episodes: int) -> dict[str, Any]:
    """The recorded sweep and its episodes read back; the location the sweep is given is a
    URI with the credentials for Bolt (the database in $GRAPHTASKS_NEO4J_DATABASE)."""
    from benchmarks.batched_sweep_bench import spec_of
    from graphtasks.experiments.api import run_and_record
    from graphtasks.experiments.records import recorded_episodes

    spec, text = spec_of("q", runs, episodes, TASK)
    location = target["location"]
    saved = {var: os.environ.get(var) for var in (USER_ENV_VAR, PASSWORD_ENV_VAR, DATABASE_ENV_VAR)}
    if target["name"] == "bolt":
        os.environ.update({USER_ENV_VAR: target["user"], PASSWORD_ENV_VAR: target["password"]})
        if target["database"]:
            os.environ[DATABASE_ENV_VAR] = target["database"]
    try:
        start = time.perf_counter()
        report = run_and_record(spec, text, location, workers=1)
        took = time.perf_counter() - start
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    assert not report.failures, f"{target['name']}: {report.failures}"
    with open_target(target) as store:
        start = time.perf_counter()
        read = recorded_episodes(store, spec.name)
        read_s = time.perf_counter() - start
    assert len(read) == runs * episodes, f"{target['name']}: {len(read)} episodes read back of {runs * episodes}"
    played = sorted((r["run"], r["phase_index"], r["episode"], r["return"], r["length"], r["seed"]) for r in read)
    return {"name": spec.name, "runs": runs, "episodes": episodes, "seconds": took, "runs_per_s": runs / took,
            "episodes_read_s": read_s, "episodes_read": len(read),
            "digest": hashlib.sha256(repr(played).encode()).hexdigest()[:16]}


def bench(target: Target, sweep: tuple[int, int], read_seconds: float, writer_seconds: float) -> dict[str, Any]:
    """Every row on one store: the sweep first (the reads read its Run nodes), then reads, then writers."""
    import tasks

    start = time.perf_counter()

    def done(what: str) -> None:
        print(f"  {target['name']}: {what} ({time.perf_counter() - start:.0f} s)", flush=True)

    with open_target(target) as store:
        store.put(tasks.build(TASK))
    recorded = bench_sweep(target, *sweep)
    done(f"sweep {recorded['seconds']:.1f} s")
    with open_target(target) as store:
        reads = bench_reads(store, recorded["name"], read_seconds)
    done("reads")
    writers = bench_writers(target, writer_seconds)
    done("writers")
    return {"sweep": recorded, "reads": reads, "writers": writers}


ROWS = [  # (label, how to read it from a bench() result)
    ("get + compile four_rooms small /s", lambda r: r["reads"]["get_compile_per_s"]),
    ("Cypher read of a sweep's Run nodes /s", lambda r: r["reads"]["run_records_per_s"]),
    ("checked writes /s, one process holding the store", lambda r: r["writers"]["held_per_s"]),
    ("checked writes /s, 1 writer process", lambda r: r["writers"]["writers_1"]["increments_per_s"]),
    ("checked writes /s, 8 writer processes", lambda r: r["writers"]["writers_8"]["increments_per_s"]),
    ("recorded sweep, runs /s", lambda r: r["sweep"]["runs_per_s"]),
    ("its episodes read back (recorded_episodes) /s",
     lambda r: r["sweep"]["episodes_read"] / r["sweep"]["episodes_read_s"]),
]


def table(bolt: dict[str, Any], embedded: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"case": label, "bolt": get(bolt), "embedded": get(embedded), "ratio": get(bolt) / get(embedded)}
            for label, get in ROWS]


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| case | Bolt (ArcadeDB) | embedded | Bolt / embedded |", "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['bolt']:,.1f} | {r['embedded']:,.1f} | {r['ratio']:.2f} |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, to check the script")
    parser.add_argument("--runs", type=int, default=0, help="runs of the recorded sweep (default 50)")
    parser.add_argument("--episodes", type=int, default=0, help="episodes of every run (default 20)")
    parser.add_argument("--read-seconds", type=float, default=0, help="seconds per read rate (default 2)")
    parser.add_argument("--writer-seconds", type=float, default=0, help="seconds per writer count (default 8)")
    args = parser.parse_args(argv)
    runs, episodes, read_s, write_s = (5, 4, 0.3, 1.0) if args.quick else (50, 20, 2.0, 8.0)
    sweep = (args.runs or runs, args.episodes or episodes)
    read_s, write_s = args.read_seconds or read_s, args.writer_seconds or write_s
    started = time.perf_counter()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        with arcadedb(folder) as server:
            print(f"Bolt: {server['server']}; embedded: LadybugDB on disk; load average {load:.1f} "
                  f"on {os.cpu_count()} cores", flush=True)
            bolt = bench(server, sweep, read_s, write_s)
        embedded = bench({"name": "embedded", "location": str(Path(folder) / "embedded.lbug")}, sweep, read_s, write_s)
    from benchmarks.common import save

    same = bolt["sweep"]["digest"] == embedded["sweep"]["digest"]
    assert same, f"the sweep's episodes differ: Bolt {bolt['sweep']['digest']}, embedded {embedded['sweep']['digest']}"
    rows = table(bolt, embedded)
    print(f"\nrecorded sweep: Q on four_rooms small, {sweep[0]} runs x {sweep[1]} episodes, one worker "
          f"(every episode read back, the same on both stores); reads over {read_s:g} s; writers {write_s:g} s "
          "from a common start (an embedded writer process opens the store for each increment: one writer at a "
          "time holds it)")
    print(markdown(rows))
    writers = bolt["writers"]
    print(f"\nBolt: statements per read {writers['statements_per_read']}, per checked write "
          f"{writers['statements_per_checked_write']}; refused (read again): 8 writers "
          f"{writers['writers_8']['refused']} Bolt, {embedded['writers']['writers_8']['refused']} embedded")
    took = time.perf_counter() - started
    path = save("bolt", {"rows": rows, "bolt": bolt, "embedded": embedded, "load_average": load,
                         "load_average_after": os.getloadavg()[0], "seconds": took, "quick": args.quick})
    print(f"{took:.0f} s in all; load average at the end {os.getloadavg()[0]:.1f}; {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
