"""Every object the API reference (docs/api.md) lists carries a numpydoc docstring that says how to call it.

docs/api.md names the public API as mkdocstrings ``::: module.object`` entries (a class's
``members: [...]`` option names the methods shown with it). For each of them the docstring,
parsed as numpydoc by griffe (the parser the site uses), must have:

- a ``Parameters`` section naming every parameter of the signature (``self`` and ``cls`` aside;
  ``*args`` and ``**kwargs`` may share one entry), for a class the parameters of its constructor;
- a ``Returns`` (or ``Yields``) section when a function is annotated to return something;
- an ``Examples`` section whose examples run as a doctest and print what they show.

Without them the site's API page showed "see above" in the parameter tables that
docs/griffe_parameters.py fills from the signature; the last test checks that the extension no
longer has to fill any table for these objects.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import logging
import re
import sys
import typing
from pathlib import Path
from typing import Any

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api.md"

ENTRY = re.compile(r"^::: (?P<path>[\w.]+)[ \t]*\n(?P<options>(?:[ \t]+\S.*\n?)*)", re.MULTILINE)
MEMBERS = re.compile(r"^\s+members:\s*\[(?P<names>[^\]]*)\]", re.MULTILINE)


def _entries() -> list[str]:
    """The dotted paths docs/api.md documents: each ``:::`` entry and each member its options name."""
    paths = []
    for match in ENTRY.finditer(API_PAGE.read_text(encoding="utf-8")):
        paths.append(match["path"])
        members = MEMBERS.search(match["options"])
        if members:
            paths += [f"{match['path']}.{name.strip()}" for name in members["names"].split(",") if name.strip()]
    return paths


def _with_all_members() -> list[str]:
    """The ``:::`` entries whose options do not choose members: mkdocstrings shows a class's public ones."""
    text = API_PAGE.read_text(encoding="utf-8")
    return [match["path"] for match in ENTRY.finditer(text) if "members:" not in match["options"]]


def _import(path: str) -> tuple[Any, dict[str, Any]]:
    """The object at a dotted path, as its parent's attribute (as mkdocstrings finds it: a package's
    `simulate` is the function it imports, not its submodule of that name), and its module's globals."""
    parts = path.split(".")
    obj: Any = importlib.import_module(parts[0])
    for end, part in enumerate(parts[1:], start=2):
        if not hasattr(obj, part):
            try:
                importlib.import_module(".".join(parts[:end]))
            except ModuleNotFoundError:
                raise AssertionError(f"docs/api.md lists {path}, which does not import") from None
        obj = getattr(obj, part)
    home = sys.modules.get(getattr(obj, "__module__", "") or "")
    return obj, vars(home) if home is not None else {}


def _sections(obj: Any) -> dict[str, griffe.DocstringSection]:
    text = inspect.cleandoc(obj.__doc__ or "")
    logging.getLogger("griffe").setLevel(logging.ERROR)  # a docstring's own style warnings are not this test's
    parsed = griffe.Docstring(text, parser=griffe.Parser.numpy).parse("numpy")
    return {section.kind.value: section for section in parsed}


def _signature(obj: Any) -> inspect.Signature | None:
    if inspect.isclass(obj) and typing.Protocol in getattr(obj, "__mro__", ()):
        return None  # a protocol is not constructed: its methods are what a caller meets
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


ENTRIES = _entries()
ALL_MEMBERS = set(_with_all_members())


def test_the_page_lists_the_public_api() -> None:
    assert len(ENTRIES) >= 50, ENTRIES
    assert "graphtasks.experiments.api.Experiment" in ENTRIES
    assert "graphstore.GraphStore.put" in ENTRIES  # a member named by the options


@pytest.mark.parametrize("path", ENTRIES)
def test_parameters_are_documented(path: str) -> None:
    obj, _ = _import(path)
    signature = _signature(obj)
    if signature is None:
        return
    wanted = [name for name in signature.parameters if name not in ("self", "cls")]
    if not wanted:
        return
    sections = _sections(obj)
    assert "parameters" in sections, f"{path} has parameters {wanted} and no Parameters section"
    # keywords passed on through **kwargs may be described under "Other Parameters" (numpydoc)
    other = sections["other parameters"].value if "other parameters" in sections else []
    entries = [*sections["parameters"].value, *other]
    documented: set[str] = set()
    for entry in entries:
        documented |= {name.strip().lstrip("*") for name in entry.name.split(",")}
    missing = [name for name in wanted if name not in documented]
    assert not missing, f"{path}: the Parameters section does not describe {missing}"
    for entry in entries:
        assert entry.description.strip(), f"{path}: parameter {entry.name} has no description"
        if not entry.name.startswith("*"):  # numpydoc gives ``*args`` and ``**kwargs`` no type
            assert entry.annotation, f"{path}: parameter {entry.name} has no type"


@pytest.mark.parametrize("path", ENTRIES)
def test_returns_are_documented(path: str) -> None:
    obj, _ = _import(path)
    if inspect.isclass(obj) or not callable(obj):
        return
    returned = inspect.signature(obj).return_annotation
    if returned in (None, "None", inspect.Signature.empty):
        return
    sections = _sections(obj)
    assert "returns" in sections or "yields" in sections, f"{path} returns {returned} and has no Returns section"


@pytest.mark.parametrize("path", ENTRIES)
def test_examples_run(path: str) -> None:
    obj, module_globals = _import(path)
    assert "examples" in _sections(obj), f"{path} has no Examples section"
    finder = doctest.DocTestFinder(recurse=False)
    tests = [test for test in finder.find(obj, path, globs=dict(module_globals)) if test.examples]
    assert tests, f"{path}: its Examples section has no '>>>' example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)  # a failing example's report is printed, and pytest shows it
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {path} failed"


@pytest.mark.slow
def test_the_site_needs_no_parameter_table_from_signatures() -> None:
    """docs/griffe_parameters.py adds no "see above" table to a listed object, its constructor, or a
    public method the page shows with its class."""
    spec = importlib.util.spec_from_file_location("griffe_parameters", ROOT / "docs" / "griffe_parameters.py")
    assert spec is not None and spec.loader is not None
    griffe_parameters = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(griffe_parameters)
    packages = sorted({path.split(".")[0] for path in ENTRIES})
    extensions = griffe.load_extensions(griffe_parameters.SignatureParameters())
    loader = griffe.GriffeLoader(extensions=extensions, search_paths=[str(ROOT)], docstring_parser=griffe.Parser.numpy)
    for package in packages:
        loader.load(package)
    loader.resolve_aliases(implicit=False, external=False)
    filled = []
    for path in ENTRIES:
        obj = loader.modules_collection.get_member(path)
        if obj.is_alias:
            obj = obj.final_target
        targets = [obj]
        if obj.is_class and "__init__" in obj.members:
            targets.append(obj.members["__init__"])
        if obj.is_class and path in ALL_MEMBERS:
            targets += [
                member
                for name, member in obj.members.items()
                if not name.startswith("_") and not member.is_alias and member.is_function
            ]
        for target in targets:
            if target.docstring is None:
                continue
            for section in target.docstring.parsed:
                if section.kind is griffe.DocstringSectionKind.parameters and any(
                    row.description == griffe_parameters.NO_DESCRIPTION for row in section.value
                ):
                    filled.append(target.path)
    assert not filled, f"the reference fills these parameter tables from the signature: {filled}"
