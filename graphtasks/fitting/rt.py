"""Choices with response times: reinforcement-learning agents whose values drive a drift-diffusion
model (RL-DDM) or a race of linear ballistic accumulators (RL-LBA).

An RT model is a `FitModel` whose fixed settings name the response model, ``rt = "ddm"`` or
``rt = "lba"``; its other settings are the agent's and the response model's own. The same
code fits it as any choice-only model (`fit`, `fit_many`, `fit_group`): the likelihood of a
model whose settings hold ``rt`` is `rt_log_likelihood` (`graphtasks.fitting.likelihood`
sends it there), and `simulate` plays it through the one episode loop with `TimedChooser`.

Before each choice the agent is asked for its values of the offered options (its own
`values(state)`: the hybrid's mix of model-based and model-free values, Q's table), replayed
over the recorded choices exactly as `replay_log_likelihood` replays it; the update rule is the
agent's, never a copy. Then

- ``ddm``: a state must offer two options; the upper boundary is the second offered option
  (the higher action index), the drift ``v = drift_scale * (V(second) - V(first))``, the
  boundary separation ``threshold``, the non-decision time ``t0`` and the relative start ``z``
  (0.5 fixed by default). The density is `graphtasks.fitting.wiener`'s (Navarro & Fuss 2009).
  With z = 0.5 the choice alone follows a softmax with inverse temperature
  ``drift_scale * threshold``.
- ``lba``: one accumulator per offered option, mean rate
  ``drift_base + drift_scale * V(option)``, rate sd 1, start range ``start_range``, threshold
  ``start_range + threshold`` and non-decision time ``t0`` (`graphtasks.fitting.lba`).

Every choice is fitted with its response time (both stages of a two-step trial). Choices
without response times are refused in one line naming how many and whose: an RT model never
quietly falls back to the choices alone.
"""

from __future__ import annotations

import weakref
from typing import Any, Sequence

import numpy as np

from graphtasks.responses import RT_KEY, RT_SETTINGS, RT_STREAM, ResponseModelError, TimedChooser, response_rng
from gym_bridge.agents import agent_settings, make_agent

from .behaviour import BehaviourError, Choices
from .shape import TaskShape

# settings that would compete with the response model for the same job: the choice rule
CHOICE_RULE = ("beta", "epsilon")


def rt_settings(model: str, family: Any, free: Sequence[str]) -> set[str]:
    """The settings an RT model of response model `family` may name besides its agent's:
    `RT_KEY` and the response model's. BehaviourError for an unknown family, or a free choice
    rule (the response model chooses).

    Examples
    --------
    >>> from graphtasks.fitting.rt import rt_settings
    >>> sorted(rt_settings("q-ddm", "ddm", ["lr"]))
    ['drift_scale', 'rt', 't0', 'threshold', 'z']
    """
    if family not in RT_SETTINGS:
        raise BehaviourError(f"model {model!r}: rt = {family!r}: expected one of {', '.join(RT_SETTINGS)}")
    ruled = [n for n in free if n in CHOICE_RULE]
    if ruled:
        raise BehaviourError(f"model {model!r}: {', '.join(ruled)} cannot be free: the {family} response model "
                             f"chooses (drift_scale plays its part)")
    return {RT_KEY, *RT_SETTINGS[family]}


def split(agent: str, settings: dict[str, Any]) -> tuple[str, dict[str, float], dict[str, Any]]:
    """(family, the response model's settings with their defaults, the agent's settings)."""
    family = str(settings[RT_KEY])
    if family not in RT_SETTINGS:
        raise BehaviourError(f"rt = {family!r}: expected one of {', '.join(RT_SETTINGS)}")
    own = RT_SETTINGS[family]
    response = {k: float(settings.get(k, v)) for k, v in own.items()}
    known = agent_settings(agent)
    return family, response, {k: v for k, v in settings.items() if k in known}


def agent_part(agent: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The agent's own settings among `settings` (an RT model's, or any model's)."""
    if RT_KEY not in settings:
        return dict(settings)
    return split(agent, settings)[2]


# -- the agent's values before each choice, replayed ---------------------------------------------
_VALUES: weakref.WeakKeyDictionary[Choices, dict[Any, np.ndarray]] = weakref.WeakKeyDictionary()
KEPT = 8  # value tables kept per sequence of choices (finite differences in the response settings reuse one)


def option_values(agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape) -> np.ndarray:
    """(choices, actions): the agent's value of each action before each choice (its own
    `values(state)`), replayed over the choices as `replay_log_likelihood` replays them.

    Kept per sequence of choices and settings (the last `KEPT`): a fit's steps that move only
    the response model's settings replay nothing.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.likelihood import task_shape
    >>> from graphtasks.fitting.rt import option_values
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=5, seed=1, store=":memory:")
    >>> option_values("q", {"lr": 0.5}, choices, task_shape("rewardgym/two-step", ":memory:")).shape
    (10, 2)
    """
    key = (agent, shape, tuple(sorted((k, repr(v)) for k, v in settings.items())))
    kept = _VALUES.setdefault(choices, {})
    if key in kept:
        return kept[key]
    chooser = make_agent(agent, shape.n_states, shape.n_actions, seed=0, **settings)
    if not callable(getattr(chooser, "values", None)):
        raise BehaviourError(f"agent {agent!r} has no values(state) to drive a response model")
    available = shape.available
    out = np.empty((len(choices), shape.n_actions))
    new_trial = True
    for t, (s, a, r, n, end, learn) in enumerate(zip(
        choices.states.tolist(), choices.actions.tolist(), choices.rewards.tolist(),
        choices.next_states.tolist(), choices.ends.tolist(), choices.learn.tolist(),
    )):
        if new_trial:
            chooser.begin_episode()
        out[t] = chooser.values(s)
        chooser.learning = learn
        chooser.learn(s, a, r, n, end, available[n])
        new_trial = end
    if len(kept) >= KEPT:
        kept.pop(next(iter(kept)))
    kept[key] = out
    return out


def response_times(choices: Choices, model: str = "") -> np.ndarray:
    """The choices' response times (seconds); BehaviourError naming the participant (the
    choices' source) and how many choices have none.

    Examples
    --------
    >>> from graphtasks.fitting import simulate
    >>> from graphtasks.fitting.rt import response_times
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=5, seed=1, store=":memory:")
    >>> response_times(choices, "q-ddm")
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: simulated q seed 1: 10 of 10 choices have no response time; \
model 'q-ddm' fits choices with their response times (fit a choice-only model, or leave those trials out)
    """
    rts = choices.rts
    missing = len(choices) if rts is None else int(np.count_nonzero(~np.isfinite(rts)))
    if missing:
        who = f"model {model!r}" if model else "a response-time model"
        raise BehaviourError(
            f"{choices.source or 'choices'}: {missing} of {len(choices)} choices have no response time; {who} fits "
            "choices with their response times (fit a choice-only model, or leave those trials out)"
        )
    assert rts is not None
    return rts


def _pairs(choices: Choices, shape: TaskShape) -> tuple[np.ndarray, np.ndarray]:
    """Each choice's two offered actions (first, second); BehaviourError where a state offers
    other than two (a drift-diffusion model decides between two)."""
    counts = np.array([len(a) for a in shape.available])[choices.states]
    if (counts != 2).any():
        i = int(np.argmax(counts != 2))
        s = int(choices.states[i])
        raise BehaviourError(
            f"{choices.source or 'choices'}: choice {i}: state {s} of {shape.task_id!r} offers "
            f"{len(shape.available[s])} actions; a drift-diffusion model decides between two (use an lba model)"
        )
    table = np.array([list(a) if len(a) == 2 else [0, 0] for a in shape.available], dtype=np.int64)
    return table[choices.states, 0], table[choices.states, 1]


def _offered(shape: TaskShape) -> np.ndarray:
    mask = np.zeros((shape.n_states, shape.n_actions), dtype=bool)
    for s, acts in enumerate(shape.available):
        mask[s, list(acts)] = True
    return mask


def rt_log_likelihood(agent: str, settings: dict[str, Any], choices: Choices, shape: TaskShape) -> float:
    """The log-likelihood of the choices with their response times (log densities in seconds).

    Parameters
    ----------
    agent : str
        The agent whose values drive the response model.
    settings : dict
        The model's settings (`FitModel.settings`): ``rt`` ("ddm" or "lba"), the response
        model's and the agent's.
    choices : Choices
        Choices with a response time each (`Choices.rts`).
    shape : TaskShape
        The task's size and offered actions.

    Returns
    -------
    float
        The sum of the log densities.

    Raises
    ------
    BehaviourError
        Choices without response times (how many, whose), or a state offering other than two
        actions to a drift-diffusion model.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.likelihood import task_shape
    >>> from graphtasks.fitting.rt import rt_log_likelihood
    >>> settings = MODELS["q-ddm"].settings([0.5, 3.0, 1.5, 0.3])
    >>> choices = simulate("rewardgym/two-step", "q", settings, trials=20, seed=1, store=":memory:")
    >>> round(rt_log_likelihood("q", settings, choices, task_shape("rewardgym/two-step", ":memory:")), 3)
    -33.376
    """
    from .lba import lba_log_density
    from .wiener import wiener_log_density

    family, response, own = split(agent, settings)
    rts = response_times(choices)
    values = option_values(agent, own, choices, shape)
    rows = np.arange(len(choices))
    if family == "ddm":
        first, second = _pairs(choices, shape)
        drift = response["drift_scale"] * (values[rows, second] - values[rows, first])
        upper = choices.actions == second
        logs = wiener_log_density(rts, upper, drift, response["threshold"], response["t0"], response["z"])
    else:
        offered = _offered(shape)[choices.states]
        drifts = response["drift_base"] + response["drift_scale"] * values
        logs = lba_log_density(rts, choices.actions, drifts, response["start_range"],
                               response["start_range"] + response["threshold"], response["t0"], 1.0, offered)
    return float(np.sum(logs))


# -- simulated: the agent's values drive the response model in the one episode loop ---------------
# (`graphtasks.responses.TimedChooser`: the code experiments and pilots play too)
__all__ = ["RT_KEY", "RT_SETTINGS", "RT_STREAM", "TimedChooser", "option_values", "rt_log_likelihood", "rt_settings",
           "simulate_rt"]


def simulate_rt(task_id: str, agent: str, settings: dict[str, Any], trials: int, seed: int, store: Any = None
                ) -> Choices:
    """`trials` episodes of an RT model on `task_id`: `simulate` for settings holding ``rt``.

    The env is reset from the run's seed tree (`gym_bridge.episodes.SeedTree`) as `simulate`'s
    runs are; the response model draws from a stream of its own.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS
    >>> from graphtasks.fitting.rt import simulate_rt
    >>> settings = MODELS["q-ddm"].settings([0.5, 3.0, 1.5, 0.3])
    >>> choices = simulate_rt("rewardgym/two-step", "q", settings, trials=20, seed=1, store=":memory:")
    >>> len(choices), choices.trials, bool(choices.rts.min() > 0.3)
    (40, 20, True)
    """
    from gym_bridge import make_env
    from gym_bridge.episodes import SeedTree, play

    from .shape import env_sizes

    family, response, own = split(agent, settings)
    env = make_env(task_id, store=store)
    n_states, n_actions = env_sizes(env)
    inner = make_agent(agent, n_states, n_actions, seed=seed, **own)
    if not callable(getattr(inner, "values", None)):
        raise BehaviourError(f"agent {agent!r} has no values(state) to drive a response model")
    chooser = TimedChooser(inner, family, response, response_rng(seed))
    try:
        for _ in play(env, chooser, trials, SeedTree(seed).env(0)):
            last = chooser.steps[-1]
            chooser.steps[-1] = (*last[:4], True)
    except ResponseModelError as exc:
        raise BehaviourError(f"simulated {agent} seed {seed}: {exc}") from None
    return Choices.from_steps(task_id, chooser.steps, f"simulated {agent} seed {seed}",
                              truth={"agent": agent, **settings}, rts=chooser.rts)
