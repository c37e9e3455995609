"""The compiled sweeps of the batched MBV agent's incremental plan (imported only where numba
is installed).

Kept apart so that importing `gym_bridge` never imports numba. `BatchedMBV.plan` (numpy) and
`sweeps` here do the same floating-point operations in the same order on the same pairs, so
their tables are equal bit for bit (`tests/test_batched_mbv_planning.py`); numba (the `fast`
extra) changes the speed of a plan, never its numbers.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def sweeps(  # numba compiles it for the types of the arrays it gets
    frontier, size, count, q, worth, v, w, ends, gamma, optimism, state_lane, model_next, arrivals, arrival_count,
    pair_rewards, pair, ignore_ends, n_states, n_actions, mark, dirty,
):
    """Sweep `count` times from the flat states `frontier` (their worth moved): recompute the
    pairs arriving there, then V and the worth of the states whose row of Q moved; the states
    whose V moved are the next sweep's frontier. What is left when the sweeps run out is
    marked in `dirty`. `frontier` (its first `size` entries the states to start from) and
    `mark` (all False) are scratch, one entry a flat state."""
    pairs_per_lane = n_states * n_actions
    rows = np.empty(mark.size, dtype=np.int64)
    for _ in range(count):
        if size == 0:
            break
        moved_rows = 0
        for i in range(size):
            state = frontier[i]
            for j in range(arrival_count[state]):
                p = arrivals[state, j]
                new = worth[model_next[p] + (p // pairs_per_lane) * n_states]
                if pair:
                    new = new + pair_rewards[p]
                if new != q[p]:
                    q[p] = new
                    row = p // n_actions
                    if not mark[row]:
                        mark[row] = True
                        rows[moved_rows] = row
                        moved_rows += 1
        size = 0
        for i in range(moved_rows):
            row = rows[i]
            mark[row] = False
            start = row * n_actions
            best = q[start]
            for k in range(1, n_actions):
                best = max(best, q[start + k])
            lane = state_lane[row]
            o = optimism[lane]
            if o != 1.0:
                worst = q[start]
                for k in range(1, n_actions):
                    worst = min(worst, q[start + k])
                best = o * best + (1 - o) * worst
            if not ignore_ends and ends[row]:
                best = 0.0
            if best != v[row]:
                frontier[size] = row
                size += 1
            v[row] = best
            if pair:
                worth[row] = gamma[lane] * best
            else:
                worth[row] = w[row] + gamma[lane] * best
    for i in range(size):
        dirty[frontier[i]] = True
