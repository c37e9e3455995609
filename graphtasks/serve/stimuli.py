"""What each option of a choice screen shows: a study's stimulus set (`[study] stimuli`).

- "labels" (the default): the option's text label, as the family's screen declares it (the task
  graph's `action_labels`, else "Option A", "Option B", lettered on from state to state); no image.
- "daw2011": as Daw et al. (2011) showed the two-step task, each choice state is a colour of
  its own and each option a box of that colour with a glyph of its own. The k-th choice state
  (in state index order) is colour k, and its option a is glyph k * n_actions + a (of 16), so
  that no two options of a task look alike while there are at most 16 options (a two-step task's
  first stage is green, its two second stages pink and blue; a four-armed bandit gets four
  glyphs). The pictures are SVG files drawn for graphtasks (`static/stimuli/daw2011/`, under
  the project's licence, see `static/LICENSE.md`).

Every option gets a `label` (what a screen reader reads, and the image's alt text) and an `image`
(a path under /static/, or None). A task's own `image` on a State is the state's stimulus and is
left as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

STIMULI = ("labels", "daw2011")
STATIC = Path(__file__).parent / "static"
COLOURS = ("green", "pink", "blue", "orange", "purple", "teal")
HEX = {"green": "#2f8f46", "pink": "#c2407f", "blue": "#2f62b3", "orange": "#c0631c", "purple": "#6f4aa8",
       "teal": "#1d7f80"}  # the boxes' colours in the SVG files
GLYPHS = ("ring", "triangle", "diamond", "cross", "star", "bars", "zigzag", "hourglass", "hexagon", "crescent",
          "lattice", "chevrons", "arch", "dots", "wave", "key")


def check_stimuli(value: Any, where: str) -> str:
    """The stimulus set's name, or a ValueError naming `where` and the sets there are.

    Examples
    --------
    >>> from graphtasks.serve.stimuli import check_stimuli
    >>> check_stimuli("daw2011", "study.stimuli")
    'daw2011'
    """
    if value not in STIMULI:
        raise ValueError(f"{where}: expected one of {', '.join(STIMULI)}, got {value!r}")
    return str(value)


def option_looks(states: Mapping[str, Mapping[str, Any]], n_actions: int, stimuli: str
                 ) -> dict[int, list[dict[str, Any]]]:
    """Per choice state: each action's `label` and `image` under stimulus set `stimuli`.

    Parameters
    ----------
    states : mapping
        A choice screen's `states` (`gym_bridge.screens.ChoiceScreen.describe`): per state index
        (a string), its `labels` (None for a state without choices) and `terminal`.
    n_actions : int
        The task's actions.
    stimuli : str
        One of `STIMULI`.

    Returns
    -------
    dict
        State index to a list of n_actions `{"label", "image"}`; states without choices are left out.

    Examples
    --------
    >>> import tasks
    >>> from gym_bridge.screens import ChoiceScreen
    >>> from graphtasks.serve.stimuli import option_looks
    >>> states = ChoiceScreen().describe(tasks.build("rewardgym/two-step"), lambda: None, ())["states"]
    >>> looks = option_looks(states, 2, "daw2011")
    >>> looks[0][0]
    {'label': 'green ring', 'image': '/static/stimuli/daw2011/green-ring.svg'}
    >>> looks[2][1]["label"], option_looks(states, 2, "labels")[1][0]
    ('blue bars', {'label': 'Option C', 'image': None})
    """
    check_stimuli(stimuli, "stimuli")
    out: dict[int, list[dict[str, Any]]] = {}
    choice = 0  # choice states so far, in index order
    for key in sorted(states, key=int):
        state = states[key]
        labels = state.get("labels")
        if labels is None or state.get("terminal"):
            continue
        shown: list[dict[str, Any]] = []
        for a in range(n_actions):
            text = str(labels[a]) if a < len(labels) else f"Option {a + 1}"
            if stimuli == "daw2011":
                colour, glyph = COLOURS[choice % len(COLOURS)], GLYPHS[(choice * n_actions + a) % len(GLYPHS)]
                shown.append({"label": f"{colour} {glyph}", "image": f"/static/stimuli/daw2011/{colour}-{glyph}.svg"})
            else:
                shown.append({"label": text, "image": None})
        out[int(key)] = shown
        choice += 1
    return out


def options_shown(looks: Mapping[int, Sequence[Mapping[str, Any]]] | None, state: int,
                  available: Sequence[int]) -> list[dict[str, Any]]:
    """The trial payload's `options`: each available action with its `label` and `image`.

    Examples
    --------
    >>> from graphtasks.serve.stimuli import options_shown
    >>> options_shown({0: [{"label": "x", "image": None}, {"label": "y", "image": None}]}, 0, [1])
    [{'action': 1, 'label': 'y', 'image': None}]
    >>> options_shown(None, 3, [0])  # a screen without option looks (a grid's arrows)
    [{'action': 0, 'label': 'action 0', 'image': None}]
    """
    row = (looks or {}).get(int(state)) or []
    return [{"action": int(a), **(dict(row[a]) if a < len(row) else {"label": f"action {a}", "image": None})}
            for a in available]


def stimulus_files(stimuli: str) -> list[Path]:
    """The files of a stimulus set (none for "labels").

    Examples
    --------
    >>> from graphtasks.serve.stimuli import stimulus_files
    >>> len(stimulus_files("daw2011")), stimulus_files("labels")
    (96, [])
    """
    check_stimuli(stimuli, "stimuli")
    if stimuli == "labels":
        return []
    return sorted((STATIC / "stimuli" / stimuli).glob("*.svg"))


def state_colour(looks: Sequence[Mapping[str, Any]], default: str) -> str:
    """The colour a choice state's stimulus is framed in: its boxes' (a stimulus set's), else `default`.

    Examples
    --------
    >>> from graphtasks.serve.stimuli import state_colour
    >>> state_colour([{"label": "pink ring", "image": "/static/stimuli/daw2011/pink-ring.svg"}], "#000")
    '#c2407f'
    >>> state_colour([{"label": "Option A", "image": None}], "#000")
    '#000'
    """
    first = looks[0] if looks else {}
    name = str(first.get("label", "")).split(" ")[0]
    return HEX[name] if first.get("image") and name in HEX else default
