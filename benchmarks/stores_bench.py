"""Store benchmarks: the Bolt store and the RDF view.

1. Put a large grid task into the Bolt store and get + compile it back (first run on the
   fresh server and best of 3), and add one entity with the registry's `create`. The Bolt server is
   `GRAPHTASKS_BENCH_BOLT` (with GRAPHTASKS_NEO4J_USER / _PASSWORD / _DATABASE) if set,
   else an ArcadeDB server (`arcadedb-embedded`) started here on 127.0.0.1. Baseline: the
   same task put into / read from the embedded LadybugDB store in this run.
   Version-checked writers (issue 43): 1 and 8 processes each read a small task, add one to
   its reward and write it back checked against the hash read (a ConflictError: read again),
   for `--writer-seconds`; increments per second, statements per read and per write, and the
   8-writer rate as a ratio of the 1-writer rate in the same run.
2. SPARQL "rewards per task" over all built-in tasks on Oxigraph (oxrdflib); baseline:
   the same query on rdflib's default in-memory store, in this run.

Targets: put and compile-back each under 1 s; SPARQL under 50 ms on Oxigraph.

    python benchmarks/stores_bench.py [--size N]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tasks  # noqa: E402
from benchmarks.bolt_bench import TALLY, statements, tally_task, tally_value  # noqa: E402
from benchmarks.common import best_time, save  # noqa: E402
from graphstore import TaskGraph  # noqa: E402
from graphstore import rdf as R  # noqa: E402
from graphstore.ladybug_store import LadybugStore  # noqa: E402
from graphstore.neo4j_store import Neo4jStore  # noqa: E402
from gym_bridge import compile_task  # noqa: E402

REWARDS_PER_TASK = """
PREFIX gt: <https://graphtasks.dev/ns#>
SELECT ?task (COUNT(?r) AS ?rewards) (SUM(?v) AS ?first_values) WHERE {
  ?s a gt:State ; gt:task ?task ; gt:HAS_REWARD ?r .
  ?r gt:values/rdf:first ?v .
} GROUP BY ?task ORDER BY ?task
"""


def grid_task(size: int) -> TaskGraph:
    """An open size x size grid, 4 actions, wall bumps as self-loops, a reward in the far corner."""
    g = TaskGraph(f"bench/grid/{size}", "neuronav/graph", reward_on="arrival", n_states=size * size, n_actions=4)
    for r in range(size):
        for c in range(size):
            g.add_node(f"s{r * size + c}", "State", index=r * size + c, name=f"{r},{c}", terminal=False, skip=False)
    for r in range(size):
        for c in range(size):
            for action, (dr, dc) in enumerate(((-1, 0), (0, 1), (1, 0), (0, -1))):
                nr, nc = r + dr, c + dc
                if not (0 <= nr < size and 0 <= nc < size):
                    nr, nc = r, c
                g.add_edge(f"s{r * size + c}", f"s{nr * size + nc}", "MOVE", action=action, p=1.0)
    g.add_node("goal", "Reward", kind="fixed", values=[1.0])
    g.add_edge(f"s{size * size - 1}", "goal", "HAS_REWARD")
    g.add_edge("", "s0", "START")
    return g.seal()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bolt_store(folder: str):
    """(store, stop) for the configured Bolt server or a fresh local ArcadeDB."""
    uri = os.environ.get("GRAPHTASKS_BENCH_BOLT")
    if uri:
        return Neo4jStore(uri), lambda: None
    from arcadedb_embedded.server import ArcadeDBServer

    cwd, port, password = os.getcwd(), free_port(), "bench-" + os.urandom(6).hex()
    os.chdir(folder)  # the JVM logs under ./log
    try:
        server = ArcadeDBServer(root_path=folder, root_password=password, config={
            "host": "127.0.0.1", "http_port": free_port(),
            "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin", "bolt_port": port})
        server.start()
    finally:
        os.chdir(cwd)
    server.create_database("bench")
    return Neo4jStore(f"bolt://127.0.0.1:{port}", user="root", password=password, database="bench"), server.stop


def checked_writer(server: dict, seconds: float) -> tuple[int, int]:
    """One writer process: checked increments of the tally for `seconds`; (accepted, refused)."""
    from graphstore import ConflictError

    store = Neo4jStore(server["uri"], user=server["user"], password=server["password"], database=server["database"])
    accepted = refused = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            graph = store.get(TALLY)
            try:
                store.put(tally_task(tally_value(graph) + 1), expected_hash=graph.task["content_hash"])
                accepted += 1
            except ConflictError:
                refused += 1
    finally:
        store.close()
    return accepted, refused


def bench_checked_writers(bolt: Neo4jStore, seconds: float, counts: tuple[int, ...] = (1, 8)) -> dict:
    """Checked increments per second by 1 and 8 writer processes on one task of the Bolt server."""
    server = {"uri": bolt.uri, "user": bolt.user, "password": bolt._password, "database": bolt.database}
    bolt.put(tally_task(0))
    graph = bolt.get(TALLY)
    out: dict = {
        "seconds": seconds,
        "statements_per_read": statements(lambda: bolt.get(TALLY)),
        "statements_per_checked_write": statements(
            lambda: bolt.put(tally_task(tally_value(graph) + 1), expected_hash=graph.task["content_hash"])
        ),
    }
    for n in counts:
        before = tally_value(bolt.get(TALLY))
        with mp.get_context("spawn").Pool(n) as pool:
            results = pool.starmap(checked_writer, [(server, seconds)] * n)
        accepted = sum(a for a, _ in results)
        applied = tally_value(bolt.get(TALLY)) - before
        assert applied == accepted, f"{n} writers: {accepted} accepted, {applied} applied"
        out[f"writers_{n}"] = {"increments_per_s": accepted / seconds, "refused": sum(r for _, r in results)}
    bolt.delete(TALLY)
    out["ratio"] = out[f"writers_{counts[-1]}"]["increments_per_s"] / out[f"writers_{counts[0]}"]["increments_per_s"]
    return out


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def bench_bolt(
    sizes: list[int], repeats: int = 3, writer_seconds: float = 20.0
) -> tuple[list[dict], dict | None, dict]:
    """Per size: the first put on a fresh server (the JVM still compiling: 'cold') and the best
    of `repeats` puts of the task removed in between ('warm', a long-running server); the same
    for get + compile; one registry `create` (read, add a reward, write the new version)."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        bolt, stop = bolt_store(folder)
        try:
            bolt.put(grid_task(3))  # constraints and indexes are created on first write
            for size in sizes:
                graph = grid_task(size)
                embedded = LadybugStore(str(Path(folder) / f"embedded-{size}.lbug"))
                e_put, _ = timed(lambda: embedded.put(graph))
                e_get, back_e = timed(lambda: compile_task(embedded.get(graph.task_id)))
                puts, gets = [], []
                for _ in range(repeats):
                    bolt.delete(graph.task_id)
                    puts.append(timed(lambda: bolt.put(graph))[0])
                    gets.append(timed(lambda: compile_task(bolt.get(graph.task_id)))[0])
                b_again, changed = timed(lambda: bolt.put(graph))
                back_b = compile_task(bolt.get(graph.task_id))
                assert changed is False and (back_b.targets == back_e.targets).all()
                request = {"Reward": {"params": {"state": 1, "value": 5.0}, "group": "bench"}}
                b_create, _ = timed(lambda: tasks.create(bolt, graph.task_id, request))
                e_create, _ = timed(lambda: tasks.create(embedded, graph.task_id, request))
                bolt.delete(graph.task_id)
                embedded.close()
                rows.append({"size": size, "states": size * size, "edges": graph.graph.number_of_edges(),
                             "bolt_put_cold_s": puts[0], "bolt_put_s": min(puts), "bolt_put_unchanged_s": b_again,
                             "bolt_get_compile_cold_s": gets[0], "bolt_get_compile_s": min(gets),
                             "bolt_create_s": b_create, "embedded_put_s": e_put, "embedded_get_compile_s": e_get,
                             "embedded_create_s": e_create})
            four_rooms = bench_four_rooms(bolt, repeats) if tasks.is_builtin(FOUR_ROOMS) else None
            writers = bench_checked_writers(bolt, writer_seconds)
        finally:
            bolt.close()
            stop()
    return rows, four_rooms, writers


FOUR_ROOMS = "neuronav/grid/four_rooms/large"


def bench_four_rooms(bolt: Neo4jStore, repeats: int) -> dict:
    """The built-in large four_rooms grid itself: put, compile back (the grid's fixed queries,
    and whole get + compile), and a registry create of a key; first and best of `repeats`."""
    from gym_bridge.grid.compiled import compile_grid, compile_grid_from_store

    graph = tasks.build(FOUR_ROOMS)
    puts, queries, gets = [], [], []
    for _ in range(repeats):
        bolt.delete(FOUR_ROOMS)
        puts.append(timed(lambda: bolt.put(graph))[0])
        queries.append(timed(lambda: compile_grid_from_store(bolt, FOUR_ROOMS))[0])
        gets.append(timed(lambda: compile_grid(bolt.get(FOUR_ROOMS)))[0])
    free = next(p for _, p in graph.nodes("Cell") if not p["wall"])
    create, _ = timed(lambda: tasks.create(bolt, FOUR_ROOMS, {"Key": {"params": {"cell": [free["row"], free["col"]]}}}))
    bolt.delete(FOUR_ROOMS)
    return {"task": FOUR_ROOMS, "nodes": len(graph.graph), "edges": graph.graph.number_of_edges(),
            "put_cold_s": puts[0], "put_s": min(puts), "compile_queries_cold_s": queries[0],
            "compile_queries_s": min(queries), "get_compile_s": min(gets), "create_key_s": create}


def bench_sparql() -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        store = LadybugStore(str(Path(folder) / "s.lbug"))
        for task_id in tasks.builtin_ids():
            store.put(tasks.build(task_id))
        for name, backend in (("oxigraph", R.OXIGRAPH), ("rdflib_memory", "default")):
            build, graph = timed(lambda: R.store_to_rdf(store, rdf_store=backend))
            rows = R.sparql(graph, REWARDS_PER_TASK).rows
            out[name] = {"build_s": build, "query_s": best_time(lambda: R.sparql(graph, REWARDS_PER_TASK), 5),
                         "triples": len(graph), "rows": len(rows)}
        store.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, action="append", help="grid side (repeatable; default 17 and 100)")
    parser.add_argument("--writer-seconds", type=float, default=20.0, help="seconds of load per writer count")
    args = parser.parse_args()
    sizes = args.size or [17, 100]
    print("Bolt store: put a grid task (first / best of 3), put it again (unchanged), get + compile it back "
          "(first / best of 3), registry create of one reward; baseline embedded LadybugDB")
    print(f"{'grid':>8} {'states':>7} {'edges':>7} {'put 1st':>8} {'put best':>9} {'again':>7} {'get 1st':>8} "
          f"{'get best':>9} {'create':>7} {'emb put':>8} {'emb get':>8} {'emb create':>10} {'put ratio':>10}")
    bolt_rows, four_rooms, writers = bench_bolt(sizes, writer_seconds=args.writer_seconds)
    for r in bolt_rows:
        print(f"{r['size']:>4}x{r['size']:<3} {r['states']:>7} {r['edges']:>7} {r['bolt_put_cold_s']:>8.3f} "
              f"{r['bolt_put_s']:>9.3f} {r['bolt_put_unchanged_s']:>7.3f} {r['bolt_get_compile_cold_s']:>8.3f} "
              f"{r['bolt_get_compile_s']:>9.3f} {r['bolt_create_s']:>7.3f} {r['embedded_put_s']:>8.3f} "
              f"{r['embedded_get_compile_s']:>8.3f} {r['embedded_create_s']:>10.3f} "
              f"{r['bolt_put_s'] / r['embedded_put_s']:>10.1f}")
    if four_rooms:
        f = four_rooms
        print(
            f"\n{f['task']} ({f['nodes']} nodes, {f['edges']} edges): put first {f['put_cold_s']:.3f} s, best "
            f"{f['put_s']:.3f} s; compile back (grid queries) first {f['compile_queries_cold_s']:.3f} s, best "
            f"{f['compile_queries_s']:.3f} s; get + compile {f['get_compile_s']:.3f} s; "
            f"create a key {f['create_key_s']:.3f} s"
        )
    w1, w8 = writers["writers_1"], writers["writers_8"]
    print(
        f"\nversion-checked increments of one task, {writers['seconds']:.0f} s each: 1 writer "
        f"{w1['increments_per_s']:.1f}/s, 8 writer processes {w8['increments_per_s']:.1f}/s ({w8['refused']} refused, "
        f"read again), ratio 8/1 {writers['ratio']:.2f}; statements per read {writers['statements_per_read']}, "
        f"per checked write {writers['statements_per_checked_write']}"
    )
    sparql = bench_sparql()
    ox, mem = sparql["oxigraph"], sparql["rdflib_memory"]
    print(f"\nSPARQL rewards per task over {len(tasks.builtin_ids())} built-in tasks ({ox['triples']} triples, "
          f"{ox['rows']} rows)")
    print(f"  Oxigraph        query {ox['query_s'] * 1000:8.2f} ms   build {ox['build_s'] * 1000:8.1f} ms")
    print(f"  rdflib memory   query {mem['query_s'] * 1000:8.2f} ms   build {mem['build_s'] * 1000:8.1f} ms")
    print(f"  ratio rdflib/Oxigraph (query): {mem['query_s'] / ox['query_s']:.1f}x")
    ok = all(r["bolt_put_s"] < 1 and r["bolt_get_compile_s"] < 1 for r in bolt_rows if r["size"] <= 17)
    ok = ok and (four_rooms is None or (four_rooms["put_s"] < 1 and four_rooms["compile_queries_s"] < 1))
    ok = ok and ox["query_s"] < 0.05
    path = save(
        "stores",
        {"bolt": bolt_rows, "four_rooms": four_rooms, "checked_writers": writers, "sparql": sparql, "targets_met": ok},
    )
    cold = all(r["bolt_put_cold_s"] < 1 and r["bolt_get_compile_cold_s"] < 1 for r in bolt_rows if r["size"] <= 17)
    print(f"\nfirst run on the fresh server also under 1 s: {'yes' if cold else 'no'}")
    print(
        "targets (four_rooms-sized grid put and get < 1 s, best of 3; SPARQL < 50 ms): "
        f"{'met' if ok else 'NOT met'}; {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
