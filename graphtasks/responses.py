"""Response models: an agent's values choose AND time each choice.

One code path for every place an agent answers with a response time: the simulated
participants of fitting (`graphtasks.fitting.simulate` of an RT model), the runs of an
experiment whose agent declares ``response = "ddm"`` or ``"lba"`` (`graphtasks experiment
run`) and the pilots of a study (`graphtasks.serve.pilot`).

- ``ddm``: a state must offer two options; the upper boundary is the second offered option
  (the higher action index), the drift ``v = drift_scale * (V(second) - V(first))``, the
  boundary separation ``threshold``, the non-decision time ``t0`` (seconds) and the relative
  start ``z`` (`graphtasks.fitting.wiener`).
- ``lba``: one accumulator per offered option, mean rate ``drift_base + drift_scale * V``,
  rate sd 1, start range ``start_range``, threshold ``start_range + threshold`` and
  non-decision time ``t0`` (`graphtasks.fitting.lba`).

The draws come from a stream of their own, `response_rng(seed)`: one seed gives one sequence
of choices and response times whoever plays it. Response times are drawn in seconds; records
keep them in milliseconds (`Trial.rt`, a chunk's ``rt`` column), as the browser measures them.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from graphstore.errors import GraphtasksError

RT_KEY = "rt"
# the response models' settings, with their defaults
RT_SETTINGS: dict[str, dict[str, float]] = {
    "ddm": {"drift_scale": 2.0, "threshold": 1.5, "t0": 0.2, "z": 0.5},
    "lba": {"drift_scale": 2.0, "drift_base": 1.0, "threshold": 0.5, "start_range": 0.5, "t0": 0.2},
}
# what each setting may be: (low, high, whether low itself is allowed)
RANGES: dict[str, tuple[float, float, bool]] = {
    "drift_scale": (-math.inf, math.inf, True), "drift_base": (-math.inf, math.inf, True),
    "threshold": (0.0, math.inf, False), "start_range": (0.0, math.inf, False), "t0": (0.0, 60.0, True),
    "z": (0.0, 1.0, False),
}
RT_STREAM = 0x7274  # "rt": the response model's draws, a stream of their own
MS = 1000.0  # records keep response times in milliseconds


class ResponseModelError(GraphtasksError, ValueError):
    """A response model that cannot be used: an unknown one, a bad setting, a state it cannot decide in."""


def response_setting_error(family: str, name: str, value: Any) -> str | None:
    """Why `value` is no good for setting `name` of response model `family` (None: it is).

    Examples
    --------
    >>> from graphtasks.responses import response_setting_error
    >>> response_setting_error("ddm", "threshold", -1.0)
    'threshold must be > 0, got -1.0'
    >>> response_setting_error("ddm", "threshold", 1.5) is None
    True
    """
    if name not in RT_SETTINGS[family]:
        return f"{name!r} is not a setting of the {family} response model ({', '.join(RT_SETTINGS[family])})"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"{name} must be a finite number, got {value!r}"
    low, high, closed = RANGES[name]
    if value < low or (value == low and not closed) or value > high or (name == "z" and value >= high):
        shown = f">= {low:g}" if closed else f"> {low:g}"
        upper = "" if math.isinf(high) else (f" and < {high:g}" if name == "z" else f" and <= {high:g}")
        return f"{name} must be {shown}{upper}, got {value!r}"
    return None


def response_settings(family: str, settings: Mapping[str, Any]) -> dict[str, float]:
    """The response model's settings: those of `settings` it has, the others at their defaults;
    ResponseModelError for an unknown family or a bad value.

    Examples
    --------
    >>> from graphtasks.responses import response_settings
    >>> response_settings("ddm", {"threshold": 2.0, "lr": 0.3})
    {'drift_scale': 2.0, 'threshold': 2.0, 't0': 0.2, 'z': 0.5}
    """
    if family not in RT_SETTINGS:
        raise ResponseModelError(f"rt = {family!r}: expected one of {', '.join(RT_SETTINGS)}")
    out = {}
    for name, default in RT_SETTINGS[family].items():
        value = settings.get(name, default)
        why = response_setting_error(family, name, value)
        if why:
            raise ResponseModelError(why)
        out[name] = float(value)
    return out


def response_rng(seed: int) -> np.random.Generator:
    """The response model's stream of a run of seed `seed` (beside the seed tree's env, start
    and schedule streams)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(RT_STREAM,)))


class TimedChooser:
    """An agent for the episode loop whose choices and response times come from a response
    model driven by another agent's values (`inner`), which learns as it would alone.

    Each draw's response time (seconds) is kept in `times` as it is drawn; each step learnt
    and its response time in `steps` and `rts`. Settings set on the chooser (a phase's agent
    settings) go to the inner agent.

    Parameters
    ----------
    inner : object
        An agent with `values(state)` (q, hybrid, ...).
    family : str
        "ddm" or "lba".
    response : dict
        The response model's settings (`response_settings`).
    rng : numpy.random.Generator
        The response model's stream (`response_rng`).

    Examples
    --------
    >>> import numpy as np
    >>> from gym_bridge.agents import make_agent
    >>> from graphtasks.responses import TimedChooser
    >>> chooser = TimedChooser(make_agent("q", 7, 2, seed=0), "ddm", {"drift_scale": 2.0, "threshold": 1.5,
    ...                        "t0": 0.2, "z": 0.5}, np.random.default_rng(0))
    >>> [round(float(p), 3) for p in chooser.action_probabilities(0, [0, 1])]
    [0.5, 0.5]
    >>> chooser.act(0, [0, 1]) in (0, 1), chooser.times[0] > 0.2
    (True, True)
    """

    def __init__(self, inner: Any, family: str, response: dict[str, float], rng: np.random.Generator) -> None:
        if not callable(getattr(inner, "values", None)):
            raise ResponseModelError(f"agent {type(inner).__name__} has no values(state) to drive a response model")
        object.__setattr__(self, "inner", inner)
        self.family, self.response, self.rng = family, response, rng
        self.steps: list[tuple[int, int, float, int, bool]] = []
        self.rts: list[float] = []
        self.times: list[float] = []
        self._rt = float("nan")

    def __getattr__(self, name: str) -> Any:  # the inner agent's settings and values (n_actions, values, lr, ...)
        return getattr(self.__dict__["inner"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        own = ("family", "response", "rng", "steps", "rts", "times", "_rt")
        if name in own or not hasattr(self.inner, name):
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def begin_episode(self) -> None:
        self.inner.begin_episode()

    def _drifts(self, state: int, available: Sequence[int]) -> np.ndarray:
        values = np.asarray(self.inner.values(state), dtype=float)[list(available)]
        r = self.response
        if self.family == "ddm":
            if len(available) != 2:
                raise ResponseModelError(f"state {state} offers {len(available)} actions; a drift-diffusion model "
                                         "decides between two (use an lba model)")
            return np.array([r["drift_scale"] * (values[1] - values[0])])
        return r["drift_base"] + r["drift_scale"] * values

    def act(self, state: int, available: Sequence[int]) -> int:
        from graphtasks.fitting.lba import sample_lba
        from graphtasks.fitting.wiener import sample_wiener

        offered = sorted(int(a) for a in available)
        drifts, r = self._drifts(state, offered), self.response
        if self.family == "ddm":
            upper, self._rt = sample_wiener(float(drifts[0]), r["threshold"], r["t0"], r["z"], self.rng)
            choice = offered[1] if upper else offered[0]
        else:
            winner, self._rt = sample_lba(drifts, r["start_range"], r["start_range"] + r["threshold"], r["t0"], 1.0,
                                          self.rng)
            choice = offered[winner]
        self.times.append(self._rt)
        return int(choice)

    def action_probabilities(self, state: int, available: Sequence[int]) -> np.ndarray:
        from graphtasks.fitting.lba import choice_probabilities
        from graphtasks.fitting.wiener import upper_probability

        offered = sorted(int(a) for a in available)
        drifts, r = self._drifts(state, offered), self.response
        out = np.zeros(self.inner.n_actions)
        if self.family == "ddm":
            p = float(upper_probability(drifts[0], r["threshold"], r["z"]))
            out[offered] = (1 - p, p)
        else:
            out[offered] = choice_probabilities(drifts, r["start_range"], r["start_range"] + r["threshold"])
        return out

    def learn(self, state: int, action: int, reward: float, next_state: int, terminated: bool,
              next_available: Sequence[int]) -> None:
        self.steps.append((state, action, reward, next_state, False))
        self.rts.append(self._rt)
        self.inner.learn(state, action, reward, next_state, terminated, next_available)

    def take_times(self) -> list[float]:
        """The response times (seconds) drawn since the last call, in order."""
        out = self.times
        object.__setattr__(self, "times", [])
        return out
