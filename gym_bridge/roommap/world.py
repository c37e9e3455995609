"""What happens in a Room map, apart from the agent: written once, for any number of copies.

Neither version's objects depend on the agent (it only moves itself and answers), so a
whole episode's world can be made before the agent acts: `episodes_v2` draws E episodes at
once (numpy over episodes and objects, one loop over the steps), `episode_v3` computes the
one deterministic episode of a v3 map. The single env plays episodes from a buffer of these;
the vector env makes one per copy when the copy starts an episode. Each `Episodes` row t is
the world an observation at step t shows and the step-t answers are scored against.

v2's rules (room-env 3.0.6 RoomEnv2): at the start every object (and the agent) is placed by
its initial distribution and each dependent object attaches (below). Each step, in order:
every independent object draws north / east / south / west / stay from its distribution in
its room (a wall keeps it in place) and takes the dependent objects attached to it along;
all attachments are dropped; then each dependent object, for each independent object in
its room that it can attach to, accepts it with that probability, and if several accept it
picks one of them uniformly (`attach_keys`: one uniform per pair decides both). Questions:
`n_questions` objects drawn with replacement by their question weights; each is dropped (no
question) with probability 1 - question_prob.

v3's rules (RoomEnv3): walls are on at step t where their pattern[t % len] is 1; each step
every moving object takes the first direction of its preference list that is open at t
(else stays); the question at step t asks about question_objects[t % 100].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .compiled import CompiledRoomMap


@dataclass
class Episodes:
    """E episodes of T steps: rooms (E, T + 1, O), attached (E, T + 1, D) index of the
    independent object or -1, questions (E, T + 1, Q) object or O for none, truth (E, T + 1, Q)
    the asked object's room (-1 for none), previous (E, T + 1, Q) the room it was in before
    that (-1: none yet), agent (E,) first room of the agent."""

    rooms: np.ndarray
    attached: np.ndarray
    questions: np.ndarray
    truth: np.ndarray
    previous: np.ndarray
    agent: np.ndarray

    def __len__(self) -> int:
        return int(self.rooms.shape[0])


def _sample_rows(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Index drawn from each row's cumulative distribution `cum` (K, R) for uniforms u (E, K)."""
    return (u[:, :, None] >= cum[None, :, :-1]).sum(axis=2)


def attach_keys(c: CompiledRoomMap, u: np.ndarray) -> np.ndarray:
    """u / p for uniforms u (..., D, I): below 1 where the dependent object accepts the independent
    one (u < p); 2 where it never attaches (p = 0).

    Given acceptance, u / p is uniform on [0, 1) and independent across the accepting objects,
    so the accepting one with the smallest key is a uniform choice among them, as room-env's
    `random.choice` of the accepting objects is: one draw per pair does both.
    """
    p = c.attach_p
    scale = np.where(p > 0, 1.0 / np.where(p > 0, p, 1.0), 0.0)
    return u * scale + np.where(p > 0, 0.0, 2.0)


def _attach(ind_rooms: np.ndarray, dep_rooms: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which independent object each dependent one attaches to (-1: none); keys (E, D, I) from `attach_keys`."""
    keys = np.where(dep_rooms[:, :, None] == ind_rooms[:, None, :], keys, 2.0)
    chosen = keys.argmin(axis=2)
    return np.where(np.take_along_axis(keys, chosen[:, :, None], axis=2)[:, :, 0] < 1.0, chosen, -1)


def _questions(c: CompiledRoomMap, rng: Any, e: int, t: int, n_questions: int, question_prob: float) -> np.ndarray:
    u = rng.random((e, t * n_questions))
    asked = np.minimum(np.searchsorted(c.question_cum, u, side="right"), c.n_objects - 1)
    if question_prob < 1.0:
        asked = np.where(rng.random((e, t * n_questions)) > question_prob, c.n_objects, asked)
    return asked.reshape(e, t, n_questions)


def _truth(rooms: np.ndarray, questions: np.ndarray, previous_too: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The asked objects' rooms and previous rooms (-1 for no question / no previous room; the
    previous rooms only with `previous_too`, for a partial reward: else all -1)."""
    e, t1, n_obj = rooms.shape
    padded = np.concatenate([rooms, np.full((e, t1, 1), -1, dtype=rooms.dtype)], axis=2)
    truth = np.take_along_axis(padded, questions, axis=2)
    if not previous_too:
        return truth, np.full_like(truth, -1)
    previous = np.full_like(rooms, -1)
    for t in range(1, t1):
        moved = rooms[:, t] != rooms[:, t - 1]
        previous[:, t] = np.where(moved, rooms[:, t - 1], previous[:, t - 1])
    padded_prev = np.concatenate([previous, np.full((e, t1, 1), -1, dtype=rooms.dtype)], axis=2)
    return truth, np.take_along_axis(padded_prev, questions, axis=2)


def episodes_v2(c: CompiledRoomMap, rng: Any, e: int, steps: int, n_questions: int = 10,
                question_prob: float = 1.0, static: bool = False, previous: bool = True) -> Episodes:
    """E independent v2 episodes of `steps` steps (see the module docstring)."""
    n_obj, n_ind, n_dep = c.n_objects, len(c.independent), len(c.dependent)
    start_cum = np.cumsum(c.start, axis=1)
    rooms = np.empty((e, steps + 1, n_obj), dtype=np.int64)
    rooms[:, 0] = _sample_rows(start_cum, rng.random((e, n_obj))) if n_obj else 0
    agent = _sample_rows(np.cumsum(c.agent_start)[None], rng.random((e, 1)))[:, 0]
    attached = np.full((e, steps + 1, n_dep), -1, dtype=np.int64)
    ind, dep = c.independent, c.dependent
    if n_dep and n_ind:
        attached[:, 0] = _attach(rooms[:, 0, ind], rooms[:, 0, dep], attach_keys(c, rng.random((e, n_dep, n_ind))))
    doors = c.doors[0]
    per_step = n_ind + n_dep * n_ind
    u_all = rng.random((e, steps * per_step)).reshape(e, steps, per_step) if per_step and not static else None
    if u_all is not None and n_dep:
        keys_all = attach_keys(c, u_all[:, :, n_ind:].reshape(e, steps, n_dep, n_ind))
    columns = np.arange(n_ind)
    for t in range(steps):
        now = rooms[:, t].copy()
        if u_all is not None and n_ind:
            here = now[:, ind]
            k = (u_all[:, t, :n_ind, None] >= c.move_cum[columns, here]).sum(axis=2)
            moved = doors[here, k]
            now[:, ind] = moved
            if n_dep:
                att = attached[:, t]
                carried = np.take_along_axis(moved, np.maximum(att, 0), axis=1)
                now[:, dep] = np.where(att >= 0, carried, now[:, dep])
                attached[:, t + 1] = _attach(moved, now[:, dep], keys_all[:, t])
        else:
            attached[:, t + 1] = attached[:, t]
        rooms[:, t + 1] = now
    questions = _questions(c, rng, e, steps + 1, n_questions, question_prob) if n_obj else np.zeros(
        (e, steps + 1, n_questions), dtype=np.int64)
    truth, before = _truth(rooms, questions, previous)
    return Episodes(rooms, attached, questions, truth, before, agent)


def episode_v3(c: CompiledRoomMap, steps: int) -> Episodes:
    """The one v3 episode of `steps` steps (deterministic; see the module docstring)."""
    n_obj = c.n_objects
    rooms = np.empty((1, steps + 1, n_obj), dtype=np.int64)
    rooms[0, 0] = c.start.argmax(axis=1) if n_obj else 0
    for t in range(steps):
        now = rooms[0, t].copy()
        doors = c.doors[t % c.period]
        for k, o in enumerate(c.moving):
            for d in c.preferences[k]:
                if d < 0:
                    break
                nxt = doors[now[o], d]
                if nxt != now[o]:
                    now[o] = nxt
                    break
        rooms[0, t + 1] = now
    cycle = c.question_cycle if len(c.question_cycle) else np.zeros(1, dtype=np.int64)
    questions = cycle[np.arange(steps + 1) % len(cycle)].reshape(1, steps + 1, 1)
    truth, previous = _truth(rooms, questions)
    attached = np.full((1, steps + 1, 0), -1, dtype=np.int64)
    return Episodes(rooms, attached, questions, truth, previous, np.array([int(c.agent_start.argmax())]))
