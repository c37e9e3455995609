"""GridEnv: the neuro-nav grid worlds, run from their stored graphs.

Settings: the keyword arguments are the fields of `gym_bridge.grid.GridSettings` (template and
size also by position), checked there; `obs_type` and `render_mode` are the env's own.

Dynamics (reference step order, reference bugs fixed; see docs/grid.md):
1. with probability `stochasticity` the action is replaced by a uniformly random action
   (drawn from the seeded generator);
2. move: fixed orientation 0 N, 1 E, 2 S, 3 W; variable orientation 0 turn left, 1 turn
   right, 2 forward; then the optional no-op and collect actions. Walls and the edge keep
   the agent in place; a closed door can be entered only with a key, which it uses up
   (the door opens for good); a key is used only by moving into a closed door, never by
   staying on one (after a warp onto it); steps 2 (doors) to 6 are `ObjectRule`
   (gym_bridge.grid.rules), written once for this env and the vector env;
3. reward = -time_penalty (a non-negative cost, the convention of every family);
4. a reward on the cell reached is paid once (with manual_collect only on the collect
   action) and removed; the episode ends by its own terminate flag, else by
   terminate_on_reward;
5. a key on the cell is picked up; 6. a warp on the cell moves the agent to its target.
The episode is truncated after `max_episode_steps` steps.

Speed: the rules' move tables are Python lists; a step does list look-ups and, only on
cells that hold something, the slow path (`ObjectRule.step` on the env's one lane: numpy on
arrays of one row, a few microseconds). Observations come from the observation type
(gym_bridge.grid.observations): a row copied from its table, or, for the types that
depend on the objects left, what it builds from the env's `GridState`.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tasks import RandomStream

from ..params import RenderModes, check_bool, check_render_mode, made_by_gymnasium
from .observations import GRID_OBSERVATIONS, Ascii, GridObservation, object_view, painter_for
from .render import GridPainter
from .rules import GridSettings, GridState, ObjectSlots, grid_rules

ONE_LANE = np.zeros(1, dtype=np.int64)  # the single env's lane, for ObjectRule.step


class GridEnv(gym.Env):
    """A neuro-nav grid world (template x size) as a gymnasium environment; rules in the module docstring.

    Parameters
    ----------
    *positional : str
        `template`, then `size`, by position (see Other Parameters).
    obs_type : str
        The observation type (`gym_bridge.grid.GRID_OBSERVATIONS`: 'index', 'onehot', 'symbolic', ...).
    render_mode : str, optional
        'ansi' or 'rgb_array'.
    **settings
        The other parameters below, by keyword: the fields of `GridSettings`, each checked
        there (a bad value is one error naming the field); `settings` holds them all.

    Other Parameters
    ----------------
    template : str
        A grid template name ('four_rooms', 'two_rooms', ...; `graphtasks grid list`).
    size : str
        The template's size ('micro', 'small', 'large', 'xlarge').
    orientation : str
        'fixed' (actions 0 N, 1 E, 2 S, 3 W) or 'variable' (0 turn left, 1 turn right, 2 forward).
    use_noop : bool
        Add a no-op action after the moves.
    manual_collect : bool
        Add a collect action; a reward is paid only on it.
    stochasticity : float
        The probability that an action is replaced by a uniformly random one.
    random_start : bool
        Start each episode on a random free cell.
    agent_start : (int, int), optional
        The start cell (row, col); None: the map's START.
    objects : mapping, optional
        The objects episodes start with (`tasks.objects_from_dict`'s format); None: the stored ones.
    terminate_on_reward : bool
        A reward without a terminate flag of its own ends the episode.
    time_penalty : float
        A non-negative cost subtracted from every step's reward.
    visible_walls : bool
        Walls appear in the symbolic observations.
    max_episode_steps : int, optional
        Steps before truncation (default 100); None: no limit. The one name of an episode's
        length in every family (docs/limits.md); `episode_length`, its old name, still works
        with a FutureWarning.
    episode_length : int, optional
        Deprecated: the old name of `max_episode_steps` (a FutureWarning says so).
    resolution : int
        Pixels of a picture's side (16..4096).
    store : GraphStore or str, optional
        Where a task id is read (a built-in is put there first); None: the default store.
    task : str, TaskGraph or CompiledGrid, optional
        A grid task; None: the built-in `template` at `size`.

    Raises
    ------
    ValueError
        A setting out of range, an unknown `obs_type`, or a start or object off the map's free
        cells, naming the field.

    Examples
    --------
    >>> from graphstore import open_store
    >>> from gym_bridge import GridEnv
    >>> with open_store(":memory:") as store:
    ...     env = GridEnv("four_rooms", size="small", obs_type="index", store=store)
    >>> obs, info = env.reset(seed=0)
    >>> obs, info["available_actions"]
    (108, (0, 1, 2, 3))
    >>> env.step(0)[0]  # north: from row 9 to row 8 of the 11 x 11 grid
    97
    >>> env.settings.size, env.settings.time_penalty
    ('small', 0.0)
    """

    metadata = {"render_modes": RenderModes(["ansi", "rgb_array"]), "render_fps": 4}
    action_space: spaces.Discrete

    def __init__(
        self, *positional: Any, obs_type: str = "index", render_mode: str | None = None, **settings: Any
    ) -> None:
        observation_type = GRID_OBSERVATIONS.get(obs_type)  # a clear error before any loading
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.settings = GridSettings.from_arguments(positional, settings)
        self.rules = rules = grid_rules(self.settings)
        self.render_mode = render_mode
        self.obs_type = obs_type
        self.orientation = self.settings.orientation
        self.compiled = rules.compiled
        self.n = rules.n
        self.n_states = rules.n_states
        self.n_actions = rules.n_actions
        self.action_space = spaces.Discrete(self.n_actions)
        self.observation = cast(GridObservation, observation_type(rules, self.settings.store))
        self.observation_space = self.observation.space
        self._variable = rules.variable
        self._nn = rules.n_cells
        self._all_actions = tuple(range(self.n_actions))
        self._move, self._ahead = rules.move, rules.ahead
        self._collect = rules.collect
        self._neg_penalty = rules.neg_penalty
        self._episode_length = self.settings.episode_length
        self._noise = self.settings.stochasticity
        # how a step observes: 0 the state index, 1 a row of the type's table, 2 the type builds it
        self._obs_kind = 0 if self.observation.is_index else 1 if self.observation.table is not None else 2
        self._table = self.observation.table
        self._stream: RandomStream | None = None
        self._painter: GridPainter | None = None
        # the one lane ObjectRule.step reads and writes: cell before, cell after, action, reward, ended
        self._lane_io = (
            np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1), np.zeros(1, bool)
        )
        self.grid_state = GridState(rules, rules.objects)
        self._restore(rules.objects)
        self.grid_state.pos = rules.start

    # -- the settings, as given (`settings` holds them all) ---------------------------------
    @property
    def use_noop(self) -> bool:
        return self.settings.use_noop

    @property
    def manual_collect(self) -> bool:
        return self.settings.manual_collect

    @property
    def stochasticity(self) -> float:
        return self.settings.stochasticity

    @property
    def random_start(self) -> bool:
        return self.settings.random_start

    @property
    def terminate_on_reward(self) -> bool:
        return self.settings.terminate_on_reward

    @property
    def time_penalty(self) -> float:
        return self.settings.time_penalty

    @property
    def visible_walls(self) -> bool:
        return self.settings.visible_walls

    @property
    def episode_length(self) -> int:
        return self.settings.episode_length

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length (None: no limit)."""
        return self.settings.episode_length or None

    @property
    def resolution(self) -> int:
        return self.settings.resolution

    @property
    def agent_start(self) -> int | None:
        """The start cell given as agent_start (row * n + col), or None (the stored START)."""
        return self.rules.agent_start

    # -- objects: the dynamic state ------------------------------------------------------
    def _restore(self, slots: ObjectSlots) -> None:
        """Put the episode's objects in place (all rewards, keys, closed doors)."""
        st = self.grid_state
        if slots.source.markers != st.slots.source.markers or slots.source.warps != st.slots.source.warps:
            self._painter = None  # markers and warps belong to the painter's static layer
        st.restore(slots)
        self._hot = slots.hot
        self.observation.objects_changed(st, True)
        self._table = self.observation.table

    def _objects_changed(self, doors_changed: bool) -> None:
        """A reward, key or door went (rare: not on the fast path)."""
        st = self.grid_state
        self._hot = set(st.rewards) | st.keys | set(st.doors) | set(st.slots.warps)
        self.observation.objects_changed(st, doors_changed)
        self._table = self.observation.table  # types that depend on the objects swap their table

    def _painter_(self) -> GridPainter:
        if self._painter is None:
            self._painter = painter_for(self.rules, self.grid_state.slots)
        return self._painter

    def _obs(self, s: int) -> Any:
        kind = self._obs_kind
        if kind == 1 and self._table is not None:
            return self._table[s].copy()
        if kind == 0:
            return s
        return self.observation.observe(self.grid_state)

    # -- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None or self._stream is None:
            self._stream = RandomStream(self.np_random)
        options = options or {}
        unknown = sorted(set(options) - {"agent_pos", "objects", "random_start"})
        if unknown:
            raise ValueError(
                f"reset options: unknown key(s) {', '.join(unknown)}; use agent_pos, objects, random_start"
            )
        rules, st = self.rules, self.grid_state
        slots = rules.objects
        if options.get("objects") is not None:
            slots = rules.object_slots(options["objects"], "reset options: objects")
            self.observation.check_objects(slots)
        if (
            slots is not st.slots
            or len(st.rewards) != len(slots.rewards)
            or len(st.keys) != len(slots.keys)
            or len(st.doors) != len(slots.doors)
            or st.keys_held
        ):
            self._restore(slots)
        random_start = options.get("random_start", self.settings.random_start)
        if options.get("agent_pos") is not None:
            pos = rules.cell(options["agent_pos"], "reset options: agent_pos")
        elif check_bool("random_start", random_start):
            pos = rules.free[self._stream.below(len(rules.free))]
        else:
            pos = rules.start
        st.pos = pos
        st.orientation = 0
        self._steps = 0
        return self._obs(pos), {"state": pos, "available_actions": self._all_actions}

    def step(self, action):
        if self._noise and self._stream.uniform() < self._noise:
            action = self._stream.below(self.n_actions)
        elif not 0 <= action < self.n_actions:
            raise ValueError(f"action: expected 0..{self.n_actions - 1}, got {action!r}")
        st = self.grid_state
        pos = st.pos
        if self._variable:
            if action == 2:
                t = self._ahead[st.orientation][pos]
            else:
                t = pos
                if action == 0:
                    st.orientation = (st.orientation + 3) & 3
                elif action == 1:
                    st.orientation = (st.orientation + 1) & 3
        else:
            t = self._move[action][pos]
            if action < 4:
                st.orientation = action
        reward = self._neg_penalty
        terminated = False
        if t in self._hot:
            t, reward, terminated = self._interact(pos, t, action, reward)
        st.pos = t
        s = t + st.orientation * self._nn if self._variable else t
        self._steps += 1
        truncated = not terminated and self._steps == self._episode_length
        kind = self._obs_kind
        if kind == 1:
            obs = self._table[s].copy()
        elif kind == 0:
            obs = s
        else:
            obs = self.observation.observe(st)
        return obs, reward, terminated, truncated, {"state": s, "available_actions": self._all_actions}

    def _interact(self, pos: int, t: int, action: int, reward: float) -> tuple[int, float, bool]:
        """The slow path: `ObjectRule` (doors, rewards, keys, warps) on this env's one lane."""
        st = self.grid_state
        assert st.rule is not None and st.lane is not None
        lane_pos, lane_t, lane_action, lane_reward, lane_ended = self._lane_io
        lane_pos[0], lane_t[0], lane_action[0], lane_reward[0], lane_ended[0] = pos, t, action, reward, False
        changed, doors_changed = st.rule.step(st.lane, ONE_LANE, lane_pos, lane_t, lane_action, lane_reward, lane_ended)
        if changed:
            st.objects_went()
            self._objects_changed(doors_changed)
        return int(lane_t[0]), float(lane_reward[0]), bool(lane_ended[0])

    # -- inspection and rendering ------------------------------------------------------------
    @property
    def state(self) -> int:
        """The state index: orientation * n * n + row * n + col (orientation 0 in fixed mode)."""
        return self.grid_state.index

    @property
    def agent_pos(self) -> tuple[int, int]:
        return self.rules.rc[self.grid_state.pos]

    @property
    def looking(self) -> int:
        """Where the agent looks: 0 N, 1 E, 2 S, 3 W (fixed mode: its last move)."""
        return self.grid_state.orientation

    @property
    def keys_held(self) -> int:
        return self.grid_state.keys_held

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self.render_mode == "ansi":
            return Ascii(self.rules).text(self.grid_state) + "\n"
        return self.picture()

    def picture(self, agent: bool = True) -> np.ndarray:
        """The current picture at `resolution` (what rgb_array renders), optionally without the agent.

        Parameters
        ----------
        agent : bool, optional
            Draw the agent.

        Returns
        -------
        numpy.ndarray
            An RGB image, `resolution` pixels a side.
        """
        st = self.grid_state
        view = object_view(st)
        if agent:
            return self._painter_().frame(self.resolution, view, self.agent_pos, st.orientation)
        return self._painter_().full(self.resolution, view).copy()



GridEnv.__signature__ = GridSettings.env_signature(GridEnv.__init__)  # type: ignore[attr-defined]


def make_for_gymnasium(**kwargs: Any) -> GridEnv:
    """The gym ids' entry point: `GridEnv` for gymnasium's `make`, its episodes ended by
    gymnasium's TimeLimit (`gym.make(id, max_episode_steps=N)`; `gym_bridge.params.made_by_gymnasium`)."""
    return made_by_gymnasium(GridEnv, "episode_length", kwargs)


make_for_gymnasium.metadata = GridEnv.metadata  # type: ignore[attr-defined]  # what make reads of an entry point
make_for_gymnasium.__wrapped__ = GridEnv  # type: ignore[attr-defined]  # inspect.signature shows the env's parameters
