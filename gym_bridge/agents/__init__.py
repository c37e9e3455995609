"""The agents of experiments: the tabular reference agents, which act on a state index (so any
family whose envs give one takes them), and the Room task's memory agents, which read its
observation. `AGENT_INFO[name].observation` and `.families()` say which tasks an agent takes."""

from .bandit import InfoBonusAgent
from .base import Agent, RandomAgent, softmax_choice
from .distributional import DistributionalQAgent
from .dyna import DynaACAgent, DynaQAgent
from .hybrid import HybridAgent
from .mbv import MBVAgent
from .mc import EpisodicControlAgent, MonteCarloQAgent
from .opal import OpALAgent
from .q_learning import QAgent
from .registry import (
    AGENT_INFO,
    AGENTS,
    BATCHED,
    AgentSettingError,
    agent_for_env,
    agent_settings,
    batched_bytes,
    check_agent_settings,
    has_batched_form,
    make_agent,
    make_batched,
    register_agent,
)
from .sr import SRAgent
from .sr_variants import DynaSRAgent, SRMBAgent
from .td import ActorCriticAgent, QLambdaAgent, SarsaAgent
from .valence import MoodAgent, ValenceHybridAgent, ValenceQAgent

__all__ = [
    "AGENT_INFO", "AGENTS", "BATCHED", "ActorCriticAgent", "Agent", "AgentSettingError", "DistributionalQAgent",
    "DynaACAgent",
    "DynaQAgent", "DynaSRAgent", "EpisodicControlAgent", "HybridAgent", "InfoBonusAgent", "MBVAgent",
    "MonteCarloQAgent", "MoodAgent", "OpALAgent", "QAgent", "QLambdaAgent", "RandomAgent", "SRAgent", "SRMBAgent",
    "SarsaAgent", "ValenceHybridAgent", "ValenceQAgent",
    "agent_for_env", "agent_settings", "batched_bytes", "check_agent_settings", "has_batched_form", "make_agent",
    "make_batched", "register_agent", "softmax_choice",
]
