"""How a person plays a family's tasks from the keyboard, in a window (`graphtasks play`).

A family declares its `KeyMap` once, as its `Family.keys`: which key takes which action. Keys
are named as pygame names them (``"up"``, ``"w"``, ``"space"``, ``"1"``), so a declaration
needs no pygame; `graphtasks play` turns the names into key codes for gymnasium's
`gymnasium.utils.play`. A family whose actions depend on its env's settings (the grid's
orientation, its no-op and collect actions) subclasses `KeyMap` and overrides `for_env`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

# Number keys for numbered actions: 1 is action 0, ..., 9 is action 8, 0 is action 9.
DIGITS: tuple[str, ...] = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "0")
ARROWS_AND_WASD: dict[str, int] = {"up": 0, "w": 0, "right": 1, "d": 1, "down": 2, "s": 2, "left": 3, "a": 3}


class KeyMapError(ValueError):
    """An env's actions cannot all be reached from the keys (more numbered actions than number keys)."""


@dataclass(frozen=True)
class KeyMap:
    """Which key takes which action of a family's env.

    Parameters
    ----------
    keys : mapping of str to int
        pygame key names and the action each takes (keys of actions the env lacks are left out).
    numbered : bool
        The number keys take the actions in order: 1 is action 0, ..., 0 is action 9 (for as
        many actions as the env has, at most 10).
    legend : str
        One line a player reads: what the keys do.

    Examples
    --------
    >>> import gymnasium as gym
    >>> env = gym.make("graphtasks/TwoStep-v0")
    >>> KeyMap(numbered=True).for_env(env)
    {'1': 0, '2': 1}
    >>> KeyMap(keys={"up": 0, "down": 1, "left": 7}).for_env(env)  # the env has no action 7
    {'up': 0, 'down': 1}
    """

    keys: Mapping[str, int] = field(default_factory=dict)
    numbered: bool = False
    legend: str = ""

    def for_env(self, env: gym.Env) -> dict[str, int]:
        """The keys of `env` and their actions.

        Parameters
        ----------
        env : gymnasium.Env
            The env to play (its action space must be Discrete).

        Returns
        -------
        dict of str to int
            pygame key name -> action.

        Raises
        ------
        KeyMapError
            The env has more numbered actions than there are number keys.
        """
        n_actions = n_actions_of(env)
        out = {key: action for key, action in self.keys.items() if action < n_actions}
        if self.numbered:
            if n_actions > len(DIGITS):
                raise KeyMapError(f"{n_actions} actions; the number keys reach {len(DIGITS)}")
            out.update({DIGITS[i]: i for i in range(n_actions)})
        return out

    def describe(self, env: gym.Env) -> str:
        """The keys of `env`, one line: each action's keys (``"up/w: 0, right/d: 1, ..."``).

        Parameters
        ----------
        env : gymnasium.Env
            The env to play.

        Returns
        -------
        str
            The line.
        """
        by_action: dict[int, list[str]] = {}
        for key, action in self.for_env(env).items():
            by_action.setdefault(action, []).append(key)
        return ", ".join(f"{'/'.join(keys)}: action {action}" for action, keys in sorted(by_action.items()))


def n_actions_of(env: gym.Env) -> int:
    """The number of actions of `env`; ValueError when its action space is not Discrete."""
    space: Any = env.action_space
    if not isinstance(space, gym.spaces.Discrete):
        raise KeyMapError(f"its action space {space} is not Discrete: keys cannot name its actions")
    return int(space.n)
