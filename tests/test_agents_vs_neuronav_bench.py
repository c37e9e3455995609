"""benchmarks/agents_vs_neuronav.py: every row makes its agent, the script runs from a checkout
without neuro-nav (reading neuro-nav's recorded column) and prints each agent as a ratio to it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.agents_vs_neuronav import NO_LR, PAIRS, RECORDED, SHARED
from gym_bridge.agents import make_agent

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "agents_vs_neuronav.py"


def test_every_row_makes_its_agent_with_its_settings() -> None:
    """A renamed or removed setting breaks the benchmark; this finds it without running it."""
    for pair in PAIRS:
        for _, settings in pair.rows():
            shared = {k: v for k, v in SHARED.items() if not (k == "lr" and pair.name in NO_LR)}
            make_agent(pair.name, 121, 4, seed=0, **shared, **settings)


def test_the_record_holds_every_agent_over_100_seeds() -> None:
    data = json.loads(RECORDED.read_text())
    run = data["runs"]["100"]
    assert run["neuronav"] == "2.5.0" and run["seeds"] == [0, 100]
    assert set(run["agents"]) == {pair.name for pair in PAIRS}
    for name, column in run["agents"].items():
        if name == "distq":  # neuro-nav's DistQ stops on a task with more than one action
            assert column["error"].startswith("IndexError") and not column["window_means"]
        else:
            assert len(column["window_means"]) == 100 and not column["error"], name
            assert all(16 <= m <= 100 for m in column["window_means"])  # 16 steps is the shortest path


@pytest.mark.slow  # a benchmark smoke test
def test_the_benchmark_runs_quick_and_prints_ratios() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--agents", "dyna,ec,mbv"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"Baseline: neuro-nav 2\.5\.0, (recorded \d{4}-\d\d-\d\d|measured in this run)", out)
    rows = [line for line in out.splitlines() if re.match(r"(dyna|ec|mbv)( nn)? ", line)]
    assert [row[:12].strip() for row in rows] == ["ec", "dyna", "dyna nn", "mbv", "mbv nn"]
    assert all(re.search(r"within|beyond", row) and row.endswith("x") for row in rows)
