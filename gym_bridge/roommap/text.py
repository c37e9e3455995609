"""The Room map's text view: the player's room, its sides and objects, the questions and the moves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from graphstore import TaskGraph
from tasks.roommap.schema import MOVES

from ..text import OptionNames, TextPart, TextStep, TextView


@dataclass(frozen=True, kw_only=True)
class RoomMapText(TextView):
    """A Room map step: where the player is (its room, what each side leads to, the objects in
    it), one part per question asked (the rooms, named), and the moves. A question slot with
    nothing asked is not shown; its place in the env's action is room 0, which the env ignores.

    Examples
    --------
    >>> from gym_bridge import family
    >>> from gym_bridge.text import OptionNames
    >>> fam = family("roommap")
    >>> env = fam.make_env("room/v3/small-01")
    >>> obs, info = env.reset(seed=0)
    >>> step = fam.text.step(env, obs, info, OptionNames(0))
    >>> [p.question for p in step.parts]
    ['Where is the table?', 'Where do you move?']
    >>> [int(x) for x in step.action([4, 4])]
    [4, 4]
    """

    intro: str = ("You walk through a house of rooms. Each step you are asked where some objects are; "
                  "answer with a room, then choose a move.")

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        decoded = env.unwrapped.decode_observation(obs)  # type: ignore[attr-defined]
        rooms = list(env.unwrapped.compiled.rooms)  # type: ignore[attr-defined]
        lines: list[str] = []
        for head, relation, tail in decoded["room"]:
            if head == "agent":
                lines.insert(0, f"You are in the {tail}.")
            elif relation in ("north", "east", "south", "west"):
                lines.append(f"To the {relation} is {'a wall' if tail == 'wall' else 'the ' + tail}.")
            else:
                lines.append(f"The {head} is here.")
        asked = decoded["questions"] if "questions" in decoded else [decoded["question"]]
        slots = [i for i, q in enumerate(asked) if q is not None]
        room_names = tuple(names.take(0, len(rooms)))
        parts = [TextPart(f"Where is the {asked[i][0]}?", room_names, tuple(rooms), tuple(range(len(rooms))))
                 for i in slots]
        move_names = tuple(names.take(len(rooms), len(MOVES)))
        parts.append(TextPart("Where do you move?", move_names, tuple(MOVES), tuple(range(len(MOVES)))))
        n_slots = len(asked)

        def combine(values: Sequence[Any]) -> Any:
            action = np.zeros(n_slots + 1, dtype=np.int64)
            for slot, value in zip(slots, values[:-1]):
                action[slot] = int(value)
            action[-1] = int(values[-1])
            return action

        return TextStep("\n".join(lines), tuple(parts), combine)

    def outcome(self, reward: float, info: Mapping[str, Any]) -> str:
        return f"Your answers get {reward:g} points."


ROOM_MAP_TEXT = RoomMapText()
