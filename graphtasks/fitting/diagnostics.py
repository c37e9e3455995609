"""The health of a NUTS fit and its predictive accuracy, read by ArviZ.

Every number here comes from ArviZ (`pip install "graphtasks[bayes]"` brings it), the
library the field reports with, not from code of our own:

- R-hat: the rank-normalised split R-hat of Vehtari et al. (2021), per sampled quantity,
  from every chain's two halves (`arviz.rhat(method="rank")`; a single chain's two halves
  are given to it as two chains, which it splits again);
- effective sample sizes: bulk (of the rank-normalised draws: how well the centre of the
  posterior is known) and tail (the smaller of the 5% and 95% quantiles' ESS: how well its
  intervals are known) (`arviz.ess(method="bulk" | "tail")`);
- PSIS-LOO: the expected log predictive density of leaving each participant out,
  estimated by Pareto-smoothed importance sampling over the draws (`arviz.loo`), with each
  participant's Pareto k (above ArviZ's threshold, 0.7 at most, the estimate for that
  participant is unreliable).

A fit is healthy when every R-hat is at most `MAX_R_HAT` (1.01), every bulk and tail ESS at
least `MIN_ESS` (400) and no transition diverged (Vehtari et al. 2021's advice); `problems`
says in one line which of these fail, and where.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError

MAX_R_HAT = 1.01
MIN_ESS = 400


class ConvergenceWarning(UserWarning):
    """A NUTS fit whose R-hat, effective sample sizes or divergences fail the checks (one line)."""


def require_arviz() -> Any:
    """ArviZ (imported without its notice of a coming refactor), or BehaviourError saying how to install it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            import arviz
    except ImportError:
        raise BehaviourError("--method nuts needs ArviZ for R-hat, ESS and LOO: pip install 'graphtasks[bayes]'"
                             ) from None
    return arviz


def _worst(values: np.ndarray, pick: Any) -> float:
    finite = values[np.isfinite(values)]
    return float(pick(finite)) if finite.size else float("nan")


def chain_diagnostics(draws: dict[str, np.ndarray], names: Sequence[str], divergences: Sequence[int]
                      ) -> dict[str, Any]:
    """R-hat and bulk and tail ESS of the group means, the group sds and the participants' settings.

    Parameters
    ----------
    draws
        "mu" and "sigma" as (chains, draws, settings) arrays, "x" as (chains, draws,
        participants, settings): the sampled quantities in the transformed space.
    names
        The free settings, in the order of the last axis.
    divergences
        Divergent transitions of each chain (after warmup).

    Returns
    -------
    dict
        ``settings``: per setting, the R-hat, bulk ESS and tail ESS of its group mean
        (``mu``) and group sd (``sigma``), and the worst over the participants
        (``participants``: largest R-hat, smallest ESS); ``divergences`` (total) and
        ``divergences_per_chain``; ``max_r_hat`` and ``min_ess`` over everything; and
        ``problems``, the failed checks as lines (empty when healthy).

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting.diagnostics import chain_diagnostics
    >>> rng = np.random.default_rng(0)
    >>> draws = {"mu": rng.normal(size=(4, 500, 1)), "sigma": rng.gamma(5.0, size=(4, 500, 1)),
    ...          "x": rng.normal(size=(4, 500, 3, 1))}
    >>> found = chain_diagnostics(draws, ["lr"], [0, 0, 0, 0])
    >>> found["max_r_hat"] < 1.01, found["min_ess"] > 400, found["problems"]
    (True, True, [])
    """
    az = require_arviz()
    data = az.convert_to_dataset({k: np.asarray(draws[k]) for k in ("mu", "sigma", "x")})
    if np.asarray(draws["mu"]).shape[0] == 1:  # ArviZ's R-hat needs two chains: one chain's halves stand for them
        half = np.asarray(draws["mu"]).shape[1] // 2
        r_hat = az.rhat(az.convert_to_dataset({k: np.asarray(draws[k])[0, : 2 * half].reshape(
            2, half, *np.asarray(draws[k]).shape[2:]) for k in ("mu", "sigma", "x")}), method="rank")
    else:
        r_hat = az.rhat(data, method="rank")
    bulk = az.ess(data, method="bulk")
    tail = az.ess(data, method="tail")
    settings: dict[str, Any] = {}
    for j, name in enumerate(names):
        row: dict[str, Any] = {}
        for part in ("mu", "sigma"):
            row[part] = {"r_hat": float(r_hat[part].values[j]), "ess_bulk": float(bulk[part].values[j]),
                         "ess_tail": float(tail[part].values[j])}
        row["participants"] = {"r_hat": _worst(r_hat["x"].values[:, j], np.max),
                               "ess_bulk": _worst(bulk["x"].values[:, j], np.min),
                               "ess_tail": _worst(tail["x"].values[:, j], np.min)}
        settings[name] = row
    every = [v for row in settings.values() for part in row.values() for v in part.items()]
    found = {
        "settings": settings, "divergences": int(sum(divergences)),
        "divergences_per_chain": [int(d) for d in divergences],
        "max_r_hat": _worst(np.array([v for k, v in every if k == "r_hat"]), np.max),
        "min_ess": _worst(np.array([v for k, v in every if k != "r_hat"]), np.min),
        "arviz": az.__version__,
    }
    found["problems"] = problems(found)
    return found


WHERE = {"mu": "group mean", "sigma": "group sd", "participants": "participants"}


def problems(found: dict[str, Any]) -> list[str]:
    """The checks a fit fails, one short line each (how many quantities, and the worst): R-hat
    above `MAX_R_HAT`, an ESS below `MIN_ESS`, divergences; `settings` of `chain_diagnostics`
    has every number."""
    out = []
    r_hats = [(v["r_hat"], f"{n} {WHERE[p]}") for n, row in found["settings"].items() for p, v in row.items()]
    sizes = [(v[key], f"{n} {WHERE[p]} {kind}") for n, row in found["settings"].items() for p, v in row.items()
             for key, kind in (("ess_bulk", "bulk"), ("ess_tail", "tail"))]
    high = [(v, w) for v, w in r_hats if not v <= MAX_R_HAT]
    low = [(v, w) for v, w in sizes if not v >= MIN_ESS]
    if high:
        value, where = max(high, key=lambda t: -np.inf if np.isnan(t[0]) else t[0])
        out.append(f"R-hat above {MAX_R_HAT} for {len(high)} of {len(r_hats)} (largest {value:.3f}, {where})")
    if low:
        value, where = min(low, key=lambda t: np.inf if np.isnan(t[0]) else t[0])
        out.append(f"ESS below {MIN_ESS} for {len(low)} of {len(sizes)} (fewest {value:.0f}, {where})")
    if found["divergences"]:
        out.append(f"{found['divergences']} divergent transitions (per chain {found['divergences_per_chain']})")
    return out


def psis_loo(log_likelihood: np.ndarray) -> dict[str, Any]:
    """PSIS-LOO over participants, from each draw's log-likelihood of each participant's choices.

    Parameters
    ----------
    log_likelihood
        (chains, draws, participants): log p(participant's choices | that draw's settings).

    Returns
    -------
    dict
        ``elpd`` (the expected log predictive density of each participant left out, summed),
        its standard error ``se``, ``p_loo`` (the effective number of parameters), ``looic``
        (-2 elpd), ``pareto_k`` per participant, ``good_k`` (ArviZ's threshold for this many
        draws), ``bad`` (how many participants exceed it), ``unit`` ("participant").

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting.diagnostics import psis_loo
    >>> ll = np.random.default_rng(0).normal(-50.0, 0.2, size=(2, 200, 3))
    >>> found = psis_loo(ll)
    >>> round(found["looic"] + 2 * found["elpd"], 9), found["bad"], len(found["pareto_k"])
    (0.0, 0, 3)
    """
    az = require_arviz()
    ll = np.asarray(log_likelihood, dtype=float)
    data = az.from_dict(posterior={"log_lik": ll}, log_likelihood={"choices": ll})
    with warnings.catch_warnings():  # its warning of large k is reported as `bad` (and by the caller)
        warnings.simplefilter("ignore", UserWarning)
        found = az.loo(data, pointwise=True)
    k = np.asarray(found.pareto_k.values, dtype=float)
    good = float(getattr(found, "good_k", 0.7))
    elpd = float(found.elpd_loo)
    return {"elpd": elpd, "se": float(found.se), "p_loo": float(found.p_loo), "looic": -2 * elpd,
            "pareto_k": [float(v) for v in k], "good_k": good, "bad": int((k > good).sum()), "unit": "participant"}
