"""Tabular reference agents for experiments. They act on the state index in `info["state"]`,
so they work with any observation type and any family."""

from .base import Agent, RandomAgent, softmax_choice
from .hybrid import HybridAgent
from .q_learning import QAgent

AGENTS = {"q": QAgent, "hybrid": HybridAgent, "random": RandomAgent}

__all__ = ["AGENTS", "Agent", "HybridAgent", "QAgent", "RandomAgent", "softmax_choice"]
