"""Fully Bayesian hierarchical fits: the No-U-Turn sampler (NUTS) of NumPyro, on JAX's CPU.

The optional backend (`pip install "graphtasks[bayes]"`) samples the same hierarchical model
EM approximates (`graphtasks.fitting.hierarchical`): each participant's free settings, mapped to
the real line by the scaled logistic of the model's bounds, are drawn from a Gaussian group
distribution N(mu, sigma^2) per setting; here mu and sigma get priors too (mu ~ N(0, 1.5^2),
sigma ~ HalfNormal(1.5), in the transformed space) and the sampler draws from their joint
posterior with every participant's settings.

The likelihood is the agents' own rule, written again in JAX as one scan over the choices
(`log_likelihoods`; each agent's part of it, `JaxForm`, in its own module and named by its
registry row's `jax`) and tested equal to `graphtasks.fitting.likelihood.log_likelihood`: the Q
agent (softmax, Watkins' max bootstrap, optimism 1) and the hybrid agent (Daw et al. 2011:
TD(lambda) model-free values, transition counts with their weak prior, w, perseveration), on
any task; so the shipped models `q`, `model-based` and `hybrid` are sampled, and any other
model of those agents whose free settings are among theirs. The response-time models of those
agents (`q-ddm`, `hybrid-ddm`, `q-lba`: `graphtasks.fitting.rt`) are sampled too: the same scan
gives the agent's values before each choice, and the Wiener (`wiener_jax`) or LBA log density
of each response time replaces the softmax, tested equal to `rt.rt_log_likelihood`.

Several chains are run (`chains`, default 4; in parallel, one JAX CPU device each, where JAX
has the devices, else vectorised), each seeded from the one seed; R-hat (rank-normalised,
split), bulk and tail effective sample sizes, divergences and PSIS-LOO over participants
come from ArviZ (`graphtasks.fitting.diagnostics`), and a fit that fails a check warns in one
line. The group prior is non-centred by default (x = mu + sigma z): with few choices per
participant the centred form's funnel (small sigma pins every x to mu) makes divergences;
`parameterisation="centred"` samples x itself. A participant's fit is the posterior mean of
each setting with its posterior standard deviation; its log-likelihood is at those means, and
its `log_evidence` the Laplace approximation under the group distribution at the posterior
means of mu and sigma^2 (`hierarchical.estimate`), so
that NUTS fits can go to random-effects model selection like EM's.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from graphtasks.responses import RT_KEY, RT_SETTINGS
from gym_bridge.agents import AGENT_INFO
from gym_bridge.agents.forms import Carry, JaxForm, Step

from .behaviour import BehaviourError, Choices, load_runs
from .hierarchical import GroupFit, estimate, to_natural, to_transformed
from .likelihood import FLOOR, TaskShape, log_likelihood, task_shape
from .mle import FitResult
from .models import FitModel

MU_SD = 1.5  # prior of each group mean (transformed space)
SIGMA_SCALE = 1.5  # half-normal prior of each group standard deviation
DEVICES = 4  # JAX CPU devices asked for at least: the default chains run in parallel
RT_FAMILIES = ("ddm", "lba")  # the response models the JAX likelihood has (`graphtasks.fitting.rt`)


def jax_form(agent: str) -> JaxForm | None:
    """The agent's JAX likelihood (its registry row's `jax`: its settings with their defaults and
    its part of the scan), or None where it has none."""
    info = AGENT_INFO.get(agent)
    return None if info is None else info.jax


def require_numpyro() -> Any:
    """NumPyro with JAX in 64-bit mode, or BehaviourError saying how to install it."""
    try:
        import numpyro
    except ImportError:
        raise BehaviourError("--method nuts needs NumPyro and JAX: pip install 'graphtasks[bayes]'") from None
    numpyro.enable_x64()
    # A CPU device per chain lets the chains run in parallel; this only takes effect before JAX first starts.
    numpyro.set_host_device_count(max(DEVICES, os.cpu_count() or 1))
    return numpyro


def check_model(model: FitModel) -> None:
    """BehaviourError unless the JAX likelihood covers the model (agent q or hybrid, known settings;
    a response-time model's family among `RT_FAMILIES`)."""
    form = jax_form(model.agent)
    if form is None:
        with_jax = [name for name, info in AGENT_INFO.items() if info.jax is not None]
        raise BehaviourError(f"--method nuts: model {model.name!r}: agent {model.agent!r} has no JAX likelihood "
                             f"(agents: {', '.join(with_jax)})")
    known = form.settings
    family = model.fixed.get(RT_KEY)
    if family is not None:
        if family not in RT_FAMILIES:
            raise BehaviourError(f"--method nuts: model {model.name!r}: rt = {family!r} has no JAX likelihood "
                                 f"(response models: {', '.join(RT_FAMILIES)})")
        known = {**known, **RT_SETTINGS[family], RT_KEY: family}
    settings = {**known, **model.fixed}
    other = sorted(set(model.free) - set(known)) + sorted(
        k for k in model.fixed if k not in known and not (k in form.takes and model.fixed[k] == form.takes[k]))
    if other:
        raise BehaviourError(f"--method nuts: model {model.name!r}: settings {', '.join(other)} are not in the JAX "
                             f"likelihood of {model.agent!r} ({', '.join(known)})")
    if family is None and form.needs_beta and "beta" not in model.free and settings.get("beta") is None:
        raise BehaviourError(f"--method nuts: model {model.name!r}: {model.agent} needs a softmax (beta)")


class Packed:
    """Choices of P participants as (P, T) arrays, padded at the end (`valid` false).

    `rts` holds the response times (seconds; 1.0 where padded), or is None unless every choice
    has one; `first`, `second` are each state's two offered actions (the lower and the upper
    boundary of a drift-diffusion model; 0, 0 where a state offers other than two).
    """

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
        self.rts: np.ndarray | None = None
        if all(c.rts is not None and np.isfinite(c.rts).all() for c in choices):
            self.rts = np.ones((len(choices), length))
            for i, c in enumerate(choices):
                self.rts[i, : len(c)] = c.rts
        pairs = np.array([list(a) if len(a) == 2 else [0, 0] for a in shape.available], dtype=np.int32)
        self.first, self.second = pairs[:, 0], pairs[:, 1]


def log_likelihoods(agent: str, settings: dict[str, Any], packed: Packed) -> Any:
    """Each participant's log-likelihood: the agent's rule as one `jax.lax.scan` over the choices.

    Parameters
    ----------
    agent
        An agent with a JAX form (its registry row's `jax`: "q" or "hybrid").
    settings
        The agent's settings, each a number or a JAX array of one value per participant
        (missing ones take the agent's defaults). With ``rt = "ddm"`` among them, the model's
        choices come with response times (`graphtasks.fitting.rt`): the agent's values before
        each choice drive a drift-diffusion model, drift ``drift_scale * (V(second) - V(first))``
        of the state's two offered actions, with ``threshold``, ``t0`` and ``z`` (missing ones
        take `RT_SETTINGS`' defaults), and each choice's log-likelihood is the Wiener log density
        of its response time at its boundary (`graphtasks.fitting.wiener_jax`). With
        ``rt = "lba"`` one accumulator per offered action races, mean rate
        ``drift_base + drift_scale * V(action)``, rate sd 1, start range ``start_range``,
        threshold ``start_range + threshold``, non-decision time ``t0`` (`lba.lba_log_density`).
    packed
        The participants' choices (`Packed`; with response times for an RT model).

    Returns
    -------
    jax.Array
        One log-likelihood per participant, equal to `likelihood.log_likelihood` of each
        (`rt.rt_log_likelihood` for an RT model).

    Raises
    ------
    BehaviourError
        An RT model of choices without response times, or of a state offering other than two actions.

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

    family = settings.get(RT_KEY)
    form = jax_form(agent)
    if form is None:
        raise BehaviourError(f"agent {agent!r} has no JAX likelihood")
    values = {**form.settings, **(RT_SETTINGS[str(family)] if family is not None else {}), **settings}
    if family is not None:
        if family not in RT_FAMILIES:
            raise BehaviourError(f"rt = {family!r}: the JAX likelihood has {', '.join(RT_FAMILIES)}")
        if packed.rts is None:
            raise BehaviourError(f"rt = {family!r}: some choices have no response time (Choices.rts); "
                                 "a response-time model fits choices with their response times")
        offered = packed.available[packed.states].sum(axis=2)
        if family == "ddm" and ((offered != 2) & packed.valid).any():
            raise BehaviourError(f"rt = {family!r}: a state offers other than two actions; a drift-diffusion model "
                                 "decides between two")
    participants = packed.participants
    p = {k: jnp.broadcast_to(jnp.asarray(v, dtype=jnp.float64), (participants,))[:, None]
         for k, v in values.items() if not isinstance(v, str)}
    available = jnp.asarray(packed.available)
    n_states, n_actions = packed.n_states, packed.n_actions
    floor = math.log(FLOOR)
    # Dense one-hot arithmetic on (participants, ...) arrays: no gather or scatter in the scan.
    eye_s, eye_a = jnp.eye(n_states), jnp.eye(n_actions)
    xs = (eye_s[packed.states.T], eye_a[packed.actions.T], jnp.asarray(packed.rewards.T), eye_s[packed.nexts.T],
          jnp.asarray(packed.ends.T), jnp.asarray(packed.learn.T & packed.valid.T), jnp.asarray(packed.valid.T),
          jnp.asarray(packed.new.T))
    q0 = jnp.zeros((participants, n_states, n_actions)) + form.q_init(p)
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
        worth = form.values(p, s, row, Carry(q, counts, trace, begun, previous))  # the agent's own values
        logits = jnp.where(offered, p["beta"] * worth, -jnp.inf)
        chosen = jnp.maximum((logits * a).sum(axis=1, where=a > 0) - jax.nn.logsumexp(logits, axis=1), floor)
        total = total + jnp.where(valid, chosen, 0.0)
        ahead = (n @ available).astype(bool)
        best = jnp.max(jnp.where(ahead, jnp.einsum("ps,psa->pa", n, q), -jnp.inf), axis=1)
        future = jnp.where(end | ~ahead.any(axis=1), 0.0, best)
        pair = s[:, :, None] * a[:, None, :]  # (P, S, A)
        current = (row * a).sum(axis=1)
        learnt = form.learn(p, Step(s, a, r, n, do, pair, row, future, current),  # the agent's own rule
                            Carry(q, counts, trace, begun, previous))
        q, counts, trace, begun, previous = learnt.q, learnt.counts, learnt.trace, learnt.begun, learnt.previous
        return (q, counts, trace, begun, previous, total), (worth if family is not None else None)

    final, worths = jax.lax.scan(step, carry0, xs)
    if family is None:
        return final[-1]
    assert packed.rts is not None
    if family == "lba":
        drifts = p["drift_base"][None] + p["drift_scale"][None] * worths  # (T, P, A)
        start = p["start_range"][:, 0]
        racing = jnp.asarray(packed.available[packed.states.T])
        logs = _lba_log_density(jnp.asarray(packed.rts.T), jnp.asarray(eye_a[packed.actions.T]), drifts, start,
                                start + p["threshold"][:, 0], p["t0"][:, 0], racing)
        return jnp.where(jnp.asarray(packed.valid.T), logs, 0.0).sum(axis=0)
    from .wiener_jax import wiener_log_density

    steps = jnp.arange(packed.length)[:, None]
    rows = jnp.arange(participants)[None, :]
    first = worths[steps, rows, jnp.asarray(packed.first[packed.states.T])]  # (T, P)
    second = worths[steps, rows, jnp.asarray(packed.second[packed.states.T])]
    drift = p["drift_scale"][:, 0] * (second - first)
    upper = jnp.asarray(packed.actions.T == packed.second[packed.states.T])
    logs = wiener_log_density(jnp.asarray(packed.rts.T), upper, drift, p["threshold"][:, 0], p["t0"][:, 0],
                              p["z"][:, 0])
    return jnp.where(jnp.asarray(packed.valid.T), logs, 0.0).sum(axis=0)


def _lba_log_density(rt: Any, chosen: Any, v: Any, A: Any, b: Any, t0: Any, racing: Any) -> Any:
    """`lba.lba_log_density` in JAX (rate sd 1): rt (T, P), chosen and racing (T, P, K) masks, v (T, P, K),
    A, b, t0 (P,)."""
    import jax.numpy as jnp
    from jax.scipy.special import ndtr

    from .wiener import LOG_FLOOR, NEGATIVE_SLOPE

    t = rt - t0
    decided = t > 0
    tt = jnp.where(decided, t, 1.0)[..., None]
    A, b = A[:, None], b[:, None]
    alpha, beta = (b - A - tt * v) / tt, (b - tt * v) / tt
    big_a, big_b = ndtr(alpha), ndtr(beta)
    root = math.sqrt(2 * math.pi)
    small_a, small_b = jnp.exp(-0.5 * alpha**2) / root, jnp.exp(-0.5 * beta**2) / root
    f = jnp.maximum((-v * big_a + small_a + v * big_b - small_b) / A, 0.0)
    F = jnp.clip(1 + (b - A - tt * v) / A * big_a - (b - tt * v) / A * big_b + tt / A * (small_a - small_b), 0.0, 1.0)
    log_survive = jnp.where(racing, jnp.log(jnp.maximum(1.0 - F, 1e-300)), 0.0)
    f_chosen = (f * chosen).sum(axis=-1)
    positive = f_chosen > 0
    log_f = jnp.where(positive, jnp.log(jnp.where(positive, f_chosen, 1.0)), -jnp.inf)
    some_positive = 1.0 - jnp.prod(jnp.where(racing, ndtr(-v), 1.0), axis=-1)
    log = (log_f + log_survive.sum(axis=-1) - (log_survive * chosen).sum(axis=-1)
           - jnp.log(jnp.maximum(some_positive, 1e-300)))
    log = jnp.maximum(log, LOG_FLOOR)
    return jnp.where(decided, log, LOG_FLOOR + NEGATIVE_SLOPE * jnp.minimum(t, 0.0))


PARAMETERISATIONS = ("non-centred", "centred")
CHAIN_METHODS = ("auto", "parallel", "vectorized", "sequential")


def _model_function(model: FitModel, packed: Packed, centred: bool = False) -> Any:
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    low = jnp.asarray([model.bounds[n][0] for n in model.free])
    high = jnp.asarray([model.bounds[n][1] for n in model.free])
    fixed = {k: v for k, v in model.fixed.items() if not isinstance(v, str) or k == RT_KEY}
    d, participants = len(model.free), packed.participants

    def hierarchical() -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, MU_SD).expand([d]).to_event(1))
        sigma = numpyro.sample("sigma", dist.HalfNormal(SIGMA_SCALE).expand([d]).to_event(1))
        with numpyro.plate("participants", participants):
            if centred:  # x ~ N(mu, sigma^2) sampled as it is
                x = numpyro.sample("x", dist.Normal(mu, sigma).to_event(1))
            else:  # x = mu + sigma z: the sampler moves over z, whose prior never depends on sigma
                z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([d]).to_event(1))
                x = numpyro.deterministic("x", mu + sigma * z)
        values = low + (high - low) * jax.nn.sigmoid(x)
        settings = {**fixed, **{n: values[:, j] for j, n in enumerate(model.free)}}
        each = numpyro.deterministic("log_lik", log_likelihoods(model.agent, settings, packed))
        numpyro.factor("choices", each.sum())

    return hierarchical


@dataclass(frozen=True, eq=False)
class Posterior:
    """A NUTS fit with its draws: the `GroupFit` (what is stored and compared) and every chain.

    `mu`, `sigma` are (chains, draws, settings) and `x` (chains, draws, participants,
    settings), all in the transformed space; `log_lik` is (chains, draws, participants), each
    draw's log-likelihood of each participant's choices (what PSIS-LOO reads).
    """

    group: GroupFit
    model: FitModel
    choices: tuple[Choices, ...]
    shapes: tuple[TaskShape, ...]
    mu: np.ndarray
    sigma: np.ndarray
    x: np.ndarray
    log_lik: np.ndarray
    divergent: np.ndarray  # (chains, draws): whether each transition diverged

    @property
    def chains(self) -> int:
        return int(self.mu.shape[0])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.model.free)

    def settings(self) -> np.ndarray:
        """Every draw of every participant's settings in their units: (chains, draws, participants, settings)."""
        return to_natural(self.model, self.x.reshape(-1, len(self.names))).reshape(self.x.shape)


def _check_options(samples: int, warmup: int, chains: int, chain_method: str, parameterisation: str) -> None:
    for name, value, least in (("samples", samples, 10), ("warmup", warmup, 10), ("chains", chains, 1)):
        most = 64 if name == "chains" else 100_000
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise BehaviourError(f"{name}: expected a whole number from {least} to {most}, got {value!r}")
    if chain_method not in CHAIN_METHODS:
        raise BehaviourError(f"chain_method: expected one of {', '.join(CHAIN_METHODS)}, got {chain_method!r}")
    if parameterisation not in PARAMETERISATIONS:
        raise BehaviourError(f"parameterisation: expected one of {', '.join(PARAMETERISATIONS)}, "
                             f"got {parameterisation!r}")


def chosen_chain_method(chains: int, chain_method: str = "auto") -> str:
    """How the chains run: "auto" is parallel (one JAX CPU device per chain, `pmap`) when JAX
    has a device for each chain, else vectorised (one `vmap` over the chains on one device)."""
    import jax

    if chain_method != "auto":
        return chain_method
    if chains == 1:
        return "sequential"
    return "parallel" if jax.local_device_count() >= chains else "vectorized"


def sample_group(
    model: FitModel,
    choices: Sequence[Choices],
    samples: int = 1000,
    warmup: int = 1000,
    seed: int = 0,
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
    chains: int = 4,
    chain_method: str = "auto",
    parameterisation: str = "non-centred",
) -> Posterior:
    """Sample the hierarchical posterior of `model` by NUTS on several chains, with every draw kept.

    Parameters
    ----------
    model
        A model of the q or hybrid agent (`MODELS["q"]`, `["model-based"]`, `["hybrid"]`, or `FitModel.of`).
    choices
        One sequence of choices per participant (two or more), all of one task.
    samples, warmup
        Draws kept per chain, and adaptation steps before them.
    seed
        One seed for every chain: chain c starts from `jax.random.split(PRNGKey(seed), chains)[c]`
        (its initial point drawn at random within radius 2 of the origin of the unconstrained
        space, its step size adapted on its own); the same seed gives the same draws.
    shapes
        The task's shape per participant (default: read from the task).
    store
        Where the task is read (default: the default store).
    chains
        Markov chains, 1 to 64 (default 4: R-hat compares them).
    chain_method
        "parallel" (a JAX CPU device per chain), "vectorized" (the chains as one batch on one
        device), "sequential", or "auto" (default): parallel when JAX has a device for each
        chain (`require_numpyro` asks for as many as the machine has cores, at least 4, before
        JAX starts), else vectorised. The same draws any way.
    parameterisation
        "non-centred" (default: participant x = mu + sigma z, z ~ N(0, 1) sampled) or
        "centred" (x ~ N(mu, sigma^2) sampled).

    Returns
    -------
    Posterior
        The `GroupFit` (as `fit_group_nuts` returns it) with every chain's draws. A fit that
        fails a check (`graphtasks.fitting.diagnostics.problems`) or whose LOO has Pareto k
        above the threshold warns (`ConvergenceWarning`) in one line.

    Examples
    --------
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.bayes import sample_group
    >>> group = [simulate("rewardgym/two-step", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, trials=40, seed=s)
    ...          for s, lr in enumerate((0.3, 0.6))]
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # 2 x 50 draws: too few for the ESS check
    ...     posterior = sample_group(MODELS["q"], group, samples=50, warmup=50, seed=0, chains=2)
    >>> posterior.chains, posterior.x.shape, posterior.group.diagnostics["chains"]
    (2, (2, 50, 2, 2), 2)
    """
    numpyro = require_numpyro()
    import jax
    from numpyro.infer import MCMC, NUTS

    from .diagnostics import ConvergenceWarning, chain_diagnostics, psis_loo, require_arviz

    check_model(model)
    require_arviz()
    if len(choices) < 2:
        raise BehaviourError(f"a hierarchical fit needs two or more participants, got {len(choices)}")
    _check_options(samples, warmup, chains, chain_method, parameterisation)
    shapes = list(shapes) if shapes is not None else [task_shape(c.task_id, store) for c in choices]
    if len({s.task_id for s in shapes}) != 1:
        raise BehaviourError(f"--method nuts: the runs are of several tasks ({sorted({s.task_id for s in shapes})})")
    for c, s in zip(choices, shapes):
        s.check(c)
    packed = Packed(choices, shapes[0])
    method = chosen_chain_method(chains, chain_method)
    started = time.perf_counter()
    kernel = NUTS(_model_function(model, packed, parameterisation == "centred"), target_accept_prob=0.9)
    mcmc = MCMC(kernel, num_warmup=warmup, num_samples=samples, num_chains=chains, chain_method=method,
                progress_bar=False)
    keys = jax.random.split(jax.random.PRNGKey(seed), chains) if chains > 1 else jax.random.PRNGKey(seed)
    mcmc.run(keys, extra_fields=("diverging",))
    drawn = {k: np.asarray(jax.block_until_ready(v)) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    seconds = time.perf_counter() - started  # JAX computes asynchronously: timed once the draws are here
    divergent = np.asarray(mcmc.get_extra_fields(group_by_chain=True)["diverging"]).astype(bool)
    names = model.free
    mu, sigma, x, log_lik = drawn["mu"], drawn["sigma"], drawn["x"], drawn["log_lik"]
    health = chain_diagnostics({"mu": mu, "sigma": sigma, "x": x}, names, divergent.sum(axis=1).tolist())
    loo = psis_loo(log_lik)
    rows = health["settings"]
    diagnostics = {
        "chains": chains, "chain_method": method, "parameterisation": parameterisation, "samples": samples,
        "warmup": warmup, "seconds": seconds, "divergences": health["divergences"],
        "divergences_per_chain": health["divergences_per_chain"],
        "r_hat": {n: rows[n]["mu"]["r_hat"] for n in names},
        "r_hat_sd": {n: rows[n]["sigma"]["r_hat"] for n in names},
        "ess": {n: rows[n]["mu"]["ess_bulk"] for n in names},
        "ess_tail": {n: rows[n]["mu"]["ess_tail"] for n in names},
        "ess_sd": {n: rows[n]["sigma"]["ess_bulk"] for n in names},
        "settings": rows, "max_r_hat": health["max_r_hat"], "min_ess": health["min_ess"],
        "problems": health["problems"], "loo": loo, "numpyro": numpyro.__version__, "arviz": health["arviz"],
    }
    said = list(health["problems"])
    if loo["bad"]:
        said.append(f"PSIS-LOO: Pareto k above {loo['good_k']:.2f} for {loo['bad']} of {len(choices)} participants "
                    "(their LOO terms are unreliable)")
    if said:
        warnings.warn(f"NUTS fit of {model.name}: {'; '.join(said)}", ConvergenceWarning, stacklevel=2)
    group = _group_fit(model, choices, shapes, mu, sigma, x, seed, samples, diagnostics)
    return Posterior(group, model, tuple(choices), tuple(shapes), mu, sigma, x, log_lik, divergent)


def _group_fit(model: FitModel, choices: Sequence[Choices], shapes: Sequence[TaskShape], mu: np.ndarray,
               sigma: np.ndarray, x: np.ndarray, seed: int, samples: int, diagnostics: dict[str, Any]) -> GroupFit:
    """The posterior means as a `GroupFit`, pooling the chains."""
    names = model.free
    d = len(names)
    mu, sigma, x = mu.reshape(-1, d), sigma.reshape(-1, d), x.reshape(-1, *x.shape[2:])
    mean = mu.mean(axis=0)
    variance = (sigma**2).mean(axis=0)
    natural = to_natural(model, x.reshape(-1, d)).reshape(x.shape)
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
        tuple(fits), samples, not diagnostics["problems"], diagnostics["chains"], seed, (), "nuts", diagnostics,
    )


def fit_group_nuts(
    model: FitModel,
    choices: Sequence[Choices],
    samples: int = 1000,
    warmup: int = 1000,
    seed: int = 0,
    shapes: Sequence[TaskShape] | None = None,
    store: Any = None,
    chains: int = 4,
    chain_method: str = "auto",
    parameterisation: str = "non-centred",
) -> GroupFit:
    """Sample the hierarchical posterior of `model` over the participants' `choices` by NUTS.

    Parameters
    ----------
    model
        A model of the q or hybrid agent (`MODELS["q"]`, `["model-based"]`, `["hybrid"]`, or `FitModel.of`).
    choices
        One sequence of choices per participant (two or more), all of one task.
    samples, warmup
        Draws kept per chain, and adaptation steps before them.
    seed
        Seed of the sampler (JAX's PRNG key, split into one per chain): the same draws for the same seed.
    shapes
        The task's shape per participant (default: read from the task).
    store
        Where the task is read.
    chains, chain_method, parameterisation
        As `sample_group`: 4 chains by default, run in parallel where JAX has a device per
        chain, non-centred group priors.

    Returns
    -------
    GroupFit
        method "nuts": the group distribution's posterior mean of mu and sigma^2 (as `mean` and
        `variance`), a `FitResult` per participant (posterior means, posterior standard
        deviations as `stderr`), and `diagnostics`: rank-normalised split R-hat and bulk and
        tail ESS per setting of the group mean, the group sd and the worst participant
        (`settings`; `r_hat`, `ess`, `ess_tail` of the group means), divergences (per chain),
        the checks failed (`problems`), PSIS-LOO (`loo`), seconds. `converged` is true when no
        check fails (R-hat at most 1.01, every ESS at least 400, no divergence); `starts` holds
        the number of chains.

    Examples
    --------
    >>> import warnings
    >>> from graphtasks.fitting import MODELS, simulate
    >>> from graphtasks.fitting.bayes import fit_group_nuts
    >>> group = [simulate("rewardgym/two-step", "q", {"lr": lr, "beta": 5.0, "gamma": 1.0}, trials=40, seed=s)
    ...          for s, lr in enumerate((0.3, 0.6))]
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     result = fit_group_nuts(MODELS["q"], group, samples=100, warmup=100, seed=0, chains=2)
    >>> result.method, result.participants, sorted(result.diagnostics["r_hat"]), result.diagnostics["chains"]
    ('nuts', 2, ['beta', 'lr'], 2)
    >>> "ESS below 400" in str(said[-1].message)  # 2 x 100 draws cannot give 400 effective ones
    True
    """
    return sample_group(model, choices, samples, warmup, seed, shapes, store, chains, chain_method,
                        parameterisation).group


def sample_runs(store: Any, experiment: str, runs: Sequence[int], model: FitModel, samples: int = 1000,
                warmup: int = 1000, seed: int = 0, chains: int = 4, parameterisation: str = "non-centred",
                phases: Sequence[str] | None = None) -> Posterior:
    """`sample_group` over recorded runs of an experiment (their trials of `phases` only, if given).

    Parameters
    ----------
    store
        An open store.
    experiment
        The experiment's name.
    runs
        The run indices (two or more).
    model
        A model of the q or hybrid agent.
    samples, warmup, seed, chains, parameterisation
        As `sample_group`.
    phases
        Only the trials of these phases (None: every phase).

    Returns
    -------
    Posterior
        The fit with every chain's draws; `graphtasks.fitting.records.record_posterior` stores it.
    """
    require_numpyro()  # before the runs are read
    check_model(model)
    choices = load_runs(store, experiment, runs, phases)
    shapes = [task_shape(c.task_id, store) for c in choices]
    return sample_group(model, choices, samples, warmup, seed, shapes=shapes, chains=chains,
                        parameterisation=parameterisation)
