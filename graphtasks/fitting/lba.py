"""The linear ballistic accumulator (Brown & Heathcote 2008): a race of one accumulator per option.

Accumulator i starts at a point drawn uniformly from [0, A], rises at a rate drawn from
N(v_i, s^2) (one draw per trial) and responds when it reaches the threshold b >= A; the first
to arrive is the choice, its time plus a non-decision time t0 the response time. One
accumulator's first-arrival density and distribution at decision time t are (their eq. 1-2)

    F(t) = 1 + (b - A - t v)/A Phi(alpha) - (b - t v)/A Phi(beta) + t s/A (phi(alpha) - phi(beta))
    f(t) = (-v Phi(alpha) + s phi(alpha) + v Phi(beta) - s phi(beta)) / A

with alpha = (b - A - t v) / (t s), beta = (b - t v) / (t s). Option i wins at t with density
f_i(t) prod_{j != i} (1 - F_j(t)) (their eq. 3). A trial where every rate is drawn negative
never ends; the simulator draws such a trial's rates again, so the density is divided by
1 - prod_j Phi(-v_j / s), the probability that some rate is positive.

Everything is numpy, vectorised over trials; options not offered in a trial are masked out.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .wiener import LOG_FLOOR, NEGATIVE_SLOPE

TINY = 1e-300


def _ndtr(x: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return np.asarray(ndtr(x))


def _phi(x: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def accumulator(t: Any, v: Any, A: Any, b: Any, s: Any = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(f(t), F(t)) of one accumulator: its first-arrival density and distribution at decision
    time t > 0 (0 and 0 where t <= 0), broadcast over the arguments.

    Parameters
    ----------
    t : array_like
        Decision times (seconds).
    v : array_like
        Mean rates.
    A : array_like
        Start ranges (> 0).
    b : array_like
        Thresholds (>= A).
    s : array_like
        Standard deviations of the rates.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The density and the distribution function.

    Examples
    --------
    >>> from graphtasks.fitting.lba import accumulator
    >>> f, F = accumulator([0.5, 1.0], 1.5, 0.5, 1.0)
    >>> [round(float(x), 6) for x in f], [round(float(x), 6) for x in F]
    ([1.148775, 0.229458], [0.5, 0.771038])
    """
    t, v, A, b, s = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (t, v, A, b, s)))
    positive = t > 0
    tt = np.where(positive, t, 1.0)
    ts = tt * s
    alpha, beta = (b - A - tt * v) / ts, (b - tt * v) / ts
    big_a, big_b = _ndtr(alpha), _ndtr(beta)
    small_a, small_b = _phi(alpha), _phi(beta)
    density = (-v * big_a + s * small_a + v * big_b - s * small_b) / A
    distribution = 1 + (b - A - tt * v) / A * big_a - (b - tt * v) / A * big_b + ts / A * (small_a - small_b)
    return (np.where(positive, np.maximum(density, 0.0), 0.0),
            np.where(positive, np.clip(distribution, 0.0, 1.0), 0.0))


def lba_log_density(rt: Any, choice: Any, v: Any, A: float, b: float, t0: float, s: float = 1.0,
                    offered: Any = None) -> np.ndarray:
    """log density of each trial's response: option `choice` winning the race at time `rt`.

    Floored at log(1e-300) as the Wiener density is; before `t0` the floor less 100 per second
    short.

    Parameters
    ----------
    rt : array_like, shape (n,)
        Response times in seconds.
    choice : array_like of int, shape (n,)
        The column of `v` that won each trial.
    v : array_like, shape (n, k)
        The mean rate of each option's accumulator in each trial.
    A, b, t0, s : float
        Start range, threshold (b >= A), non-decision time, rate standard deviation.
    offered : array_like of bool, shape (n, k), optional
        The accumulators racing in each trial (default: all).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    >>> from graphtasks.fitting.lba import lba_log_density
    >>> [round(float(x), 6) for x in lba_log_density([0.7, 0.7], [0, 1], [[2.0, 1.0], [2.0, 1.0]], 0.5, 1.0, 0.2)]
    [-0.325479, -1.152952]
    """
    rt = np.asarray(rt, dtype=float)
    choice = np.asarray(choice, dtype=np.int64)
    v = np.atleast_2d(np.asarray(v, dtype=float))
    racing = np.ones(v.shape, dtype=bool) if offered is None else np.asarray(offered, dtype=bool)
    t = rt - t0
    f, F = accumulator(t[:, None], v, A, b, s)
    rows = np.arange(len(rt))
    with np.errstate(divide="ignore"):
        log_survive = np.where(racing, np.log(np.maximum(1.0 - F, TINY)), 0.0)
        log_f = np.log(f[rows, choice])
        some_positive = 1.0 - np.prod(np.where(racing, _ndtr(-v / s), 1.0), axis=1)
        log = log_f + log_survive.sum(axis=1) - log_survive[rows, choice] - np.log(np.maximum(some_positive, TINY))
    log = np.maximum(log, LOG_FLOOR)
    return np.where(t > 0, log, LOG_FLOOR + NEGATIVE_SLOPE * np.minimum(t, 0.0))


def choice_probabilities(v: Any, A: float, b: float, s: float = 1.0, points: int = 4000) -> np.ndarray:
    """P(each option wins) of one race (v: the options' mean rates), by trapezoids over the
    decision time on a grid up to where every accumulator has almost surely arrived.

    Examples
    --------
    >>> from graphtasks.fitting.lba import choice_probabilities
    >>> [round(float(p), 3) for p in choice_probabilities([2.0, 1.0], 0.5, 1.0)]
    [0.75, 0.25]
    """
    v = np.asarray(v, dtype=float)
    fastest = max(float(np.max(v)), s)
    horizon = (b / fastest) * 50.0
    times = horizon * np.linspace(0.0, 1.0, points)[1:] ** 2
    f, F = accumulator(times[:, None], v[None, :], A, b, s)
    survive = np.prod(1.0 - F, axis=1, keepdims=True) / np.maximum(1.0 - F, TINY)
    winning = f * survive
    grid = np.concatenate(([0.0], times))
    mass = np.sum((winning[1:] + winning[:-1]) / 2 * np.diff(times)[:, None], axis=0) + winning[0] * grid[1] / 2
    return mass / mass.sum()


def sample_lba(v: Any, A: float, b: float, t0: float, s: float, rng: np.random.Generator) -> tuple[int, float]:
    """One race: (the index of the winner among `v`, its response time). Rates are drawn again
    while none is positive (as the density's normalisation assumes).

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting.lba import sample_lba
    >>> winner, rt = sample_lba([2.0, 1.0], 0.5, 1.0, 0.2, 1.0, np.random.default_rng(0))
    >>> winner in (0, 1), rt > 0.2
    (True, True)
    """
    v = np.asarray(v, dtype=float)
    while True:
        rates = rng.normal(v, s)
        if (rates > 0).any():
            break
    starts = rng.uniform(0.0, A, size=len(v))
    with np.errstate(divide="ignore"):
        times = np.where(rates > 0, (b - starts) / np.where(rates > 0, rates, 1.0), np.inf)
    winner = int(np.argmin(times))
    return winner, t0 + float(times[winner])
