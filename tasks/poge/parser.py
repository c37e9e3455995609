"""Parse POGE world files. Every error names the file, line and column and what was expected.

Grammar (as the reference implements it, see docs/poge.md):
- lines are stripped; blank lines and `//` comments are skipped;
- `===Layout===` / `===Abstraction===` / `===Behaviour===` / `===Rewards===` start sections;
  Layout comes first and is required, each other section at most once;
- every section after Layout starts with a map of exactly as many rows (and columns) as
  the Layout, followed by declarations: `id:name` (Abstraction),
  `rule_id-action-[action:p, ...]` (Behaviour), `symbol:int` (Rewards).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..data import TaskFileError
from .world import ACTION_INDEX, ACTIONS, DELTAS, SECTIONS, PogeWorld, Rule, unpaid_reward_reason

PROBABILITY_TOLERANCE = 1e-6
# Documented limits (docs/limits.md): they keep a world small enough to compile in seconds and every
# reward exact in the stores (an INT64 property, and a float64 in the environment: 15 digits fit both).
MAX_ROWS = 256
MAX_COLS = 256
MAX_REWARD_DIGITS = 15
_HEADER = re.compile(r"^=+\s*([A-Za-z]+)\s*=+$")
_INT = re.compile(r"^[+-]?\d+$")
_DECLARATION = {  # a line of this shape ends a section's map
    "Abstraction": re.compile(r"^[^#\s]\s*:\s*[A-Za-z_][\w ]*$"),
    "Behaviour": re.compile(r"^\S\s*-\s*[A-Za-z]+\s*-\s*\["),
    "Rewards": re.compile(r"^[^#\s]\s*:\s*[+-]?\d+$"),
}
_FLOAT = re.compile(r"^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class PogeFormatError(TaskFileError):
    """A world file does not follow the format; the message names file, line and column."""

    def __init__(self, source: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{source}, line {line}, column {column}: {message}")
        self.source, self.line, self.column, self.detail = source, line, column, message


@dataclass(frozen=True)
class _Line:
    number: int  # 1-based line number in the file
    offset: int  # 0-based column of the first non-blank character
    text: str  # the stripped line

    def col(self, i: int = 0) -> int:
        """1-based file column of character i of the stripped text."""
        return self.offset + i + 1


def load_world(path: str | Path) -> PogeWorld:
    """Read and parse a world file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(f"{p}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TaskFileError(f"{p}: not UTF-8 text: {exc.reason}") from None
    return parse_world(text, str(p))


def parse_world(text: str, source: str = "<string>") -> PogeWorld:
    """Parse the text of a world file; `source` names it in error messages."""
    sections: dict[str, tuple[_Line, list[_Line]]] = {}
    current: list[_Line] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        line = _Line(number, len(raw) - len(raw.lstrip()), stripped)
        found = _HEADER.match(stripped)
        if found:
            name = found.group(1)
            if name not in SECTIONS:
                raise PogeFormatError(
                    source,
                    number,
                    line.col(stripped.index(name)),
                    f"unknown section {name!r}; expected one of {', '.join(SECTIONS)}",
                )
            if name in sections:
                first = sections[name][0].number
                raise PogeFormatError(
                    source, number, line.col(), f"section {name} appears twice (first at line {first})"
                )
            if name != "Layout" and "Layout" not in sections:
                raise PogeFormatError(source, number, line.col(), f"expected the ===Layout=== section before {name}")
            current = []
            sections[name] = (line, current)
            continue
        if current is None:
            raise PogeFormatError(source, number, line.col(), "expected a section header such as ===Layout===")
        current.append(line)
    if "Layout" not in sections:
        raise PogeFormatError(source, 1, 1, "expected a ===Layout=== section")
    header, rows = sections["Layout"]
    layout = _layout(source, header, rows)
    n_rows, n_cols = len(layout), len(layout[0])

    def map_and_rest(name: str) -> tuple[tuple[str, ...] | None, list[_Line]]:
        if name not in sections:
            return None, []
        head, lines = sections[name]
        grid = lines[:n_rows]
        if len(grid) < n_rows:
            raise PogeFormatError(
                source,
                head.number,
                head.col(),
                f"the {name} map has {len(grid)} row(s), expected {n_rows} (as many as the Layout)",
            )
        for i, line in enumerate(grid):
            if _DECLARATION[name].match(line.text):
                raise PogeFormatError(
                    source,
                    line.number,
                    line.col(),
                    f"the {name} map has {i} row(s), expected {n_rows} (as many as the Layout); "
                    "this line is a declaration",
                )
            _check_width(source, name, line, n_cols)
        return tuple(line.text for line in grid), lines[n_rows:]

    abstraction, decls = map_and_rest("Abstraction")
    names = _declarations(source, "Abstraction", decls, n_cols, _abstraction_decl)
    behaviour, decls = map_and_rest("Behaviour")
    rules = _rules(source, decls, n_cols)
    rewards, decls = map_and_rest("Rewards")
    reward_values = _declarations(source, "Rewards", decls, n_cols, _reward_decl)

    world = PogeWorld(
        layout=layout,
        abstraction=abstraction,
        names=tuple((k, v) for k, (v, _) in names.items()),
        behaviour=behaviour,
        rules=tuple((rid, a, outcomes) for (rid, a), (outcomes, _) in rules.items()),
        rewards=rewards,
        reward_values=tuple((k, v) for k, (v, _) in reward_values.items()),
    )
    _check_meaning(source, world, sections, rules)
    return world


# -- the Layout -------------------------------------------------------------------------
def _layout(source: str, header: _Line, rows: list[_Line]) -> tuple[str, ...]:
    if not rows:
        raise PogeFormatError(source, header.number, header.col(), "the Layout section has no map rows")
    _check_size(source, rows)
    width = len(rows[0].text)
    for line in rows[1:]:
        _check_width(source, "Layout", line, width)
    layout = tuple(line.text for line in rows)
    starts = [(line, i) for line in rows for i, ch in enumerate(line.text) if ch == "E"]
    if not starts:
        raise PogeFormatError(
            source, header.number, header.col(), "no start tile; expected exactly one 'E' in the Layout"
        )
    if len(starts) > 1:
        (first, fi), (line, i) = starts[0], starts[1]
        raise PogeFormatError(
            source,
            line.number,
            line.col(i),
            f"a second start tile 'E' (the first is at line {first.number}, column {first.col(fi)}); "
            "expected exactly one",
        )
    if not any("G" in line.text for line in rows):
        raise PogeFormatError(
            source, header.number, header.col(), "no goal tile; expected at least one 'G' in the Layout"
        )
    for r, line in enumerate(rows):
        for c, ch in enumerate(line.text):
            if ch == "D":
                _check_door(source, layout, line, r, c)
    return layout


def _check_size(source: str, rows: list[_Line]) -> None:
    """Refuse a world past the limits before anything else looks at its tiles."""
    for line in rows[:MAX_ROWS]:
        if len(line.text) > MAX_COLS:
            raise PogeFormatError(
                source, line.number, line.col(MAX_COLS),
                f"this Layout row has {len(line.text)} columns; a world has at most {MAX_COLS} columns",
            )
    if len(rows) > MAX_ROWS:
        line = rows[MAX_ROWS]
        raise PogeFormatError(
            source, line.number, line.col(), f"the Layout has {len(rows)} rows; a world has at most {MAX_ROWS} rows"
        )


def _check_door(source: str, layout: tuple[str, ...], line: _Line, r: int, c: int) -> None:
    """A door is entered from a walkable neighbour and leads on to a walkable tile on the map."""
    rows, cols = len(layout), len(layout[0])
    for a, (dr, dc) in enumerate(DELTAS):
        fr, fc = r - dr, c - dc  # where the player comes from when moving in direction a
        if not (0 <= fr < rows and 0 <= fc < cols) or layout[fr][fc] in "#D":
            continue
        tr, tc = r + dr, c + dc
        if not (0 <= tr < rows and 0 <= tc < cols):
            raise PogeFormatError(
                source,
                line.number,
                line.col(c),
                f"the door entered moving {ACTIONS[a]} from row {fr}, column {fc} leads off the map; "
                "expected a walkable tile behind every door",
            )
        if layout[tr][tc] in "#D":
            raise PogeFormatError(
                source,
                line.number,
                line.col(c),
                f"the door entered moving {ACTIONS[a]} from row {fr}, column {fc} leads into "
                f"{'a wall' if layout[tr][tc] == '#' else 'another door'} at row {tr}, column {tc}; "
                "expected a walkable tile behind every door",
            )


def _check_width(source: str, section: str, line: _Line, width: int) -> None:
    if len(line.text) != width:
        raise PogeFormatError(
            source,
            line.number,
            line.col(min(len(line.text), width)),
            f"this {section} map row has {len(line.text)} column(s), "
            f"expected {width} (as many as the Layout's first row)",
        )


# -- declarations ---------------------------------------------------------------------
def _declarations(source: str, section: str, lines: list[_Line], n_cols: int, parse_one) -> dict:
    """Map key -> (value, line) with later declarations winning, first position kept."""
    out: dict = {}
    for line in lines:
        key, value = parse_one(source, section, line, n_cols)
        out[key] = (value, line)
    return out


def _not_a_declaration(source: str, section: str, line: _Line, n_cols: int, expected: str) -> PogeFormatError:
    if len(line.text) == n_cols and ":" not in line.text:
        return PogeFormatError(
            source,
            line.number,
            line.col(),
            f"the {section} map has more rows than the Layout; expected a declaration {expected}",
        )
    return PogeFormatError(source, line.number, line.col(), f"expected a declaration {expected}, got {line.text!r}")


def _abstraction_decl(source: str, section: str, line: _Line, n_cols: int) -> tuple[str, str]:
    key, sep, name = line.text.partition(":")
    key, name = key.strip(), name.strip()
    if not sep or len(key) != 1 or not name:
        raise _not_a_declaration(source, section, line, n_cols, "'symbol:name' (one character, a colon, a name)")
    return key, name


def _reward_decl(source: str, section: str, line: _Line, n_cols: int) -> tuple[str, int]:
    key, sep, value = line.text.partition(":")
    key = key.strip()
    if not sep or len(key) != 1:
        raise _not_a_declaration(source, section, line, n_cols, "'symbol:integer' such as 'a:1' or '*:-5'")
    text = value.strip()
    col = line.col(line.text.index(":") + 1 + (len(value) - len(value.lstrip())))
    if not _INT.match(text):
        raise PogeFormatError(
            source, line.number, col, f"reward of symbol {key!r}: expected an integer such as 1 or -5, got {text!r:.40}"
        )
    digits = len(text.lstrip("+-").lstrip("0"))
    if digits > MAX_REWARD_DIGITS:
        raise PogeFormatError(
            source, line.number, col,
            f"reward of symbol {key!r} has {digits} digits; expected at most {MAX_REWARD_DIGITS} "
            f"(|reward| < 10**{MAX_REWARD_DIGITS}, exact in every store)",
        )
    return key, int(text)


def _rules(source: str, lines: list[_Line], n_cols: int) -> dict[tuple[str, int], tuple[Rule, _Line]]:
    out: dict[tuple[str, int], tuple[Rule, _Line]] = {}
    for line in lines:
        rid, action, outcomes = _rule(source, line, n_cols)
        out[(rid, action)] = (outcomes, line)  # a later rule for the same (id, action) wins
    return out


def _rule(source: str, line: _Line, n_cols: int) -> tuple[str, int, Rule]:
    """`rule_id-action-[action:p, ...]` with spaces anywhere ignored."""
    expected = "'rule_id-action-[action:probability, ...]' such as '1-up-[up:0.75, right:0.25]'"
    text = line.text
    chars = [(i, ch) for i, ch in enumerate(text) if not ch.isspace()]  # keep file positions
    compact = "".join(ch for _, ch in chars)
    m = re.match(r"^(.)-([A-Za-z]+)-\[(.*)\]$", compact)
    if not m:
        raise _not_a_declaration(source, "Behaviour", line, n_cols, expected)

    def col(k: int) -> int:
        return line.col(chars[k][0])

    rid, action_name, body = m.group(1), m.group(2), m.group(3)
    if rid in "#-[]:,":
        raise PogeFormatError(
            source, line.number, col(0), f"rule id {rid!r} is not allowed; expected a letter, digit or symbol"
        )
    action = _action(source, line.number, col(2), action_name)
    outcomes: list[tuple[int, float]] = []
    pos = m.start(3)
    if not body:
        raise PogeFormatError(source, line.number, col(pos), "expected at least one 'action:probability' inside [ ]")
    for part in body.split(","):
        name, sep, prob = part.partition(":")
        if not sep or not name:
            raise PogeFormatError(
                source, line.number, col(min(pos, len(chars) - 1)), f"expected 'action:probability', got {part!r}"
            )
        executed = _action(source, line.number, col(pos), name)
        ppos = pos + len(name) + 1
        if not _FLOAT.match(prob) or float(prob) > 1.0:
            raise PogeFormatError(
                source,
                line.number,
                col(min(ppos, len(chars) - 1)),
                f"expected a probability between 0 and 1 for {name!r}, got {prob!r}",
            )
        if any(e == executed for e, _ in outcomes):
            raise PogeFormatError(source, line.number, col(pos), f"action {name!r} is listed twice in this rule")
        outcomes.append((executed, float(prob)))
        pos += len(part) + 1
    total = sum(p for _, p in outcomes)
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise PogeFormatError(
            source, line.number, col(m.start(3) - 1), f"the probabilities sum to {total:.6g}; expected them to sum to 1"
        )
    return rid, action, tuple(outcomes)


def _action(source: str, number: int, column: int, name: str) -> int:
    try:
        return ACTION_INDEX[name]
    except KeyError:
        raise PogeFormatError(
            source, number, column, f"unknown action {name!r}; expected one of {', '.join(ACTIONS)}"
        ) from None


# -- cross-section checks -----------------------------------------------------------------
def _check_meaning(source: str, world: PogeWorld, sections: dict, rules: dict) -> None:
    if world.behaviour is not None:
        ids = (world.rule_id(r, c) for r in range(world.rows) for c in range(world.cols))
        on_map = {x for x in ids if x is not None}
        for (rid, _), (_, line) in rules.items():
            if rid not in on_map:
                known = ", ".join(sorted(on_map)) or "none"
                raise PogeFormatError(
                    source,
                    line.number,
                    line.col(),
                    f"unknown rule id {rid!r}; expected a rule id used on the Behaviour map ({known})",
                )
    if world.rewards is not None:
        values = dict(world.reward_values)
        grid_lines = sections["Rewards"][1][: world.rows]
        for r, line in enumerate(grid_lines):
            for c in range(world.cols):
                sym = world.reward_symbol(r, c)
                if sym is not None and sym not in values:
                    raise PogeFormatError(
                        source,
                        line.number,
                        line.col(c),
                        f"reward symbol {sym!r} has no value; "
                        f"expected a declaration '{sym}:<integer>' after the Rewards map",
                    )
        for r, c in world.unpaid_rewards():
            sym, kind = str(world.reward_symbol(r, c)), world.kind(r, c)
            raise PogeFormatError(
                source,
                grid_lines[r].number,
                grid_lines[r].col(c),
                f"reward symbol {sym!r} ({values[sym]}) is on the {kind} tile at row {r}, column {c}, where it "
                f"would never be paid: {unpaid_reward_reason(kind)}; expected reward symbols on floor, "
                "start and toggle tiles only",
            )
