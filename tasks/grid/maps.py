"""Grid worlds (the neuro-nav GridEnv family): text map files -> typed task graphs.

A map file (`data/neuronav/grids/<template>.txt`, or any `*.txt` in a folder the user
adds) holds one template at one or more sizes. Format (lines starting with '# ' are
comments):

    name four_rooms
    reference Author et al., year           (optional)
    [small]                                  (a size section; the map follows)
    ###########                              '#' wall, '.' free, 'A' start, 'R' reward > 0,
    #R...#....#                              'L' reward <= 0, 'K' key, 'D' door, 'W' warp
    ...
    reward 1 1 1.0 [visible|hidden] [terminate|continue]
    key ROW COL | door ROW COL h|v | warp ROW COL TO_ROW TO_COL | marker ROW COL R G B

Every letter on the map needs its object line and every object line (markers aside) its
letter, so the picture and the data cannot drift apart. Errors name the file and line.

The task graph of one (template, size): a Cell node per cell, MOVE edges for the four
compass actions of every free cell (0 north, 1 east, 2 south, 3 west; walls and the edge
keep the agent in place; p = 1), the objects as typed nodes attached to their cells, and
a START edge. Orientation-dependent moves and doors (which need a key, a dynamic fact)
are applied by the environment on top of these edges.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from graphstore import TaskGraph

from ..data import TaskFileError, data_dir

Cell = tuple[int, int]
FAMILY = "neuronav/grid"
PREFIX = "neuronav/grid/"
TEMPLATE_PATH_ENV = "GRAPHTASKS_GRID_TEMPLATES"
SIZE_ORDER = ("micro", "small", "large")
# Compass moves of the fixed-orientation actions: 0 north, 1 east, 2 south, 3 west.
DIRECTIONS: tuple[Cell, ...] = ((-1, 0), (0, 1), (1, 0), (0, -1))
LETTERS = set("#.ARLKDW")
_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")


@dataclass(frozen=True)
class GridObjects:
    """Objects of one grid. Rewards map a cell to (value, visible, terminate or None = env default)."""

    rewards: dict[Cell, tuple[float, bool, bool | None]] = field(default_factory=dict)
    keys: tuple[Cell, ...] = ()
    doors: dict[Cell, str] = field(default_factory=dict)
    warps: dict[Cell, Cell] = field(default_factory=dict)
    markers: dict[Cell, tuple[int, int, int]] = field(default_factory=dict)

    def cells(self) -> set[Cell]:
        return set(self.rewards) | set(self.keys) | set(self.doors) | set(self.warps) | set(self.markers)


@dataclass(frozen=True)
class GridLayout:
    """One template at one size, as read from its map file."""

    template: str
    size: str
    n: int
    walls: frozenset[Cell]
    start: Cell
    objects: GridObjects
    source: str = ""
    reference: str = ""

    @property
    def task_id(self) -> str:
        return f"{PREFIX}{self.template}/{self.size}"

    def free(self, cell: Cell) -> bool:
        r, c = cell
        return 0 <= r < self.n and 0 <= c < self.n and cell not in self.walls

    def step_target(self, cell: Cell, direction: int) -> Cell:
        """The reference rule: the neighbour in `direction`, or stay if it is a wall or off the grid."""
        dr, dc = DIRECTIONS[direction]
        target = (cell[0] + dr, cell[1] + dc)
        return target if self.free(target) else cell


# -- template folders ---------------------------------------------------------------------
_EXTRA_FOLDERS: list[Path] = []


def add_template_folder(folder: str | Path) -> None:
    """Make every `*.txt` map in `folder` available as templates (ids neuronav/grid/<name>/<size>)."""
    path = Path(folder).expanduser().resolve()
    if not path.is_dir():
        raise TaskFileError(f"{path}: grid template folder does not exist")
    if path not in _EXTRA_FOLDERS:
        _EXTRA_FOLDERS.append(path)


def template_folders() -> list[Path]:
    """The built-in folder, then folders from add_template_folder and $GRAPHTASKS_GRID_TEMPLATES."""
    folders = [data_dir() / "neuronav" / "grids", *_EXTRA_FOLDERS]
    for text in os.environ.get(TEMPLATE_PATH_ENV, "").split(os.pathsep):
        if text.strip():
            path = Path(text.strip()).expanduser().resolve()
            if path not in folders:
                folders.append(path)
    return folders


def template_files() -> dict[str, Path]:
    """Template name -> map file; the same name in two folders is an error naming both."""
    found: dict[str, Path] = {}
    for folder in template_folders():
        if not folder.is_dir():
            raise TaskFileError(f"{folder}: grid template folder does not exist (check ${TEMPLATE_PATH_ENV})")
        for path in sorted(folder.glob("*.txt")):
            if path.stem in found:
                raise TaskFileError(f"{path}: template {path.stem!r} is already defined in {found[path.stem]}")
            found[path.stem] = path
    return found


_CACHE: dict[Path, tuple[float, dict[str, GridLayout]]] = {}


def read_template(path: str | Path) -> dict[str, GridLayout]:
    """All sizes of the template in one map file, by size name (cached until the file changes)."""
    p = Path(path)
    try:
        mtime = p.stat().st_mtime
    except OSError as exc:
        raise TaskFileError(f"{p}: cannot read: {exc.strerror}") from None
    cached = _CACHE.get(p)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    layouts = parse_template(p.read_text(encoding="utf-8"), str(p), default_name=p.stem)
    _CACHE[p] = (mtime, layouts)
    return layouts


def layout(template: str, size: str) -> GridLayout:
    """The layout of a template at a size; errors list what exists."""
    files = template_files()
    if template not in files:
        raise TaskFileError(f"template: unknown grid template {template!r}; known: {', '.join(sorted(files))}")
    layouts = read_template(files[template])
    if size not in layouts:
        raise TaskFileError(f"size: template {template!r} has sizes {', '.join(layouts)}, not {size!r}")
    return layouts[size]


def template_names() -> list[str]:
    return sorted(template_files())


# -- parsing --------------------------------------------------------------------------------
def _ints(words: list[str], where: str, what: str) -> list[int]:
    try:
        return [int(w) for w in words]
    except ValueError:
        raise TaskFileError(f"{where}: {what}: expected integers, got {' '.join(words)!r}") from None


def parse_template(text: str, source: str = "<text>", default_name: str = "") -> dict[str, GridLayout]:
    """Parse a map file's text; `source` names it in errors."""
    name = default_name
    reference = ""
    sections: list[tuple[str, int, list[tuple[int, str]], list[tuple[int, list[str]]]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        where = f"{source}, line {number}"
        if not line or line.startswith("# ") or line == "#" and not sections:
            continue
        if line.startswith("[") and line.endswith("]"):
            size = line[1:-1].strip()
            if not _NAME.match(size):
                raise TaskFileError(f"{where}: bad size name {size!r}")
            if any(s[0] == size for s in sections):
                raise TaskFileError(f"{where}: size [{size}] appears twice")
            sections.append((size, number, [], []))
            continue
        words = line.split()
        if not sections:
            if words[0] == "name" and len(words) == 2 and _NAME.match(words[1]):
                name = words[1]
            elif words[0] == "reference":
                reference = line[len("reference") :].strip()
            elif words[0] in ("name",):
                raise TaskFileError(f"{where}: 'name' takes one word of letters, digits, '_' or '-'")
            else:
                raise TaskFileError(f"{where}: expected 'name', 'reference' or a [size] section, got {line!r}")
            continue
        _, _, rows, objects = sections[-1]
        if len(words) == 1 and set(line) <= LETTERS and not objects:
            rows.append((number, line))
        else:
            objects.append((number, words))
    if not name or not _NAME.match(name):
        raise TaskFileError(f"{source}: the template needs a 'name' line")
    if not sections:
        raise TaskFileError(f"{source}: no [size] section with a map")
    return {size: _layout(name, size, line, rows, objects, source, reference) for size, line, rows, objects in sections}


def _layout(
    name: str,
    size: str,
    header: int,
    rows: list[tuple[int, str]],
    lines: list[tuple[int, list[str]]],
    source: str,
    reference: str,
) -> GridLayout:
    if not rows:
        raise TaskFileError(f"{source}, line {header}: section [{size}] has no map rows")
    n = len(rows)
    walls: set[Cell] = set()
    letters: dict[Cell, tuple[str, int]] = {}
    start: Cell | None = None
    for r, (number, row) in enumerate(rows):
        if len(row) != n:
            raise TaskFileError(f"{source}, line {number}: map row has {len(row)} cells; a [{size}] map is {n}x{n}")
        for c, ch in enumerate(row):
            if ch == "#":
                walls.add((r, c))
            elif ch == "A":
                if start is not None:
                    raise TaskFileError(f"{source}, line {number}: a second start 'A' (first at {start})")
                start = (r, c)
            elif ch != ".":
                letters[(r, c)] = (ch, number)
    if start is None:
        raise TaskFileError(f"{source}, line {header}: section [{size}] has no start cell 'A'")
    rewards: dict[Cell, tuple[float, bool, bool | None]] = {}
    keys: list[Cell] = []
    doors: dict[Cell, str] = {}
    warps: dict[Cell, Cell] = {}
    markers: dict[Cell, tuple[int, int, int]] = {}
    placed: dict[Cell, str] = {}

    def cell_of(words: list[str], where: str, letter: str | None) -> Cell:
        r, c = _ints(words[1:3], where, words[0])
        if not (0 <= r < n and 0 <= c < n):
            raise TaskFileError(f"{where}: {words[0]} at ({r}, {c}) is outside the {n}x{n} grid")
        if (r, c) in walls:
            raise TaskFileError(f"{where}: {words[0]} at ({r}, {c}) is on a wall")
        if letter is not None:
            found = letters.get((r, c), ("A" if (r, c) == start else ".", 0))[0]
            if found != letter:
                raise TaskFileError(f"{where}: {words[0]} at ({r}, {c}) needs '{letter}' on the map, found '{found}'")
            if (r, c) in placed:
                raise TaskFileError(f"{where}: cell ({r}, {c}) already holds a {placed[(r, c)]}")
            placed[(r, c)] = words[0]
        return (r, c)

    for number, words in lines:
        where = f"{source}, line {number}"
        kind = words[0]
        if kind == "reward":
            if len(words) < 4:
                raise TaskFileError(f"{where}: reward ROW COL VALUE [visible|hidden] [terminate|continue]")
            try:
                value = float(words[3])
            except ValueError:
                raise TaskFileError(f"{where}: reward value {words[3]!r} is not a number") from None
            visible, terminate = True, None
            for flag in words[4:]:
                if flag in ("visible", "hidden"):
                    visible = flag == "visible"
                elif flag in ("terminate", "continue"):
                    terminate = flag == "terminate"
                else:
                    raise TaskFileError(f"{where}: reward flag {flag!r}: use visible, hidden, terminate or continue")
            rewards[cell_of(words, where, "R" if value > 0 else "L")] = (value, visible, terminate)
        elif kind == "key" and len(words) == 3:
            keys.append(cell_of(words, where, "K"))
        elif kind == "door" and len(words) == 4:
            if words[3] not in ("h", "v"):
                raise TaskFileError(f"{where}: door orientation must be 'h' or 'v', got {words[3]!r}")
            doors[cell_of(words, where, "D")] = words[3]
        elif kind == "warp" and len(words) == 5:
            cell = cell_of(words, where, "W")
            tr, tc = _ints(words[3:5], where, "warp target")
            if not (0 <= tr < n and 0 <= tc < n) or (tr, tc) in walls:
                raise TaskFileError(f"{where}: warp target ({tr}, {tc}) is not a free cell of the grid")
            warps[cell] = (tr, tc)
        elif kind == "marker" and len(words) == 6:
            cell = cell_of(words, where, None)
            colour = _ints(words[3:6], where, "marker colour")
            if not all(0 <= v <= 255 for v in colour):
                raise TaskFileError(f"{where}: marker colour values must be 0-255")
            markers[cell] = (colour[0], colour[1], colour[2])
        else:
            raise TaskFileError(
                f"{where}: cannot read {' '.join(words)!r}: expected a map row or 'reward/key/door/warp/marker ...'"
            )
    for cell, (letter, number) in sorted(letters.items()):
        if cell not in placed:
            raise TaskFileError(f"{source}, line {number}: map letter '{letter}' at {cell} has no object line")
    return GridLayout(
        name, size, n, frozenset(walls), start,
        GridObjects(rewards, tuple(keys), doors, warps, markers), source, reference,
    )


# -- objects given by a user (reference format) --------------------------------------------
def _cell(value: Any, where: str) -> Cell:
    if isinstance(value, str):
        value = value.replace("(", "").replace(")", "").split(",")
    try:
        r, c = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected a cell (row, col), got {value!r}") from None
    return (r, c)


def _items(value: Any, where: str) -> Iterable[tuple[Any, Any]]:
    if isinstance(value, Mapping):
        return value.items()
    if isinstance(value, (list, tuple)):
        return [(v["pos"], v.get("value")) if isinstance(v, Mapping) else (v, None) for v in value]
    raise ValueError(f"{where}: expected a dict {{(row, col): ...}} or a list, got {type(value).__name__}")


def objects_from_dict(
    objects: Mapping[str, Any], n: int, walls: Iterable[Cell] = (), where: str = "objects"
) -> GridObjects:
    """Objects in the reference's format ({'rewards': {(r, c): v or [v, visible, terminate]},
    'keys': [(r, c)], 'doors': {(r, c): 'h'|'v'}, 'warps': {(r, c): (r2, c2)}, 'markers':
    {(r, c): (R, G, B)}}), checked against the grid. Keys as lists are accepted."""
    if not isinstance(objects, Mapping):
        raise ValueError(f"{where}: expected a dict of object kinds, got {type(objects).__name__}")
    unknown = sorted(set(objects) - {"rewards", "keys", "doors", "warps", "markers"})
    if unknown:
        raise ValueError(
            f"{where}: unknown object kind(s) {', '.join(unknown)}; use rewards, keys, doors, warps, markers"
        )
    wall_set = set(walls)

    def check(cell: Cell, what: str) -> Cell:
        if not (0 <= cell[0] < n and 0 <= cell[1] < n):
            raise ValueError(f"{what}: cell {cell} is outside the {n}x{n} grid")
        if cell in wall_set:
            raise ValueError(f"{what}: cell {cell} is a wall")
        return cell

    rewards: dict[Cell, tuple[float, bool, bool | None]] = {}
    for pos, value in _items(objects.get("rewards", {}), f"{where}.rewards"):
        what = f"{where}.rewards[{pos}]"
        cell = check(_cell(pos, what), what)
        if isinstance(value, (list, tuple)):
            if len(value) != 3:
                raise ValueError(f"{what}: expected value or [value, visible, terminate], got {value!r}")
            v, visible, terminate = value
            rewards[cell] = (_number(v, what), bool(visible), bool(terminate))
        else:
            rewards[cell] = (_number(value, what), True, None)
    keys = []
    for pos, _ in _items(objects.get("keys", []), f"{where}.keys"):
        what = f"{where}.keys[{pos}]"
        keys.append(check(_cell(pos, what), what))
    doors = {}
    for pos, value in _items(objects.get("doors", {}), f"{where}.doors"):
        what = f"{where}.doors[{pos}]"
        if value not in ("h", "v"):
            raise ValueError(f"{what}: door orientation must be 'h' or 'v', got {value!r}")
        doors[check(_cell(pos, what), what)] = value
    warps = {}
    for pos, value in _items(objects.get("warps", {}), f"{where}.warps"):
        what = f"{where}.warps[{pos}]"
        warps[check(_cell(pos, what), what)] = check(_cell(value, what + " target"), what + " target")
    markers = {}
    for pos, value in _items(objects.get("markers", {}), f"{where}.markers"):
        what = f"{where}.markers[{pos}]"
        try:
            colour = tuple(int(round(float(v) * 255)) if isinstance(v, float) and v <= 1.0 else int(v) for v in value)
        except (TypeError, ValueError):
            colour = ()
        if len(colour) != 3 or not all(0 <= v <= 255 for v in colour):
            raise ValueError(f"{what}: expected an (R, G, B) colour, got {value!r}")
        markers[check(_cell(pos, what), what)] = (colour[0], colour[1], colour[2])
    return GridObjects(rewards, tuple(keys), doors, warps, markers)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: reward value must be a finite number, got {value!r}")
    return float(value)


# -- task graphs ----------------------------------------------------------------------------
def cell_id(r: int, c: int) -> str:
    return f"cell/{r}/{c}"


def build_grid_task(grid: GridLayout, task_id: str | None = None) -> TaskGraph:
    """The typed task graph of one layout (see the module docstring)."""
    n = grid.n
    graph = TaskGraph(
        task_id or grid.task_id,
        FAMILY,
        f"{grid.template}/{grid.size}",
        source=stored_source(grid.source),
        description=f"neuro-nav grid template {grid.template!r} at size {grid.size!r} ({n}x{n})",
        params={"template": grid.template, "size": grid.size, "n": n},
        provenance={"reference": grid.reference}
        if grid.reference
        else {"reference": "neuro-nav 2.5.0 GridEnv templates"},
        n_states=n * n,
        n_actions=len(DIRECTIONS),
    )
    for r in range(n):
        for c in range(n):
            graph.add_node(cell_id(r, c), "Cell", row=r, col=c, index=r * n + c, wall=(r, c) in grid.walls)
    for r in range(n):
        for c in range(n):
            if (r, c) in grid.walls:
                continue
            for action in range(len(DIRECTIONS)):
                tr, tc = grid.step_target((r, c), action)
                graph.add_edge(cell_id(r, c), cell_id(tr, tc), "MOVE", action=action, p=1.0)
    graph.add_edge("", cell_id(*grid.start), "START")
    objects = grid.objects
    for (r, c), (value, visible, terminate) in sorted(objects.rewards.items()):
        local = f"reward/{r}/{c}"
        graph.add_node(local, "Reward", kind="fixed", values=[value], visible=visible, terminate=terminate)
        graph.add_edge(cell_id(r, c), local, "HAS_REWARD")
    for i, (r, c) in enumerate(objects.keys):
        graph.add_node(f"key/{i}", "Key")
        graph.add_edge(cell_id(r, c), f"key/{i}", "HAS_OBJECT")
    for (r, c), orientation in sorted(objects.doors.items()):
        graph.add_node(f"door/{r}/{c}", "Door", orientation=orientation)
        graph.add_edge(cell_id(r, c), f"door/{r}/{c}", "HAS_OBJECT")
    for (r, c), (tr, tc) in sorted(objects.warps.items()):
        graph.add_node(f"warp/{r}/{c}", "Warp")
        graph.add_edge(cell_id(r, c), f"warp/{r}/{c}", "HAS_OBJECT")
        graph.add_edge(f"warp/{r}/{c}", cell_id(tr, tc), "WARPS_TO")
    for (r, c), colour in sorted(objects.markers.items()):
        graph.add_node(f"marker/{r}/{c}", "Marker", color=list(colour))
        graph.add_edge(cell_id(r, c), f"marker/{r}/{c}", "HAS_OBJECT")
    return graph.seal()


def stored_source(path: str) -> str:
    """The source recorded in the store: 'data/...' for the project's own maps, so the content
    hash does not depend on where the project is installed; a user's map keeps its path."""
    try:
        return "data/" + Path(path).resolve().relative_to(data_dir().resolve()).as_posix()
    except ValueError:
        return path


def grid_task_id(template: str, size: str) -> str:
    return f"{PREFIX}{template}/{size}"


def _names() -> list[str]:
    out: list[str] = []
    for name, path in sorted(template_files().items()):
        sizes = read_template(path)
        out.extend(f"{name}/{size}" for size in sorted(sizes, key=lambda s: (SIZE_ORDER + (s,)).index(s)))
    return out


def _build(task_id: str, name: str, params: dict[str, Any]) -> TaskGraph:
    if params:
        raise TaskFileError(f"{task_id}: grid tasks take no task parameters (objects etc. are environment parameters)")
    template, _, size = name.partition("/")
    return build_grid_task(layout(template, size), task_id)

