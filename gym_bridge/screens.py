"""How a person plays a family's tasks in the study server's pages: the family's screen.

A family says it in its `Family.screen` (`gym_bridge/<family>/family.py`); a family without
one is not played by people. There are three kinds of screen, one drawing of the page each
(`page`), and each declaration says what its drawing shows:

- `ChoiceScreen` ("choice"): a stimulus and one box per available action, chosen with a key
  (graph tasks: each State's `stimulus`, `colour`, `image` and `action_labels` from the task
  graph, with defaults);
- `ArrowKeyGrid` ("arrows"): the env's text picture (render mode "ansi") drawn as a grid of
  squares, each action on an arrow key, with the colours of the picture's characters;
- `QuestionScreen` ("question"): what the env's `info` shows this step and a question, each
  answer on a key (the Room task: where everyone's things are, and where one thing is).

The study server (`graphtasks.serve`) asks the screen, never the family's name: `describe`
gives what the page draws a task version with (sent once per version, with the screen's `name`
as its `kind` and the drawing as its `page`), `frame` and `question` what it shows at a step.
So a family playable in the browser is its own two folders and nothing in `graphtasks/serve/`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym

from graphstore import TaskGraph

PALETTE = ("#4878d0", "#ee854a", "#6acc64", "#d65f5f", "#956cb4", "#8c613c", "#dc7ec0", "#797979")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
ARROWS = ("ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft")

OpenEnv = Callable[[], gym.Env]  # a new env of the task version, closed by the caller


class ScreenError(ValueError):
    """A task version does not fit its family's screen (more answers than keys, say)."""


@dataclass(frozen=True, kw_only=True)
class Screen:
    """What every screen has: its name in the pages and the env settings it needs.

    Parameters
    ----------
    name : str
        The screen's name as the page marks it (the `kind` the server sends, the screen's
        `data-screen`); defaults to the kind of screen.
    env_settings : mapping
        Settings the session's env is made with, beside the run plan's (a grid's render mode).
    """

    page: ClassVar[str] = ""  # the page's drawing: "choice", "arrows" or "question"
    name: str = ""
    env_settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The screen's name on the page: `name`, else the kind of screen ("choice", ...)."""
        return self.name or self.page

    def describe(self, graph: TaskGraph, open_env: OpenEnv, keys: Sequence[str]) -> dict[str, Any]:
        """What the page draws a task version's steps with: JSON, sent once per version.

        Parameters
        ----------
        graph : TaskGraph
            The task version's graph.
        open_env : callable
            Makes a new env of the version (the caller's settings); the screen closes it.
        keys : sequence of str
            The study's `keys` (none: the screen's own defaults).

        Returns
        -------
        dict
            `kind` (the screen's name), `page` (the drawing), `keys` (action i is keys[i]) and
            what the drawing needs.
        """
        return {"kind": self.kind, "page": self.page, **self.looks(graph, open_env, keys)}

    def looks(self, graph: TaskGraph, open_env: OpenEnv, keys: Sequence[str]) -> dict[str, Any]:
        raise NotImplementedError

    def frame(self, env: gym.Env) -> str | None:
        """The picture the page draws at this step (None: the screen draws none)."""
        return None

    def question(self, info: Mapping[str, Any]) -> dict[str, Any] | None:
        """What the page asks at this step (None: the screen asks nothing)."""
        return None


@dataclass(frozen=True, kw_only=True)
class ChoiceScreen(Screen):
    """A stimulus and one box per action; each state's look comes from the task graph.

    A State's `stimulus`, `colour`, `image` and `action_labels` (on the node or in its `info`,
    the task file's per-state annotations) are shown; without them, the state's name, a colour
    of the palette, and options lettered on from state to state (a two-step task's first stage
    "Option A", "Option B", its second stages "Option C", "Option D" and "Option E", "Option
    F"), so that no two stages look alike. Keys: the study's, else f and j for two actions,
    else 1 to n.

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge.screens import ChoiceScreen
    >>> screen = ChoiceScreen().describe(tasks.build("rewardgym/two-step"), lambda: None, ())
    >>> screen["kind"], screen["page"], screen["keys"], screen["states"]["1"]["labels"]
    ('choice', 'choice', ['f', 'j'], ['Option C', 'Option D'])
    """

    page: ClassVar[str] = "choice"

    def looks(self, graph: TaskGraph, open_env: OpenEnv, keys: Sequence[str]) -> dict[str, Any]:
        n_actions = int(graph.task.get("n_actions") or 2)
        chosen = list(keys) or (["f", "j"] if n_actions == 2 else [str(i + 1) for i in range(n_actions)])
        nodes = []
        for _, node in graph.nodes("State"):
            info = node.get("info")
            info = info if isinstance(info, dict) else {}
            nodes.append({**info, **{k: v for k, v in node.items() if v is not None}})  # the task file's info
        states = {}
        lettered = 0  # options lettered so far, over the choice states in index order
        for props in sorted(nodes, key=lambda x: int(x["index"])):
            i = int(props["index"])
            labels = props.get("action_labels")
            terminal = bool(props.get("terminal"))
            shown: list[str] | None = None
            if isinstance(labels, list):
                shown = [str(x) for x in labels]
            elif not terminal:
                shown = option_names(lettered, n_actions)
                lettered += n_actions
            states[str(i)] = {
                "name": str(props.get("name") or f"state {i}"),
                "stimulus": str(props.get("stimulus") or props.get("name") or f"state {i}"),
                "colour": str(props.get("colour") or PALETTE[i % len(PALETTE)]),
                "image": page_image(props.get("image")),
                "labels": shown,
                "terminal": terminal,
            }
        return {"keys": chosen[:n_actions], "states": states, "timed": True}


@dataclass(frozen=True, kw_only=True)
class ArrowKeyGrid(Screen):
    """The env's text picture drawn as squares; each action is an arrow key, untimed.

    Parameters
    ----------
    keys : tuple of str
        Action i's key (the page's key names: "ArrowUp", ...).
    agent : str
        The character of the picture that is the player (drawn as a disc).
    colours : mapping of str to str
        Each character's colour (" " is the floor); other characters are written in their square.
    legend : str
        One line above the grid.

    Examples
    --------
    >>> from gym_bridge.screens import ArrowKeyGrid
    >>> screen = ArrowKeyGrid(keys=("ArrowUp", "ArrowDown"), agent="P", colours={" ": "#fff"}, legend="Go.")
    >>> looks = screen.describe(None, lambda: None, ("f", "j"))  # the study's keys are not the arrows
    >>> looks["kind"], looks["page"], looks["keys"], looks["timed"], screen.env_settings["render_mode"]
    ('grid', 'arrows', ['ArrowUp', 'ArrowDown'], False, 'ansi')
    """

    page: ClassVar[str] = "arrows"
    name: str = "grid"
    env_settings: Mapping[str, Any] = field(default_factory=lambda: {"render_mode": "ansi"})
    keys: tuple[str, ...] = ARROWS
    agent: str
    colours: Mapping[str, str]
    legend: str = "Move with the arrow keys."

    def looks(self, graph: TaskGraph, open_env: OpenEnv, keys: Sequence[str]) -> dict[str, Any]:
        return {"keys": list(self.keys), "agent": self.agent, "colours": dict(self.colours), "legend": self.legend,
                "timed": False}

    def frame(self, env: gym.Env) -> str | None:
        return str(env.render())


@dataclass(frozen=True, kw_only=True)
class QuestionScreen(Screen):
    """What the env shows this step, a question, and the answers, each on a key.

    Parameters
    ----------
    answers : callable
        `answers(env)`: the text of each action, in action order.
    read : callable
        `read(info)`: `{"observations": [dict, ...], "question": str}` from the env's `info`.
    seen : str
        How one observation is written: a format with its fields ("{head} is at {tail}.").
    ask : str
        How the question is written ("Where is {question}?").
    title : str
        The line above the observations.
    legend : str
        One line at the top of the screen.
    right, wrong : str
        The feedback after an answer that earned a reward, and after one that did not.

    Examples
    --------
    >>> from gym_bridge.screens import QuestionScreen
    >>> screen = QuestionScreen(answers=lambda env: ["here", "there"],
    ...                         read=lambda info: {"observations": [], "question": info["q"]}, ask="{question}?")
    >>> looks = screen.describe(None, lambda: None, ())
    >>> looks["kind"], looks["keys"], looks["answers"], screen.question({"q": "Why"})["question"]
    ('question', ['1', '2'], ['here', 'there'], 'Why')
    """

    page: ClassVar[str] = "question"
    answers: Callable[[Any], Sequence[str]]
    read: Callable[[Mapping[str, Any]], dict[str, Any]]
    seen: str = "{text}"
    ask: str = "{question}"
    title: str = ""
    legend: str = ""
    right: str = "Right"
    wrong: str = "Not right"

    def looks(self, graph: TaskGraph, open_env: OpenEnv, keys: Sequence[str]) -> dict[str, Any]:
        env = open_env()
        try:
            answers = [str(a) for a in self.answers(env)]
            n = int(env.action_space.n) if env is not None else len(answers)  # type: ignore[attr-defined]
        finally:
            if env is not None:
                env.close()
        if len(answers) != n:
            raise ScreenError(f"{n} actions, but {len(answers)} answers to show")
        chosen = list(keys)
        if len(chosen) < n:
            chosen = [str(i + 1) for i in range(n)] if n <= 9 else list(LETTERS[:n])
        if len(chosen) < n:
            raise ScreenError(f"{n} answers, more than keys to give them (list {n} keys in study.keys)")
        return {"keys": chosen[:n], "answers": answers, "legend": self.legend, "title": self.title,
                "seen": self.seen, "ask": self.ask, "right": self.right, "wrong": self.wrong, "timed": True}

    def question(self, info: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.read(info)


def option_names(first: int, n: int) -> list[str]:
    """Default option names `first` to `first + n - 1`: "Option A" to "Option Z", then "Option AA", ...

    Examples
    --------
    >>> from gym_bridge.screens import option_names
    >>> option_names(0, 2), option_names(2, 2), option_names(25, 2)
    (['Option A', 'Option B'], ['Option C', 'Option D'], ['Option Z', 'Option AA'])
    """
    out = []
    for k in range(first + 1, first + n + 1):
        name = ""
        while k:
            k, rest = divmod(k - 1, 26)
            name = LETTERS[rest].upper() + name
        out.append(f"Option {name}")
    return out


def page_image(value: Any) -> str | None:
    """A state's image as the page may show it: a data: URL stored with the task, or a path
    under /static/ (the page's content security policy allows no other source)."""
    if isinstance(value, str) and (value.startswith("data:image/") or value.startswith("/static/")):
        return value
    return None
