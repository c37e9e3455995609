"""What is fitted: an agent, which of its settings are free (with bounds) and which are fixed.

Three models ship for two-step-like tasks (Daw et al. 2011): `q` (Q-learning with a softmax
choice), `model-based` (the hybrid agent with w = 1) and `hybrid` (w free). Any agent of
`graphtasks agents` can be fitted with `FitModel.of(agent, free=..., fixed=...)`.

Three more fit choices with their response times (`graphtasks.fitting.rt`): `q-ddm` and
`hybrid-ddm` (the agent's value difference drives a drift-diffusion model) and `q-lba` (its
values drive a race of linear ballistic accumulators). A model is one of these when its fixed
settings name the response model (``rt = "ddm"`` or ``"lba"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphstore import did_you_mean
from graphstore.registry import Registry
from gym_bridge.agents import agent_settings

from .behaviour import BehaviourError

Bounds = dict[str, tuple[float, float]]


@dataclass(frozen=True)
class FitModel:
    """An agent with free settings (bounds: what the optimiser may try; prior: where starts
    and simulated participants are drawn from) and fixed ones.

    What `fit`, `simulate` and the model comparison take: any agent of the registry becomes a
    model by naming which of its settings are fitted, and within which bounds.

    Parameters
    ----------
    name : str
        The model's name in results and tables.
    agent : str
        The agent (`gym_bridge.agents.make_agent`'s name).
    bounds : dict of str to (float, float)
        The free settings, each with the (low, high) the optimiser may try; in this order.
    fixed : dict, optional
        Settings held at a value.
    prior : dict of str to (float, float), optional
        Where starts and simulated participants are drawn from, per free setting (default:
        its bounds).

    Raises
    ------
    BehaviourError
        A setting the agent does not have, bounds that do not rise, no free setting, or a
        setting both free and fixed, naming the model and the setting.

    Examples
    --------
    >>> from graphtasks.fitting import FitModel
    >>> model = FitModel("q-softmax", "q", {"lr": (0.0, 1.0), "beta": (0.1, 20.0)}, {"gamma": 0.0})
    >>> model.free, model.settings([0.3, 5])
    (('lr', 'beta'), {'gamma': 0.0, 'lr': 0.3, 'beta': 5.0})
    >>> FitModel("typo", "q", {"betta": (0.0, 1.0)})
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: model 'typo': free setting(s) betta are not settings of agent 'q' ...
    """

    name: str
    agent: str
    bounds: Bounds
    fixed: dict[str, Any] = field(default_factory=dict)
    prior: Bounds = field(default_factory=dict)  # default: the bounds

    def __post_init__(self) -> None:
        known = set(agent_settings(self.agent))
        if "rt" in self.fixed:  # a response-time model (graphtasks.fitting.rt): its response model's settings too
            from .rt import rt_settings

            known |= rt_settings(self.name, self.fixed["rt"], list(self.bounds))
        for where, names in (("free", self.bounds), ("fixed", self.fixed), ("prior", self.prior)):
            unknown = sorted(set(names) - known)
            if unknown:
                raise BehaviourError(
                    f"model {self.name!r}: {where} setting(s) {', '.join(unknown)} are not settings of agent "
                    f"{self.agent!r} ({', '.join(sorted(known))})"
                )
        for name, (low, high) in {**self.bounds, **self.prior}.items():
            if not low < high:
                raise BehaviourError(f"model {self.name!r}: {name}: bounds {low}:{high} must rise")
        if not self.bounds:
            raise BehaviourError(f"model {self.name!r}: no free setting to fit")
        overlap = sorted(set(self.bounds) & set(self.fixed))
        if overlap:
            raise BehaviourError(f"model {self.name!r}: {', '.join(overlap)} both free and fixed")

    @property
    def free(self) -> tuple[str, ...]:
        return tuple(self.bounds)

    def prior_of(self, name: str) -> tuple[float, float]:
        return self.prior.get(name, self.bounds[name])

    def settings(self, values: Any) -> dict[str, Any]:
        """The agent's settings for free values in `free` order.

        Parameters
        ----------
        values : sequence of float
            One value per free setting, in `free` order.

        Returns
        -------
        dict
            The fixed settings with the free values.
        """
        return {**self.fixed, **{n: float(v) for n, v in zip(self.free, values)}}

    @classmethod
    def of(cls, agent: str, free: Bounds, fixed: dict[str, Any] | None = None, name: str | None = None) -> FitModel:
        return cls(name or agent, agent, dict(free), dict(fixed or {}))


MODELS: Registry[FitModel] = Registry(
    "model", error=BehaviourError,
    message=lambda name, known: f"no model {name!r}{did_you_mean(name, known)} (models: {', '.join(known)})",
)


def register_model(model: FitModel, *, replace: bool = False) -> FitModel:
    """Make a model usable by name (`fit_model`, ``graphtasks fit --model``).

    Parameters
    ----------
    model : FitModel
        The model: an agent, its free settings with their bounds, its fixed ones.
    replace : bool, optional
        Replace a model of the same name (otherwise a ValueError).

    Returns
    -------
    FitModel
        `model`.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, FitModel, fit_model
    >>> from graphtasks.fitting.models import register_model
    >>> _ = register_model(FitModel.of("sarsa", free={"lr": (0.01, 1.0), "beta": (0.1, 20.0)}, name="sarsa-demo"))
    >>> fit_model("sarsa-demo").agent
    'sarsa'
    >>> _ = MODELS.pop("sarsa-demo")  # leave the table as it was
    >>> register_model(MODELS["q"])
    Traceback (most recent call last):
    ...
    ValueError: model 'q' exists; pass replace=True to replace it
    """
    return MODELS.register(model.name, model, replace=replace)


for _model in (
    FitModel(
        "q",
        "q",
        {"lr": (0.01, 1.0), "beta": (0.1, 20.0)},
        {"gamma": 1.0},
        {"lr": (0.1, 0.9), "beta": (1.0, 10.0)},
    ),
    FitModel(
        "model-based",
        "hybrid",
        {"lr": (0.01, 1.0), "beta": (0.1, 20.0)},
        {"w": 1.0, "perseveration": 0.0},
        {"lr": (0.1, 0.9), "beta": (1.0, 10.0)},
    ),
    FitModel(
        "hybrid",
        "hybrid",
        {"lr": (0.01, 1.0), "beta": (0.1, 20.0), "w": (0.0, 1.0)},
        {"perseveration": 0.0},
        {"lr": (0.1, 0.9), "beta": (1.0, 10.0), "w": (0.1, 0.9)},
    ),
    # choices with response times (graphtasks.fitting.rt): drift_scale x value difference -> a Wiener process
    FitModel(
        "q-ddm",
        "q",
        {"lr": (0.01, 1.0), "drift_scale": (0.1, 20.0), "threshold": (0.3, 5.0), "t0": (0.0, 1.0)},
        {"gamma": 1.0, "rt": "ddm", "z": 0.5},
        {"lr": (0.1, 0.9), "drift_scale": (1.0, 6.0), "threshold": (1.0, 2.5), "t0": (0.15, 0.4)},
    ),
    FitModel(
        "hybrid-ddm",
        "hybrid",
        {"lr": (0.01, 1.0), "w": (0.0, 1.0), "drift_scale": (0.1, 20.0), "threshold": (0.3, 5.0),
         "t0": (0.0, 1.0)},
        {"perseveration": 0.0, "rt": "ddm", "z": 0.5},
        {"lr": (0.1, 0.9), "w": (0.1, 0.9), "drift_scale": (1.0, 6.0), "threshold": (1.0, 2.5),
         "t0": (0.15, 0.4)},
    ),
    # drift_base + drift_scale x each option's value -> one linear ballistic accumulator per option
    FitModel(
        "q-lba",
        "q",
        {"lr": (0.01, 1.0), "drift_scale": (0.0, 10.0), "threshold": (0.05, 3.0), "t0": (0.0, 1.0)},
        {"gamma": 1.0, "rt": "lba", "drift_base": 1.0, "start_range": 0.5},
        {"lr": (0.1, 0.9), "drift_scale": (1.0, 4.0), "threshold": (0.3, 1.0), "t0": (0.15, 0.4)},
    ),
):
    register_model(_model)


def fit_model(name: str) -> FitModel:
    return MODELS.lookup(name)


def parse_bounds(text: str) -> Bounds:
    """'lr=0:1,beta=0.1:20' -> {'lr': (0, 1), 'beta': (0.1, 20)}."""
    out: Bounds = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, span = part.partition("=")
        low, _, high = span.partition(":")
        try:
            bounds = (float(low), float(high))
        except ValueError:
            raise BehaviourError(f"--free: expected NAME=LOW:HIGH, got {part!r}") from None
        if not all(map(math.isfinite, bounds)):
            raise BehaviourError(f"--free: {name.strip()}: bounds must be finite numbers, got {part!r}")
        out[name.strip()] = bounds
    return out


def refuse_mixed_likelihoods(fixed_by_model: Mapping[str, Mapping[str, Any] | None]) -> None:
    """Refuse, in one line, to rank models whose likelihoods are of different data.

    A response-time model's likelihood (fixed setting ``rt``: `graphtasks.fitting.rt`) is a
    density of each choice and its response time; a choice model's is a probability of the
    choice alone. Their log-likelihoods, AIC, BIC, evidences and held-out scores are not on one
    scale, so a ranking across the two would look right and be wrong.

    Parameters
    ----------
    fixed_by_model : mapping of str to mapping
        Each model's name and its fixed settings (None or {} for a choice model).

    Raises
    ------
    BehaviourError
        Some of the models are response-time models and others are not, naming both sides.

    Examples
    --------
    >>> from graphtasks.fitting.models import refuse_mixed_likelihoods
    >>> refuse_mixed_likelihoods({"q": {"gamma": 0.0}, "hybrid": {}})  # choices only: comparable
    >>> refuse_mixed_likelihoods({"q": {}, "q-ddm": {"rt": "ddm"}})
    Traceback (most recent call last):
    ...
    graphtasks.fitting.choices.BehaviourError: models q and q-ddm cannot be ranked together: ...
    """
    timed = sorted(name for name, fixed in fixed_by_model.items() if (fixed or {}).get("rt"))
    untimed = sorted(set(fixed_by_model) - set(timed))
    if timed and untimed:
        raise BehaviourError(
            f"models {', '.join(untimed)} and {', '.join(timed)} cannot be ranked together: the likelihood of "
            f"{', '.join(timed)} is of choices and their response times, that of {', '.join(untimed)} of choices "
            "alone (rank response-time models with each other, choice models with each other)"
        )
