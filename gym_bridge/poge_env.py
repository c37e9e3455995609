"""PogeEnv: a POGE world (stored tile graph) as a gymnasium environment.

Dynamics follow the reference (POGE's own env) with its bugs fixed (see docs/poge.md):
- slips: on a tile with a rule for the chosen action (stochastic behaviour on), the executed
  action is drawn from the rule: the stored MOVE edges (action, executed, p);
- a wall ahead: no move, observation unchanged (+ `_wall` with indicate_wall), step penalty;
- a door ahead: the player crosses it in one step; entering `@` flips stochastic behaviour
  (reset turns it back on);
- a reward tile pays its value (once per episode with one_time_rewards); `G` pays
  goal_reward and terminates, `T` pays -goal_reward and terminates; a zero reward becomes
  the (always negative) step penalty;
- after max_ep_len steps the episode is *truncated* (the reference said `done`);
- `indicate_slip` marks slips (`_slip_<action>`) only under partial observability: fully
  observable, the observation is the tile, as in the reference (which ignores the flag there).
Fixes: goal tiles are observed like every other tile (their abstraction symbol), so
partially observable world3 runs; the observation vocabulary holds only observations that
can occur from the start (no unreachable `_slip_*` / `_wall` entries); randomness comes only
from `reset(seed=...)`.

Speed: everything is compiled once into Python lists of precomputed outcomes
(next state, observation, reward, terminated, reward-tile slot, name); `step` indexes them and
draws uniforms in blocks from `self.np_random`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from tasks.poge import ACTIONS, PogeWorld, build_from_world_file, graph_to_world
from tasks.poge.world import ENDS_EPISODE

from .loading import load_task_graph
from .params import (
    RenderModes,
    check_bool,
    check_choice,
    check_number,
    check_positive_int,
    check_render_mode,
    check_store,
    check_type,
    named,
)

BLOCK = 1024
OBS_TYPES = ("index", "onehot")

Outcome = tuple[int, int, float, bool, int, str]  # next state, observation, reward, ends the episode, slot, name
Draw = tuple[list[float], list[Outcome]]  # cumulative probabilities (last one 2.0) and their outcomes


def load_world_graph(world: str | TaskGraph, store: GraphStore | str | None = None) -> TaskGraph:
    """A world given as a TaskGraph, a path to a world file (read, not stored) or a task id (from the store)."""
    if isinstance(world, TaskGraph):
        return world
    if not isinstance(world, str) or not world:
        raise ValueError(f"world: expected a world file path or a task id such as 'poge/world0', got {world!r}")
    if Path(world).is_file():
        return build_from_world_file(world)
    if world.endswith(".txt"):
        raise ValueError(f"world: no world file {world!r}")
    return load_task_graph(world, store)


class PogeEnv(gym.Env):
    """A POGE gridworld; see the module docstring for the rules. Actions: 0 up, 1 down, 2 left, 3 right.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from gym_bridge import PogeEnv
    >>> with open_store(":memory:") as store:
    ...     env = PogeEnv("poge/world0", store=store, is_partially_obs=False)
    >>> obs, info = env.reset(seed=0)
    >>> info["observation"]
    '(3,5)'
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}
    action_space: spaces.Discrete

    def __init__(
        self,
        world: str | TaskGraph = "poge/world0",
        store: GraphStore | str | None = None,
        force_determinism: bool = False,
        indicate_slip: bool = False,
        is_partially_obs: bool = True,
        indicate_wall: bool = False,
        max_ep_len: int = 100,
        goal_reward: float = 100,
        one_time_rewards: bool = True,
        step_penalty: float = 0,
        obs_type: str = "index",
        render_mode: str | None = None,
    ) -> None:
        check_type("world", world, (str, TaskGraph), "a world file path, a stored world id or a TaskGraph")
        check_store(store)
        check_choice("obs_type", obs_type, OBS_TYPES)
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.max_ep_len = check_positive_int("max_ep_len", max_ep_len)
        self.goal_reward = check_number("goal_reward", goal_reward)
        step_penalty = check_number("step_penalty", step_penalty)
        self.force_determinism = check_bool("force_determinism", force_determinism)
        self.indicate_slip = check_bool("indicate_slip", indicate_slip)
        self.is_partially_obs = check_bool("is_partially_obs", is_partially_obs)
        self.indicate_wall = check_bool("indicate_wall", indicate_wall)
        self.one_time_rewards = check_bool("one_time_rewards", one_time_rewards)
        with named("world"):
            graph = load_world_graph(world, store)
        self.task_id = graph.task_id
        self.world: PogeWorld = graph_to_world(graph)
        self._mark_slips = self.indicate_slip and self.is_partially_obs  # the reference ignores it fully observable
        self.step_penalty = -abs(step_penalty) if step_penalty else 0.0  # the reference always makes it negative
        self.obs_type = obs_type
        self.render_mode = render_mode
        self._compile(graph)
        self.action_space = spaces.Discrete(len(ACTIONS))
        n_obs = len(self.observation_names)
        if obs_type == "onehot":
            self.observation_space = spaces.Box(0.0, 1.0, (n_obs,), np.float32)
            table = np.eye(n_obs, dtype=np.float32)
            table.flags.writeable = False
            self._table: np.ndarray | None = table
        else:
            self.observation_space = spaces.Discrete(n_obs)
            self._table = None
        self._u: list[float] = []
        self._ui = 0
        self._seeded = False
        self._s = self._start_state
        self._t = 0
        self._got = [False] * self._n_slots

    # -- compile: graph -> outcome tables ------------------------------------------------------
    def _compile(self, graph: TaskGraph) -> None:
        w = self.world
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
        if self.one_time_rewards:
            for r, c in w.reward_tiles:
                if kinds[r * cols + c] not in ENDS_EPISODE and w.reward(r, c):
                    slots[r * cols + c] = len(slots)
        self._n_slots = len(slots)

        def base_name(tile: int) -> str:
            r, c = divmod(tile, cols)
            if self.is_partially_obs:
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

        start_tile = w.start[0] * cols + w.start[1]
        start = start_tile * 2 + (0 if self.force_determinism else 1)
        keys: dict[str, tuple[str, int, int]] = {base_name(start_tile): (base_name(start_tile), -1, 0)}
        base_first: dict[str, int] = {base_name(start_tile): start_tile}
        observed: dict[int, set[str]] = {start_tile: {base_name(start_tile)}}
        raw: dict[int, list[list[tuple[float, int, str, float, bool, int]]]] = {}
        todo, seen = [start], {start}
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
                    if self._mark_slips and executed != action:
                        name += f"_slip_{ACTIONS[executed]}"
                        key[1] = executed
                    if blocked and self.indicate_wall:
                        name += "_wall"
                        key[2] = 1
                    observed.setdefault(target, set()).add(name)
                    plain = base_name(target)
                    if target < base_first.get(plain, target + 1):
                        base_first[plain] = target
                    keys[name] = (plain, key[1], key[2])
                    mode = on
                    if not blocked and kinds[target] == "toggle" and not self.force_determinism:
                        mode = 1 - on
                    nxt = target * 2 + mode
                    reward, slot = self.step_penalty, -1
                    if not blocked:
                        tr, tc = divmod(target, cols)
                        if kinds[target] == "goal":
                            reward = self.goal_reward
                        elif kinds[target] == "terminal":
                            reward = -self.goal_reward
                        elif tile_reward := w.reward(tr, tc):
                            reward = float(tile_reward)
                            slot = slots.get(target, -1)
                    if reward == 0.0:
                        reward = self.step_penalty
                    row.append((p, nxt, name, reward, kinds[target] in ENDS_EPISODE, slot))
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
                rows.append(row)
            raw[state] = rows
        # the vocabulary: observations that can occur, ordered by tile, then slip, then wall
        names = sorted(keys, key=lambda n: (base_first[keys[n][0]], keys[n][1], keys[n][2]))
        index = {n: i for i, n in enumerate(names)}
        self.observation_names: tuple[str, ...] = tuple(names)
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
        self._det, self._dist = det, dist
        self._start_state = start
        self._start_obs = index[base_name(start_tile)]
        self._reachable = frozenset(seen)
        self._at_tile = at_tile
        self._kinds = kinds

    # -- gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None or not self._seeded:
            super().reset(seed=seed)
            self._u, self._ui, self._seeded = [], 0, True
        state = self._start_state
        if options:
            state = self._reset_options(options)
        self._s = state
        self._t = 0
        self._got = [False] * self._n_slots
        tile = state // 2
        obs = self._start_obs if state == self._start_state else self._at_tile[tile]
        name = self.observation_names[obs]
        return (obs if self._table is None else self._table[obs].copy()), {"observation": name}

    def _reset_options(self, options: dict[str, Any]) -> int:
        unknown = sorted(set(options) - {"tile"})
        if unknown:
            raise ValueError(f"reset options: unknown key(s) {', '.join(unknown)}; use 'tile': (row, col)")
        tile = options["tile"]
        w = self.world
        try:
            r, c = (int(v) for v in tile)
        except (TypeError, ValueError):
            raise ValueError(f"reset options: 'tile' must be (row, col), got {tile!r}") from None
        state = (r * w.cols + c) * 2 + (0 if self.force_determinism else 1)
        if not w.inside(r, c) or state not in self._reachable:
            raise ValueError(f"reset options: tile ({r}, {c}) is not a tile the player can reach from the start")
        return state

    def step(self, action):
        s = self._s
        o = self._det[s][action]
        if o is None:
            cumulative, outs = self._dist[s][action]
            i = self._ui
            u = self._u
            if i >= len(u):
                u = self._u = self.np_random.random(BLOCK).tolist()
                i = 0
            self._ui = i + 1
            x = u[i]
            k = 0
            while x >= cumulative[k]:
                k += 1
            o = outs[k]
        nxt, obs, reward, terminated, slot, name = o
        self._s = nxt
        if slot >= 0:
            got = self._got
            if got[slot]:
                reward = self.step_penalty
            else:
                got[slot] = True
        t = self._t = self._t + 1
        if self._table is not None:
            obs = self._table[obs].copy()
        return obs, reward, terminated, t >= self.max_ep_len and not terminated, {"observation": name}

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def tile(self) -> tuple[int, int]:
        """The player's (row, col)."""
        return divmod(self._s // 2, self.world.cols)

    @property
    def stochastic(self) -> bool:
        """Whether slips are on (entering `@` flips it; never with force_determinism)."""
        return bool(self._s % 2)

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        r0, c0 = self.tile
        rows = [list(row) for row in self.world.layout]
        rows[self.world.start[0]][self.world.start[1]] = " "
        rows[r0][c0] = "P"
        text = "\n".join("".join(row) for row in rows) + "\n"
        if self.render_mode == "ansi":
            return text
        return _picture(self.world, (r0, c0))


_COLOURS = {
    "wall": (40, 40, 40),
    "door": (150, 100, 50),
    "floor": (235, 235, 235),
    "start": (235, 235, 235),
    "goal": (60, 180, 75),
    "terminal": (200, 40, 40),
    "toggle": (70, 130, 220),
}


def _picture(world: PogeWorld, player: tuple[int, int], size: int = 12) -> np.ndarray:
    """An RGB image: one coloured square per tile, the player as a dark dot."""
    img = np.zeros((world.rows * size, world.cols * size, 3), dtype=np.uint8)
    for r in range(world.rows):
        for c in range(world.cols):
            img[r * size : (r + 1) * size, c * size : (c + 1) * size] = _COLOURS[world.kind(r, c)]
            if world.reward(r, c):
                img[r * size + 4 : r * size + 8, c * size + 4 : c * size + 8] = (240, 200, 0)
    r, c = player
    img[r * size + 3 : (r + 1) * size - 3, c * size + 3 : (c + 1) * size - 3] = (20, 20, 120)
    return img
