"""`reproduce --all` on several processes starts the longest reproductions first (so that no
core ends waiting on one long one) and still yields the outcomes in the order asked."""

from __future__ import annotations

import pytest

from graphtasks.experiments.reproduce import REPRODUCTIONS, reproduce_all


@pytest.mark.slow  # two worker processes: about 10 s of CPU
def test_the_longest_start_first_and_outcomes_keep_the_order_asked() -> None:
    names = ["daw2011-two-step", "wilson2014-horizon", "eldar2016-mood"]
    assert REPRODUCTIONS["eldar2016-mood"].cost > REPRODUCTIONS["daw2011-two-step"].cost
    started: list[str] = []
    outcomes = list(reproduce_all(names, seeds=1, figure=False, jobs=2, started=started.append))
    assert started == ["eldar2016-mood", "daw2011-two-step", "wilson2014-horizon"]
    assert [o.reproduction.name for o in outcomes] == names
