"""`graphtasks play TASK` (issue 42): a task played from the keyboard in a window by gymnasium's
`play`, with the keys its family declares (`Family.keys`); without pygame one line naming the
`play` extra.

The window is pygame's with SDL's dummy video driver (no screen); the keys are real pygame key
events, posted as a person's presses would arrive, one after each turn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import gym_bridge
from graphtasks import cli
from graphtasks.commands.play_cmd import EXTRA_LINE, TurnByTurn, play_task
from gym_bridge.keys import DIGITS, KeyMap, KeyMapError

GRID = "neuronav/grid/four_rooms/small"
POGE = "poge/world0"
TWO_STEP = "rewardgym/two-step"


@pytest.fixture
def headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    pygame.display.init()
    return pygame


class Player:
    """Presses `script`'s keys one at a time: each released, and the next pressed, after its turn;
    the window closed after the last. Records each turn as gymnasium's `play` reports it."""

    def __init__(self, pygame, script: list[str]) -> None:
        self.pygame, self.script, self.turns = pygame, script, []
        self.press(script[0])

    def press(self, name: str) -> None:
        self.pygame.event.post(self.pygame.event.Event(self.pygame.KEYDOWN, key=self.pygame.key.key_code(name)))

    def __call__(self, obs, next_obs, action, reward, terminated, truncated, info) -> None:
        pygame = self.pygame
        self.turns.append((action, next_obs, reward, terminated))
        pygame.event.post(pygame.event.Event(pygame.KEYUP, key=pygame.key.key_code(self.script[len(self.turns) - 1])))
        if len(self.turns) < len(self.script):
            self.press(self.script[len(self.turns)])
        else:
            pygame.event.post(pygame.event.Event(pygame.QUIT))


def replay(task: str, actions: list[int], seed: int) -> list[tuple]:
    """The same actions stepped by hand on the same env: what the window's turns must be."""
    env = gym_bridge.family_of(task).make_env(task, render_mode="rgb_array")
    env.reset(seed=seed)
    out = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((action, obs, reward, terminated))
        if terminated or truncated:  # the window starts the next episode, its stream going on
            env.reset()
    return out


EXAMPLES = {"graph": TWO_STEP, "grid": GRID, "poge": POGE}


@pytest.fixture(scope="module")
def envs() -> dict:
    """An env of each family played from the keyboard, made once."""
    return {name: gym_bridge.family_of(task).make_env(task, render_mode="rgb_array")
            for name, task in EXAMPLES.items()}


# -- the key maps, declared once per family -------------------------------------------------------
def test_each_family_that_draws_declares_keys_reaching_every_action(envs):
    """A family whose env draws a picture and has one-of-n actions is played from the keyboard:
    each of its keys takes an action the env has, and every action has a key."""
    for family in gym_bridge.families():
        if family.keys is None:
            assert family.name not in EXAMPLES, family.name
            continue
        env = envs[family.name]
        keys = family.keys.for_env(env)
        assert set(keys.values()) == set(range(env.action_space.n)), (family.name, keys)
        assert family.keys.legend and "action 0" in family.keys.describe(env)
    assert {f.name for f in gym_bridge.families() if f.keys is not None} == set(EXAMPLES)


def test_the_grids_keys_follow_its_settings(envs):
    grid = gym_bridge.family_of(GRID)
    fixed = grid.keys.for_env(envs["grid"])
    assert fixed == {"up": 0, "w": 0, "right": 1, "d": 1, "down": 2, "s": 2, "left": 3, "a": 3}
    turning = grid.keys.for_env(grid.make_env(GRID, orientation="variable", use_noop=True, manual_collect=True))
    assert turning == {"left": 0, "a": 0, "right": 1, "d": 1, "up": 2, "w": 2, "space": 3, "c": 4}


def test_poge_and_graph_keys(envs):
    poge = gym_bridge.family_of(POGE)
    assert poge.keys.for_env(envs["poge"]) == {
        "up": 0, "w": 0, "down": 1, "s": 1, "left": 2, "a": 2, "right": 3, "d": 3}  # ACTIONS: up, down, left, right
    graph = gym_bridge.family_of(TWO_STEP)
    assert graph.keys.for_env(envs["graph"]) == {"1": 0, "2": 1}
    assert graph.keys.for_env(graph.make_env(TWO_STEP, use_noop=True)) == {"1": 0, "2": 1, "3": 2}


def test_more_numbered_actions_than_number_keys_are_refused():
    from gymnasium.spaces import Discrete

    env = gym_bridge.family_of(TWO_STEP).make_env(TWO_STEP)  # its own: its action space is changed
    assert KeyMap(numbered=True).for_env(env) == {"1": 0, "2": 1}
    env.action_space = Discrete(len(DIGITS) + 1)  # as a task with 11 actions would have
    with pytest.raises(KeyMapError, match="11 actions; the number keys reach 10"):
        KeyMap(numbered=True).for_env(env)


# -- the window, played by scripted keys ------------------------------------------------------------
def test_a_grid_played_with_arrows_and_wasd(headless):
    script = ["up", "up", "d", "right", "w"]
    player = Player(headless, script)
    legend = play_task(GRID, seed=3, fps=240, callback=player)
    assert "up/w: action 0" in legend and "Esc quits" in legend
    assert player.turns == replay(GRID, [0, 0, 1, 1, 0], seed=3)
    assert len({obs for _, obs, _, _ in player.turns}) > 1  # the agent moved


def test_a_decision_task_played_with_number_keys(headless):
    player = Player(headless, ["2", "1", "2"])
    play_task(TWO_STEP, seed=0, fps=240, callback=player)
    assert [a for a, *_ in player.turns] == [1, 0, 1]
    assert player.turns == replay(TWO_STEP, [1, 0, 1], seed=0)
    assert player.turns[1][3]  # the second choice ended the trial; the third was the next trial's


def test_two_keys_at_once_take_no_turn_and_only_the_first_reset_is_seeded():
    env = TurnByTurn(gym_bridge.family_of(TWO_STEP).make_env(TWO_STEP))
    obs, info = env.reset(seed=0)
    assert env.step(None) == (obs, 0.0, False, False, info)
    firsts = []
    for _ in range(6):  # the first stage's outcome each trial: seeded once, it varies
        env.reset(seed=0)
        firsts.append(env.step(0)[0])
    assert len(set(firsts)) > 1, firsts


def test_the_command_opens_the_window_and_quits(headless, capsys):
    headless.event.post(headless.event.Event(headless.QUIT))  # the window closed at once
    assert cli.main(["play", POGE, "--fps", "60", "--env-param", "is_partially_obs=false"]) == 0
    assert "Move with the arrow keys or W, A, S, D" in capsys.readouterr().out


# -- refusals ----------------------------------------------------------------------------------------
def test_a_family_without_keys_is_refused_in_one_line(capsys):
    assert cli.main(["--store", ":memory:", "play", "room/small"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("graphtasks: error: play: room/small: the room family is not played from the keyboard; "
                   "play takes tasks of the graph, grid and poge families")


NO_PYGAME = r"""
import contextlib, io, json, sys
from importlib.abc import MetaPathFinder

class NoPygame(MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "pygame":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoPygame())
from graphtasks.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(["play", "rewardgym/two-step"])
print(json.dumps([code, err.getvalue(), "gym_bridge" in sys.modules]))
"""


def test_without_pygame_the_command_names_the_extra():
    done = subprocess.run([sys.executable, "-c", NO_PYGAME], capture_output=True, text=True, timeout=120)
    code, err, loaded = json.loads(done.stdout.splitlines()[-1])
    assert (code, err) == (2, f"graphtasks: error: {EXTRA_LINE}\n")
    assert EXTRA_LINE == "play needs pygame: pip install 'graphtasks[play]'"
    assert not loaded  # refused before the task was read


@pytest.mark.slow
def test_without_a_screen_the_command_says_so_instead_of_drawing_nowhere():
    """SDL falls back to a driver that shows nothing when there is no display: one line, not a
    window nobody sees waiting for keys."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
    done = subprocess.run([sys.executable, "-m", "graphtasks", "play", TWO_STEP], capture_output=True, text=True,
                          timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("graphtasks: error: play: no screen to open a window on")
    assert done.stdout == ""  # refused before the keys were shown
