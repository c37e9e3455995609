"""Arrow columns laid from buffers (graphstore.arrow_columns): the same arrays as
`pyarrow.array`, the same refusals, and a recorded sweep that never imports pandas."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
import pytest

from graphstore.arrow_columns import arrow_array

TEXT = pa.dictionary(pa.int32(), pa.string())

SAME = [
    (["a", None, "bé", ""], pa.string()),
    ([], pa.string()),
    ([1, None, 3], pa.int64()),
    ([np.int64(3), 4], pa.int64()),
    (np.arange(5, dtype=np.int64), pa.int32()),
    ([1.5, None, -0.0], pa.float64()),
    ([None, None], pa.float64()),
    ([1, 2], pa.float64()),
    ([True, False, None, True, True, False, True, False, True], pa.bool_()),
    (["x", "y", "x", None], TEXT),
    ([], TEXT),
]


@pytest.mark.parametrize("values, kind", SAME)
def test_the_same_array_as_pyarrow(values, kind):
    made = arrow_array(values, kind)
    assert made.type == kind
    assert made.to_pylist() == pa.array(values, kind).to_pylist()
    assert made.null_count == sum(v is None for v in values)


@pytest.mark.parametrize("values, kind", [([2**40], pa.int32()), (["1"], pa.int64()), ([True, 1], pa.bool_()),
                                          (np.array([1.5]), pa.int64())])
def test_refuses_what_pyarrow_refuses(values, kind):
    with pytest.raises(pa.ArrowInvalid):
        pa.array(values, kind)
    with pytest.raises(pa.ArrowInvalid):
        arrow_array(values, kind)


@pytest.mark.slow
def test_a_recorded_sweep_never_imports_pandas(tmp_path):
    """pyarrow.array and LadybugDB's COPY from a Python table import pandas (0.3 s or more of
    every worker's start); a sweep's chunks and catalogue are written without them."""
    script = textwrap.dedent(
        """
        import sys
        from graphtasks.experiments.api import run_and_record
        from graphtasks.experiments.spec import parse_spec
        text = '''
        [experiment]
        name = "no-pandas"
        tasks = ["neuronav/grid/four_rooms/small"]
        seeds = 2
        record = "steps"

        [[agents]]
        name = "q"
        params = { lr = 0.1, gamma = 0.99, epsilon = 0.1 }

        [[phases]]
        name = "learning"
        episodes = 3
        max_steps = 20
        '''
        spec = parse_spec(text)
        for batched in (True, False):
            report = run_and_record(spec, text, STORE + str(batched), workers=1,
                                    batched=batched)
            assert not report.failures, report.failures
        print("pandas" in sys.modules)
        """
    ).replace("STORE", repr(str(tmp_path / "store.lbug")))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
