"""The episode loop of `gym_bridge.episodes.play`, for B runs at once in lockstep.

B lanes of a batched agent (`gym_bridge.agents.batched`) play B copies of one task in a
native vector env: one call chooses for every lane, one env step moves every copy, one call
learns. Each lane plays its own `episodes` episodes; a lane whose episode ends is reset on its
own (the env's `reset_mask`), and a lane that has played all its episodes waits, drawing
nothing, until the others are done. The env and the agent draw each lane's numbers from the
lane's own stream (`gym_bridge.vector.lanes`), so a lane's episodes are the same whichever
lanes share its batch.

What comes out is what `play` yields, per lane: `Episode` objects with their return, length,
start state, first action and the state it led to, and (with `record_steps`) every step with
its P(action). They are held as columns (`LaneEpisodes`: one array per field, lanes by
episodes), so a sweep that writes records as columns never makes an object per episode.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from .compiled_lanes import compiled_plan, play_compiled
from .episodes import Episode, Step
from .vector.lanes import LaneStreams

ENV_LANE_STREAM = 0x656E76  # "env": a lane's env stream, apart from its agent's


class LaneEpisodes(Sequence[list[Episode]]):
    """Every lane's episodes as columns, each an array of (lanes, episodes): `reward`,
    `length`, `start_state`, `first_action`, `first_state`; `conditions[lane][e]` (a scheduled
    trial's condition, or None) and `steps[lane][e]` where steps were recorded.

    As a sequence it is what `play` yields per lane: `episodes[lane]` is that lane's list of
    `Episode`, made when asked for.

    Examples
    --------
    >>> import numpy as np
    >>> from gym_bridge.batched_episodes import LaneEpisodes
    >>> played = LaneEpisodes(np.array([[1.0, 0.0]]), np.array([[2, 3]]), np.zeros((1, 2), int),
    ...                       np.zeros((1, 2), int), np.ones((1, 2), int))
    >>> [(e.index, e.reward, e.length) for e in played[0]]
    [(0, 1.0, 2), (1, 0.0, 3)]
    """

    def __init__(
        self,
        reward: np.ndarray,
        length: np.ndarray,
        start_state: np.ndarray,
        first_action: np.ndarray,
        first_state: np.ndarray,
        conditions: list[list[str | None]] | None = None,
        steps: list[list[list[Step]]] | None = None,
    ) -> None:
        self.reward, self.length, self.start_state = reward, length, start_state
        self.first_action, self.first_state = first_action, first_state
        self.conditions, self.steps = conditions, steps

    def __len__(self) -> int:
        return int(self.reward.shape[0])

    def __getitem__(self, lane: Any) -> Any:
        if isinstance(lane, slice):
            return [self[i] for i in range(*lane.indices(len(self)))]
        if not -len(self) <= lane < len(self):
            raise IndexError(f"lane {lane} of {len(self)}")
        columns = (self.reward[lane].tolist(), self.length[lane].tolist(), self.start_state[lane].tolist(),
                   self.first_action[lane].tolist(), self.first_state[lane].tolist())
        conditions = self.conditions[lane] if self.conditions is not None else [None] * len(columns[0])
        steps = self.steps[lane] if self.steps is not None else [None] * len(columns[0])
        return [Episode(e, reward, length, start, action, state, condition, taken)
                for e, (reward, length, start, action, state, condition, taken)
                in enumerate(zip(*columns, conditions, steps))]

    def __iter__(self) -> Iterator[list[Episode]]:
        return (self[lane] for lane in range(len(self)))

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same lanes' episodes (another LaneEpisodes, a list)."""
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # compared by content, like a list


def env_lanes(env_seeds: Sequence[int]) -> LaneStreams:
    """The env streams of a phase's lanes, from each lane's phase seed (`SeedTree.env`)."""
    return LaneStreams.from_seeds(env_seeds, ENV_LANE_STREAM)


def action_mask(env: Any) -> np.ndarray | None:
    """(N, A) actions each copy's state offers: the env's `action_masks()`, or None where every
    state offers every action (grids): the agents then skip the masking."""
    masks = getattr(env, "action_masks", None)
    return masks() if masks is not None else None


PROGRESS_SLICES = 20  # a compiled phase told as played in about this many slices of its episodes


def compiled_episodes(
    table: Any, rule: int, agent: Any, streams: LaneStreams, episodes: int, learn: bool,
    progress: Callable[[int], object] | None = None,
) -> LaneEpisodes:
    """`play_lanes`'s episodes played by the compiled loop; where someone follows `progress`,
    in slices of the phase's episodes, each told as it ends (the loop carries the lanes' tables
    and streams from slice to slice, so the numbers are those of one pass)."""
    if progress is None or episodes < 2:
        played = LaneEpisodes(*play_compiled(table, rule, agent, streams, episodes, learn))
        if progress is not None:
            progress(agent.size * episodes)
        return played
    step = -(-episodes // PROGRESS_SLICES)
    parts = []
    for first in range(0, episodes, step):
        count = min(step, episodes - first)
        parts.append(play_compiled(table, rule, agent, streams, count, learn))
        progress(agent.size * count)
    reward, length, start, action, state = (np.concatenate(columns, axis=1) for columns in zip(*parts))
    return LaneEpisodes(reward, length, start, action, state)


def reset_with_options(env: Any, lanes: np.ndarray, options: Sequence[Mapping[str, Any]], states: np.ndarray) -> None:
    """Reset each of `lanes` with its own options (one env reset per distinct options), writing
    the lanes' start states into `states`. A lane is reset once, by the same call whatever
    lanes share the batch, so it draws the same numbers from its stream."""
    groups: dict[tuple[tuple[str, Any], ...], tuple[Mapping[str, Any], list[int]]] = {}
    for lane, option in zip(lanes.tolist(), options):
        key = tuple(sorted((k, _hashable(v)) for k, v in option.items()))
        groups.setdefault(key, (option, []))[1].append(lane)
    for option, members in groups.values():
        reset_mask = np.zeros(env.num_envs, dtype=bool)
        reset_mask[members] = True
        _, info = env.reset(options={**option, "reset_mask": reset_mask})
        states[members] = np.asarray(info["state"], dtype=np.int64)[members]


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def greedy_lanes(agent: Any, lanes: np.ndarray, states: np.ndarray, mask: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each lane's greedy action: the offered action of highest value (`agent.lane_values`, what
    its choice rule chooses by), ties broken by a key per action drawn from the lane's own
    stream (so a lane chooses the same whatever lanes share its batch); and its probability
    under the greedy policy (1 over the number of tied actions)."""
    values = agent.lane_values(lanes, states)
    offer = np.ones(values.shape, dtype=bool) if mask is None else mask
    top = np.where(offer, values, -np.inf).max(axis=1, keepdims=True)
    best = offer & (values == top)
    keys = agent.streams.uniform(lanes, values.shape[1])
    return np.argmax(np.where(best, keys, -1.0), axis=1), 1.0 / best.sum(axis=1)


def play_lanes(
    env: Any,
    agent: Any,
    episodes: int,
    env_seeds: Sequence[int],
    learn: bool = True,
    record_steps: bool = False,
    compiled: bool = True,
    options: Sequence[Sequence[Mapping[str, Any]]] | None = None,
    greedy: bool = False,
    progress: Callable[[int], object] | None = None,
) -> LaneEpisodes:
    """Play `episodes` episodes on every lane of `agent` in `env` (one copy per lane).

    Parameters
    ----------
    env : BatchedVectorEnv
        A graphtasks vector env with one copy per lane, made with `autoreset_mode="disabled"`
        (this loop resets each copy when its episode ends).
    agent : BatchedAgent
        One lane per copy.
    episodes : int
        Episodes each lane plays.
    env_seeds : sequence of int
        Each lane's env seed for this phase (`SeedTree(seed).env(phase)`): its env stream.
    learn : bool, optional
        False: the lanes act but do not learn (a test phase).
    record_steps : bool, optional
        Keep every step (state, action, reward, next state, P(action)) on each Episode.
    compiled : bool, optional
        Play with the compiled loop where it applies (`gym_bridge.compiled_lanes`: numba
        installed, epsilon-greedy Q or SARSA, a fixed-table env); its numbers are this loop's.
        False: always this numpy loop.
    options : sequence of sequences of mappings, optional
        `options[lane][e]`: the reset options of lane's episode e (a start, a trial's
        condition), as `gym_bridge.episodes.play` takes them for one run. Lanes are reset in
        groups that share their options, each lane once per episode whatever the others do.
    greedy : bool, optional
        Every lane acts greedily (`greedy_lanes`: the offered action of highest value, ties
        broken by the lane's own stream); the recorded P(action) is the greedy policy's.
    progress : callable, optional
        Told the number of episodes that ended as they end (summed over lanes), so a sweep's
        progress moves within a batch; it changes no number.

    Returns
    -------
    LaneEpisodes
        Every lane's episodes as columns; `played[i]` is lane i's list of Episode, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from gym_bridge import family
    >>> from gym_bridge.agents import make_batched
    >>> from gym_bridge.batched_episodes import play_lanes
    >>> env = family("graph").make_vector_env("neuronav/graph/two_step", 3, autoreset_mode="disabled")
    >>> agent = make_batched("q", 7, 2, seeds=[0, 1, 2], settings=[{}, {}, {}])
    >>> [len(lane) for lane in play_lanes(env, agent, 4, env_seeds=[10, 11, 12])]
    [4, 4, 4]
    """
    if episodes < 1:
        raise ValueError(f"episodes: expected a positive number, got {episodes}")
    size = agent.size
    if env.num_envs != size:
        raise ValueError(f"play_lanes: {env.num_envs} env copies for {size} agent lanes")
    streams = env_lanes(env_seeds)
    env.use_lanes(streams)
    per_lane = None if options is None or not any(o for lane in options for o in lane) else options
    if per_lane is not None and (len(per_lane) != size or any(len(lane) < episodes for lane in per_lane)):
        raise ValueError(f"play_lanes: options must give {episodes} episodes for each of {size} lanes")
    plan = compiled_plan(env, agent, record_steps) if compiled and per_lane is None and not greedy else None
    if plan is not None:  # the same numbers, compiled (`gym_bridge.compiled_lanes`)
        return compiled_episodes(*plan, agent, streams, episodes, learn, progress)
    _, info = env.reset()
    states = np.asarray(info["state"], dtype=np.int64).copy()
    if per_lane is not None:  # then each lane's first episode with its own options
        reset_with_options(env, np.arange(size), [per_lane[lane][0] for lane in range(size)], states)
    mask = action_mask(env)
    shape = (size, episodes)
    out = LaneEpisodes(np.zeros(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64),
                       np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64),
                       None if per_lane is None else [[None] * episodes for _ in range(size)],
                       None if not record_steps else [[] for _ in range(size)])
    played = np.zeros(size, dtype=np.int64)
    total = np.zeros(size)
    length = np.zeros(size, dtype=np.int64)
    start = states.copy()
    first_action = np.full(size, -1, dtype=np.int64)
    first_state = np.full(size, -1, dtype=np.int64)
    steps: list[list[Step]] | None = [[] for _ in range(size)] if record_steps else None
    lanes = np.arange(size)
    agent.begin_episode(lanes)
    actions = np.zeros(size, dtype=np.int64)
    while lanes.size:
        lane_states = states[lanes]
        lane_mask = None if mask is None else mask[lanes]
        if greedy:
            chosen, p_chosen = greedy_lanes(agent, lanes, lane_states, lane_mask)
        else:
            chosen = agent.act(lanes, lane_states, lane_mask)
            if steps is not None:
                p_chosen = agent.action_probabilities(lanes, lane_states, lane_mask)[np.arange(lanes.size), chosen]
        actions[lanes] = chosen
        _, reward, terminated, truncated, info = env.step(actions)
        next_states = np.asarray(info["state"], dtype=np.int64)
        next_mask = action_mask(env)
        lane_reward, lane_next = reward[lanes], next_states[lanes]
        lane_terminated = terminated[lanes]
        if learn:
            agent.learn(lanes, lane_states, chosen, lane_reward, lane_next, lane_terminated,
                        None if next_mask is None else next_mask[lanes])
        if steps is not None:
            for k, lane in enumerate(lanes.tolist()):
                steps[lane].append(
                    (int(lane_states[k]), int(chosen[k]), float(lane_reward[k]), int(lane_next[k]), float(p_chosen[k]))
                )
        starting = length[lanes] == 0
        if starting.any():
            first_action[lanes[starting]] = chosen[starting]
            first_state[lanes[starting]] = lane_next[starting]
        total[lanes] += lane_reward
        length[lanes] += 1
        states, mask = next_states.copy(), next_mask
        ended = lane_terminated | truncated[lanes]
        if not ended.any():
            continue
        done = lanes[ended]
        at = played[done]
        out.reward[done, at], out.length[done, at], out.start_state[done, at] = total[done], length[done], start[done]
        out.first_action[done, at], out.first_state[done, at] = first_action[done], first_state[done]
        if out.conditions is not None and per_lane is not None:
            for lane in done.tolist():
                out.conditions[lane][int(played[lane])] = per_lane[lane][int(played[lane])].get("condition")
        if steps is not None and out.steps is not None:
            for lane in done.tolist():
                out.steps[lane].append(steps[lane])
                steps[lane] = []
        played[done] += 1
        if progress is not None:
            progress(int(done.size))
        again = done[played[done] < episodes]
        if again.size:
            if per_lane is None:
                reset_mask = np.zeros(size, dtype=bool)
                reset_mask[again] = True
                _, info = env.reset(options={"reset_mask": reset_mask})
                states[again] = np.asarray(info["state"], dtype=np.int64)[again]
            else:
                reset_with_options(env, again, [per_lane[lane][int(played[lane])] for lane in again.tolist()], states)
            mask = action_mask(env)
            start[again] = states[again]
            total[again], length[again] = 0.0, 0
            first_action[again], first_state[again] = -1, -1
            agent.begin_episode(again)
        lanes = lanes[played[lanes] < episodes]
    return out
