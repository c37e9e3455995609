"""One benchmark run, one table, for every family and observation type installed.

For each case: single-env steps/s (random policy, actions drawn in advance, the unwrapped
env, resets counted in), vector env-steps/s at N = 1, 64, 1024, 4096 (native vector env,
NEXT_STEP autoreset, actions drawn in advance), compile time from each store (the embedded
LadybugDB, and a Bolt server: see --bolt), and peak memory (tracemalloc, measured in a
separate pass so it does not slow the timings).
Every speed is printed next to the reference implementation's figure
(measured on a 2-core Xeon, Python 3.11) as a ratio, and the run is
written as JSON to benchmarks/results/run_all.json.

Families come from `gym_bridge.families()`: each family's `bench` hook adds its rows (graph
tasks, grid worlds, POGE worlds, the Room task, and any family another package registers). A family that is not
installed, or fails to build, is listed as such instead of stopping the run.

    python benchmarks/run_all.py               # the full table (a few minutes)
    python benchmarks/run_all.py --quick       # short budgets, to check the script
    python benchmarks/run_all.py --families graph --sizes 1,4096
    python benchmarks/run_all.py --from-json benchmarks/results/run_all.json --markdown   # the README's table
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import platform
import resource
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

if not __package__:  # run as a script (python benchmarks/run_all.py): make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from benchmarks.common import RESULTS, play, python_loop_baseline, random_actions  # noqa: E402
from graphstore import GraphtasksError  # noqa: E402


class BenchArgumentError(GraphtasksError, ValueError):
    """A bad option of the suite; `graphtasks bench` prints it as one line."""

SIZES = (1, 64, 1024, 4096)
TARGET_N = 4096  # the vector targets are env-steps/s at this N


@dataclass
class Case:
    """One row of the table: how to make the single and vector env, and what to compare with."""

    family: str
    label: str
    make_single: Callable[[], Any]
    make_vector: Callable[[int], Any] | None = None
    reference: float | None = None  # reference single-env steps/s
    reference_note: str = ""
    single_target: float | None = None
    vector_target: float | None = None  # env-steps/s at N = 4096
    compile: Callable[[Any], Any] | None = None  # compile this case's task from the store given
    compile_key: str = ""  # cases sharing a task share one compile measurement


@dataclass
class Suite:
    stores: dict[str, Any]  # name -> store holding every task of the run; "embedded" first
    cases: list[Case] = field(default_factory=list)

    @property
    def store(self) -> Any:
        """The embedded store: the environments are made from it."""
        return self.stores["embedded"]

    def put(self, graph: Any) -> None:
        for store in self.stores.values():
            store.put(graph)
    notes: list[str] = field(default_factory=list)


# -- families ---------------------------------------------------------------------------------------
def graph_cases(suite: Suite) -> None:
    import tasks
    from gym_bridge import GraphTaskEnv, compile_from_store
    from gym_bridge.vector import GraphVectorEnv

    store = suite.store
    rows = [
        # task, obs, reference, note, single target, vector target
        ("neuronav/graph/neighborhood", "index", 1_240_000, "neuro-nav GraphEnv", 1_250_000, 30_000_000),
        ("neuronav/graph/neighborhood", "onehot", 194_000, "neuro-nav GraphEnv", 400_000, None),
        ("neuronav/graph/neighborhood", "images", None, "", None, None),
        ("rewardgym/two-step", "index", 134_000, "rewardGym two-step", 400_000, None),
        ("rewardgym/gonogo", "index", 47_000, "rewardGym other tasks: 47k-94k", None, None),
    ]
    for task_id in {r[0] for r in rows}:
        suite.put(tasks.build(task_id))
    for task_id, obs, reference, note, single_target, vector_target in rows:
        compiled = compile_from_store(store, task_id)
        suite.cases.append(
            Case(
                family="graph",
                label=f"{task_id} {obs}",
                make_single=lambda c=compiled, o=obs: GraphTaskEnv(c, obs_type=o, max_episode_steps=None),
                make_vector=lambda n, c=compiled, o=obs: GraphVectorEnv(n, task=c, obs_type=o, max_episode_steps=None),
                reference=reference,
                reference_note=note,
                single_target=single_target,
                vector_target=vector_target,
                compile=lambda s, t=task_id: compile_from_store(s, t),
                compile_key=task_id,
            )
        )


def grid_cases(suite: Suite) -> None:
    grid = importlib.import_module("gym_bridge.grid")
    import tasks

    store = suite.store
    rows = [
        # size, observation, reference single-env steps/s, single target, vector target at N = 4096
        ("small", "index", 179_000, 450_000, 15_000_000), ("small", "onehot", 98_000, 250_000, 3_000_000),
        ("small", "twohot", 149_000, None, None), ("small", "geometric", 154_000, None, None),
        ("small", "boundary", 25_000, 200_000, None), ("small", "symbolic", 77_000, 200_000, None),
        ("small", "symbolic_window", 26_000, None, None), ("small", "symbolic_window_tight", None, None, None),
        ("small", "visual", 1_360, 30_000, None), ("small", "window", 500, 30_000, None),
        ("small", "window_tight", None, None, None), ("small", "images", None, None, None),
        ("small", "ascii", None, None, None), ("small", "distance", None, None, None),
        ("large", "index", 146_000, None, None),
    ]
    listed = {obs for _, obs, *_ in rows}  # every other built-in type gets a row without a reference
    registry = grid.GRID_OBSERVATIONS
    classes = {obs: registry.get(obs) for obs in registry.names()}
    built_in = [
        obs for obs, cls in classes.items()
        if cls.__module__ == "gym_bridge.grid.observations" and not getattr(cls, "user_type", False)
    ]
    rows += [("small", obs, None, None, None) for obs in built_in if obs not in listed]
    compiled = {}
    for size in {r[0] for r in rows}:
        task_id = f"neuronav/grid/four_rooms/{size}"
        suite.put(tasks.build(task_id))
        compiled[size] = grid.compile_grid_from_store(store, task_id)
    for size, obs, reference, single_target, vector_target in rows:
        task = compiled[size]
        make_vector = partial(grid.GridVectorEnv, task=task, obs_type=obs, max_episode_steps=None)
        suite.cases.append(
            Case(
                family="grid",
                label=f"four_rooms {size} {obs}",
                make_single=lambda t=task, o=obs: grid.GridEnv(task=t, obs_type=o, max_episode_steps=None),
                make_vector=make_vector,
                reference=reference,
                reference_note="neuro-nav GridEnv" if reference else "",
                single_target=single_target,
                vector_target=vector_target,
                compile=lambda s, t=task.task_id: grid.compile_grid_from_store(s, t),
                compile_key=task.task_id,
            )
        )


def poge_cases(suite: Suite) -> None:
    poge_env = importlib.import_module("gym_bridge.poge.env")
    vector = _optional("gym_bridge.poge.vector_env")
    store = suite.store
    for each in suite.stores.values():
        poge_env.PogeEnv("poge/world1", store=each)  # puts the built-in world into every benchmark store
    for label, kwargs in (("world1 partially observable index", {}),
                          ("world1 fully observable index", {"is_partially_obs": False}),
                          ("world1 partially observable onehot", {"obs_type": "onehot"})):
        make_vector = None
        if vector is not None:
            make_vector = partial(vector.PogeVectorEnv, world="poge/world1", store=store, **kwargs)
        suite.cases.append(
            Case(
                family="poge",
                label=label,
                make_single=lambda kw=kwargs: poge_env.PogeEnv("poge/world1", store=store, **kw),
                make_vector=make_vector,
                reference=760_000,
                reference_note="POGE: 450k-760k (the higher figure)",
                single_target=1_000_000 if "obs_type" not in kwargs else None,
                vector_target=15_000_000 if not kwargs else None,
                # read the world from the store and compile its outcome tables (what making the env costs)
                compile=lambda s, kw=kwargs: poge_env.PogeEnv("poge/world1", store=s, **kw),
                compile_key=f"poge/world1 {sorted(kwargs.items())}",
            )
        )


def room_cases(suite: Suite) -> None:
    room_env = importlib.import_module("gym_bridge.room.env")
    snapshot = importlib.import_module("ingest.conceptnet_snapshot")
    store = suite.store
    for each in suite.stores.values():
        snapshot.ingest_snapshot(each)
    for size, reference in (("small", 108_000), ("big", 50_000)):
        suite.cases.append(
            Case(
                family="room",
                label=f"RoomEnv {size}, text_info=False",
                make_single=lambda s=size: room_env.RoomEnv(s, store=store, text_info=False),
                reference=reference,
                reference_note="room-env 3.0.6",
                single_target=200_000 if size == "small" else None,
                # read people, objects and AtLocation knowledge from the store (what making the env costs)
                compile=lambda s, size=size: room_env.RoomEnv(size, store=s, text_info=False),
                compile_key=f"room/{size}",
            )
        )


def family_rows() -> dict[str, Callable[[Suite], None]]:
    """Every family's rows, from its `Family.bench` hook ('module:function'), in the families'
    order: a family added by another package brings its own rows."""
    from gym_bridge import families

    rows: dict[str, Callable[[Suite], None]] = {}
    for family in families():
        if family.bench:
            module, _, name = family.bench.partition(":")
            # the built-in families' rows are this module's functions (also when run as a script)
            rows[family.name] = globals()[name] if module == "benchmarks.run_all" else getattr(
                importlib.import_module(module), name
            )
    return rows


FAMILIES: dict[str, Callable[[Suite], None]] = family_rows()


def _optional(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


# -- measurements ---------------------------------------------------------------------------------------
def single_rate(env: Any, budget: float, repeats: int) -> float:
    """Best steps/s of a random policy on the unwrapped env over `repeats` runs of about `budget` s."""
    env = env.unwrapped
    n = 20_000
    actions = random_actions(env, 2_000_000)
    best = 0.0
    for _ in range(repeats):
        env.reset(seed=0)
        start = time.perf_counter()
        play(env, actions[:n])
        elapsed = time.perf_counter() - start
        best = max(best, n / elapsed)
        n = int(min(len(actions), max(1_000, n * budget / max(elapsed, 1e-6))))
    return best


def vector_rate(venv: Any, budget: float, repeats: int) -> float:
    """Best env-steps/s of the vector env with random actions (a pool of 64 batches drawn in advance)."""
    n_envs = venv.num_envs
    pool = np.random.default_rng(0).integers(0, venv.single_action_space.n, (64, n_envs))
    venv.reset(seed=0)
    step = venv.step
    for i in range(3):
        step(pool[i])
    steps, best = 3, 0.0  # pictures at large N take a good part of a second per step
    for _ in range(repeats + 1):  # the first run only sizes the next ones
        start = time.perf_counter()
        for i in range(steps):
            step(pool[i & 63])
        elapsed = time.perf_counter() - start
        best = max(best, steps * n_envs / elapsed)
        steps = int(max(3, steps * budget / max(elapsed, 1e-6)))
    return best


def compile_time(compile: Callable[[Any], Any], store: Any, repeats: int) -> float:
    """Best ms to compile (or make the env) from `store`, after one warm-up (as a second make would find it)."""
    compile(store)
    times = []
    for _ in range(max(3, repeats)):
        start = time.perf_counter()
        compile(store)
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def peak_memory(fn: Callable[[], Any]) -> float:
    """Peak traced memory (MiB) while `fn` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _run_single(case: Case) -> None:
    env = case.make_single()
    env.reset(seed=0)
    play(env, random_actions(env, 2_000))


def _run_vector(case: Case, n: int) -> None:
    venv = case.make_vector(n)
    venv.reset(seed=0)
    for a in np.random.default_rng(0).integers(0, venv.single_action_space.n, (20, n)):
        venv.step(a)


def measure(case: Case, stores: dict[str, Any], sizes: tuple[int, ...], budget: float, repeats: int, memory: bool,
            compile_ms: dict) -> dict:
    row: dict[str, Any] = {"family": case.family, "case": case.label, "reference": case.reference,
                           "reference_note": case.reference_note, "single_target": case.single_target,
                           "vector_target": case.vector_target}
    try:
        row["single"] = single_rate(case.make_single(), budget, repeats)
    except Exception as exc:  # a family under construction: report, keep going
        row["error"] = f"single env: {type(exc).__name__}: {exc}"
        return row
    row["vector"] = {}
    if case.make_vector is not None:
        for n in sizes:
            try:
                row["vector"][str(n)] = vector_rate(case.make_vector(n), budget, repeats)
            except Exception as exc:
                row["error"] = f"vector env N={n}: {type(exc).__name__}: {exc}"
                break
    if case.compile is not None:
        if case.compile_key not in compile_ms:
            compile_ms[case.compile_key] = {
                name: compile_time(case.compile, store, repeats) for name, store in stores.items()
            }
        row["compile_ms"] = compile_ms[case.compile_key]
    if memory:
        row["peak_mib_single"] = peak_memory(lambda: _run_single(case))
        if case.make_vector is not None and "error" not in row:
            n = max(sizes)
            row["peak_mib_vector"] = peak_memory(lambda: _run_vector(case, n))
            row["peak_mib_vector_n"] = n
    return row


# -- output -------------------------------------------------------------------------------------------------
def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e6:
        return f"{value / 1e6:.1f}M"
    if value >= 1e3:
        return f"{value / 1e3:.0f}k"
    return f"{value:.0f}"


def _compile_cell(value: dict | float | None, store_names: list[str]) -> str:
    if value is None:
        return "-"
    if not isinstance(value, dict):  # a run saved before compile times were per store
        return f"{value:.1f}"
    return " / ".join(f"{value[name]:.1f}" if name in value else "-" for name in store_names)


def _ratio(value: float | None, reference: float | None) -> str:
    return "-" if value is None or not reference else f"{value / reference:.1f}x"


def _cells(rows: list[dict], sizes: tuple[int, ...]) -> tuple[list[str], list[list[str]]]:
    """The table's header and rows as strings (shared by the text and the Markdown form)."""
    store_names = next((list(r["compile_ms"]) for r in rows if isinstance(r.get("compile_ms"), dict)), ["embedded"])
    header = ["family", "case", "reference", "single", "x ref", *[f"N={n}" for n in sizes], "x ref", "targets",
              f"compile ms ({' / '.join(store_names)})", "peak MiB"]
    lines = []
    for r in rows:
        if "single" not in r:
            failed = [r["family"], r["case"], _num(r["reference"]), "failed", ""]
            lines.append(failed + [""] * (len(sizes) + 4))
            continue
        vec = r.get("vector", {})
        top = vec.get(str(max(sizes))) if vec else None
        checks = []
        if r["single_target"]:
            checks.append(f"single>={_num(r['single_target'])}:{'ok' if r['single'] >= r['single_target'] else 'NO'}")
        at_target_n = vec.get(str(TARGET_N)) if vec else None
        if r["vector_target"] and at_target_n is not None:
            ok = "ok" if at_target_n >= r["vector_target"] else "NO"
            checks.append(f"N={TARGET_N}>={_num(r['vector_target'])}:{ok}")
        memory = "-"
        if "peak_mib_single" in r:
            memory = f"{r['peak_mib_single']:.1f}"
            if "peak_mib_vector" in r:
                memory += f" / {r['peak_mib_vector']:.1f}"
        lines.append([
            r["family"], r["case"], _num(r["reference"]), _num(r["single"]), _ratio(r["single"], r["reference"]),
            *[_num(vec.get(str(n))) if vec else "-" for n in sizes], _ratio(top, r["reference"]),
            " ".join(checks) or "-", _compile_cell(r.get("compile_ms"), store_names), memory,
        ])
    return header, lines


def table(rows: list[dict], sizes: tuple[int, ...]) -> str:
    header, lines = _cells(rows, sizes)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]
    out = ["  ".join(str(x).ljust(w) for x, w in zip(header, widths)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in lines]
    return "\n".join(out)


def markdown(rows: list[dict], sizes: tuple[int, ...]) -> str:
    """The same table in Markdown (what the README shows)."""
    header, lines = _cells(rows, sizes)
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x).replace("|", "/") for x in line) + " |" for line in lines]
    return "\n".join(out)


def open_bolt(choice: str, folder: str, notes: list[str], log=print) -> tuple[Any, Callable[[], None]]:
    """The Bolt store to compile from: `choice` is a bolt:// URI, 'none', or 'auto' (GRAPHTASKS_BENCH_BOLT,
    else a local ArcadeDB from the test extra `arcadedb-embedded`, else none, with a note)."""
    if choice == "none":
        return None, lambda: None
    try:
        if choice != "auto":
            from graphstore.neo4j_store import Neo4jStore

            return Neo4jStore(choice), lambda: None
        if not os.environ.get("GRAPHTASKS_BENCH_BOLT") and importlib.util.find_spec("arcadedb_embedded") is None:
            notes.append("bolt: not measured (no server: pip install '.[test]' for a local ArcadeDB, or --bolt URI)")
            return None, lambda: None
        from benchmarks.stores_bench import bolt_store

        log("starting the Bolt server (a local ArcadeDB unless GRAPHTASKS_BENCH_BOLT is set) ...")
        return bolt_store(folder)
    except Exception as exc:
        notes.append(f"bolt: not measured ({type(exc).__name__}: {exc})")
        return None, lambda: None


def run(families: list[str], sizes: tuple[int, ...], budget: float, repeats: int, memory: bool,
        output: Path | None, log=print, bolt: str = "auto") -> dict:
    from graphstore import open_store

    started = time.time()
    ceiling = python_loop_baseline(1_000_000)
    log(f"empty Python loop (this machine, now): {ceiling:,.0f} iterations/s")
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as folder:
        stores = {"embedded": open_store(Path(folder) / "bench.lbug")}
        server, stop = open_bolt(bolt, folder, notes, log)
        if server is not None:
            stores["bolt"] = server
        try:
            for name in families:
                suite = Suite(stores)
                try:
                    FAMILIES[name](suite)
                except ImportError as exc:
                    notes.append(f"{name}: not installed here ({exc})")
                    continue
                except Exception as exc:
                    notes.append(f"{name}: could not be set up ({type(exc).__name__}: {exc})")
                    continue
                compile_ms: dict[str, float] = {}
                for case in suite.cases:
                    log(f"  measuring {case.family} {case.label} ...")
                    rows.append(measure(case, stores, sizes, budget, repeats, memory, compile_ms))
        finally:
            for store in stores.values():
                store.close()
            stop()
    text = table(rows, sizes)
    log("")
    log("steps/s (single env) and env-steps/s (vector env, N copies); 'x ref' = ours / the reference's single env;")
    log("peak MiB = tracemalloc peak: single env (2,000 steps) / vector env at the largest N (20 steps)")
    log(text)
    for note in notes:
        log(f"note: {note}")
    for r in rows:
        if "error" in r:
            log(f"error: {r['family']} {r['case']}: {r['error']}")
    payload = {
        "machine": platform.processor() or platform.machine(), "python": platform.python_version(),
        "numpy": np.__version__, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1), "python_loop_ceiling": ceiling, "sizes": list(sizes),
        "budget_s": budget, "repeats": repeats, "stores": {k: v.location for k, v in stores.items()},
        "rows": rows, "notes": notes,
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(payload, indent=2))
        log(f"written {output}")
    payload["table"] = text
    return payload


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated, from {', '.join(FAMILIES)}")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="vector sizes N (default 1,64,1024,4096)")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per timed run (default 0.5)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timed runs (default 3)")
    parser.add_argument(
        "--quick", action="store_true", help="budget 0.05 s, 1 repeat: checks the script, not the speed"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument("--output", default=str(RESULTS / "run_all.json"), help="JSON file ('' for none)")
    parser.add_argument("--markdown", action="store_true", help="also print the table in Markdown")
    parser.add_argument(
        "--bolt", default="auto", metavar="URI|auto|none",
        help="Bolt server for the compile column (default auto: $GRAPHTASKS_BENCH_BOLT, else a local ArcadeDB if "
        "arcadedb-embedded is installed; user/password in the URI or GRAPHTASKS_NEO4J_* variables)",
    )
    parser.add_argument(
        "--from-json", metavar="FILE", help="measure nothing: print the table of a run saved earlier (with --output)"
    )


def show_saved(path: Path, as_markdown: bool, log=print) -> dict:
    try:
        payload = json.loads(path.read_text())
        rows, sizes = payload["rows"], tuple(payload["sizes"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BenchArgumentError(f"--from-json {path}: not a run_all result ({type(exc).__name__}: {exc})") from None
    log(
        f"run of {payload.get('started', '?')}: Python {payload.get('python', '?')}, "
        f"numpy {payload.get('numpy', '?')}, "
        f"empty Python loop {payload.get('python_loop_ceiling', 0):,.0f} iterations/s"
    )
    log(markdown(rows, sizes) if as_markdown else table(rows, sizes))
    return payload


def run_from_args(args: argparse.Namespace, log=print) -> dict:
    if getattr(args, "from_json", None):
        return show_saved(Path(args.from_json), args.markdown, log)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise BenchArgumentError(f"--families: unknown {', '.join(unknown)}; choose from {', '.join(FAMILIES)}")
    try:
        sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    except ValueError:
        raise BenchArgumentError(f"--sizes: expected comma-separated integers, got {args.sizes!r}") from None
    if not sizes or min(sizes) < 1:
        raise BenchArgumentError(f"--sizes: expected positive integers, got {args.sizes!r}")
    budget, repeats = (0.05, 1) if args.quick else (args.budget, args.repeats)
    bolt = args.bolt.strip()
    if bolt not in ("auto", "none") and "://" not in bolt:
        raise BenchArgumentError(f"--bolt: expected a bolt:// or neo4j:// URI, 'auto' or 'none', got {args.bolt!r}")
    output = Path(args.output) if args.output else None
    payload = run(families, sizes, budget, repeats, not args.no_memory, output, log, bolt)
    if args.markdown:
        log("")
        log(markdown(payload["rows"], sizes))
    return payload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run_from_args(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
