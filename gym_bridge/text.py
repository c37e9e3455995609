"""How a family's tasks read as text: a step as a situation and named options.

A language model (or any callable that reads text and answers with text) plays a task the
way people and agents do, through the same env and seed tree; what it reads is a family's
text view, declared in its `Family.text` beside its screen (`gym_bridge/<family>/family.py`).
A step reads as

- a situation: what the player sees (a decision task's stimulus, a grid's picture and the
  player's square, the Room task's observations), with per-task wording where the task gives
  it (a State's `text`, the Task's `instructions`, stored with the task as its stimuli are)
  and a default made from the graph;
- one or more parts, each a question and its options; an option has a name (a letter, drawn
  per participant: `OptionNames`) and what it means (a move, an answer, an option's label).

Option names are a participant's own: `OptionNames(seed)` shuffles the letters with the
participant's seed, as the Psych-101 corpus randomises option names per participant, so the
same seed always reads the same text and another seed another naming of the same options.

Three kinds of text view are here, one per screen (`ChoiceText` for decision and graph tasks,
`PictureText` for grids, `QuestionText` for questions); a family whose steps read otherwise
writes its own subclass of `TextView` in its folder (the Room map and Room v1 do).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from graphstore import TaskGraph

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MARKED = re.compile(r"<<\s*([^<>]+?)\s*>>")


class MalformedAnswer(ValueError):
    """An answer that names no option of the step (or more than one, or one per part too few)."""


class OptionNames:
    """A participant's option names: the letters in an order drawn from the participant's seed.

    Option k of a run is `names[k]`: the k-th letter of the shuffled alphabet, then pairs of
    them (the 27th name is the first letter twice, ...), so any number of options has names.

    Parameters
    ----------
    seed : int
        The participant's seed (a run's seed).

    Examples
    --------
    >>> from gym_bridge.text import OptionNames
    >>> names = OptionNames(0)
    >>> names.take(0, 3) == OptionNames(0).take(0, 3), len(set(names.take(0, 30)))
    (True, 30)
    >>> sorted(OptionNames(0).take(0, 26)) == sorted(OptionNames(1).take(0, 26))
    True
    """

    def __init__(self, seed: int) -> None:
        letters = list(LETTERS)
        random.Random(f"option-names/{int(seed)}").shuffle(letters)
        self.letters = "".join(letters)

    def name(self, k: int) -> str:
        n = len(self.letters)
        if k < n:
            return self.letters[k]
        k -= n
        return self.letters[(k // n) % n] + self.letters[k % n]

    def take(self, first: int, n: int) -> list[str]:
        """The names of options `first` to `first + n - 1`."""
        return [self.name(k) for k in range(first, first + n)]


@dataclass(frozen=True)
class TextPart:
    """One question of a step and its options.

    Parameters
    ----------
    question : str
        What is asked ("Which do you choose?").
    names : tuple of str
        Each option's name, as shown and as answered.
    meanings : tuple of str
        What each option is ("go north"; "" where the name is all there is).
    values : tuple
        The env action (or action part) each option takes.
    """

    question: str
    names: tuple[str, ...]
    meanings: tuple[str, ...]
    values: tuple[Any, ...]

    def lines(self) -> list[str]:
        out = [self.question]
        for name, meaning in zip(self.names, self.meanings):
            out.append(f"  {name}: {meaning}" if meaning else f"  {name}")
        return out


def single(values: Sequence[Any]) -> Any:
    """The env action of a one-part step: the chosen option's value."""
    return values[0]


@dataclass(frozen=True)
class TextStep:
    """A step as text: the situation, its parts, and how the chosen options make the env's action.

    Examples
    --------
    >>> from gym_bridge.text import TextPart, TextStep
    >>> step = TextStep("You see a red door.", (TextPart("Which?", ("K", "Q"), ("open", "leave"), (0, 1)),))
    >>> print(step.prompt())
    You see a red door.
    Which?
      K: open
      Q: leave
    Answer with the name of one option.
    >>> step.parse("I choose <<Q>>."), step.action([1]), step.marked([1])
    ([1], 1, '<<Q>>')
    """

    situation: str
    parts: tuple[TextPart, ...]
    combine: Callable[[Sequence[Any]], Any] = field(default=single, compare=False)

    def prompt(self) -> str:
        """The text a participant reads at this step."""
        lines = [self.situation] if self.situation else []
        for part in self.parts:
            lines += part.lines()
        if len(self.parts) == 1:
            lines.append("Answer with the name of one option.")
        else:
            lines.append(f"Answer with {len(self.parts)} option names, one per question, in order.")
        return "\n".join(lines)

    def parse(self, answer: str) -> list[int]:
        """The option chosen in each part (its place in the part), from an answer's text.

        Names marked `<<name>>` are read first; else the whole answer, else the words that are
        option names (case as shown). MalformedAnswer when a part's choice cannot be read.
        """
        text = str(answer or "").strip()
        marked = MARKED.findall(text)
        if marked:
            tokens = marked
        elif len(self.parts) == 1 and text in self.parts[0].names:
            tokens = [text]
        else:
            tokens = re.findall(r"[A-Za-z]+", text)
            if len(self.parts) == 1 and len({t for t in tokens if t in self.parts[0].names}) > 1:
                raise MalformedAnswer(f"more than one option named in the answer {text[:80]!r}")
        chosen: list[int] = []
        rest = list(tokens)
        for part in self.parts:
            found = None
            while rest:
                token = rest.pop(0)
                if token in part.names:
                    found = part.names.index(token)
                    break
            if found is None:
                shown = ", ".join(part.names)
                raise MalformedAnswer(f"no option name of {part.question!r} ({shown}) in the answer {text[:80]!r}")
            chosen.append(found)
        return chosen

    def action(self, chosen: Sequence[int]) -> Any:
        """The env action of the chosen options (one place per part)."""
        return self.combine([part.values[i] for part, i in zip(self.parts, chosen)])

    def marked(self, chosen: Sequence[int]) -> str:
        """The chosen names as the corpus marks them: `<<K>>`, `<<K>> <<Q>>`."""
        return " ".join(f"<<{part.names[i]}>>" for part, i in zip(self.parts, chosen))


@dataclass(frozen=True, kw_only=True)
class TextView:
    """What every text view has: how a task is introduced, how a step and its outcome read.

    Parameters
    ----------
    intro : str
        The instructions read before the first step (a task's own `instructions` replace it).
    env_settings : mapping
        Settings the env is made with to be read as text (a grid's render mode).
    """

    intro: str = ""
    env_settings: Mapping[str, Any] = field(default_factory=dict)

    def instructions(self, graph: TaskGraph | None) -> str:
        """The task's instructions: its own (`instructions` on the Task), else the view's."""
        own = graph.task.get("instructions") if graph is not None else None
        return str(own) if own else self.intro

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        """The step the env is at, as text, with the participant's option names."""
        raise NotImplementedError

    def outcome(self, reward: float, info: Mapping[str, Any]) -> str:
        """What the participant reads after a step."""
        return f"You get {reward:g} point{'' if reward == 1 else 's'}."


def state_props(graph: TaskGraph) -> dict[int, dict[str, Any]]:
    """Each State's properties by index, with its `info` (the task file's annotations) under them."""
    out = {}
    for _, node in graph.nodes("State"):
        info = node.get("info")
        info = info if isinstance(info, dict) else {}
        props = {**info, **{k: v for k, v in node.items() if v is not None}}
        out[int(props["index"])] = props
    return out


@dataclass(frozen=True, kw_only=True)
class ChoiceText(TextView):
    """A decision or graph task's step: the state's stimulus and its available options.

    The situation is the State's `text` if the task gives one, else "You see <stimulus>."
    (its `stimulus`, else its name). Options are named on from state to state, as the choice
    screen letters them, so that no two stages share names; a State's `action_labels` are
    shown beside the names.

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge import family
    >>> from gym_bridge.text import OptionNames
    >>> fam = family("graph")
    >>> env = fam.make_env("rewardgym/two-step")
    >>> obs, info = env.reset(seed=0)
    >>> step = fam.text.step(env, obs, info, OptionNames(0), tasks.build("rewardgym/two-step"))
    >>> len(step.parts[0].names), step.parts[0].values
    (2, (0, 1))
    """

    intro: str = "In each trial you see a situation and choose one option. Try to get as many points as you can."
    ask: str = "Which option do you choose?"

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        n_actions = int(env.action_space.n)  # type: ignore[attr-defined]
        state = int(info.get("state", obs))
        props = state_props(graph) if graph is not None else {}
        offset = 0  # options named before this state, over the states in index order
        for i in sorted(props):
            if i == state:
                break
            if not props[i].get("terminal"):
                offset += n_actions
        here = props.get(state, {})
        situation = str(here.get("text") or f"You see {here.get('stimulus') or here.get('name') or f'state {state}'}.")
        available = [int(a) for a in info.get("available_actions", range(n_actions))]
        labels = here.get("action_labels")
        shown = names.take(offset, n_actions)
        meanings = [str(labels[a]) if isinstance(labels, list) and a < len(labels) else "" for a in available]
        part = TextPart(self.ask, tuple(shown[a] for a in available), tuple(meanings), tuple(available))
        return TextStep(situation, (part,))


def find_char(picture: str, char: str) -> tuple[int, int] | None:
    """(row, column) of `char` in a text picture (None: not in it)."""
    for r, line in enumerate(picture.splitlines()):
        c = line.find(char)
        if c >= 0:
            return r, c
    return None


@dataclass(frozen=True, kw_only=True)
class PictureText(TextView):
    """A grid's step: its text picture (render mode "ansi"), the player's square, the moves.

    Parameters
    ----------
    moves : tuple of str
        What action i does ("go north", ...).
    agent : str
        The picture's character that is the player.
    legend : str
        What the picture's characters mean.
    """

    env_settings: Mapping[str, Any] = field(default_factory=lambda: {"render_mode": "ansi"})
    moves: tuple[str, ...]
    agent: str
    legend: str = ""
    ask: str = "Where do you move?"

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        picture = str(env.render()).rstrip("\n")
        at = find_char(picture, self.agent)
        where = f"You are {self.agent} at row {at[0]}, column {at[1]}." if at else "You are not on the map."
        situation = "\n".join(x for x in (self.legend, picture, where) if x)
        available = [int(a) for a in info.get("available_actions", range(len(self.moves)))]
        shown = names.take(0, len(self.moves))
        part = TextPart(self.ask, tuple(shown[a] for a in available), tuple(self.moves[a] for a in available),
                        tuple(available))
        return TextStep(situation, (part,))


@dataclass(frozen=True, kw_only=True)
class QuestionText(TextView):
    """A question's step: what the env shows (`read(info)`'s observations) and the answers.

    Parameters
    ----------
    answers : callable
        `answers(env)`: each action's answer, in action order.
    read : callable
        `read(info)`: `{"observations": [dict, ...], "question": str}`.
    seen, ask, title : str
        How an observation, the question and the line above the observations are written.
    """

    answers: Callable[[Any], Sequence[str]]
    read: Callable[[Mapping[str, Any]], dict[str, Any]]
    seen: str = "{text}"
    ask: str = "{question}"
    title: str = ""

    def step(self, env: gym.Env, obs: Any, info: Mapping[str, Any], names: OptionNames,
             graph: TaskGraph | None = None) -> TextStep:
        shown = self.read(info)
        lines = [self.title] if self.title else []
        lines += [self.seen.format(**o) for o in shown.get("observations") or ()]
        answers = [str(a) for a in self.answers(env)]
        part = TextPart(self.ask.format(question=shown.get("question", "?")), tuple(names.take(0, len(answers))),
                        tuple(answers), tuple(range(len(answers))))
        return TextStep("\n".join(lines), (part,))

    def outcome(self, reward: float, info: Mapping[str, Any]) -> str:
        return "Right." if reward > 0 else "Not right."
