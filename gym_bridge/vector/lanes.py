"""Per-lane random streams: one independent, counter-based stream for every copy of a batch.

Why: a batch of B agents (or B copies of an env) that share one generator draw each lane's
numbers in an order that depends on the other lanes, so a run's numbers would change with the
runs it is batched with, the batch size and the number of workers. Here lane i's k-th number
is a pure function of (key_i, k): the stream of a run depends on its own key alone.

The generator is SplitMix64 used as a counter-based generator (Steele, Lea & Flood 2014,
"Fast splittable pseudorandom number generators"): output k of lane i is the SplitMix64
finaliser of `key_i + (k + 1) * golden`, where `key_i` is the first word of a numpy
`SeedSequence` of the lane's seed (so nearby seeds give unrelated keys). It is a handful of
uint64 array operations for any number of lanes, which is what a batched step can afford.

`LaneStreams.view(lanes)` returns an object with the `random`, `integers` and
`standard_normal` methods of a numpy Generator, drawing one row of numbers per lane in
`lanes`: code written against a Generator (the vector envs' reward sources) draws per lane
without knowing it.

Examples
--------
>>> import numpy as np
>>> from gym_bridge.vector.lanes import LaneStreams
>>> alone = LaneStreams.from_seeds([7]).view(None).random(3)
>>> batch = LaneStreams.from_seeds([1, 7, 9])
>>> bool(np.array_equal(batch.view(np.array([1])).random(3), alone))
True
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
TO_UNIT = 2.0**-53


SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))


def splitmix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    return _splitmix_in_place(np.array(x, dtype=np.uint64))


def _splitmix_in_place(x: np.ndarray) -> np.ndarray:
    """`splitmix` written into `x` itself (an array of uint64 the caller owns): the same
    operations without a new array for each of them (a batched step draws thousands of times)."""
    scratch = x >> SHIFTS[0]
    x ^= scratch
    x *= MIX1
    np.right_shift(x, SHIFTS[1], out=scratch)
    x ^= scratch
    x *= MIX2
    np.right_shift(x, SHIFTS[2], out=scratch)
    x ^= scratch
    return x


def lane_key(seed: int, stream: int = 0) -> int:
    """The 64-bit key of a lane from its seed and a stream number (env, agent, ...)."""
    return int(np.random.SeedSequence([seed, stream]).generate_state(1, np.uint64)[0])


TO_53_BITS = np.uint64(11)


@functools.cache
def _counts(width: int) -> np.ndarray:
    """1, 2, ..., width as uint64 (read only: shared by every draw of that width)."""
    counts = np.arange(1, width + 1, dtype=np.uint64)
    counts.flags.writeable = False
    return counts


class LaneStreams:
    """B counter-based streams: a key and a counter per lane (see the module docstring).

    Parameters
    ----------
    keys : array of uint64
        One key per lane (`lane_key`).
    """

    def __init__(self, keys: np.ndarray) -> None:
        self.keys = np.asarray(keys, dtype=np.uint64).copy()
        self.counters = np.zeros(self.keys.size, dtype=np.uint64)

    @classmethod
    def from_seeds(cls, seeds: Sequence[int], stream: int = 0) -> "LaneStreams":
        """One lane per seed; `stream` separates the streams of one seed (env and agent)."""
        return cls(np.array([lane_key(int(s), stream) for s in seeds], dtype=np.uint64))

    def __len__(self) -> int:
        return int(self.keys.size)

    def bits(self, lanes: np.ndarray | None, width: int) -> np.ndarray:
        """(len(lanes), width) uint64 words: the next `width` of each lane's stream."""
        keys = self.keys if lanes is None else self.keys[lanes]
        start = self.counters if lanes is None else self.counters[lanes]
        steps = start[:, None] + _counts(width)
        if lanes is None:
            self.counters += np.uint64(width)
        else:
            self.counters[lanes] = start + np.uint64(width)  # a lane appears once per draw
        steps *= GOLDEN
        steps += keys[:, None]
        return _splitmix_in_place(steps)

    def uniform(self, lanes: np.ndarray | None, width: int = 1) -> np.ndarray:
        """(len(lanes), width) floats in [0, 1), 53 random bits each."""
        words = self.bits(lanes, width)
        words >>= TO_53_BITS
        unit = words.astype(np.float64)
        unit *= TO_UNIT
        return unit

    def view(self, lanes: np.ndarray | None) -> "LaneView":
        """A Generator-like view that draws for these lanes (None: every lane, in order)."""
        return LaneView(self, lanes)


class LaneView:
    """The Generator methods the vector envs use, drawing each row from its own lane.

    A draw of shape (n, ...) with n a multiple k of the lanes gives each lane k consecutive
    rows (lane-major order, as `np.repeat(lanes, k)` lists them).
    """

    def __init__(self, streams: LaneStreams, lanes: np.ndarray | None) -> None:
        self.streams = streams
        self.lanes = lanes
        self.count = len(streams) if lanes is None else int(np.asarray(lanes).size)

    def _shape(self, size: int | tuple[int, ...] | None) -> tuple[tuple[int, ...], int]:
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size or ())
        total = int(np.prod(shape)) if shape else 1
        if self.count == 0:
            return shape, 0
        if not shape or total % self.count:
            raise ValueError(f"a lane draw needs a whole number of rows per lane ({self.count} lanes), got {shape}")
        return shape, total // self.count

    def random(self, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        shape, per_lane = self._shape(size)
        if per_lane == 0:
            return np.empty(shape)
        return self.streams.uniform(self.lanes, per_lane).reshape(shape)

    def integers(self, low: int, high: int | None = None, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        if high is None:
            low, high = 0, low
        u = self.random(size)
        return (low + np.floor(u * (high - low))).astype(np.int64)

    def standard_normal(self, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        """Box-Muller: two uniforms of the lane per normal."""
        shape, per_lane = self._shape(size)
        if per_lane == 0:
            return np.empty(shape)
        u = self.streams.uniform(self.lanes, 2 * per_lane)
        u1, u2 = u[:, :per_lane], u[:, per_lane:]
        return (np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)).reshape(shape)
