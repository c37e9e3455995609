"""The compiled form of a POGE world, which PogeEnv and PogeVectorEnv both step.

`compile_world` reads a stored world's tile graph once, with the env's options, into
per-(state, action) outcomes: next state, observation index, reward, terminated, one-time
reward slot and observation name. A state is `tile * 2 + slips_on`. Deterministic outcomes
are stored as one tuple, stochastic ones (slip rules) as cumulative probabilities and their
outcomes. The single env indexes these Python lists; the vector env takes the same outcomes
as flat arrays (`flat_outcomes`). Either way every rule of the module docstring of
`gym_bridge.poge.env` comes from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphstore import TaskGraph
from tasks.poge import ACTIONS, PogeWorld, graph_to_world
from tasks.poge.world import ENDS_EPISODE, WALKABLE

from ..params import check_bool, check_number

STARTABLE = WALKABLE - ENDS_EPISODE  # tile kinds an episode can start on (reset option `tile`)

Outcome = tuple[int, int, float, bool, int, str]  # next state, observation, reward, terminated, slot, name
Draw = tuple[list[float], list[Outcome]]  # cumulative probabilities (last one 2.0) and their outcomes


@dataclass(frozen=True)
class PogeOptions:
    """The env options that change the compiled outcomes (checked: one clear error per field)."""

    force_determinism: bool = False
    indicate_slip: bool = False
    is_partially_obs: bool = True
    indicate_wall: bool = False
    goal_reward: float = 100
    one_time_rewards: bool = True
    step_penalty: float = 0.0  # as paid: never positive (the reference makes any penalty negative)

    @classmethod
    def checked(cls, force_determinism=False, indicate_slip=False, is_partially_obs=True, indicate_wall=False,
                goal_reward=100, one_time_rewards=True, step_penalty=0) -> "PogeOptions":
        penalty = check_number("step_penalty", step_penalty)
        return cls(
            force_determinism=check_bool("force_determinism", force_determinism),
            indicate_slip=check_bool("indicate_slip", indicate_slip),
            is_partially_obs=check_bool("is_partially_obs", is_partially_obs),
            indicate_wall=check_bool("indicate_wall", indicate_wall),
            goal_reward=check_number("goal_reward", goal_reward),
            one_time_rewards=check_bool("one_time_rewards", one_time_rewards),
            step_penalty=-abs(penalty) if penalty else 0.0,
        )


@dataclass(frozen=True)
class FlatOutcomes:
    """The outcomes as flat arrays for N copies: row = state * n_actions + action, outcome k
    of a row at row * width + k; `boundaries[k]` is the cumulative probability past which
    outcome k + 1 is drawn (one 1-D array each: gathering rows of a 2-D array is slower)."""

    width: int
    n_actions: int
    next_state: np.ndarray
    observation: np.ndarray
    reward: np.ndarray
    terminal: np.ndarray
    slot: np.ndarray
    boundaries: list[np.ndarray]


@dataclass(frozen=True)
class CompiledWorld:
    """A POGE world compiled with the env's options; see the module docstring.

    Made by `compile_world` (which `PogeEnv` and the vector env call), not by hand: every
    outcome of every state and action is precomputed, so a step only indexes lists.

    Parameters
    ----------
    task_id : str
        The stored world's task id.
    world : PogeWorld
        The world (tiles, doors, rewards, slip rules) read from the stored graph.
    options : PogeOptions
        The env options it was compiled with.
    observation_names : tuple of str
        The observation vocabulary: only observations that can occur in an episode started on
        any tile `start_at` accepts, ordered by tile, then slip, then wall. An observation is
        an index into it.
    det, dist : list
        Per state, per action: `det` holds the one outcome of a deterministic move (else
        None), `dist` the (cumulative probabilities, outcomes) of a slip rule. Unreachable
        states hold None.
    start_state, start_obs : int
        Where an episode starts by default, and what the player sees there.
    reachable : frozenset of int
        The states the player can reach from a tile an episode can start on (`start_at`).
    at_tile : dict
        An observation of each reachable tile (its plain name on every tile an episode
        can start on).
    kinds : list of str
        The kind of each tile (``"wall"``, ``"floor"``, ...), row by row.
    n_slots : int
        One-time reward tiles (each paid once per episode with `one_time_rewards`).

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge.poge import CompiledWorld, PogeOptions, compile_world
    >>> world = compile_world(tasks.build("poge/world0"), PogeOptions(is_partially_obs=False))
    >>> world.observation_names[world.start_obs], len(world.det) == 2 * world.world.rows * world.world.cols
    ('(3,5)', True)
    """

    task_id: str
    world: PogeWorld
    options: PogeOptions
    observation_names: tuple[str, ...]
    det: list[list[Outcome | None] | None]
    dist: list[list[Draw | None] | None]
    start_state: int
    start_obs: int
    reachable: frozenset[int]
    at_tile: dict[int, int]
    kinds: list[str]
    n_slots: int

    @property
    def n_states(self) -> int:
        return len(self.det)

    def observation_at(self, state: int) -> int:
        """What the player sees when an episode starts in `state`.

        Parameters
        ----------
        state : int
            A state the episode starts in.

        Returns
        -------
        int
            An index into `observation_names`.
        """
        return self.start_obs if state == self.start_state else self.at_tile[state // 2]

    def start_at(self, tile: object) -> int:
        """The state of a reset to `tile` (row, col), slips on as after every reset.

        Any tile the player can stand on without ending the episode is accepted, reachable
        from the world's start or not: POGE's own env observes every such tile, so placing
        the player there is well defined. Off-map tiles, walls and doors (which POGE has no
        observation for) and goal or terminal tiles (where an episode has already ended) get
        a one-line error.

        Parameters
        ----------
        tile : (int, int)
            The tile (row, col).

        Returns
        -------
        int
            The state an episode started there is in.

        Raises
        ------
        ValueError
            The tile is off the map, a wall, a door, or ends the episode.
        """
        w = self.world
        try:
            r, c = (int(v) for v in tile)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            raise ValueError(f"reset options: 'tile' must be (row, col), got {tile!r}") from None
        if not w.inside(r, c):
            raise ValueError(
                f"reset options: tile ({r}, {c}) is off the map (rows 0..{w.rows - 1}, columns 0..{w.cols - 1})"
            )
        kind = self.kinds[r * w.cols + c]
        if kind not in STARTABLE:
            why = "it ends the episode" if kind in ENDS_EPISODE else "the player cannot stand on it"
            raise ValueError(
                f"reset options: tile ({r}, {c}) is a {kind}: {why}; start on a floor, start or toggle tile"
            )
        return (r * w.cols + c) * 2 + (0 if self.options.force_determinism else 1)

    def flat_outcomes(self) -> FlatOutcomes:
        """The outcomes as flat arrays (what the vector env steps); unreachable states stay put."""
        n_states, n_actions = self.n_states, len(ACTIONS)
        width = max([1] + [len(item[1]) for row in self.dist for item in (row or ()) if item is not None])
        size = n_states * n_actions
        nxt = np.repeat(np.arange(n_states, dtype=np.int64), n_actions * width)
        obs = np.zeros(size * width, dtype=np.int64)
        reward = np.zeros(size * width)
        terminal = np.zeros(size * width, dtype=bool)
        slot = np.full(size * width, -1, dtype=np.int64)
        cumulative = np.full((size, width), 2.0)
        for s in range(n_states):
            singles, draws = self.det[s], self.dist[s]
            if singles is None:
                continue
            for a in range(n_actions):
                row = s * n_actions + a
                single = singles[a]
                draw = draws[a] if draws is not None else None
                if single is not None:
                    outcomes, cum = [single], [2.0]
                elif draw is not None:
                    cum, outcomes = draw
                else:
                    raise RuntimeError(f"task {self.task_id!r}: state {s}, action {a} has no outcome")
                for k, (t, o, r, term, sl, _name) in enumerate(outcomes):
                    i = row * width + k
                    nxt[i], obs[i], reward[i], terminal[i], slot[i] = t, o, r, term, sl
                    cumulative[row, k] = cum[k]
        boundaries = [cumulative[:, k].copy() for k in range(width - 1)]
        return FlatOutcomes(width, n_actions, nxt, obs, reward, terminal, slot, boundaries)


def compile_world(graph: TaskGraph, options: PogeOptions = PogeOptions()) -> CompiledWorld:
    """Compile a stored world's tile graph with the env's options (see the module docstring)."""
    w = graph_to_world(graph)
    mark_slips = options.indicate_slip and options.is_partially_obs  # the reference ignores it fully observable
    cols = w.cols
    moves: dict[tuple[int, int], list[tuple[int, float, int]]] = {}
    for source, dest, props in graph.edges("MOVE"):
        s, t = graph.props(source), graph.props(dest)
        if props["p"] > 0.0:
            moves.setdefault((s["index"], props["action"]), []).append((props["executed"], props["p"], t["index"]))
    for outcomes in moves.values():
        outcomes.sort()
    kinds = [w.kind(i // cols, i % cols) for i in range(w.rows * cols)]
    slots: dict[int, int] = {}
    if options.one_time_rewards:
        for r, c in w.reward_tiles:
            if kinds[r * cols + c] not in ENDS_EPISODE and w.reward(r, c):
                slots[r * cols + c] = len(slots)

    def base_name(tile: int) -> str:
        r, c = divmod(tile, cols)
        if options.is_partially_obs:
            name = w.abstraction_name(r, c)
            if name is not None:
                return name
        return f"({r},{c})"

    def outcomes_of(state: int, action: int) -> list[tuple[float, int, int, bool]]:
        """(p, executed, target tile, blocked) for a walkable, non-ending state."""
        tile, on = divmod(state, 2)
        if on:
            found = moves.get((tile, action))
            if not found:
                raise ValueError(
                    f"task {graph.task_id!r}: tile {divmod(tile, cols)} has no MOVE edges for {ACTIONS[action]}"
                )
            return [(p, e, t, t == tile) for e, p, t in found]
        (tr, tc), _ = w.target(*divmod(tile, cols), action)
        t = tr * cols + tc
        return [(1.0, action, t, t == tile)]

    mode0 = 0 if options.force_determinism else 1  # reset turns slips on
    start_tile = w.start[0] * cols + w.start[1]
    start = start_tile * 2 + mode0
    # an episode can start on any tile the player can stand on without ending it (reset
    # option `tile`), so every such tile is a root, reachable from the world's start or not
    roots = [start] + [t * 2 + mode0 for t, kind in enumerate(kinds) if kind in STARTABLE and t != start_tile]
    keys: dict[str, tuple[str, int, int]] = {}
    base_first: dict[str, int] = {}
    observed: dict[int, set[str]] = {}
    for root in roots:  # what the player sees after a reset there: the tile's plain name
        name = base_name(root // 2)
        keys[name] = (name, -1, 0)
        base_first[name] = min(base_first.get(name, root // 2), root // 2)
        observed[root // 2] = {name}
    raw: dict[int, list[list[tuple[float, int, str, float, bool, int]]]] = {}
    todo, seen = list(roots), set(roots)
    while todo:
        state = todo.pop()
        tile, on = divmod(state, 2)
        if kinds[tile] in ENDS_EPISODE:
            continue
        rows = []
        for action in range(len(ACTIONS)):
            row = []
            for p, executed, target, blocked in outcomes_of(state, action):
                name = base_name(target)
                key = [target, -1, 0]
                if mark_slips and executed != action:
                    name += f"_slip_{ACTIONS[executed]}"
                    key[1] = executed
                if blocked and options.indicate_wall:
                    name += "_wall"
                    key[2] = 1
                observed.setdefault(target, set()).add(name)
                plain = base_name(target)
                if target < base_first.get(plain, target + 1):
                    base_first[plain] = target
                keys[name] = (plain, key[1], key[2])
                mode = on
                if not blocked and kinds[target] == "toggle" and not options.force_determinism:
                    mode = 1 - on
                nxt = target * 2 + mode
                reward, slot = options.step_penalty, -1
                if not blocked:
                    tr, tc = divmod(target, cols)
                    if kinds[target] == "goal":
                        reward = options.goal_reward
                    elif kinds[target] == "terminal":
                        reward = -options.goal_reward
                    elif tile_reward := w.reward(tr, tc):
                        reward = float(tile_reward)
                        slot = slots.get(target, -1)
                if reward == 0.0:
                    reward = options.step_penalty
                row.append((p, nxt, name, reward, kinds[target] in ENDS_EPISODE, slot))
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
            rows.append(row)
        raw[state] = rows
    # the vocabulary: observations that can occur, ordered by tile, then slip, then wall
    names = sorted(keys, key=lambda n: (base_first[keys[n][0]], keys[n][1], keys[n][2]))
    index = {n: i for i, n in enumerate(names)}
    n_states = w.rows * cols * 2
    det: list[list[Outcome | None] | None] = [None] * n_states
    dist: list[list[Draw | None] | None] = [None] * n_states
    at_tile: dict[int, int] = {}  # an observation of each reachable tile (its plain name if it occurs)
    for tile, seen_names in observed.items():
        plain = base_name(tile)
        at_tile[tile] = index[plain] if plain in seen_names else min(index[n] for n in seen_names)
    for state in seen:
        tile = state // 2
        if state not in raw:  # goal / terminal: stepping again stays, terminated
            obs = at_tile[tile]
            stay = (state, obs, 0.0, True, -1, names[obs])
            det[state] = [stay] * len(ACTIONS)
            continue
        drow: list[Outcome | None] = []
        srow: list[Draw | None] = []
        for row in raw[state]:
            outs = [(nxt, index[name], reward, term, slot, name) for _, nxt, name, reward, term, slot in row]
            if len(outs) == 1:
                drow.append(outs[0])
                srow.append(None)
            else:
                cumulative: list[float] = []
                total = 0.0
                for p, *_ in row:
                    total += p
                    cumulative.append(total)
                cumulative[-1] = 2.0  # every uniform in [0, 1) lands on an outcome
                drow.append(None)
                srow.append((cumulative, outs))
        det[state], dist[state] = drow, srow
    return CompiledWorld(
        task_id=graph.task_id, world=w, options=options, observation_names=tuple(names), det=det, dist=dist,
        start_state=start, start_obs=index[base_name(start_tile)], reachable=frozenset(seen), at_tile=at_tile,
        kinds=kinds, n_slots=len(slots),
    )
