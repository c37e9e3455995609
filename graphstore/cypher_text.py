"""Lexical checks and rewrites of Cypher text, outside string literals and comments.

Two jobs:
- `check_read_only`: the first line of defence of read-only entry points (a transaction-
  control prefix such as 'COMMIT;' would otherwise leave a read-only transaction, and
  COPY/EXPORT write files even inside one). Stores still run the query read-only.
- `quote_reserved_properties`: LadybugDB reserves some words (e.g. `index`) that are
  ordinary property keys in Neo4j; quoting them lets one query text serve every store.
"""

from __future__ import annotations

import re

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

READ_CLAUSES = {"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"}
FORBIDDEN_ANYWHERE = {"COPY", "EXPORT", "IMPORT", "ATTACH", "INSTALL", "CHECKPOINT", "BEGIN", "COMMIT", "ROLLBACK"}
WRITE_CLAUSES = {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "ALTER", "FOREACH"}

# Property keys of the schema that LadybugDB's parser reserves.
LADYBUG_RESERVED_PROPERTIES = {"index", "order", "group", "default", "column", "case", "end", "end_"}


def _lexemes(query: str):
    for match in _LEXEME.finditer(query):
        yield match.lastgroup, match.group()


def check_read_only(query: str) -> None:
    """Raise QueryError unless `query` is one statement that only reads."""
    words: list[str] = []
    statements = 1
    trailing = False
    for kind, text in _lexemes(query):
        if kind == "other" and text == ";":
            trailing = True
            continue
        if kind in ("comment",) or (kind == "other" and text.isspace()):
            continue
        if trailing:
            statements += 1
            trailing = False
        if kind == "word":
            words.append(text.upper())
    if statements > 1:
        raise QueryError("read-only queries take a single statement; found several separated by ';'")
    if not words:
        raise QueryError("empty query")
    if words[0] not in READ_CLAUSES:
        raise QueryError(
            f"read-only queries start with {', '.join(sorted(READ_CLAUSES))}; this one starts with {words[0]}"
        )
    bad = sorted(set(words) & (FORBIDDEN_ANYWHERE | WRITE_CLAUSES))
    if bad:
        raise QueryError(
            f"read-only query uses {', '.join(bad)}: writing goes through `put` (or `graphtasks tasks load`)"
        )


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
