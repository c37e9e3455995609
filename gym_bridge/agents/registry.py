"""The reference agents by name: what each is, where it comes from, its settings and their
defaults, and one way to make one that checks the settings first.

Every agent is made as `Agent(n_states, n_actions, seed=..., **settings)`: a dataclass whose
fields, but the sizes and the seed, are its settings. `make_agent` refuses an unknown or
badly typed setting with one line that lists the valid ones and their defaults (a plain
constructor call would end in Python's bare TypeError).
"""

from __future__ import annotations

import math
from dataclasses import Field, dataclass, fields
from typing import Any, Mapping, Sequence

from graphstore import did_you_mean
from graphstore.errors import GraphtasksError
from graphstore.registry import Registry

from ..room.agents import MEMORY_AGENTS, MemoryAgent
from ..roommap.agents import ExplorerAgent
from ..roommap.handcrafted import ANSWER, EXPLORE, FORGET, HandcraftedAgent
from . import hybrid, q_learning
from .bandit import BatchedInfoBonus, InfoBonusAgent
from .base import FIXED, AgentBase, RandomAgent
from .batched import BatchedAgent
from .distributional import BatchedDistributional, DistributionalQAgent
from .dyna import BatchedDynaAC, BatchedDynaQ, DynaACAgent, DynaQAgent
from .forms import JaxForm, VectorisedForm
from .hybrid import BatchedHybrid, HybridAgent
from .mbv import BatchedMBV, MBVAgent
from .mc import BatchedEpisodicControl, BatchedMonteCarlo, EpisodicControlAgent, MonteCarloQAgent
from .opal import BatchedOpAL, OpALAgent
from .q_learning import BatchedQ, QAgent
from .sr import BatchedSR, SRAgent
from .sr_variants import BatchedDynaSR, BatchedSRMB, DynaSRAgent, SRMBAgent
from .td import ActorCriticAgent, BatchedActorCritic, BatchedQLambda, BatchedSarsa, QLambdaAgent, SarsaAgent
from .valence import BatchedMood, BatchedValence, BatchedValenceHybrid, MoodAgent, ValenceHybridAgent, ValenceQAgent

UNIT = ("lr", "lr_mb", "lr_pos", "lr_neg", "lr_g", "lr_n", "model_lr", "mood_lr", "w_lr", "gamma", "epsilon", "lam",
        "mix", "w", "optimism")
# The values a setting may take, by name (declared once for every agent that has it): a
# probability or a rate in [0, 1]; an inverse temperature >= 0; counts within what fits in memory.
RANGES: dict[str, tuple[float, float]] = {
    **{name: (0.0, 1.0) for name in UNIT},
    "beta": (0.0, math.inf),
    "beta_g": (0.0, math.inf),
    "beta_n": (0.0, math.inf),
    "capacity": (2, 1_000_000),
    "cells": (1, 10_000),
    "replays": (0, 10_000),
    "successors": (1, 10_000),  # outcomes a Dyna model keeps per (state, action)
    "sweeps": (1, 10_000),
    "info_bonus": (0.0, math.inf),
    "prior_sd": (1e-9, math.inf),
    "noise": (1e-9, math.inf),
}
# The values a setting named by a word may take, by name.
CHOICES: dict[str, tuple[str, ...]] = {
    "bootstrap": ("max", "policy"),  # q, dyna, mood: the next state's best action, or the policy's mean
    "rates": ("even", "random"),  # distq: the cells' optimism evenly spread, or their rates drawn
    "reward_model": ("state", "pair"),  # mbv: the reward of arriving at a state, or of a (state, action)
    "planning": ("every_step", "on_change"),  # mbv, srmb: sweeps after every step, or neuro-nav's schedule
    "explore": EXPLORE, "forget": FORGET, "answer": ANSWER,  # handcrafted (Room maps)
}


class AgentSettingError(GraphtasksError, ValueError):
    """An unknown agent, or a setting it does not have or of the wrong type."""


@dataclass(frozen=True)
class AgentInfo:
    name: str
    cls: type[AgentBase] | type[MemoryAgent] | type[ExplorerAgent] | type[HandcraftedAgent]
    summary: str
    reference: str
    batched: type[BatchedAgent] | None = None  # its batched form (B lanes as arrays), in its own module
    compiled: str | None = None  # its rule in the compiled lane loop (`gym_bridge.compiled_lanes.RULES`), if any
    # its likelihood forms for fitting (`gym_bridge.agents.forms`), written in its own module
    vectorised: VectorisedForm | None = None  # over all trials at once (`graphtasks.fitting.vectorised`)
    jax: JaxForm | None = None  # in the JAX scan of NUTS fits (`graphtasks.fitting.bayes`)

    @property
    def observation(self) -> str:
        """What the agent acts on ("index": the state index in `info["state"]`; "room": RoomEnv's
        observation, for the Room task's memory agents)."""
        return self.cls.observation

    def families(self) -> list[str]:
        """The task families whose envs offer this agent's observation: the tasks it can run on."""
        from ..families import families

        return [f.name for f in families() if f.view(self.observation) is not None]


AGENT_INFO: Registry[AgentInfo] = Registry(
    "agent", error=AgentSettingError,
    message=lambda name, known: (f"unknown agent {name!r}{did_you_mean(name, known)} "
                                 f"(agents: {', '.join(sorted(known))})"),
)
AGENTS: dict[str, type] = {}  # every agent's class by name (a view of `AGENT_INFO`, kept by `register_agent`)
# The agents with a batched form, read from their rows (a view of `AGENT_INFO`, kept by `register_agent`).
BATCHED: dict[str, type[BatchedAgent]] = {}


def register_agent(info: AgentInfo, *, replace: bool = False) -> AgentInfo:
    """Make an agent usable by name (`make_agent`, experiments, `graphtasks agents`).

    Parameters
    ----------
    info : AgentInfo
        Its row: name, class (a dataclass whose fields but the sizes and the seed are its
        settings), summary, reference, and its batched and likelihood forms if it has them.
    replace : bool, optional
        Replace an agent of the same name (otherwise a ValueError).

    Returns
    -------
    AgentInfo
        `info`.

    Examples
    --------
    >>> from gym_bridge.agents import AGENT_INFO, AGENTS, QAgent, make_agent
    >>> from gym_bridge.agents.registry import AgentInfo, register_agent
    >>> _ = register_agent(AgentInfo("q-demo", QAgent, "Q-learning, for a demo", "-"))
    >>> make_agent("q-demo", 3, 2, lr=0.5).lr
    0.5
    >>> for table in (AGENT_INFO, AGENTS):  # leave the tables as they were
    ...     _ = table.pop("q-demo")
    >>> register_agent(AGENT_INFO["q"])
    Traceback (most recent call last):
    ...
    ValueError: agent 'q' exists; pass replace=True to replace it
    """
    AGENT_INFO.register(info.name, info, replace=replace)
    AGENTS[info.name] = info.cls
    BATCHED.pop(info.name, None)
    if info.batched is not None:
        BATCHED[info.name] = info.batched
    return info


for _row in (
    AgentInfo("q", QAgent, "TD Q-learning; optimism < 1 bootstraps pessimistically", "Watkins & Dayan 1992",
              batched=BatchedQ, compiled="q", vectorised=q_learning.vectorised, jax=q_learning.JAX),
    AgentInfo("sarsa", SarsaAgent, "on-policy TD control", "Rummery & Niranjan 1994",
              batched=BatchedSarsa, compiled="sarsa"),
    AgentInfo("qlambda", QLambdaAgent, "Q-learning with accumulating traces", "Watkins 1989",
              batched=BatchedQLambda),
    AgentInfo("mc", MonteCarloQAgent, "every-visit Monte Carlo Q at episode end", "Sutton & Barto 2018, 5.3",
              batched=BatchedMonteCarlo),
    AgentInfo("ec", EpisodicControlAgent, "episodic control: best return seen", "Lengyel & Dayan 2007",
              batched=BatchedEpisodicControl),
    AgentInfo("ac", ActorCriticAgent, "TD actor-critic, softmax over preferences", "Sutton & Barto 2018, 13.5",
              batched=BatchedActorCritic),
    AgentInfo("dynaac", DynaACAgent, "TD actor-critic plus replay of recent outcomes", "Sutton 1990",
              batched=BatchedDynaAC),
    AgentInfo("sr", SRAgent, "TD successor representation, Q = M w", "Dayan 1993; Russek et al. 2017",
              batched=BatchedSR),
    AgentInfo("dynasr", DynaSRAgent, "TD-SR plus replay of recent outcomes", "Russek et al. 2017",
              batched=BatchedDynaSR),
    AgentInfo("srmb", SRMBAgent, "mix of TD-SR and model-based values", "Momennejad et al. 2017",
              batched=BatchedSRMB),
    AgentInfo("dyna", DynaQAgent, "Q-learning plus replay of recent outcomes", "Sutton 1990",
              batched=BatchedDynaQ),
    AgentInfo("mbv", MBVAgent, "model-based value iteration on a learnt model", "Sutton & Barto 2018, ch. 8",
              batched=BatchedMBV),
    AgentInfo("distq", DistributionalQAgent, "distributional TD, asymmetric rates per cell", "Dabney et al. 2020",
              batched=BatchedDistributional),
    AgentInfo("mood", MoodAgent, "valence Q-learning biased by a running mood", "Eldar et al. 2016",
              batched=BatchedMood),
    AgentInfo("valence", ValenceQAgent, "Q-learning, rates for +/- errors, traces", "Lefebvre et al. 2017",
              batched=BatchedValence),
    AgentInfo("opal", OpALAgent, "critic plus Go and NoGo actors learning from its error", "Collins & Frank 2014",
              batched=BatchedOpAL),
    AgentInfo("hybrid", HybridAgent, "model-based / model-free mixture, TD(lambda)", "Daw et al. 2011",
              batched=BatchedHybrid, vectorised=hybrid.vectorised, jax=hybrid.JAX),
    AgentInfo("vhybrid", ValenceHybridAgent, "rewardGym's hybrid: delta-rule model, valence MF", "Daw et al. 2011",
              batched=BatchedValenceHybrid),
    AgentInfo("infobonus", InfoBonusAgent, "Kalman arm means per game, plus an information bonus",
              "Wilson et al. 2014", batched=BatchedInfoBonus),
    AgentInfo("random", RandomAgent, "uniform over the offered actions (a baseline)", "-"),
    AgentInfo("explorer", ExplorerAgent, "Room maps: random moves, answers from memory", "-"),
    AgentInfo("handcrafted", HandcraftedAgent, "Room maps: explore, forget, answer by fixed rules",
              "Kim et al. 2024"),
    *(
        AgentInfo(kind, MEMORY_AGENTS[kind], summary, "Kim et al. 2022")
        for kind, summary in (
            ("episodic", "Room: episodic memory only, forgets the oldest"),
            ("semantic", "Room: semantic memory only, forgets the weakest"),
            ("episodic_semantic", "Room: both, compressing episodic into semantic memory"),
            ("episodic_semantic_pretrain", "Room: both, semantic memory pre-filled from ConceptNet"),
        )
    ),
):
    register_agent(_row)


def _settings(name: str) -> list[Field]:
    """The agent's fields that its constructor takes, but the sizes and the seed."""
    return [f for f in fields(_info(name).cls) if f.init and f.name not in FIXED]


def agent_settings(name: str) -> dict[str, Any]:
    """An agent's settings and their defaults, in the constructor's order."""
    return {f.name: f.default for f in _settings(name)}


def _optional(name: str) -> set[str]:
    """Settings that also take None (annotated `... | None`)."""
    return {f.name for f in _settings(name) if "None" in str(f.type)}


def _info(name: str) -> AgentInfo:
    return AGENT_INFO.lookup(name)


def describe_settings(name: str) -> str:
    """'lr=0.1, gamma=0.95, ...': the settings with their defaults, for messages and listings."""
    return ", ".join(f"{k}={v}" for k, v in agent_settings(name).items()) or "none"


def check_agent_settings(name: str, settings: dict[str, Any]) -> None:
    """AgentSettingError naming the first setting the agent does not have, or whose value is not
    a number where the default is one; the message lists every setting with its default."""
    known = agent_settings(name)
    for key, value in settings.items():
        if key not in known:
            raise AgentSettingError(
                f"the {name} agent has no setting {key!r}{did_you_mean(key, known)} "
                f"(settings: {describe_settings(name)})"
            )
        default = known[key]
        if key in CHOICES:
            if value not in CHOICES[key]:
                raise AgentSettingError(
                    f"the {name} agent's {key}: expected one of {', '.join(CHOICES[key])}, got {value!r}"
                )
            continue
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise AgentSettingError(f"the {name} agent's {key}: expected true or false, got {value!r}")
            continue
        numeric = isinstance(default, (int, float))
        optional = default is None or key in _optional(name)  # e.g. beta=None: epsilon-greedy
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if (numeric or optional) and not is_number and not (optional and value is None):
            raise AgentSettingError(f"the {name} agent's {key}: expected a number, got {value!r} (default {default})")
        if is_number:
            _in_range(name, key, value, default)


def _in_range(name: str, key: str, value: float, default: Any) -> None:
    """A number setting is finite, whole where its default is, and within RANGES."""
    said = f"the {name} agent's {key}"
    if not math.isfinite(value):
        raise AgentSettingError(f"{said}: expected a finite number, got {value!r}")
    if isinstance(default, int) and not isinstance(value, int):
        raise AgentSettingError(f"{said}: expected a whole number, got {value!r} (default {default})")
    low, high = RANGES.get(key, (-math.inf, math.inf))
    if not low <= value <= high:
        low_text, high_text = (f"{x:,}" if isinstance(x, int) else f"{x:g}" for x in (low, high))
        wanted = f"of {low_text} or more" if high == math.inf else f"between {low_text} and {high_text}"
        raise AgentSettingError(f"{said}: expected a number {wanted}, got {value!r}")


def make_agent(name: str, n_states: int, n_actions: int, seed: int | None = None, **settings: Any) -> Any:
    """The agent `name` for a task of `n_states` states and `n_actions` actions, its settings checked.

    The one way to make an agent by name (the command line, specs and experiments all use it),
    so a misspelt agent or setting is one clear error instead of a silently ignored keyword.

    Parameters
    ----------
    name : str
        The agent (``"q"``, ``"sarsa"``, ... : `AGENT_INFO` lists them).
    n_states : int
        The number of states of its tables.
    n_actions : int
        The number of actions.
    seed : int, optional
        The seed of the agent's own random stream.
    **settings
        Its settings (``lr``, ``beta``, ...), checked against the agent's own.

    Returns
    -------
    object
        The agent (a `LearningAgent` for the tabular ones).

    Raises
    ------
    AgentSettingError
        An unknown agent or setting, or a setting's value out of range, named with the closest
        known name.

    Examples
    --------
    >>> from gym_bridge.agents import make_agent
    >>> agent = make_agent("q", 4, 2, seed=0, lr=0.2)
    >>> agent.action_probabilities(0, [0, 1]).tolist()
    [0.5, 0.5]
    >>> make_agent("q", 4, 2, betta=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gym_bridge.agents.registry.AgentSettingError: the q agent has no setting 'betta'; did you mean 'beta'? ...
    """
    check_agent_settings(name, settings)
    cls: Any = _info(name).cls
    return cls(n_states, n_actions, seed=seed, **settings)


def agent_for_env(name: str, env: Any, view: Any, seed: int | None = None, **settings: Any) -> Any:
    """The agent `name` for `env` as `view` (a `gym_bridge.views.AgentView`) shows it: a tabular
    agent sized by the view, or an agent that reads what it needs from the env itself
    (`from_env`: the Room task's memory agents). Settings are checked first.

    Parameters
    ----------
    name : str
        The agent (`AGENT_INFO`).
    env : gymnasium.Env
        The env it plays.
    view : AgentView
        The family's view for the agent's observation (`Family.view(info.observation)`).
    seed : int, optional
        The seed of the agent's own stream.
    **settings
        Its settings (checked: AgentSettingError names a wrong one).

    Returns
    -------
    object
        The agent.

    Examples
    --------
    >>> from gym_bridge import family, make_env
    >>> from gym_bridge.agents import agent_for_env
    >>> env = make_env("neuronav/graph/two_step", store=":memory:")
    >>> agent = agent_for_env("q", env, family("graph").view("index"), seed=0, lr=0.2)
    >>> agent.q.shape
    (7, 2)
    """
    check_agent_settings(name, settings)
    cls: Any = _info(name).cls
    if hasattr(cls, "from_env"):
        return cls.from_env(env, seed=seed, **settings)
    return cls(*view.sizes(env), seed=seed, **settings)




def has_batched_form(name: str) -> bool:
    """Whether the agent `name` has a batched form (`make_batched`; its row's `batched`)."""
    return name in BATCHED


def batched_bytes(name: str, n_states: int, n_actions: int, settings: Mapping[str, Any] | None = None) -> int:
    """Memory of one lane's tables, in bytes (what the batch size is chosen from), with the
    lane's `settings` where they change it (MBV's model, the distributional cells): the batched
    form's own `lane_bytes`."""
    return BATCHED[name].lane_bytes(n_states, n_actions, {} if settings is None else settings)


def make_batched(
    name: str, n_states: int, n_actions: int, seeds: Sequence[int], settings: Sequence[Mapping[str, Any]]
) -> BatchedAgent:
    """B agents `name` as one batched agent; one lane per seed, with that lane's settings.

    Parameters
    ----------
    name : str
        An agent with a batched form (its `AGENT_INFO` row's `batched`: q, sarsa, qlambda, ac,
        sr, hybrid, dyna, dynaac, dynasr, mbv, mc, ec, valence, mood, distq, srmb, opal,
        vhybrid, infobonus).
    n_states, n_actions : int
        The task's sizes.
    seeds : sequence of int
        The lanes' seeds.
    settings : sequence of mapping
        The lanes' settings (defaults fill the rest).

    Returns
    -------
    BatchedAgent

    Raises
    ------
    ValueError
        An agent with no batched form, named with those that have one.

    Examples
    --------
    >>> from gym_bridge.agents import make_batched
    >>> make_batched("sarsa", 4, 2, seeds=[0, 1, 2], settings=[{}, {}, {"lr": 0.5}]).lr.tolist()
    [0.1, 0.1, 0.5]
    """
    if name not in BATCHED:
        raise ValueError(f"agent {name!r} has no batched form (those that do: {', '.join(BATCHED)})")
    return BATCHED[name](n_states, n_actions, seeds, settings)
