"""Tabular reference agents for experiments. They act on the state index in `info["state"]`,
so they work with any observation type and any family."""

from .base import Agent, RandomAgent, softmax_choice
from .dyna import DynaQAgent
from .hybrid import HybridAgent
from .mbv import MBVAgent
from .q_learning import QAgent
from .sr import SRAgent
from .sr_variants import DynaSRAgent, SRMBAgent
from .td import ActorCriticAgent, QLambdaAgent, SarsaAgent

AGENTS = {
    "q": QAgent, "hybrid": HybridAgent, "random": RandomAgent, "sr": SRAgent, "dyna": DynaQAgent, "mbv": MBVAgent,
    "sarsa": SarsaAgent, "qlambda": QLambdaAgent, "ac": ActorCriticAgent, "dynasr": DynaSRAgent, "srmb": SRMBAgent,
}

from .registry import AGENT_INFO, AgentSettingError, agent_settings, check_agent_settings, make_agent  # noqa: E402

__all__ = [
    "AGENT_INFO", "AGENTS", "ActorCriticAgent", "Agent", "AgentSettingError", "DynaQAgent", "DynaSRAgent",
    "HybridAgent", "MBVAgent", "QAgent", "QLambdaAgent", "RandomAgent", "SRAgent", "SRMBAgent", "SarsaAgent",
    "agent_settings", "check_agent_settings", "make_agent", "softmax_choice",
]
