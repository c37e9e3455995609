"""Hypothesis strategies: random valid POGE worlds, and mutations that make them invalid."""

from __future__ import annotations

from hypothesis import strategies as st

from tasks.poge import PogeWorld
from tasks.poge.world import DELTAS, PAYS_REWARD, kind_of

FLOOR = " .o"


def _door_ok(grid: list[list[str]], r: int, c: int) -> bool:
    rows, cols = len(grid), len(grid[0])
    for dr, dc in DELTAS:
        fr, fc = r - dr, c - dc
        if not (0 <= fr < rows and 0 <= fc < cols) or grid[fr][fc] in "#D":
            continue
        tr, tc = r + dr, c + dc
        if not (0 <= tr < rows and 0 <= tc < cols) or grid[tr][tc] in "#D":
            return False
    return True


@st.composite
def worlds(draw: st.DrawFn) -> PogeWorld:
    """A valid world: walled border, random interior, one E, 1-2 G, maybe T/@/doors, optional sections."""
    rows = draw(st.integers(4, 7))
    cols = draw(st.integers(4, 9))
    grid = [["#"] * cols for _ in range(rows)]
    interior = [(r, c) for r in range(1, rows - 1) for c in range(1, cols - 1)]
    for r, c in interior:
        grid[r][c] = draw(st.sampled_from(FLOOR + FLOOR + "#D"))
    specials = draw(st.sampled_from(["EG", "EGG", "EGT", "EG@", "EGT@"]))
    if sum(grid[r][c] in FLOOR for r, c in interior) < len(specials):
        for r, c in interior[: len(specials)]:
            grid[r][c] = " "
    changed = True
    while changed:  # doors that lead nowhere become walls, until every door is valid
        changed = False
        for r, c in interior:
            if grid[r][c] == "D" and not _door_ok(grid, r, c):
                grid[r][c] = "#"
                changed = True
    floor = [(r, c) for r, c in interior if grid[r][c] in FLOOR]
    picks = draw(st.permutations(floor))[: len(specials)]
    for (r, c), ch in zip(picks, specials):
        grid[r][c] = ch
    for r, c in interior:  # a door next to a new special tile is still fine (specials are walkable)
        assert grid[r][c] != "D" or _door_ok(grid, r, c)
    layout = tuple("".join(row) for row in grid)

    def section_map(alphabet: str) -> tuple[str, ...]:
        return tuple(
            "".join("#" if grid[r][c] == "#" else draw(st.sampled_from(alphabet)) for c in range(cols))
            for r in range(rows)
        )

    abstraction = names = None
    if draw(st.booleans()):
        abstraction = section_map(" 12AB")
        used = sorted({ch for row in abstraction for ch in row} - {" ", "#"})
        named = draw(st.lists(st.sampled_from(used), unique=True)) if used else []
        names = tuple((s, draw(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True))) for s in named)
    behaviour, rules = None, ()
    if draw(st.booleans()):
        behaviour = section_map(" 123")
        used = sorted({ch for row in behaviour for ch in row} - {" ", "#"})
        found = []
        for rid in used:
            for action in draw(st.lists(st.integers(0, 3), unique=True, max_size=4)):
                executed = draw(st.lists(st.integers(0, 3), unique=True, min_size=1, max_size=4))
                weights = draw(st.lists(st.integers(1, 20), min_size=len(executed), max_size=len(executed)))
                parts = _split_twenty(weights)
                found.append((rid, action, tuple((e, k / 20) for e, k in zip(executed, parts))))
        rules = tuple(found)
    rewards, values = None, ()
    if draw(st.booleans()):
        rewards = tuple(  # reward symbols only where a reward is paid (floor, start, toggle)
            "".join(ch if kind_of(layout[r][c]) in PAYS_REWARD else layout[r][c] for c, ch in enumerate(row))
            for r, row in enumerate(section_map(" ab*"))
        )
        used = sorted({ch for row in rewards for ch in row} - {" ", "#"})
        extra = ["z"] if draw(st.booleans()) else []
        values = tuple((s, draw(st.integers(-10, 10))) for s in used + extra)
    return PogeWorld(
        layout=layout,
        abstraction=abstraction,
        names=names or (),
        behaviour=behaviour,
        rules=rules,
        rewards=rewards,
        reward_values=values,
    )


def _split_twenty(weights: list[int]) -> list[int]:
    """Integer parts summing to 20, proportional to the weights (each at least 0)."""
    total = sum(weights)
    parts = [w * 20 // total for w in weights]
    parts[0] += 20 - sum(parts)
    return parts
