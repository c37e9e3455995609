"""An agent's forms live in its one module and its registry row names them: the per-agent rule
and its batched lanes side by side, `batched.py` only the lane base (issue 37)."""

from __future__ import annotations

import inspect

import pytest

import gym_bridge.agents.batched as lane_base
from gym_bridge.agents import AGENT_INFO, BATCHED
from gym_bridge.agents.batched import BatchedAgent

WITH_BATCHED = sorted(name for name, info in AGENT_INFO.items() if info.batched is not None)


@pytest.mark.parametrize("name", WITH_BATCHED)
def test_the_batched_form_sits_in_its_agents_module_and_follows_its_rule(name: str) -> None:
    info = AGENT_INFO[name]
    assert info.batched is not None
    assert info.batched.__module__ == info.cls.__module__  # one module per agent
    assert info.batched.name == name
    assert info.batched.per_agent is info.cls  # the settings (and their defaults) are the per-agent class's


def test_batched_py_keeps_only_the_lane_base() -> None:
    classes = [obj for _, obj in inspect.getmembers(lane_base, inspect.isclass) if obj.__module__ == lane_base.__name__]
    assert {c.__name__ for c in classes} == {"BatchedAgent", "LaneAgent"}
    assert not hasattr(lane_base, "BATCHED")


def test_the_batched_table_is_read_from_the_rows() -> None:
    assert BATCHED == {name: AGENT_INFO[name].batched for name in WITH_BATCHED}
    assert all(issubclass(cls, BatchedAgent) for cls in BATCHED.values())
    assert len(BATCHED) == 19


def test_the_compiled_forms_are_named_by_the_rows() -> None:
    from gym_bridge.agents.mbv import BatchedMBV, MBVAgent, plan_sweeps
    from gym_bridge.compiled_lanes import RULES, rule_of

    named = {name: info.compiled for name, info in AGENT_INFO.items() if info.compiled is not None}
    assert named == {"q": "q", "sarsa": "sarsa"}
    assert set(named.values()) <= set(RULES)
    # the lane loop takes an agent only through its row: the mood agent's lanes are Q's class, but not its row
    mood = BATCHED["mood"](3, 2, [0], [{}])
    assert isinstance(mood, BATCHED["q"]) and rule_of(mood) is None
    assert rule_of(BATCHED["q"](3, 2, [0], [{}])) == RULES.index("q")
    assert rule_of(BATCHED["q"](3, 2, [0], [{"beta": 2.0}])) is None  # the loop chooses epsilon-greedily
    assert plan_sweeps.__module__ == BatchedMBV.__module__ == MBVAgent.__module__  # MBV's compiled plan: its module


def test_the_likelihood_forms_sit_in_the_agents_module_and_the_row_names_them() -> None:
    import graphtasks.fitting.bayes as bayes
    import graphtasks.fitting.vectorised as vectorised

    with_forms = {name for name, info in AGENT_INFO.items() if info.vectorised or info.jax}
    assert with_forms == {"q", "hybrid"}
    for name in with_forms:
        info = AGENT_INFO[name]
        assert info.vectorised is not None and info.jax is not None
        assert info.vectorised.__module__ == info.jax.learn.__module__ == info.cls.__module__
        assert vectorised.vectorised_form(name) is info.vectorised and bayes.jax_form(name) is info.jax
    assert vectorised.vectorised_form("sr") is None and bayes.jax_form("sr") is None
    assert not hasattr(vectorised, "KERNELS") and not hasattr(bayes, "SETTINGS")  # no table beside the rows


def test_importing_the_agents_imports_neither_numba_nor_jax() -> None:
    import subprocess
    import sys

    code = "import sys, gym_bridge.agents; print(sorted(m for m in ('numba', 'jax') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
