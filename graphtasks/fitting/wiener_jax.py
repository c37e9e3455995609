"""The Wiener first-passage-time log density of `graphtasks.fitting.wiener`, in JAX (for NUTS).

The same density and the same choice of series per element as the numpy `wiener_log_density`
(Navarro & Fuss 2009: the small-time series where it needs fewer terms than the large-time one
for an absolute error of `wiener.ERROR` in the standardised density, the large-time series
elsewhere), but each series summed to a fixed number of terms: the most any standardised time
needs at that error (the small-time series at most 5 terms, k = -2..2, the large-time series at
most 6, both reached where the two counts cross, u = t / a^2 near 0.167); `SMALL_HALF` and
`LARGE_TERMS` keep one more of each. Each series is summed in log space with its leading term
factored out, so that neither underflows to a log of zero, and the branch not chosen never
feeds a NaN into the gradient.
"""

from __future__ import annotations

import math
from typing import Any

from .wiener import ERROR, LOG_FLOOR, NEGATIVE_SLOPE

SMALL_HALF = 3  # the small-time series over k = -3..3 (Navarro & Fuss's bound needs at most k = -2..2)
LARGE_TERMS = 7  # the large-time series over k = 1..7 (their bound needs at most 6)


def _use_small(u: Any) -> Any:
    """Whether the small-time series needs fewer terms than the large-time one at u (as `wiener._terms`)."""
    import jax.numpy as jnp

    large = jnp.where(math.pi * u * ERROR < 1,
                      jnp.sqrt(jnp.maximum(-2 * jnp.log(math.pi * u * ERROR) / (math.pi**2 * u), 0.0)), 0.0)
    large = jnp.maximum(large, 1 / (math.pi * jnp.sqrt(u)))
    product = 2 * jnp.sqrt(2 * math.pi * u) * ERROR
    small = jnp.where(product < 1, 2 + jnp.sqrt(jnp.maximum(-2 * u * jnp.log(product), 0.0)), 2.0)
    small = jnp.maximum(small, jnp.sqrt(u) + 1)
    return jnp.ceil(small) < jnp.ceil(large)


def log_standard_density(u: Any, z: Any) -> Any:
    """log g(u | z) of `wiener.standard_density`, for u > 0 (JAX arrays, broadcast).

    Examples
    --------
    >>> from graphtasks.fitting.bayes import require_numpyro
    >>> _ = require_numpyro()  # JAX in 64-bit mode
    >>> import jax.numpy as jnp
    >>> from graphtasks.fitting.wiener_jax import log_standard_density
    >>> [round(float(x), 6) for x in jnp.exp(log_standard_density(jnp.array([0.05, 0.2, 1.0]), 0.5))]
    [1.464498, 1.169588, 0.022594]
    """
    import jax
    import jax.numpy as jnp

    u, z = jnp.broadcast_arrays(jnp.asarray(u, dtype=jnp.float64), jnp.asarray(z, dtype=jnp.float64))
    small = jax.lax.stop_gradient(_use_small(u))
    us = jnp.where(small, u, 0.1)  # each series at a harmless u where the other is used
    ul = jnp.where(small, 1.0, u)
    # small time: (2 pi u^3)^-1/2 exp(-z^2 / 2u) sum_k (z + 2k) exp(-((z + 2k)^2 - z^2) / 2u), the k = 0 term z
    k = jnp.arange(-SMALL_HALF, SMALL_HALF + 1, dtype=jnp.float64).reshape((-1,) + (1,) * u.ndim)
    shifted = z + 2 * k
    rest = jnp.sum(shifted * jnp.exp(-(shifted**2 - z**2) / (2 * us)), axis=0)
    log_small = jnp.log(jnp.maximum(rest, 1e-300)) - z**2 / (2 * us) - 0.5 * jnp.log(2 * math.pi * us**3)
    # large time: pi exp(-pi^2 u / 2) sum_k k exp(-(k^2 - 1) pi^2 u / 2) sin(k pi z), the k = 1 term sin(pi z)
    k = jnp.arange(1, LARGE_TERMS + 1, dtype=jnp.float64).reshape((-1,) + (1,) * u.ndim)
    rest = jnp.sum(k * jnp.exp(-(k**2 - 1) * math.pi**2 * ul / 2) * jnp.sin(k * math.pi * z), axis=0)
    log_large = jnp.log(jnp.maximum(rest, 1e-300)) + math.log(math.pi) - math.pi**2 * ul / 2
    return jnp.where(small, log_small, log_large)


def wiener_log_density(rt: Any, upper: Any, v: Any, a: Any, t0: Any = 0.0, z: Any = 0.5) -> Any:
    """`wiener.wiener_log_density` in JAX: floored at log(1e-300), before `t0` the floor less 100 per second short.

    Parameters
    ----------
    rt : array_like
        Response times in seconds.
    upper : array_like of bool
        Whether each response reached the upper boundary.
    v, a, t0, z : array_like
        Drift rates (towards the upper boundary), boundary separations, non-decision times,
        relative starting points in (0, 1); all broadcast together.

    Returns
    -------
    jax.Array
        The log densities, of the broadcast shape.

    Examples
    --------
    >>> from graphtasks.fitting.bayes import require_numpyro
    >>> _ = require_numpyro()  # JAX in 64-bit mode
    >>> from graphtasks.fitting.wiener_jax import wiener_log_density
    >>> [round(float(x), 6) for x in wiener_log_density([0.6, 0.6], [True, False], 1.0, 1.5, 0.2)]
    [0.003812, -1.496188]
    """
    import jax.numpy as jnp

    rt, upper, v, a, t0, z = jnp.broadcast_arrays(*(jnp.asarray(x, dtype=jnp.float64)
                                                    for x in (rt, upper, v, a, t0, z)))
    upper = upper.astype(bool)
    t = rt - t0
    decided = t > 0
    time = jnp.where(decided, t, 1.0)  # a decision time the branch below t0 never reads
    drift = jnp.where(upper, -v, v)  # the upper boundary: the lower one of the mirrored process
    start = jnp.where(upper, 1 - z, z)
    log = log_standard_density(time / a**2, start) - drift * a * start - drift**2 * time / 2 - 2 * jnp.log(a)
    log = jnp.maximum(log, LOG_FLOOR)
    return jnp.where(decided, log, LOG_FLOOR + NEGATIVE_SLOPE * jnp.minimum(t, 0.0))
