"""No import circles among the project's modules.

Every import counts, those inside functions too: an import moved into a function holds a
circle apart at run time, but the two modules still need each other, so neither can be read,
tested or replaced alone. The check reads the sources with `ast` (nothing is imported) and
finds the strongly connected components of the module graph of the five packages.

`KNOWN` lists the circles that remain; it only shrinks. A new circle, or a known one that
grew, fails the test; a known circle that is gone fails it too, until its entry is removed.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("graphstore", "tasks", "ingest", "gym_bridge", "graphtasks")

KNOWN: list[frozenset[str]] = []


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(path: Path, module: str) -> set[str]:
    """Every name an import statement of the file reaches, wherever the statement is."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports (a name is cut back to the module that defines it;
    a module's own parent packages do not count: importing a submodule runs them anyway)."""
    files = {_module(p): p for top in PACKAGES for p in (ROOT / top).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = set()
        for name in _imported(path, module):
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                targets.add(name)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_circle_but_the_known_ones() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    graph = import_graph()
    assert "tasks.families" in graph and "gym_bridge.families" in graph  # the sources were read
    found = circles(graph)
    new = [", ".join(sorted(c)) for c in found if not any(c <= known for known in KNOWN)]
    assert not new, "new import circle(s): " + " | ".join(new)
    gone = [", ".join(sorted(k)) for k in KNOWN if k not in found]
    assert not gone, "circle(s) gone or smaller, shrink KNOWN in tests/test_import_graph.py: " + " | ".join(gone)

