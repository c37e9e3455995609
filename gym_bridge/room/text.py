"""Room v1's text view: a moment (who is seen with what, where) and the question.

(The Room task's own text view, its question as the study screen asks it, is declared in
`gym_bridge/room/family.py` beside its screen.)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from graphstore import TaskGraph

from ..text import OptionNames, TextPart, TextStep, TextView


@dataclass(frozen=True, kw_only=True)
class RoomV1Text(TextView):
    """A Room v1 moment: who is seen with what where, and where someone's object is now.

    Examples
    --------
    >>> from gym_bridge import family
    >>> from gym_bridge.text import OptionNames
    >>> fam = family("roomv1")
    >>> env = fam.make_env("room/v1/xxs")
    >>> obs, info = env.reset(seed=0)
    >>> step = fam.text.step(env, obs, info, OptionNames(0))
    >>> step.situation, step.parts[0].question
    ("At time 0 you see beverly's bowl at the cupboard.", "Where is beverly's bowl?")
    """

    intro: str = "People keep moving their things. Each moment you see one thing, and you are asked where one is now."

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        seen, asked = env.unwrapped.decode(obs)  # type: ignore[attr-defined]
        locations = [str(x) for x in env.unwrapped.compiled.locations]  # type: ignore[attr-defined]
        situation = f"At time {seen[3]} you see {seen[0]} at the {seen[2]}."
        ask = f"Where is {asked[0]}?" if asked is not None else "Nothing is asked: choose any place."
        part = TextPart(ask, tuple(names.take(0, len(locations))), tuple(locations), tuple(range(len(locations))))
        return TextStep(situation, (part,))


ROOM_V1_TEXT = RoomV1Text()
