"""The Wiener first-passage-time density of the drift-diffusion model, and draws from it.

A decision variable starts at ``z * a`` between two boundaries, 0 (lower) and ``a`` (upper),
and drifts at rate ``v`` per second with unit noise (sigma = 1) until it reaches one; the
response time is that time plus a non-decision time ``t0``. The density of reaching the lower
boundary at decision time t is (Navarro & Fuss 2009, eq. 4-6)

    f(t | v, a, z) = exp(-v a z - v^2 t / 2) / a^2 * g(t / a^2 | z)

with g the density of the standardised process (v = 0, a = 1), read from whichever of its two
series needs fewer terms for the error wanted (their eq. 13 and 15 with the bounds of their
section 3): the small-time series

    g(u | z) = (2 pi u^3)^(-1/2) sum_k (z + 2k) exp(-(z + 2k)^2 / (2u))

or the large-time series

    g(u | z) = pi sum_{k >= 1} k exp(-k^2 pi^2 u / 2) sin(k pi z).

The upper boundary's density is the lower one's with v -> -v and z -> 1 - z. Everything is
numpy, vectorised over trials: each element picks its own series, and each series is summed
to the most terms any element that uses it needs (more terms only add accuracy).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

ERROR = 1e-12  # the absolute error of the standardised density g the number of terms is chosen for
LOG_FLOOR = math.log(1e-300)  # as the choice likelihood's FLOOR: a response the model rules out
NEGATIVE_SLOPE = 100.0  # log-density per second before t0 (below the floor): a gradient back towards the data


def _terms(u: np.ndarray, error: float) -> tuple[np.ndarray, np.ndarray]:
    """Navarro & Fuss's numbers of terms for the small-time and the large-time series at u."""
    with np.errstate(divide="ignore", invalid="ignore"):
        large = np.where(
            math.pi * u * error < 1,
            np.sqrt(np.maximum(-2 * np.log(math.pi * u * error) / (math.pi**2 * u), 0.0)),
            0.0,
        )
        large = np.maximum(large, 1 / (math.pi * np.sqrt(u)))
        product = 2 * np.sqrt(2 * math.pi * u) * error
        small = np.where(product < 1, 2 + np.sqrt(np.maximum(-2 * u * np.log(product), 0.0)), 2.0)
        small = np.maximum(small, np.sqrt(u) + 1)
    return np.ceil(small), np.ceil(large)


def standard_density(u: Any, z: Any, error: float = ERROR) -> np.ndarray:
    """g(u | z): the density of reaching the lower boundary at time u of a process with no
    drift, boundaries 0 and 1 and start z (u > 0; 0 where u <= 0).

    Parameters
    ----------
    u : array_like
        Standardised decision times t / a^2.
    z : array_like
        Relative starting points in (0, 1), broadcast with `u`.
    error : float
        The absolute error the numbers of terms are chosen for.

    Returns
    -------
    numpy.ndarray
        The densities, of the broadcast shape.

    Examples
    --------
    >>> from graphtasks.fitting.wiener import standard_density
    >>> [round(float(g), 6) for g in standard_density([0.05, 0.2, 1.0], 0.5)]
    [1.464498, 1.169588, 0.022594]
    """
    u, z = np.broadcast_arrays(np.asarray(u, dtype=float), np.asarray(z, dtype=float))
    out = np.zeros(u.shape)
    positive = u > 0
    if not positive.any():
        return out
    up, zp = u[positive], z[positive]
    small, large = _terms(up, error)
    use_small = small < large
    values = np.empty(up.shape)
    if use_small.any():
        us, zs = up[use_small], zp[use_small]
        half = int(np.max(np.ceil((small[use_small] - 1) / 2)))
        k = np.arange(-half, half + 1, dtype=float)[:, None]
        shifted = zs[None, :] + 2 * k
        total = np.sum(shifted * np.exp(-(shifted**2) / (2 * us[None, :])), axis=0)
        values[use_small] = total / np.sqrt(2 * math.pi * us**3)
    if (~use_small).any():
        ul, zl = up[~use_small], zp[~use_small]
        k = np.arange(1, int(np.max(large[~use_small])) + 1, dtype=float)[:, None]
        total = np.sum(k * np.exp(-(k**2) * (math.pi**2) * ul[None, :] / 2) * np.sin(k * math.pi * zl[None, :]), axis=0)
        values[~use_small] = math.pi * total
    out[positive] = np.maximum(values, 0.0)
    return out


def wiener_log_density(rt: Any, upper: Any, v: Any, a: Any, t0: Any = 0.0, z: Any = 0.5) -> np.ndarray:
    """log density of a response at time `rt` at the upper (`upper` true) or lower boundary.

    Floored at log(1e-300), the choice likelihood's floor; before `t0` (no decision time)
    the floor less 100 per second short, so that an optimiser has a slope back to the data.

    Parameters
    ----------
    rt : array_like
        Response times in seconds.
    upper : array_like of bool
        Whether each response reached the upper boundary.
    v : array_like
        Drift rates (towards the upper boundary), per second.
    a : array_like
        Boundary separations.
    t0 : array_like
        Non-decision times in seconds.
    z : array_like
        Relative starting points in (0, 1) (0.5: midway).

    Returns
    -------
    numpy.ndarray
        The log densities, of the broadcast shape.

    Examples
    --------
    >>> from graphtasks.fitting.wiener import wiener_log_density
    >>> [round(float(x), 6) for x in wiener_log_density([0.6, 0.6], [True, False], 1.0, 1.5, 0.2)]
    [0.003812, -1.496188]
    """
    rt, upper, v, a, t0, z = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (rt, upper, v, a, t0, z)))
    upper = upper.astype(bool)
    t = rt - t0
    sign = np.where(upper, -1.0, 1.0)  # the upper boundary: the lower one of the mirrored process
    drift, start = sign * v, np.where(upper, 1 - z, z)
    g = standard_density(t / a**2, start)
    with np.errstate(divide="ignore"):
        log = np.log(g) - drift * a * start - drift**2 * t / 2 - 2 * np.log(a)
    log = np.maximum(log, LOG_FLOOR)
    return np.where(t > 0, log, LOG_FLOOR + NEGATIVE_SLOPE * np.minimum(t, 0.0))


def upper_probability(v: Any, a: Any, z: Any = 0.5) -> np.ndarray:
    """P(the upper boundary is reached first): (1 - exp(-2 v a z)) / (1 - exp(-2 v a)), z where v = 0.

    Examples
    --------
    >>> from graphtasks.fitting.wiener import upper_probability
    >>> [round(float(p), 6) for p in upper_probability([0.0, 1.0, -1.0], 1.5)]
    [0.5, 0.817574, 0.182426]
    """
    v, a, z = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (v, a, z)))
    x = -2 * v * a
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        p = np.expm1(x * z) / np.expm1(x)
    return np.where(np.abs(x) < 1e-12, z, np.where(np.isfinite(p), p, np.where(v > 0, 1.0, 0.0)))


GRID = 1024  # decision times a draw is read from (denser near 0, where the density rises)


def sample_wiener(v: float, a: float, t0: float, z: float, rng: np.random.Generator) -> tuple[bool, float]:
    """One draw (upper?, response time) of the drift-diffusion model.

    The boundary by `upper_probability`; the decision time by inverting, on a grid of `GRID`
    times up to where the density's tail holds less than about 1e-10 of the mass, the
    cumulative density of that boundary's first passage (trapezoids, linear in between).

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting.wiener import sample_wiener
    >>> upper, rt = sample_wiener(1.0, 1.5, 0.2, 0.5, np.random.default_rng(0))
    >>> bool(upper) in (True, False), rt > 0.2
    (True, True)
    """
    upper = bool(rng.random() < float(upper_probability(v, a, z)))
    decay = math.pi**2 / (2 * a * a) + v * v / 2  # the large-time series' slowest rate
    horizon = 25.0 / decay
    times = horizon * np.linspace(0.0, 1.0, GRID) ** 2
    density = np.exp(wiener_log_density(times[1:], upper, v, a, 0.0, z))
    density = np.concatenate(([0.0], np.where(times[1:] > 0, density, 0.0)))
    cumulative = np.concatenate(([0.0], np.cumsum((density[1:] + density[:-1]) / 2 * np.diff(times))))
    target = rng.random() * cumulative[-1]
    return upper, t0 + float(np.interp(target, cumulative, times))
