"""A parsed POGE world: the four section maps and their declarations, plus tile geometry.

The world keeps exactly what a file says (maps as text rows, declarations in file order)
so the writer can give the same text back; everything the environment needs (tile kinds,
move targets, slip distributions) is derived here once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ACTIONS: tuple[str, ...] = ("up", "down", "left", "right")
ACTION_INDEX: dict[str, int] = {name: i for i, name in enumerate(ACTIONS)}
DELTAS: tuple[tuple[int, int], ...] = ((-1, 0), (1, 0), (0, -1), (0, 1))
SECTIONS: tuple[str, ...] = ("Layout", "Abstraction", "Behaviour", "Rewards")

KIND_OF_CHAR: dict[str, str] = {"#": "wall", "D": "door", "E": "start", "G": "goal", "T": "terminal", "@": "toggle"}
WALKABLE = frozenset({"floor", "start", "goal", "terminal", "toggle"})  # tiles the player can stand on
ENDS_EPISODE = frozenset({"goal", "terminal"})
# a reward symbol pays only where the player stands and the episode goes on: POGE pays goal_reward on `G`
# and -goal_reward on `T` whatever the Rewards map says there, and nobody stands on a wall or a door
PAYS_REWARD = frozenset({"floor", "start", "toggle"})

Rule = tuple[tuple[int, float], ...]  # (executed action, probability) in declaration order


def kind_of(char: str) -> str:
    """Layout character -> tile kind; anything not reserved is floor."""
    return KIND_OF_CHAR.get(char, "floor")


@dataclass(frozen=True)
class PogeWorld:
    """One world file. Maps are tuples of equal-length rows; a missing section is None."""

    layout: tuple[str, ...]
    abstraction: tuple[str, ...] | None = None
    names: tuple[tuple[str, str], ...] = ()  # abstraction `id:name`, file order
    behaviour: tuple[str, ...] | None = None
    rules: tuple[tuple[str, int, Rule], ...] = ()  # (rule id, action, outcomes), file order, one per (id, action)
    rewards: tuple[str, ...] | None = None
    reward_values: tuple[tuple[str, int], ...] = ()  # `symbol:int`, file order
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    # -- shape and tiles ---------------------------------------------------------------
    @property
    def rows(self) -> int:
        return len(self.layout)

    @property
    def cols(self) -> int:
        return len(self.layout[0])

    def char(self, r: int, c: int) -> str:
        return self.layout[r][c]

    def kind(self, r: int, c: int) -> str:
        return kind_of(self.layout[r][c])

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.rows and 0 <= c < self.cols

    def tiles_of(self, kind: str) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.rows) for c in range(self.cols) if self.kind(r, c) == kind]

    @property
    def start(self) -> tuple[int, int]:
        return self.tiles_of("start")[0]

    @property
    def goals(self) -> list[tuple[int, int]]:
        return self.tiles_of("goal")

    @property
    def terminals(self) -> list[tuple[int, int]]:
        return self.tiles_of("terminal")

    @property
    def toggles(self) -> list[tuple[int, int]]:
        return self.tiles_of("toggle")

    @property
    def floor_states(self) -> int:
        """Tiles the player can stand on (not walls, not doors): the reference's 'floor states'."""
        return sum(1 for r in range(self.rows) for c in range(self.cols) if self.kind(r, c) in WALKABLE)

    # -- section meanings ----------------------------------------------------------------
    def symbol(self, r: int, c: int) -> str | None:
        """Abstraction symbol of a tile; None where the map is blank or absent."""
        if self.abstraction is None:
            return None
        ch = self.abstraction[r][c]
        return None if ch == " " else ch

    def abstraction_name(self, r: int, c: int) -> str | None:
        sym = self.symbol(r, c)
        return None if sym is None else dict(self.names).get(sym, sym)

    def rule_id(self, r: int, c: int) -> str | None:
        """Behaviour-map character of a tile when it names a rule (not blank, wall or a Layout echo)."""
        if self.behaviour is None:
            return None
        return _meaningful(self.behaviour[r][c], self.layout[r][c])

    def reward_symbol(self, r: int, c: int) -> str | None:
        """Rewards-map character of a tile when it names a reward (not blank, wall or a Layout echo)."""
        if self.rewards is None:
            return None
        return _meaningful(self.rewards[r][c], self.layout[r][c])

    def reward(self, r: int, c: int) -> int | None:
        sym = self.reward_symbol(r, c)
        return None if sym is None else dict(self.reward_values)[sym]

    @property
    def reward_tiles(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.rows) for c in range(self.cols) if self.reward_symbol(r, c) is not None]

    def unpaid_rewards(self) -> list[tuple[int, int]]:
        """Tiles whose reward symbol would never be paid (on a goal, terminal, wall or door)."""
        return [(r, c) for r, c in self.reward_tiles if self.kind(r, c) not in PAYS_REWARD]

    @property
    def rule_ids(self) -> list[str]:
        """Declared rule ids, in order of first declaration."""
        return list(dict.fromkeys(rid for rid, _, _ in self.rules))

    def slip(self, r: int, c: int, action: int) -> Rule:
        """(executed action, probability) pairs for `action` on this tile with stochastic behaviour on."""
        table = self._cache.get("rules")
        if table is None:
            table = self._cache["rules"] = {(rid, a): outcomes for rid, a, outcomes in self.rules}
        rid = self.rule_id(r, c)
        return table.get((rid, action), ((action, 1.0),)) if rid is not None else ((action, 1.0),)

    # -- geometry ------------------------------------------------------------------------
    def target(self, r: int, c: int, executed: int) -> tuple[tuple[int, int], tuple[int, int] | None]:
        """Where executing an action from (r, c) leads, and the door passed (or None).

        A wall (or the map edge) ahead: no move. A door ahead: onto it and once more in
        the same direction (the parser guarantees the second tile is walkable).
        """
        dr, dc = DELTAS[executed]
        nr, nc = r + dr, c + dc
        if not self.inside(nr, nc) or self.kind(nr, nc) == "wall":
            return (r, c), None
        if self.kind(nr, nc) == "door":
            return (nr + dr, nc + dc), (nr, nc)
        return (nr, nc), None


def unpaid_reward_reason(kind: str) -> str:
    """Why a reward symbol on a tile of this kind is never paid (one clause)."""
    if kind == "goal":
        return "reaching a goal pays goal_reward (100 by default) whatever the Rewards map says, as in POGE"
    if kind == "terminal":
        return "reaching a terminal pays -goal_reward (-100 by default) whatever the Rewards map says, as in POGE"
    return f"the player never stands on a {kind}"


def _meaningful(ch: str, layout_ch: str) -> str | None:
    if ch in (" ", "#") or ch == layout_ch:
        return None
    return ch


def statistics(world: PogeWorld) -> dict:
    """Size, doors, floor states, rules, goals, terminals, toggles and rewards of a parsed world.

    The reference's figures for the example worlds are in tests/poge/test_parser.py.
    """
    values = dict(world.reward_values)
    used = sorted(
        {s for s in (world.reward_symbol(r, c) for r, c in world.reward_tiles) if s is not None},
        key=[s for s, _ in world.reward_values].index,
    )
    return {
        "rows": world.rows,
        "cols": world.cols,
        "doors": len(world.tiles_of("door")),
        "floor_states": world.floor_states,
        "rules": world.rule_ids,
        "goals": world.goals,
        "terminals": world.terminals,
        "toggles": world.toggles,
        "reward_tiles": len(world.reward_tiles),
        "reward_values": {s: values[s] for s in used},
    }
