"""The vector envs' batched Box (broadcast bounds) is the same space as gymnasium's batch_space."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from gym_bridge.vector.base import batch_observation_space

BOXES = [
    spaces.Box(0, 255, (6, 5, 3), np.uint8),
    spaces.Box(np.array([0.0, -1.0, -np.inf], np.float32), np.array([1.0, 2.0, np.inf], np.float32), dtype=np.float32),
    spaces.Box(-2, 7, (4,), np.int64),
]


@pytest.mark.parametrize("box", BOXES, ids=["picture", "mixed-bounds", "integers"])
def test_same_space_as_batch_space(box):
    ours, theirs = batch_observation_space(box, 5), batch_space(box, 5)
    assert ours == theirs and theirs == ours and repr(ours) == repr(theirs)
    assert ours.shape == theirs.shape == (5, *box.shape) and ours.dtype == theirs.dtype
    assert np.array_equal(ours.bounded_below, theirs.bounded_below)
    assert np.array_equal(ours.bounded_above, theirs.bounded_above)
    ours.seed(0)
    samples = [ours.sample() for _ in range(20)]
    assert all(theirs.contains(x) and ours.contains(x) for x in samples)
    outside = samples[0].copy()
    if box.dtype != np.uint8:  # (a uint8 picture has no value outside 0..255)
        outside[-1].flat[0] = box.low.flat[0] - 1
        assert not ours.contains(outside) and not theirs.contains(outside)  # below a bound of the last copy
    assert not ours.contains(samples[0][:4])  # wrong batch size
    with pytest.raises(ValueError):
        ours.low[0] = 0  # the bounds are shared views: read-only


def test_a_large_picture_batch_costs_no_memory_for_its_bounds():
    box = batch_observation_space(spaces.Box(0, 255, (256, 256, 3), np.uint8), 4096)
    assert box.low.base is not None and box.low.strides[0] == 0  # a view, not 805 MB of bounds
    assert box.shape == (4096, 256, 256, 3)


def test_the_single_space_keeps_its_own_generator():
    single = spaces.Box(0.0, 1.0, (3,), np.float32, seed=1)
    batched = batch_observation_space(single, 2)
    assert batched.np_random is not single.np_random
    before = single.sample()
    single.seed(1)
    batched.sample()
    assert np.array_equal(single.sample(), before)
