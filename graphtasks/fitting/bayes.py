"""Fully Bayesian hierarchical fits: the No-U-Turn sampler (NUTS) of NumPyro, on JAX's CPU.

The optional backend (`pip install "graphtasks[bayes]"`) samples the same hierarchical model
EM approximates (`graphtasks.fitting.hierarchical`): each participant's free settings, mapped to
the real line by the scaled logistic of the model's bounds, are drawn from a Gaussian group
distribution N(mu, sigma^2) per setting; here mu and sigma get priors too (mu ~ N(0, 1.5^2),
sigma ~ HalfNormal(1.5), in the transformed space) and the sampler draws from their joint
posterior with every participant's settings (non-centred: x = mu + sigma z, z ~ N(0, 1)).

The likelihood is the agents' own rule, written again in JAX as one scan over the choices
(`log_likelihoods`) and tested equal to `graphtasks.fitting.likelihood.log_likelihood`: the Q
agent (softmax, Watkins' max bootstrap, optimism 1) and the hybrid agent (Daw et al. 2011:
TD(lambda) model-free values, transition counts with their weak prior, w, perseveration), on
any task; so the shipped models `q`, `model-based` and `hybrid` are sampled, and any other
model of those agents whose free settings are among theirs.

One chain is run (the brief of a 2-core machine); r-hat is split-chain r-hat (the chain's two
halves), effective sample sizes are NumPyro's, and divergent transitions are counted. A
participant's fit is the posterior mean of each setting with its posterior standard deviation;
its log-likelihood is at those means, and its `log_evidence` the Laplace approximation under
the group distribution at the posterior means of mu and sigma^2 (`hierarchical.estimate`), so
that NUTS fits can go to random-effects model selection like EM's.
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError, Choices
from .hierarchical import GroupFit, estimate, to_natural, to_transformed
from .likelihood import FLOOR, TaskShape, log_likelihood, task_shape
from .mle import FitResult
from .models import FitModel

SETTINGS = {  # what the JAX likelihood knows of each agent: its settings and their defaults
    "q": {"lr": 0.1, "beta": 5.0, "gamma": 0.95, "q_init": 0.0},
    "hybrid": {"lr": 0.5, "lam": 0.6, "beta": 5.0, "w": 0.7, "perseveration": 0.1},
}
MU_SD = 1.5  # prior of each group mean (transformed space)
SIGMA_SCALE = 1.5  # half-normal prior of each group standard deviation


def require_numpyro() -> Any:
    """NumPyro with JAX in 64-bit mode, or BehaviourError saying how to install it."""
    try:
        import numpyro
    except ImportError:
        raise BehaviourError("--method nuts needs NumPyro and JAX: pip install 'graphtasks[bayes]'") from None
    numpyro.enable_x64()
    numpyro.set_host_device_count(1)
    return numpyro


def check_model(model: FitModel) -> None:
    """BehaviourError unless the JAX likelihood covers the model (agent q or hybrid, known settings)."""
    known = SETTINGS.get(model.agent)
    if known is None:
        raise BehaviourError(f"--method nuts: model {model.name!r}: agent {model.agent!r} has no JAX likelihood "
                             f"(agents: {', '.join(SETTINGS)})")
    settings = {**known, **model.fixed}
    other = sorted(set(model.free) - set(known)) + sorted(k for k in model.fixed if k not in known and not (
        model.agent == "q" and (k, model.fixed[k]) in (("optimism", 1.0), ("bootstrap", "max"))))
    if other:
        raise BehaviourError(f"--method nuts: model {model.name!r}: settings {', '.join(other)} are not in the JAX "
                             f"likelihood of {model.agent!r} ({', '.join(known)})")
    if model.agent == "q" and "beta" not in model.free and settings.get("beta") is None:
        raise BehaviourError(f"--method nuts: model {model.name!r}: q needs a softmax (beta)")


class Packed:
    """Choices of P participants as (P, T) arrays, padded at the end (`valid` false)."""

    def __init__(self, choices: Sequence[Choices], shape: TaskShape) -> None:
        length = max(len(c) for c in choices)
        self.participants, self.length = len(choices), length

        def pad(name: str, dtype: Any) -> np.ndarray:
            out = np.zeros((len(choices), length), dtype=dtype)
            for i, c in enumerate(choices):
                out[i, : len(c)] = getattr(c, name)
            return out

        self.states, self.actions, self.nexts = pad("states", np.int32), pad("actions", np.int32), pad(
            "next_states", np.int32)
        self.rewards, self.ends, self.learn = pad("rewards", np.float64), pad("ends", bool), pad("learn", bool)
        self.valid = np.zeros((len(choices), length), dtype=bool)
        for i, c in enumerate(choices):
            self.valid[i, : len(c)] = True
        self.new = np.ones_like(self.ends)  # a step that begins a trial
        self.new[:, 1:] = self.ends[:, :-1]
        self.available = np.zeros((shape.n_states, shape.n_actions), dtype=bool)
        for state, actions in enumerate(shape.available):
            self.available[state, list(actions)] = True
        self.n_states, self.n_actions = shape.n_states, shape.n_actions


def log_likelihoods(agent: str, settings: dict[str, Any], packed: Packed) -> Any:
    """Each participant's log-likelihood: the agent's rule as one `jax.lax.scan` over the choices.

    Parameters
    ----------
    agent
        "q" or "hybrid" (`SETTINGS`).
    settings
        The agent's settings, each a number or a JAX array of one value per participant
        (missing ones take the agent's defaults).
    packed
        The participants' choices (`Packed`).

    Returns
    -------
    jax.Array
        One log-likelihood per participant, equal to `likelihood.log_likelihood` of each.

    Examples
    --------
    >>> from graphtasks.fitting import simulate, task_shape
    >>> from graphtasks.fitting.bayes import Packed, log_likelihoods
    >>> run = simulate("rewardgym/two-step", "q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, trials=30, seed=0)
    >>> packed = Packed([run], task_shape("rewardgym/two-step"))
    >>> float(log_likelihoods("q", {"lr": 0.4, "beta": 5.0, "gamma": 1.0}, packed)[0]) < 0
    True
    """
    require_numpyro()
    import jax
    import jax.numpy as jnp

    values = {**SETTINGS[agent], **settings}
    participants = packed.participants
    p = {k: jnp.broadcast_to(jnp.asarray(v, dtype=jnp.float64), (participants,))[:, None]
         for k, v in values.items() if not isinstance(v, str)}
    available = jnp.asarray(packed.available)
    n_states, n_actions = packed.n_states, packed.n_actions
    floor = math.log(FLOOR)
    hybrid = agent == "hybrid"
    # Dense one-hot arithmetic on (participants, ...) arrays: no gather or scatter in the scan.
    eye_s, eye_a = jnp.eye(n_states), jnp.eye(n_actions)
    xs = (eye_s[packed.states.T], eye_a[packed.actions.T], jnp.asarray(packed.rewards.T), eye_s[packed.nexts.T],
          jnp.asarray(packed.ends.T), jnp.asarray(packed.learn.T & packed.valid.T), jnp.asarray(packed.valid.T),
          jnp.asarray(packed.new.T))
    q0 = jnp.zeros((participants, n_states, n_actions)) + (0.0 if hybrid else p["q_init"][:, :, None])
    carry0 = (q0, jnp.full((participants, n_states, n_actions, n_states), 1e-3),
              jnp.zeros((participants, n_states, n_actions)), jnp.zeros(participants, dtype=bool),
              jnp.zeros((participants, n_actions)), jnp.zeros(participants))

    def step(carry: Any, x: Any) -> Any:
        q, counts, trace, begun, previous, total = carry  # begun: a choice of this trial was learnt from
        s, a, r, n, end, do, valid, new = x
        trace = jnp.where(new[:, None, None], 0.0, trace)
        begun = begun & ~new
        row = jnp.einsum("ps,psa->pa", s, q)
        offered = s @ available  # (P, A)
        if hybrid:
            transition = jnp.einsum("ps,psat->pat", s, counts)
            transition = transition / transition.sum(axis=2, keepdims=True)
            model_based = jnp.einsum("pat,pt->pa", transition, q.max(axis=2))
            mixed = p["w"] * model_based + (1 - p["w"]) * row + p["perseveration"] * previous
            worth = jnp.where(begun[:, None], row, mixed)
        else:
            worth = row
        logits = jnp.where(offered, p["beta"] * worth, -jnp.inf)
        chosen = jnp.maximum((logits * a).sum(axis=1, where=a > 0) - jax.nn.logsumexp(logits, axis=1), floor)
        total = total + jnp.where(valid, chosen, 0.0)
        ahead = (n @ available).astype(bool)
        best = jnp.max(jnp.where(ahead, jnp.einsum("ps,psa->pa", n, q), -jnp.inf), axis=1)
        future = jnp.where(end | ~ahead.any(axis=1), 0.0, best)
        pair = s[:, :, None] * a[:, None, :]  # (P, S, A)
        current = (row * a).sum(axis=1)
        step_on = do[:, None, None]
        if hybrid:
            previous = jnp.where((do & ~begun)[:, None], a, previous)
            counts = counts + jnp.where(do[:, None, None, None], pair[:, :, :, None] * n[:, None, None, :], 0.0)
            delta = r + future - current
            trace = jnp.where(step_on, p["lam"][:, :, None] * trace + pair, trace)
            q = q + jnp.where(step_on, (p["lr"] * delta[:, None])[:, :, None] * trace, 0.0)
            begun = begun | do
        else:
            delta = r + p["gamma"][:, 0] * future - current
            q = q + jnp.where(step_on, (p["lr"][:, 0] * delta)[:, None, None] * pair, 0.0)
        return (q, counts, trace, begun, previous, total), None

    final, _ = jax.lax.scan(step, carry0, xs)
    return final[-1]


def _model_function(model: FitModel, packed: Packed) -> Any:
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    low = jnp.asarray([model.bounds[n][0] for n in model.free])
    high = jnp.asarray([model.bounds[n][1] for n in model.free])
    fixed = {k: v for k, v in model.fixed.items() if not isinstance(v, str)}
    d, participants = len(model.free), packed.participants

    def hierarchical() -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, MU_SD).expand([d]).to_event(1))
        sigma = numpyro.sample("sigma", dist.HalfNormal(SIGMA_SCALE).expand([d]).to_event(1))
        with numpyro.plate("participants", participants):
            z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([d]).to_event(1))
        x = numpyro.deterministic("x", mu + sigma * z)
        values = low + (high - low) * jax.nn.sigmoid(x)
        settings = {**fixed, **{n: values[:, j] for j, n in enumerate(model.free)}}
        numpyro.factor("choices", log_likelihoods(model.agent, settings, packed).sum())

    return hierarchical


def fit_group_nuts(
    model: FitModel,
    choices: Sequence[Choices],
    samples: int = 1000,
    warmup: int = 1000,
    seed: int = 0,
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
) -> GroupFit:
    """Sample the hierarchical posterior of `model` over the participants' `choices` by NUTS (one chain).

    Parameters
    ----------
    model
        A model of the q or hybrid agent (`MODELS["q"]`, `["model-based"]`, `["hybrid"]`, or `FitModel.of`).
    choices
        One sequence of choices per participant (two or more), all of one task.
    samples, warmup
        Draws kept, and adaptation steps before them.
    seed
        Seed of the sampler (JAX's PRNG key): the same draws for the same seed.
    shapes
        The task's shape per participant (default: read from the task).

    Returns
    -------
    GroupFit
        method "nuts": the group distribution's posterior mean of mu and sigma^2 (as `mean` and
        `variance`), a `FitResult` per participant (posterior means, posterior standard
        deviations as `stderr`), and `diagnostics`: split r-hat and effective sample size of
        every sampled quantity (the worst of each kind, and per group parameter), divergent
        transitions, seconds. `converged` is r-hat at most 1.05 everywhere with no divergence.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.bayes import fit_group_nuts
    >>> group = [simulate("rewardgym/two-step", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, trials=40, seed=s)
    ...          for s, lr in enumerate((0.3, 0.6))]
    >>> result = fit_group_nuts(MODELS["q"], group, samples=100, warmup=100, seed=0)
    >>> result.method, result.participants, sorted(result.diagnostics["r_hat"])
    ('nuts', 2, ['beta', 'lr'])
    """
    numpyro = require_numpyro()
    import jax
    from numpyro.diagnostics import summary
    from numpyro.infer import MCMC, NUTS

    check_model(model)
    if len(choices) < 2:
        raise BehaviourError(f"a hierarchical fit needs two or more participants, got {len(choices)}")
    for name, value, least in (("samples", samples, 10), ("warmup", warmup, 10)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 100_000:
            raise BehaviourError(f"{name}: expected a whole number from {least} to 100000, got {value!r}")
    shapes = list(shapes) if shapes is not None else [task_shape(c.task_id, store) for c in choices]
    if len({s.task_id for s in shapes}) != 1:
        raise BehaviourError(f"--method nuts: the runs are of several tasks ({sorted({s.task_id for s in shapes})})")
    for c, s in zip(choices, shapes):
        s.check(c)
    packed = Packed(choices, shapes[0])
    started = time.perf_counter()
    mcmc = MCMC(NUTS(_model_function(model, packed), target_accept_prob=0.9), num_warmup=warmup,
                num_samples=samples, num_chains=1, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(seed), extra_fields=("diverging",))
    drawn = {k: np.asarray(jax.block_until_ready(v)) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    seconds = time.perf_counter() - started  # JAX computes asynchronously: timed once the draws are here
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    stats = summary({k: drawn[k] for k in ("mu", "sigma", "x")}, group_by_chain=True)
    names = model.free
    mu, sigma, x = drawn["mu"][0], drawn["sigma"][0], drawn["x"][0]  # (draws, d), (draws, d), (draws, P, d)
    r_hat = {"mu": stats["mu"]["r_hat"], "sigma": stats["sigma"]["r_hat"], "x": stats["x"]["r_hat"]}
    n_eff = {"mu": stats["mu"]["n_eff"], "sigma": stats["sigma"]["n_eff"], "x": stats["x"]["n_eff"]}
    worst_r = float(max(np.nanmax(v) for v in r_hat.values()))
    diagnostics = {
        "chains": 1, "samples": samples, "warmup": warmup, "divergences": divergences, "seconds": seconds,
        "r_hat": {n: float(r_hat["mu"][j]) for j, n in enumerate(names)},
        "r_hat_sd": {n: float(r_hat["sigma"][j]) for j, n in enumerate(names)},
        "ess": {n: float(n_eff["mu"][j]) for j, n in enumerate(names)},
        "ess_sd": {n: float(n_eff["sigma"][j]) for j, n in enumerate(names)},
        "max_r_hat": worst_r, "min_ess": float(min(np.nanmin(v) for v in n_eff.values())),
        "numpyro": numpyro.__version__,
    }
    mean = mu.mean(axis=0)
    variance = (sigma**2).mean(axis=0)
    natural = to_natural(model, x.reshape(-1, len(names))).reshape(x.shape)
    fits = []
    for i, c in enumerate(choices):
        params = {n: float(natural[:, i, j].mean()) for j, n in enumerate(names)}
        errors: dict[str, float | None] = {n: float(natural[:, i, j].std(ddof=1)) for j, n in enumerate(names)}
        at = model.settings([params[n] for n in names])
        found = estimate(model, c, shapes[i], mean, variance, [to_transformed(model, list(params.values()))])
        fits.append(FitResult(
            model.name, model.agent, params, dict(model.fixed), dict(model.bounds),
            log_likelihood(model.agent, at, c, shapes[i]), len(c), 1, seed, c.source, dict(c.truth), errors,
            method="nuts", log_evidence=found.log_evidence,
        ))
    return GroupFit(
        model.name, model.agent, dict(model.bounds), dict(model.fixed),
        {n: float(v) for n, v in zip(names, mean)}, {n: float(v) for n, v in zip(names, variance)},
        tuple(fits), samples, bool(worst_r <= 1.05 and divergences == 0), 1, seed, (), "nuts", diagnostics,
    )
