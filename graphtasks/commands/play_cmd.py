"""`graphtasks play TASK`: play any stored or built-in task from the keyboard, in a window.

The window is gymnasium's `gymnasium.utils.play` (pygame: the `play` extra); the keys are the
task's family's declaration (`Family.keys`, gym_bridge/keys.py): arrows or W, A, S, D on grids
and POGE worlds, the number keys on graph and decision tasks. The game waits for a key (a
turn per press); Esc or closing the window ends it. Without pygame the command refuses in one
line naming the extra, before anything is read.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from .arguments import SEED, integer, one_line_errors, real
from .errors import CommandError, blame
from .extras import installed
from .output import parse_params

EXTRA_LINE = "play needs pygame: pip install 'graphtasks[play]'"
HEADLESS = ("offscreen", "dummy")  # SDL's video drivers that show nothing (chosen on purpose: tests)


class TurnByTurn(gym.Wrapper):
    """The env as a person plays it: a step with action None is no step (what gymnasium's `play`
    asks for when the keys held name no action, two at once, say: the last observation stays,
    nothing is paid), and only the first reset takes the seed (`play` gives it to every reset,
    which would replay the first episode's outcomes in each)."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.last: tuple[Any, dict[str, Any]] = (None, {})
        self.seeded = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=None if self.seeded else seed, options=options)
        self.seeded = True
        self.last = (obs, info)
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if action is None:
            obs, info = self.last
            return obs, 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.last = (obs, info)
        return obs, reward, terminated, truncated, info


def key_codes(keys: dict[str, int]) -> dict[tuple[int, ...], int]:
    """pygame key names -> gymnasium `play`'s keys_to_action (key code tuples)."""
    import pygame

    return {(pygame.key.key_code(name),): action for name, action in keys.items()}


def play_task(
    task: str,
    store: Any = None,
    seed: int | None = None,
    zoom: float | None = None,
    fps: int | None = None,
    callback: Callable[..., Any] | None = None,
    **settings: Any,
) -> str:
    """Play `task` from the keyboard in a window, with its family's keys, until Esc or the window closes.

    Parameters
    ----------
    task : str
        A task id (built in, or any task in the store).
    store : GraphStore or str, optional
        Where the task is (None: the default store).
    seed : int, optional
        The seed of the first reset.
    zoom : float, optional
        The window's size as a multiple of the env's picture.
    fps : int, optional
        Frames per second (default: the env's `render_fps`); a held key takes a turn per frame.
    callback : callable, optional
        gymnasium `play`'s callback: `callback(obs, next_obs, action, reward, terminated,
        truncated, info)` after each turn.
    **settings
        The env's settings (e.g. ``max_episode_steps``).

    Returns
    -------
    str
        The keys, as the command prints them before the window opens.

    Raises
    ------
    CommandError
        pygame is missing, or the task's family declares no keys, or the env's actions do not
        fit its keys.

    Examples
    --------
    >>> play_task("room/small", store=":memory:")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphtasks.commands.errors.CommandError: play: room/small: the room family is not played from the keyboard; ...
    """
    if not installed("pygame"):
        raise CommandError(EXTRA_LINE)
    from gym_bridge import family_of
    from gym_bridge.keys import KeyMapError

    family = family_of(task, store)
    if family.keys is None:
        names = [f.name for f in _families() if f.keys is not None]
        playable = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
        raise CommandError(f"play: {task}: the {family.name} family is not played from the keyboard; "
                           f"play takes tasks of the {playable} families")
    env = family.make_env(task, store=store, render_mode="rgb_array", **settings)
    try:
        keys = family.keys.for_env(env)
    except KeyMapError as exc:
        env.close()
        raise CommandError(f"play: {task}: {exc}") from None
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame
    from gymnasium.utils.play import play

    try:
        pygame.display.init()  # the window and its keys only (no sound: pygame.init would open the audio device)
    except pygame.error as exc:
        env.close()
        raise CommandError(f"play: no window can be opened: {exc}") from None
    driver = pygame.display.get_driver()
    if driver in HEADLESS and os.environ.get("SDL_VIDEODRIVER") != driver:  # SDL fell back to drawing nowhere
        pygame.display.quit()
        env.close()
        raise CommandError(f"play: no screen to open a window on (SDL's video driver is {driver!r}); "
                           "run it in a desktop session")
    legend = f"{family.keys.legend} Keys: {family.keys.describe(env)}; Esc quits."
    print(legend, flush=True)
    play(TurnByTurn(env), keys_to_action=key_codes(keys), seed=seed, zoom=zoom, fps=fps, callback=callback,
         noop=None, wait_on_player=True)
    return legend


def _families() -> list[Any]:
    from gym_bridge import families

    return families()


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "play", help="play a task from the keyboard in a window (needs graphtasks[play])",
        description="Play any task (built in or stored) from the keyboard in a window, with its family's keys: "
        "arrows or W, A, S, D on grids and POGE worlds, number keys on graph and decision tasks. "
        "A turn per key press; Esc or closing the window ends the game.",
    )
    parser.add_argument("task", help="task id, e.g. neuronav/grid/four_rooms/small or rewardgym/two-step")
    parser.add_argument("--seed", type=SEED, default=None, help="the seed of the first reset (default: none)")
    parser.add_argument("--zoom", type=real(0, 32, above=True), default=None,
                        help="the window as a multiple of the env's picture (default 1)")
    parser.add_argument("--fps", type=integer(1, 240), default=None,
                        help="turns a second while a key is held (default: the env's render_fps)")
    parser.add_argument("--env-param", action="append", metavar="KEY=VALUE",
                        help="environment setting, e.g. max_episode_steps=50")
    parser.set_defaults(func=cmd_play)
    one_line_errors(parser)


def cmd_play(args: argparse.Namespace) -> int:
    if not installed("pygame"):  # before the store is opened or the task read
        raise CommandError(EXTRA_LINE)
    settings = parse_params(args.env_param, "--env-param")
    with blame("--env-param", active=bool(settings)):
        play_task(args.task, store=args.store, seed=args.seed, zoom=args.zoom,
                  fps=args.fps, **settings)
    return 0
