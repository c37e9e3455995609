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
- after max_episode_steps steps the episode is *truncated* (the reference said `done`);
- `indicate_slip` marks slips (`_slip_<action>`) only under partial observability: fully
  observable, the observation is the tile, as in the reference (which ignores the flag there).
Fixes: goal tiles are observed like every other tile (their abstraction symbol), so
partially observable world3 runs; the observation vocabulary holds only observations that
can occur in an episode (no unreachable `_slip_*` / `_wall` entries); randomness comes only
from `reset(seed=...)`. `reset(options={"tile": (row, col)})` starts on any tile the player
can stand on that does not end the episode, reachable from the start or not (POGE's env
observes every such tile; it has no reset option).

Speed: everything is compiled once into Python lists of precomputed outcomes
(next state, observation, reward, terminated, reward-tile slot, name); `step` indexes them and
draws uniforms from a `RandomStream` (blocks from `self.np_random`, as every single env).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from graphstore import GraphStore, TaskGraph
from tasks import RandomStream
from tasks.poge import ACTIONS, PogeWorld, build_from_world_file

from ..loading import load_task_graph
from ..params import (
    NOT_GIVEN,
    RenderModes,
    check_positive_int,
    check_render_mode,
    check_store,
    check_type,
    episode_steps,
    made_by_gymnasium,
    named,
)
from .compiled import CompiledWorld, PogeOptions, compile_world
from .observations import POGE_OBSERVATIONS, PogeObservation


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


def load_compiled_world(
    world: str | TaskGraph, store: GraphStore | str | None = None, **options: Any
) -> CompiledWorld:
    """The compiled form of a world (file path, stored id or TaskGraph) with PogeEnv's options."""
    return compile_world(load_world_graph(world, store), PogeOptions.checked(**options))


def prepare_world(
    world: str | TaskGraph, store: GraphStore | str | None, options: PogeOptions, obs_type: str
) -> tuple[CompiledWorld, PogeObservation]:
    """The compiled world and its observation object: what PogeEnv and PogeVectorEnv both step."""
    check_type("world", world, (str, TaskGraph), "a world file path, a stored world id or a TaskGraph")
    check_store(store)
    observation_type = POGE_OBSERVATIONS.get(obs_type)  # a clear error before the world is read
    with named("world"):
        compiled = compile_world(load_world_graph(world, store), options)
    return compiled, cast(PogeObservation, observation_type(compiled, store))


def start_state(compiled: CompiledWorld, options: dict[str, Any] | None) -> int:
    """The state a reset starts in: the world's start, or reset option `tile` (row, col)."""
    if not options:
        return compiled.start_state
    unknown = sorted(set(options) - {"tile"})
    if unknown:
        raise ValueError(f"reset options: unknown key(s) {', '.join(unknown)}; use 'tile': (row, col)")
    return compiled.start_at(options["tile"])


class PogeEnv(gym.Env):
    """A POGE gridworld; see the module docstring for the rules. Actions: 0 up, 1 down, 2 left, 3 right.

    POGE's worlds (partially observable gridworlds with slips and doors) read from the store
    and compiled once; the dynamics follow POGE's own env with its bugs fixed.

    Parameters
    ----------
    world : str or TaskGraph, optional
        A world's task id (a built-in is put into the store, or updated there, first), a
        world file's path, or a stored graph.
    store : GraphStore or str, optional
        An open store or its location; None: the default store.
    force_determinism : bool, optional
        Ignore the slip rules: every action does what it says.
    indicate_slip : bool, optional
        Mark a slip in the observation (``_slip_<action>``; partially observable only).
    is_partially_obs : bool, optional
        Observe the tile's abstraction symbol (True, POGE's default) or the tile itself.
    indicate_wall : bool, optional
        Mark a bump into a wall in the observation (``_wall``).
    max_episode_steps : int, optional
        Truncate an episode after this many steps (default 100; None: no limit). The one name of an episode's
        length in every family (docs/limits.md); `max_ep_len`, its old name, still works with a
        FutureWarning.
    max_ep_len : int, optional
        Deprecated: the old name of `max_episode_steps` (a FutureWarning says so).
    goal_reward : float, optional
        Paid on a ``G`` tile (and its negative on a ``T`` tile); both end the episode.
    one_time_rewards : bool, optional
        Pay each reward tile once per episode.
    step_penalty : float, optional
        The cost of a step that earns nothing (paid as a negative reward, whatever its sign).
    obs_type : {"index", "onehot"}, optional
        The observation: an index into `observation_names`, or a one-hot vector.
    render_mode : {"ansi", "rgb_array"}, optional
        As gymnasium's ``render_mode``; None renders nothing.

    Raises
    ------
    ValueError
        A setting out of range or of the wrong type, naming it.
    TaskNotFound
        The world is neither stored nor built in.

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
        max_episode_steps: int | None = 100,
        goal_reward: float = 100,
        one_time_rewards: bool = True,
        step_penalty: float = 0,
        obs_type: str = "index",
        render_mode: str | None = None,
        max_ep_len: Any = NOT_GIVEN,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        length = episode_steps(max_episode_steps, max_ep_len, "max_ep_len", 100)
        self.max_ep_len = None if length is None else check_positive_int(
            "max_episode_steps" if max_ep_len is NOT_GIVEN else "max_ep_len", length)
        self._limit = self.max_ep_len or sys.maxsize  # truncation as one comparison per step
        options = PogeOptions.checked(
            force_determinism, indicate_slip, is_partially_obs, indicate_wall, goal_reward, one_time_rewards,
            step_penalty,
        )
        self.compiled, self.observation = prepare_world(world, store, options, obs_type)
        c = self.compiled
        self.task_id = c.task_id
        self.world: PogeWorld = c.world
        self.observation_names = c.observation_names
        self.force_determinism, self.indicate_slip = options.force_determinism, options.indicate_slip
        self.is_partially_obs, self.indicate_wall = options.is_partially_obs, options.indicate_wall
        self.goal_reward, self.one_time_rewards = options.goal_reward, options.one_time_rewards
        self.step_penalty = options.step_penalty
        self.obs_type = obs_type
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = self.observation.space
        self._table = self.observation.table  # rows per observation index, or None: the index itself
        self._det, self._dist = c.det, c.dist
        self._stream: RandomStream | None = None
        self._s = c.start_state
        self._t = 0
        self._got = [False] * c.n_slots

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length (None: only the goal or a trap ends an episode)."""
        return self.max_ep_len

    # -- gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None or self._stream is None:
            super().reset(seed=seed)
            self._stream = RandomStream(self.np_random)
        state = start_state(self.compiled, options)
        self._s = state
        self._t = 0
        self._got = [False] * self.compiled.n_slots
        obs = self.compiled.observation_at(state)
        return self.observation.observe(obs), {"observation": self.observation_names[obs]}

    def step(self, action):
        s = self._s
        o = self._det[s][action]
        if o is None:
            cumulative, outs = self._dist[s][action]
            x = self._stream.uniform()  # reset() made the stream
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
        return obs, reward, terminated, t >= self._limit and not terminated, {"observation": name}

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


def make_for_gymnasium(**kwargs: Any) -> PogeEnv:
    """The gym ids' entry point: `PogeEnv` for gymnasium's `make`, its episodes ended by
    gymnasium's TimeLimit (`gym.make(id, max_episode_steps=N)`; `gym_bridge.params.made_by_gymnasium`)."""
    return made_by_gymnasium(PogeEnv, "max_ep_len", kwargs)


make_for_gymnasium.metadata = PogeEnv.metadata  # type: ignore[attr-defined]  # what make reads of an entry point
make_for_gymnasium.__wrapped__ = PogeEnv  # type: ignore[attr-defined]  # inspect.signature shows the env's parameters
