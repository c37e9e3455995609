"""Random-effects Bayesian model selection (Stephan et al. 2009; Rigoux et al. 2014).

Summing BIC over participants treats the group as if one model made every participant's
choices, so a few participants with large differences decide for everyone. The random-effects
view: each participant's choices come from one of K models, drawn with unknown frequencies
r ~ Dirichlet(prior). Given each participant's log evidence for each model, variational Bayes
finds the posterior Dirichlet(alpha) over the frequencies and each participant's posterior
over models (`attribution`), alternating

    attribution[n, k] = softmax_k(log_evidence[n, k] + digamma(alpha[k]))
    alpha = prior + sum_n attribution[n]

until alpha stops moving. From it: the expected frequencies alpha / sum(alpha); each model's
exceedance probability, P(r_k > r_j for every other j), the integral of a Gamma(alpha_k)
density times the other Gamma(alpha_j) distribution functions (Soch & Allefeld 2016), by
scipy's quadrature; the Bayesian omnibus risk (Rigoux et al. 2014), the posterior
probability that all frequencies are equal, from the free energies of that null hypothesis
(exactly sum_n log mean_k exp(log_evidence[n, k])) and of the fitted one; and the protected
exceedance probabilities, exceedance * (1 - BOR) + BOR / K, which do not grow towards 1
merely because a model is compared with others that are no worse.

The prior defaults to one count per model (alpha_0 = 1, as Stephan et al. 2009). Checked
against the independent groupBMC package on the same matrices (tests/test_fitting_group.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError

MAX_ITERATIONS = 100_000


@dataclass(frozen=True)
class ModelSelection:
    """The posterior over model frequencies in a group, and what it says about each model."""

    models: tuple[str, ...]
    prior: np.ndarray  # alpha_0, one count per model
    alpha: np.ndarray  # the posterior Dirichlet's counts
    attribution: np.ndarray  # [participant, model]: the posterior probability that the model made the choices
    exceedance: np.ndarray
    protected_exceedance: np.ndarray
    bor: float  # Bayesian omnibus risk: P(every frequency equal | evidence)
    free_energy: float  # of the fitted hypothesis (frequencies drawn from the Dirichlet)
    null_free_energy: float  # of the null hypothesis (every frequency 1/K): its exact log evidence
    iterations: int

    @property
    def frequencies(self) -> np.ndarray:
        """The expected frequency of each model, alpha / sum(alpha)."""
        return self.alpha / self.alpha.sum()

    @property
    def frequency_sd(self) -> np.ndarray:
        """The posterior standard deviation of each frequency (Dirichlet)."""
        total = self.alpha.sum()
        return np.sqrt(self.alpha * (total - self.alpha) / (total**2 * (total + 1)))

    @property
    def expected_participants(self) -> np.ndarray:
        """Per model, the expected number of participants whose choices it made: the sum over
        participants of the posterior probability that it made theirs (alpha less the prior).
        A posterior expectation, not a count of the participants a model fits best."""
        return self.attribution.sum(axis=0)

    def rows(self) -> list[dict[str, Any]]:
        """A row per model: the expected number of participants it made the choices of
        (`expected_participants`), its expected frequency and that frequency's sd, its
        exceedance and protected exceedance probability.

        Examples
        --------
        >>> from graphtasks.fitting.bms import random_effects
        >>> selection = random_effects([[-10.0, -12.0], [-10.0, -12.0], [-20.0, -10.0]], ["a", "b"])
        >>> [(r["model"], round(r["expected_participants"], 2)) for r in selection.rows()]
        [('a', 1.82), ('b', 1.18)]
        """
        expected = self.expected_participants
        return [
            {"model": m, "expected_participants": float(expected[k]), "frequency": float(self.frequencies[k]),
             "frequency_sd": float(self.frequency_sd[k]), "exceedance": float(self.exceedance[k]),
             "protected_exceedance": float(self.protected_exceedance[k])}
            for k, m in enumerate(self.models)
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "models": list(self.models), "participants": int(self.attribution.shape[0]),
            "alpha": self.alpha.tolist(), "prior": self.prior.tolist(), "bor": self.bor,
            "free_energy": self.free_energy, "null_free_energy": self.null_free_energy,
            "iterations": self.iterations, "rows": self.rows(),
        }


def exceedance_probabilities(alpha: Any) -> np.ndarray:
    """P(r_k > r_j for all j != k) for r ~ Dirichlet(alpha), by quadrature.

    r is a vector of independent Gamma(alpha_k, 1) draws divided by their sum, so r_k is the
    largest exactly when its Gamma draw is: the probability is the integral over x of the
    Gamma(alpha_k) density at x times the product of the other Gamma distribution functions
    at x. The integrand lives where Gamma(alpha_k) has its mass; the integral is split at
    that distribution's quantiles so that the quadrature cannot step over it.

    Examples
    --------
    >>> from graphtasks.fitting.bms import exceedance_probabilities
    >>> [round(float(p), 4) for p in exceedance_probabilities([3.0, 3.0])]
    [0.5, 0.5]
    >>> [round(float(p), 4) for p in exceedance_probabilities([1.0, 1.0, 1.0])]
    [0.3333, 0.3333, 0.3333]
    """
    from scipy import integrate, stats
    from scipy.special import gammainc

    a = np.asarray(alpha, dtype=float)
    if a.ndim != 1 or len(a) < 2 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise BehaviourError(f"exceedance: expected two or more positive Dirichlet counts, got {a.tolist()}")
    out = np.zeros(len(a))
    for k in range(len(a)):
        others = np.delete(a, k)

        def integrand(x: float) -> float:
            return float(stats.gamma.pdf(x, a[k]) * np.prod(gammainc(others, x)))

        cuts = stats.gamma.ppf([0.0, 1e-12, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-12], a[k])
        cuts = np.unique(np.concatenate((cuts, [stats.gamma.isf(1e-15, a[k])])))
        out[k] = sum(integrate.quad(integrand, lo, hi, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
                     for lo, hi in zip(cuts[:-1], cuts[1:]))
    return out / out.sum()  # exact values sum to 1; this removes the quadrature's last digits


def _free_energy(log_evidence: np.ndarray, prior: np.ndarray, alpha: np.ndarray, attribution: np.ndarray) -> float:
    """The variational free energy of the random-effects hypothesis (Rigoux et al. 2014, eq. A20)."""
    from scipy.special import digamma, gammaln, xlogy

    expected_log_r = digamma(alpha) - digamma(alpha.sum())
    joint = float(np.sum(attribution * (log_evidence + expected_log_r)) + np.sum((prior - 1) * expected_log_r))
    joint += float(gammaln(prior.sum()) - gammaln(prior).sum())
    entropy_z = -float(np.sum(xlogy(attribution, attribution)))
    entropy_r = float(gammaln(alpha).sum() - gammaln(alpha.sum()) - np.sum((alpha - 1) * expected_log_r))
    return joint + entropy_z + entropy_r


def random_effects(
    log_evidence: Any,
    models: Sequence[str] | None = None,
    prior: Sequence[float] | None = None,
    tolerance: float = 1e-12,
    max_iterations: int = 10_000,
) -> ModelSelection:
    """Random-effects Bayesian model selection from a log-evidence matrix.

    Parameters
    ----------
    log_evidence
        [participant, model] log evidences: an EM fit's Laplace evidences
        (`FitResult.log_evidence`), or -BIC/2 of maximum-likelihood fits.
    models
        The models' names, one per column (default m0, m1, ...).
    prior
        The Dirichlet prior's counts (default one per model).
    tolerance, max_iterations
        The variational updates stop when no count of alpha moves by more than `tolerance`.

    Returns
    -------
    ModelSelection
        Expected frequencies, exceedance and protected exceedance probabilities, the Bayesian
        omnibus risk and each participant's posterior over models.

    Examples
    --------
    >>> import numpy as np
    >>> from graphtasks.fitting.bms import random_effects
    >>> evidence = np.array([[-100.0, -110.0], [-90.0, -95.0], [-120.0, -118.0], [-80.0, -90.0]])
    >>> result = random_effects(evidence, ["a", "b"])
    >>> [round(float(f), 3) for f in result.frequencies]
    [0.715, 0.285]
    >>> bool(result.protected_exceedance[0] > 0.5 > result.protected_exceedance[1])
    True
    """
    from scipy.special import digamma, logsumexp, softmax

    matrix = np.asarray(log_evidence, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 2:
        raise BehaviourError(
            f"log evidence: expected a [participant, model] matrix with two or more models, got shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        row, column = map(int, np.argwhere(~np.isfinite(matrix))[0])
        raise BehaviourError(f"log evidence: participant {row}, model {column}: not a finite number")
    n, k = matrix.shape
    names = tuple(models) if models is not None else tuple(f"m{i}" for i in range(k))
    if len(names) != k:
        raise BehaviourError(f"log evidence: {k} model columns but {len(names)} model names")
    alpha0 = np.ones(k) if prior is None else np.asarray(prior, dtype=float)
    if alpha0.shape != (k,) or not np.all(np.isfinite(alpha0)) or np.any(alpha0 <= 0):
        raise BehaviourError(f"prior: expected {k} positive counts, got {np.asarray(prior).tolist()}")
    if not (isinstance(max_iterations, int) and 1 <= max_iterations <= MAX_ITERATIONS):
        raise BehaviourError(
            f"max_iterations: expected a whole number from 1 to {MAX_ITERATIONS}, got {max_iterations!r}"
        )
    alpha = alpha0.copy()
    attribution = np.full((n, k), 1.0 / k)
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        attribution = softmax(matrix + digamma(alpha), axis=1)
        updated = alpha0 + attribution.sum(axis=0)
        moved = float(np.abs(updated - alpha).max())
        alpha = updated
        if moved < tolerance:
            break
    attribution = softmax(matrix + digamma(alpha), axis=1)  # consistent with the final alpha
    f1 = _free_energy(matrix, alpha0, alpha, attribution)
    f0 = float(np.sum(logsumexp(matrix, axis=1)) - n * math.log(k))
    bor = float(1.0 / (1.0 + math.exp(min(f1 - f0, 700.0))))
    exceedance = exceedance_probabilities(alpha)
    protected = exceedance * (1 - bor) + bor / k
    return ModelSelection(names, alpha0, alpha, attribution, exceedance, protected, bor, f1, f0, iterations)
