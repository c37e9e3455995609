"""The records' Turtle export (`graphtasks experiment export NAME --format turtle`): Oxigraph's
serializer against the hand-written writer it replaced, measured in the same run.

A recorded sweep (rewardGym two-step, Q-learning, every step recorded) is exported twice:

1. the baseline, as the export was made before: the records' RDF view built on rdflib's memory
   store and written by the old hand-written Turtle writer (`reference_turtle`, kept here only
   as the reference);
2. the export as it is made now (`graphtasks.experiments.export.rdf_text`): the view built on
   Oxigraph and written by Oxigraph's serializer.

Both texts are parsed back and compared as graphs (`rdflib.compare.isomorphic`, on the quick
size) and the CPU seconds of each part are printed, with the ratio old / new.

    python benchmarks/export_bench.py              # 20 seeds x 500 episodes (about a minute)
    python benchmarks/export_bench.py --quick      # short, to check the script
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

if not __package__:  # run as a script: make the checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rdflib import RDF, RDFS, XSD, BNode, Graph, Literal  # noqa: E402

from benchmarks.common import save  # noqa: E402
from graphstore import open_store  # noqa: E402
from graphstore.rdf import NS, store_to_rdf  # noqa: E402

SPEC = """
[experiment]
name = "turtle"
tasks = ["rewardgym/two-step"]
seeds = {seeds}
record = "steps"

[[agents]]
name = "q"
params = {{ lr = 0.3, beta = 2.0 }}

[[phases]]
name = "learning"
episodes = {episodes}
"""


# -- the writer the export used before (graphstore.rdf.to_turtle until issue 42), as the reference ----------
def _reference_term(term: Any, prefixes: dict[str, str]) -> str:
    if isinstance(term, Literal):
        if term.datatype in (XSD.integer, XSD.boolean):
            return str(term)
        text = str(term).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        if term.datatype in (None, XSD.string) and not term.language:
            return f'"{text}"'
        if term.language:
            return f'"{text}"@{term.language}'
        return f'"{text}"^^{_reference_term(term.datatype, prefixes)}'
    if isinstance(term, BNode):
        return f"_:{term}"
    text = str(term)
    for prefix, base in prefixes.items():
        local = text[len(base) :]
        if text.startswith(base) and local and all(c.isalnum() or c == "_" for c in local) and local[0].isalpha():
            return f"{prefix}:{local}"
    return f"<{text}>"


def reference_turtle(rdf: Graph, extra_prefixes: dict[str, str] | None = None) -> str:
    """The old hand-written Turtle writer: sorted subjects, lists inline, every term by hand."""
    prefixes = {"gt": NS, "rdf": str(RDF), "xsd": str(XSD), "rdfs": str(RDFS), **(extra_prefixes or {})}
    referenced: dict[Any, int] = defaultdict(int)
    for obj in rdf.objects():
        if isinstance(obj, BNode):
            referenced[obj] += 1

    def as_list(node: Any) -> list[Any] | None:
        items, seen = [], set()
        while node != RDF.nil:
            if not isinstance(node, BNode) or node in seen or referenced[node] != 1:
                return None
            seen.add(node)
            if set(rdf.predicates(node)) != {RDF.first, RDF.rest}:
                return None
            items.append(rdf.value(node, RDF.first))
            node = rdf.value(node, RDF.rest)
        return items

    def obj_text(obj: Any) -> str:
        if obj == RDF.nil:
            return "()"
        items = as_list(obj) if isinstance(obj, BNode) else None
        if items is not None:
            return "( " + " ".join(obj_text(i) for i in items) + " )"
        return _reference_term(obj, prefixes)

    inlined = set()
    for obj in rdf.objects():
        if isinstance(obj, BNode) and as_list(obj) is not None:
            node: Any = obj
            while node != RDF.nil:
                inlined.add(node)
                node = rdf.value(node, RDF.rest)
    lines = [f"@prefix {p}: <{b}> ." for p, b in prefixes.items()] + [""]
    subjects = sorted({s for s in rdf.subjects() if s not in inlined}, key=lambda s: (isinstance(s, BNode), str(s)))
    for subject in subjects:
        pairs = sorted(rdf.predicate_objects(subject), key=lambda po: (po[0] != RDF.type, str(po[0]), str(po[1])))
        body = " ;\n    ".join(
            f"{'a' if p == RDF.type else _reference_term(p, prefixes)} {obj_text(o)}" for p, o in pairs
        )
        lines.append(f"{_reference_term(subject, prefixes)}\n    {body} .\n")
    return "\n".join(lines)


def reference_export(store: Any, name: str) -> str:
    """The records' Turtle as the export made it before: rdflib's memory store, the old writer."""
    from graphtasks.experiments.ids import experiment_uid
    from graphtasks.experiments.schema import MLS

    return reference_turtle(store_to_rdf(store, [], rdf_store="default", owners=[experiment_uid(name)]), {"mls": MLS})


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds of this process spent in `fn`, and what it returned."""
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def record(folder: Path, seeds: int, episodes: int) -> str:
    """A recorded sweep in a fresh embedded store; the store's path."""
    from graphtasks.experiments.api import Experiment

    spec = folder / "turtle.toml"
    spec.write_text(SPEC.format(seeds=seeds, episodes=episodes), encoding="utf-8")
    store = str(folder / "store.lbug")
    Experiment.from_file(spec, store).run(store, workers=1)
    return store


def bench(seeds: int, episodes: int, compare: bool) -> dict[str, Any]:
    from rdflib.compare import isomorphic

    from graphstore.rdf import to_turtle
    from graphtasks.experiments.export import rdf_text, records_rdf

    with tempfile.TemporaryDirectory() as folder:
        store = record(Path(folder), seeds, episodes)
        with open_store(store, "r") as opened:
            from graphtasks.experiments.ids import experiment_uid

            old_build, graph = cpu(lambda: store_to_rdf(opened, [], rdf_store="default",
                                                        owners=[experiment_uid("turtle")]))
            from graphtasks.experiments.schema import MLS

            old_write, old_text = cpu(lambda: reference_turtle(graph, {"mls": MLS}))
            new_total, new_text = cpu(lambda: rdf_text(opened, "turtle", "turtle"))
            new_build, view = cpu(lambda: records_rdf(opened, "turtle"))
            new_write, _ = cpu(lambda: to_turtle(view, {"mls": MLS}))
    out: dict[str, Any] = {
        "seeds": seeds, "episodes": episodes, "triples": len(graph),
        "old_build_s": old_build, "old_write_s": old_write, "old_total_s": old_build + old_write,
        "new_build_s": new_build, "new_write_s": new_write, "new_total_s": new_total,
        "ratio_old_over_new": (old_build + old_write) / new_total, "ratio_writer_old_over_new": old_write / new_write,
        "old_bytes": len(old_text.encode()), "new_bytes": len(new_text.encode()),
    }
    if compare:
        out["same_graph"] = isomorphic(Graph().parse(data=old_text, format="turtle"),
                                       Graph().parse(data=new_text, format="turtle"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small sweep, to check the script")
    args = parser.parse_args()
    seeds, episodes = (2, 20) if args.quick else (20, 500)
    result = bench(seeds, episodes, compare=args.quick)
    print(f"records' Turtle export, {result['triples']:,} triples ({seeds} runs x {episodes} episodes of two-step)")
    print(f"  before (rdflib memory store + hand-written writer): {result['old_total_s']:7.2f} s CPU "
          f"(build {result['old_build_s']:.2f} s, write {result['old_write_s']:.2f} s)")
    print(f"  now (Oxigraph + its serializer):                    {result['new_total_s']:7.2f} s CPU "
          f"(build {result['new_build_s']:.2f} s, write {result['new_write_s']:.2f} s)")
    print(f"  ratio before / now: {result['ratio_old_over_new']:.1f}x the export, "
          f"{result['ratio_writer_old_over_new']:.1f}x the writer")
    if "same_graph" in result:
        print(f"  same graph (rdflib isomorphism): {result['same_graph']}")
    if not args.quick:
        print(f"wrote {save('export', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
