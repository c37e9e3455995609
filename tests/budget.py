"""How much exhaustive work a run does: all of it, or a sample when `-m "not slow"` is given.

CI runs everything. A developer's quick run (`pytest -m "not slow"`) keeps every test but
draws fewer random examples in the property tests: the same checks, on fewer inputs.
"""

from __future__ import annotations

import os

QUICK_ENV_VAR = "GRAPHTASKS_QUICK_TESTS"


def quick() -> bool:
    return os.environ.get(QUICK_ENV_VAR) == "1"


def examples(full: int) -> int:
    """The number of hypothesis examples: `full` in a full run, an eighth (at least 5) in a quick one."""
    return max(5, full // 8) if quick() else full


# One registered gym id per family: what a quick run checks where CI checks every id.
QUICK_GYM_IDS = frozenset({
    "graphtasks/Graph-v0", "graphtasks/TwoStep-v0", "graphtasks/GridFourRooms-v0", "graphtasks/Grid-v0",
    "graphtasks/Poge-v0", "graphtasks/Room-v0",
})
