"""A griffe extension for the API reference: every documented callable gets a parameter table.

mkdocstrings draws a table from a docstring's numpydoc ``Parameters`` section. Where a public
function, method or constructor documents its parameters in prose instead (or not at all), this
extension adds the section from the signature: each parameter's name, its type annotation and
its default, with the description left to the prose above. A docstring that has the section is
left as it is, and so is a constructor whose class documents the parameters.

Every object docs/api.md lists, and every public method the page shows with a listed class,
now has its own ``Parameters`` section (tests/test_api_docstrings.py fails if this extension
has to fill one of them in); it stays as a safety net for a new entry or method, so the page
never shows a callable without its parameters.

Loaded by ``mkdocs.yml`` (``plugins.mkdocstrings.handlers.python.options.extensions``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

NO_DESCRIPTION = "see above"


# A numpydoc section header: its title, then a line of dashes. Read from the text, so that the
# docstrings of objects the reference does not show are not parsed here (nor warned about).
PARAMETERS_HEADER = re.compile(r"^\s*(Parameters|Other Parameters)\s*\n\s*-{3,}\s*$", re.MULTILINE)


def _has_parameters(obj: griffe.Object) -> bool:
    return obj.docstring is not None and PARAMETERS_HEADER.search(obj.docstring.value) is not None


def _signature_parameters(function: griffe.Function) -> list[griffe.DocstringParameter]:
    """The parameters a caller passes: all but ``self`` and ``cls``."""
    rows = []
    for parameter in function.parameters:
        if parameter.name in ("self", "cls"):
            continue
        name = parameter.name
        if parameter.kind is griffe.ParameterKind.var_positional:
            name = f"*{name}"
        elif parameter.kind is griffe.ParameterKind.var_keyword:
            name = f"**{name}"
        rows.append(
            griffe.DocstringParameter(
                name, description=NO_DESCRIPTION, annotation=parameter.annotation, value=parameter.default
            )
        )
    return rows


def _add_table(function: griffe.Function) -> None:
    if function.name.startswith("_") and function.name != "__init__":
        return
    if _has_parameters(function):
        return
    parent = function.parent
    if function.name == "__init__" and isinstance(parent, griffe.Class) and _has_parameters(parent):
        return
    rows = _signature_parameters(function)
    if not rows:
        return
    if function.docstring is None:
        if function.name != "__init__":
            return  # an undocumented callable stays out of the reference
        function.docstring = griffe.Docstring("", parent=function, parser=griffe.Parser.numpy)
    sections = function.docstring.parsed
    position = 1 if sections and sections[0].kind is griffe.DocstringSectionKind.text else 0
    sections.insert(position, griffe.DocstringSectionParameters(rows))


def _visit(obj: griffe.Object, seen: set[int]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, griffe.Function):
        _add_table(obj)
        return
    for member in obj.members.values():
        if isinstance(member, griffe.Object):  # an alias (an import) is visited where it is defined
            _visit(member, seen)


class SignatureParameters(griffe.Extension):
    """Add a ``Parameters`` section, from the signature, where a docstring has none."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _visit(pkg, set())
