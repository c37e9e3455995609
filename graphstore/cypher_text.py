"""Lexical checks and rewrites of Cypher text, outside string literals and comments.

Two jobs:
- `check_read_only`: an allow-list of read clauses for read-only entry points (see there).
- `quote_reserved_properties`: LadybugDB reserves some words (e.g. `index`) that are
  ordinary property keys in Neo4j; quoting them lets one query text serve every store.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from .errors import QueryError

# Tokens: string literals, backticked names, comments, or anything else one char at a time.
_LEXEME = re.compile(
    r"""
    (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<quoted>`[^`]*`)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

# Property keys of the schema that LadybugDB's parser reserves.
LADYBUG_RESERVED_PROPERTIES = {"index", "order", "group", "default", "column", "case", "end", "end_"}


def _lexemes(query: str):
    for match in _LEXEME.finditer(query):
        yield match.lastgroup, match.group()


# -- the read-only allow-list ------------------------------------------------------------------
# A query is accepted only if every clause it contains is a read clause. Clauses start at the
# beginning, after a complete operand (a name, literal, parameter, ')', ']' or '}'), or first
# thing inside braces (EXISTS { MATCH ... }); there the next word must be one of CLAUSE_WORDS
# or an infix keyword (AS, AND, IS, ...).
# Everything else (LOAD, CALL, COPY, CREATE, USE, SET, a setting, a procedure) is refused
# without being named here, so an engine's new clause is refused too.
START_WORDS = {"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN"}
CLAUSE_WORDS = START_WORDS | {"WHERE", "ORDER", "SKIP", "LIMIT", "UNION"}
# Words allowed right after an operand without starting a clause (infix and postfix keywords).
AFTER_OPERAND_WORDS = {
    "AS", "AND", "OR", "XOR", "IN", "IS", "STARTS", "ENDS", "CONTAINS", "ASC", "ASCENDING", "DESC", "DESCENDING",
    "BY", "WHEN", "THEN", "ELSE", "END", "ALL", "NOT", "NULL",
}
# Keywords that read nothing but are not names either (inside expressions and patterns).
EXPRESSION_WORDS = CLAUSE_WORDS | AFTER_OPERAND_WORDS | {
    "NOT", "CASE", "EXISTS", "COUNT", "DISTINCT", "ANY", "NONE", "SINGLE", "TRUE", "FALSE",
    "SHORTEST", "ALL_SHORTEST", "WSHORTEST", "TRAIL", "ACYCLIC",
}
# Keywords of write, file, session and procedure clauses in the dialects we talk to. Only used to
# refuse them where a name could stand (a variable called `load`); clause positions need no list.
NOT_A_NAME = {
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "DROP", "ALTER", "LOAD", "CALL", "YIELD",
    "COPY", "EXPORT", "IMPORT", "ATTACH", "USE", "INSTALL", "UNINSTALL", "CHECKPOINT", "BEGIN", "COMMIT",
    "ROLLBACK", "PROFILE", "EXPLAIN", "FINISH", "INSERT",
}
_CHECK_TOKEN = re.compile(
    r"""
    (?P<string>'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")
  | (?P<quoted>`[^`]*`)
  | (?P<comment>//[^\r\n]*|/\*.*?\*/)
  | (?P<space>[ \t\r\n]+)
  | (?P<param>\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|`[^`]*`))
  | (?P<number>0[xX][0-9A-Fa-f]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[!-/:-@\[-^`{-~])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_OPERAND_KINDS = {"string", "quoted", "param", "number"}
_LITERAL_WORDS = {"NULL", "TRUE", "FALSE", "END"}
_CALL_LIKE = {"COUNT", "EXISTS", "ANY", "NONE", "SINGLE"}  # keywords when followed by ( or {, else names
Token = tuple[str, str, int]


def _check_tokens(query: str) -> list[Token]:
    """Significant tokens (kind, text, offset); refuses characters the engines could read differently."""
    tokens: list[Token] = []
    for match in _CHECK_TOKEN.finditer(query):
        kind, text, at = match.lastgroup or "", match.group(), match.start()
        if kind == "bad" or (kind == "comment" and not text.isascii()):
            char = text if kind == "bad" else next(c for c in text if not c.isascii())
            raise QueryError(
                f"read-only query: unexpected character {char!r} (U+{ord(char):04X}) at offset {at}; "
                "outside quotes, queries are plain ASCII"
            )
        if kind not in ("comment", "space"):
            tokens.append((kind, text, at))
    return tokens


def _operand_end(tokens: list[Token], i: int) -> bool:
    """Whether token i ends an operand, so that a word after it starts a clause or is an infix keyword."""
    kind, text, _ = tokens[i]
    before = tokens[i - 1][1].upper() if i > 0 else ""
    after = tokens[i + 1][1] if i + 1 < len(tokens) else ""
    if kind in _OPERAND_KINDS or text in (")", "]", "}"):
        return True
    if text == "*":  # `WITH *`, `RETURN *`, `count(*)`; otherwise multiplication or a path length
        return before in ("WITH", "RETURN", "DISTINCT", "(")
    if kind != "word":
        return False
    upper = text.upper()
    if before in ("AS", ".", ":", "$") or upper in _LITERAL_WORDS:
        return True  # a name just bound, a property key, a label, a parameter, a literal
    if upper in _CALL_LIKE:
        return after not in ("(", "{")
    return upper not in EXPRESSION_WORDS


def _check_words(tokens: list[Token]) -> None:
    for i, (kind, text, at) in enumerate(tokens):
        if kind != "word":
            continue
        upper = text.upper()
        before = tokens[i - 1][1] if i > 0 else ""
        after = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        where = f"{text!r} at offset {at}"
        if before == "." and after == "(":
            raise QueryError(f"read-only query: namespaced function or procedure {where} is not allowed")
        if before in (".", ":", "$"):
            continue  # a property key, a label or relationship type, a parameter name
        if i == 0:
            if upper not in START_WORDS:
                raise QueryError(
                    f"read-only queries start with {', '.join(sorted(START_WORDS))}; this one starts with {text}"
                )
            continue
        if (before == "{" and after != ":") or _operand_end(tokens, i - 1):  # a clause may start here
            if upper not in CLAUSE_WORDS | AFTER_OPERAND_WORDS:
                raise QueryError(
                    f"read-only query: {where} is not a read clause; allowed: {', '.join(sorted(CLAUSE_WORDS))}"
                )
        elif upper in NOT_A_NAME and after != ":":
            raise QueryError(f"read-only query: {where} is a write, file or session keyword")


def _check(query: str) -> None:
    tokens = _check_tokens(query)
    if tokens and tokens[-1][1] == ";":
        tokens = tokens[:-1]
    if not tokens:
        raise QueryError("empty query")
    if any(text == ";" for _, text, _ in tokens):
        raise QueryError("read-only queries take a single statement; found several separated by ';'")
    _check_words(tokens)


_SOURCE = re.compile(r"\bLOAD\s+FROM\s+\$([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


_AFTER_SOURCE = re.compile(r"\s+(?:WHERE|WITH|RETURN|MATCH|OPTIONAL|UNWIND|ORDER|SKIP|LIMIT)\b|\s*;?\s*$",
                           re.IGNORECASE)


def named_sources(query: str) -> list[str]:
    """The names of the `LOAD FROM $name` clauses of a query, in order."""
    return [match.group(1) for match in _SOURCE.finditer(query)]


SOURCES_GROUP = "graphtasks.query_sources"


def registered_sources(store: Any) -> dict[str, Any]:
    """The tables a query on `store` may scan by default (`LOAD FROM $name`): what each entry
    point of the group `graphtasks.query_sources` gives for the store (a callable
    `(store) -> {name: files or table}`; the experiment records register their chunks), so
    `store.cypher(query)` reaches them without the caller naming them."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for entry in sorted(entry_points(group=SOURCES_GROUP), key=lambda e: e.name):
        found.update(entry.load()(store))
    return found


def check_read_only(query: str, sources: Iterable[str] = ()) -> None:
    """Raise QueryError unless `query` is one statement made only of read clauses (an allow-list).

    `sources` names the tables the caller lets the query scan: `LOAD FROM $name` is a read
    clause for those names only (a store's own record chunks, `GraphStore.cypher`); every
    other LOAD FROM, file or parameter, is refused like any file clause.

    The first line of defence of read-only entry points: LOAD FROM / LOAD CSV read files, CALL
    changes settings or runs procedures, COPY writes files, all even inside a read transaction,
    and a prefix such as 'COMMIT;' would leave it. Stores still run the query read-only. Text
    with backslashes is checked a second time as if they escaped nothing, so an engine that
    reads a quote after a backslash differently cannot hide a clause in what looks like a string.
    """
    allowed = set(sources)
    if allowed:
        unknown = [name for name in named_sources(query) if name not in allowed]
        if unknown:
            raise QueryError(f"read-only query: LOAD FROM ${unknown[0]} is not a source; "
                             f"a query may load from {', '.join('$' + n for n in sorted(allowed))}")
        for match in _SOURCE.finditer(query):
            if not _AFTER_SOURCE.match(query, match.end()):
                raise QueryError(f"read-only query: LOAD FROM ${match.group(1)} takes no options or expressions; "
                                 "follow it with WHERE, WITH or RETURN")
        query = _SOURCE.sub(lambda m: f"MATCH (__{m.group(1)})", query)
    _check(query)
    if "\\" in query:
        _check(query.replace("\\", "_"))


def quote_reserved_properties(query: str, reserved: set[str] = LADYBUG_RESERVED_PROPERTIES) -> str:
    """Backtick reserved property keys written after '.' (e.g. `s.index`)."""
    out: list[str] = []
    previous = ""
    for kind, text in _lexemes(query):
        if kind == "word" and previous == "." and text.lower() in reserved:
            text = f"`{text}`"
        out.append(text)
        if kind != "comment" and not (kind == "other" and text.isspace()):
            previous = text
    return "".join(out)


_BINDING = re.compile(r"\(\s*([A-Za-z_]\w*)\s*:\s*([A-Za-z_]\w*)")
_OWNER_LITERAL = re.compile(r"""\b([A-Za-z_]\w*)\.task\s*(?:=|IN\s*\[)\s*['"]experiment/""", re.IGNORECASE)


def renamed_property_notes(query: str, schema: Any) -> list[str]:
    """One line per use in `query` of a property name an earlier schema had (`NodeType.renamed`):
    Cypher finds nothing for a name a node lacks (a Bolt server says nothing; LadybugDB refuses
    the query), so `graphtasks cypher` says what the name is now. Also a record's `task`
    compared with an experiment uid ('experiment/...'), the owner's old place.

    Examples
    --------
    >>> from graphstore import SCHEMA
    >>> renamed_property_notes("MATCH (r:Run) RETURN r.task_id", SCHEMA)
    ['Run.task_id is now Run.task (renamed; the old name finds nothing)']
    >>> renamed_property_notes("MATCH (r:Run) WHERE r.task = 'experiment/x' RETURN r", SCHEMA)
    ["Run.task is the run's task id; its experiment's uid is Run.owner"]
    >>> renamed_property_notes("MATCH (s:State) WHERE s.task = $t RETURN s", SCHEMA)
    []
    """
    text = "".join(" " * len(t) if kind == "comment" else t for kind, t in _lexemes(query))
    labels = {m.group(1): m.group(2) for m in _BINDING.finditer(text) if m.group(2) in schema.nodes}
    notes: list[str] = []
    for var, label in labels.items():
        node_type = schema.nodes[label]
        current = {p.name for p in node_type.properties}
        for old, new in node_type.renamed:
            if old not in current and re.search(rf"(?<![\w.]){re.escape(var)}\.{re.escape(old)}\b", text):
                notes.append(f"{label}.{old} is now {label}.{new} (renamed; the old name finds nothing)")
    for m in _OWNER_LITERAL.finditer(text):
        node_type = schema.nodes.get(labels.get(m.group(1), ""))
        if node_type is not None and node_type.owner_property != "task" and node_type.property("task") is not None:
            notes.append(f"{node_type.label}.task is the run's task id; its experiment's uid is "
                         f"{node_type.label}.{node_type.owner_property}")
    return list(dict.fromkeys(notes))
