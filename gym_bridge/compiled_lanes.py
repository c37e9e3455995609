"""The lane loop of `play_lanes`, compiled: Q-learning and SARSA on fixed-table envs.

Why: the numpy lockstep loop (`gym_bridge.batched_episodes.play_lanes`) pays a few dozen numpy
calls per step whatever the number of lanes, so a sweep of a few hundred runs still spends its
time in Python. Where the env's step is a fixed table (`StepTable`: grids without keys, doors
or rewards that stay) and the agent is epsilon-greedy Q-learning or SARSA, a lane's whole
phase is a short loop of table look-ups that numba compiles to machine code: the lanes run one
after another, each on its own streams, at tens of millions of steps a second.

The loop draws every number from the same per-lane counter-based streams as the numpy loop,
in the same order, and does the same floating-point operations in the same order: its
episodes and tables are equal to the numpy loop's, bit for bit (`tests/test_compiled_lanes.py`),
so whether numba is installed (the `fast` extra) changes the speed of a sweep, never its
numbers. Without numba, or for any other agent, env or setting, `play_lanes` runs its numpy
loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .fast import available
from .vector.step_table import StepTable

RULES = ("q", "sarsa")  # the rules the compiled loop has, by number (`_lane_kernel.lanes_loop`'s `rule`)
Q_RULE, SARSA_RULE = RULES.index("q"), RULES.index("sarsa")


def rule_of(agent: Any) -> int | None:
    """The compiled rule that plays this batched agent, or None: the rule its registry row names
    (`AgentInfo.compiled`: epsilon-greedy Q-learning bootstrapping from the max with no
    pessimism, or epsilon-greedy SARSA), where the agent's settings are that rule's (`compiles`)."""
    from .agents.registry import AGENT_INFO

    info = AGENT_INFO.get(getattr(agent, "name", ""))
    if info is None or info.compiled is None or type(agent) is not info.batched or not agent.compiles():
        return None
    return RULES.index(info.compiled)


def compiled_plan(env: Any, agent: Any, record_steps: bool) -> tuple[StepTable, int] | None:
    """The step table and rule when the compiled loop can play this env and agent, else None."""
    if record_steps or not available():
        return None
    rule = rule_of(agent)
    table_of = getattr(env, "step_table", None)
    if rule is None or table_of is None:
        return None
    table = table_of()
    return None if table is None else (table, rule)


def play_compiled(
    table: StepTable, rule: int, agent: Any, env_streams: Any, episodes: int, learn: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play `episodes` episodes on every lane; the agent's tables and both streams' counters
    advance as the numpy loop advances them.

    Returns
    -------
    tuple of arrays, each (lanes, episodes)
        Returns, lengths, start states, first actions and the states they led to.
    """
    size = agent.size
    shape = (size, episodes)
    returns = np.zeros(shape)
    lengths = np.zeros(shape, dtype=np.int64)
    starts = np.zeros(shape, dtype=np.int64)
    first_actions = np.zeros(shape, dtype=np.int64)
    first_states = np.zeros(shape, dtype=np.int64)
    sarsa = rule == SARSA_RULE
    pending = (
        (agent.pending_state, agent.pending_action, agent.pending_reward, agent.pending_next)
        if sarsa
        else (np.full(size, -1, dtype=np.int64), np.zeros(size, dtype=np.int64), np.zeros(size),
              np.full(size, -1, dtype=np.int64))
    )
    from . import _lane_kernel

    kernel: Any = _lane_kernel.lanes_loop  # a numba dispatcher, typed by the arrays it gets
    kernel(
        rule, agent.q, agent.lr, agent.gamma, agent.epsilon, agent.learning & learn,
        agent.streams.keys, agent.streams.counters, env_streams.keys, env_streams.counters,
        *pending,
        table.move, table.gains, table.gain, table.warp, float(table.step_reward), int(table.collect),
        float(table.slip), bool(table.random_start), table.starts, int(table.start), int(table.episode_length),
        episodes, returns, lengths, starts, first_actions, first_states,
    )
    return returns, lengths, starts, first_actions, first_states
