"""Small recurrent networks of choices: a GRU of 2 to 16 units, trained with JAX on the same
`Choices` as the reinforcement-learning models and scored by the same held-out likelihood
(`graphtasks.fitting.cv`), as tiny-RNN studies compare them (Ji-An, Benna and Mattar, Nature 2025).

At each choice the network reads the previous step's action (one-hot) and reward and the
current state (one-hot); its hidden state carries everything else. Its output is a softmax over
the actions the state offers (the others get probability 0). The hidden state starts at zero
at the start of each session and runs through every trial, held out or not, as the agents
replay every trial: only the choices the loss counts differ.

Two forms:

- `gru-N`: one network per participant, trained on that participant's kept choices.
- `gru-N-shared`: one network for everyone (shared weights, no per-participant embedding): it
  predicts a participant it never saw (participant folds) as it predicts the others, which
  an embedding could not (a new participant has none), and it is the population model to set
  beside the group prior's marginal likelihood.

Training is full-batch Adam (written here, a few lines; optax would add a dependency for one
optimiser) on the mean negative log-likelihood of the kept choices plus `l2` times the sum of
squared weights, for a fixed number of steps from seeded initial weights (uniform in
+-1/sqrt(N), as PyTorch's GRU): no early stopping, so the steps and `l2` are the
regularisation. A network per participant sees a hundred or two choices and overfits soon
(100 steps, l2 0.03 by default); a shared one sees everyone's (300 steps, l2 0.001). The
defaults were picked by trying a few values on simulated two-step participants (those of
docs/fitting.md), so they flatter the networks there a little. Every fold's networks (and
every participant's) train at once, in one compiled loop: the folds are independent in the
loss, and Adam's update is elementwise, so each trains as it would alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .behaviour import BehaviourError, Choices
from .shape import TaskShape

MIN_UNITS, MAX_UNITS = 2, 16
NAME = re.compile(r"^gru-(\d+)(-shared)?$")


@dataclass(frozen=True)
class GRUModel:
    """A GRU of `units` units, per participant or shared by everyone (`shared`).

    Parameters
    ----------
    units : int
        Hidden units, 2 to 16.
    shared : bool
        One network for every participant (no per-participant embedding), else one each.
    steps : int, optional
        Adam steps (full batch); default 100 per participant, 300 shared.
    learning_rate : float
        Adam's step size.
    l2 : float, optional
        Weight of the sum of squared weights in the loss; default 0.03 per participant, 0.001
        shared.

    Examples
    --------
    >>> from graphtasks.fitting.neural import GRUModel, parse_gru
    >>> parse_gru("gru-4-shared") == GRUModel(4, shared=True), GRUModel(4).name
    (True, 'gru-4')
    """

    units: int
    shared: bool = False
    steps: int | None = None  # None: 100 per participant, 300 shared
    learning_rate: float = 0.03
    l2: float | None = None  # None: 0.03 per participant, 0.001 shared

    def __post_init__(self) -> None:
        if self.steps is None:
            object.__setattr__(self, "steps", 300 if self.shared else 100)
        if self.l2 is None:
            object.__setattr__(self, "l2", 1e-3 if self.shared else 0.03)
        if isinstance(self.units, bool) or not isinstance(self.units, int) or not MIN_UNITS <= self.units <= MAX_UNITS:
            raise BehaviourError(f"gru: units: expected a whole number from {MIN_UNITS} to {MAX_UNITS}, "
                                 f"got {self.units!r}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 1:
            raise BehaviourError(f"gru: steps: expected a positive whole number, got {self.steps!r}")
        if not (0 < self.learning_rate < 10) or not (0 <= float(self.l2 or 0.0) < 1e3):
            raise BehaviourError(f"gru: learning_rate {self.learning_rate!r} or l2 {self.l2!r} out of range")

    @property
    def name(self) -> str:
        return f"gru-{self.units}" + ("-shared" if self.shared else "")

    def settings(self) -> dict[str, Any]:
        return {"units": self.units, "shared": self.shared, "steps": self.steps,
                "learning_rate": self.learning_rate, "l2": self.l2, "optimiser": "adam, full batch",
                "inputs": "previous action one-hot, previous reward, state one-hot"}


def parse_gru(name: str) -> GRUModel | None:
    """`gru-N` or `gru-N-shared` as a model; None for any other name (a bad N is refused)."""
    found = NAME.match(name)
    if found is None:
        return None
    units = int(found.group(1))
    if not MIN_UNITS <= units <= MAX_UNITS:
        raise BehaviourError(f"--models: {name}: a GRU has {MIN_UNITS} to {MAX_UNITS} units")
    return GRUModel(units, shared=found.group(2) is not None)


def require_jax(what: str) -> Any:
    """JAX, or BehaviourError naming the extra that installs it."""
    try:
        import jax
    except ImportError:
        raise BehaviourError(f"{what} needs JAX: pip install 'graphtasks[bayes]'") from None
    return jax


# -- inputs --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Batch:
    """Every session as padded arrays (sessions x steps): inputs, offered actions, chosen
    actions, which steps are real, and each session's participant."""

    inputs: np.ndarray  # (Q, T, A + 1 + S)
    offered: np.ndarray  # (Q, T, A) bool
    actions: np.ndarray  # (Q, T)
    valid: np.ndarray  # (Q, T) bool
    owner: np.ndarray  # (Q,)
    first: np.ndarray  # (P,) each participant's first session's row


def inputs_of(choices: Choices, shape: TaskShape) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, offered) of one session: per step the previous action one-hot and reward, the
    state one-hot; and the actions the state offers.

    Examples
    --------
    >>> from graphtasks.fitting import simulate, task_shape
    >>> from graphtasks.fitting.neural import inputs_of
    >>> choices = simulate("rewardgym/two-step", "q", {"lr": 0.5, "beta": 5.0}, trials=3, seed=1)
    >>> x, offered = inputs_of(choices, task_shape("rewardgym/two-step"))
    >>> x.shape, offered.shape
    ((6, 10), (6, 2))
    """
    n, a_count, s_count = len(choices), shape.n_actions, shape.n_states
    x = np.zeros((n, a_count + 1 + s_count), dtype=np.float32)
    x[np.arange(1, n), choices.actions[:-1]] = 1.0
    x[1:, a_count] = choices.rewards[:-1]
    x[np.arange(n), a_count + 1 + choices.states] = 1.0
    mask = np.zeros((s_count, a_count), dtype=bool)
    for s, acts in enumerate(shape.available):
        mask[s, list(acts)] = True
    return x, mask[choices.states]


def make_batch(people: Sequence[Sequence[Choices]], shapes: Sequence[Sequence[TaskShape]]) -> Batch:
    """The sessions of every participant as one padded batch (one task shape for all)."""
    sizes = {(s.n_states, s.n_actions) for own in shapes for s in own}
    if len(sizes) > 1:
        raise BehaviourError("gru: every participant's task must have the same numbers of states and actions "
                             f"(got {', '.join(f'{s} states x {a} actions' for s, a in sorted(sizes))})")
    rows = [(p, c, shape) for p, (own, own_shapes) in enumerate(zip(people, shapes))
            for c, shape in zip(own, own_shapes)]
    steps = max(len(c) for _, c, _ in rows)
    s_count, a_count = next(iter(sizes))
    inputs = np.zeros((len(rows), steps, a_count + 1 + s_count), dtype=np.float32)
    offered = np.ones((len(rows), steps, a_count), dtype=bool)
    actions = np.zeros((len(rows), steps), dtype=np.int32)
    valid = np.zeros((len(rows), steps), dtype=bool)
    for q, (_, c, shape) in enumerate(rows):
        x, mask = inputs_of(c, shape)
        inputs[q, :len(c)], offered[q, :len(c)], actions[q, :len(c)], valid[q, :len(c)] = x, mask, c.actions, True
    owner = np.array([p for p, _, _ in rows], dtype=np.int32)
    first = np.array([int(np.flatnonzero(owner == p)[0]) for p in range(len(people))], dtype=np.int32)
    return Batch(inputs, offered, actions, valid, owner, first)


def fold_masks(batch: Batch, folds: Any) -> tuple[np.ndarray, np.ndarray]:
    """(kept, held): (F, Q, T) bool, the choices each fold trains on and holds out."""
    held = np.zeros((folds.folds, *batch.valid.shape), dtype=bool)
    for p, pieces in enumerate(folds.pieces):
        rows = batch.first[p] + np.arange(int(np.sum(batch.owner == p)))
        for session, first, end, fold in pieces:
            held[fold, rows[session], first:end] = True
    kept = batch.valid[None] & ~held
    return kept, held


# -- the network ---------------------------------------------------------------------------------
def init_params(key: Any, units: int, inputs: int, actions: int) -> dict[str, Any]:
    """Initial weights, uniform in +-1/sqrt(units)."""
    import jax
    import jax.numpy as jnp

    bound = 1.0 / np.sqrt(units)
    keys = jax.random.split(key, 6)
    shapes = {"wx": (inputs, 3 * units), "wh": (units, 3 * units), "b": (3 * units,), "bhn": (units,),
              "wo": (units, actions), "bo": (actions,)}
    return {name: jax.random.uniform(k, size, jnp.float32, -bound, bound)
            for k, (name, size) in zip(keys, shapes.items())}


def sequence_log_probs(params: dict[str, Any], inputs: Any, offered: Any, actions: Any) -> Any:
    """log P(chosen action) at every step of one session (T,), the hidden state from zero. The
    input projections and the readout are computed for all steps at once; only the recurrence
    runs step by step."""
    import jax
    import jax.numpy as jnp

    units = params["wh"].shape[0]
    projected = inputs @ params["wx"] + params["b"]  # (T, 3 units)

    def step(h: Any, gx: Any) -> tuple[Any, Any]:
        gh = h @ params["wh"]
        r = jax.nn.sigmoid(gx[:units] + gh[:units])
        z = jax.nn.sigmoid(gx[units:2 * units] + gh[units:2 * units])
        n = jnp.tanh(gx[2 * units:] + r * (gh[2 * units:] + params["bhn"]))
        h = (1.0 - z) * n + z * h
        return h, h

    _, hidden = jax.lax.scan(step, jnp.zeros(units, dtype=jnp.float32), projected)
    logits = jnp.where(offered, hidden @ params["wo"] + params["bo"], -1e30)
    return jnp.take_along_axis(jax.nn.log_softmax(logits), actions[:, None], axis=1)[:, 0]


def _seed_key(seed: int) -> Any:
    import jax

    return jax.random.PRNGKey(int(np.random.SeedSequence(int(seed)).generate_state(1)[0]))


def train_and_score(model: GRUModel, batch: Batch, kept: np.ndarray, held: np.ndarray, seed: int
                    ) -> tuple[np.ndarray, dict[str, Any]]:
    """Train one network per fold (and per participant unless `model.shared`) on `kept`;
    return the [participant, fold] held-out log-likelihoods of `held`, and the trained weights.
    The compiled training loop is kept for the next call with the same sizes and settings."""
    jax = require_jax(f"{model.name} (a recurrent model)")
    import jax.numpy as jnp

    count = int(batch.owner.max()) + 1
    folds = kept.shape[0]
    dims = (batch.inputs.shape[2], batch.offered.shape[2])
    keys = jax.random.split(_seed_key(seed), folds * (1 if model.shared else count))
    one = [init_params(k, model.units, *dims) for k in keys]
    params = {k: jnp.stack([p[k] for p in one]) for k in one[0]}
    if not model.shared:
        params = {k: v.reshape(folds, count, *v.shape[1:]) for k, v in params.items()}
    trained, scored = _trainer()(
        params, jnp.asarray(batch.inputs), jnp.asarray(batch.offered), jnp.asarray(batch.actions),
        jnp.asarray(batch.owner), jnp.asarray(kept, dtype=jnp.float32), jnp.asarray(held, dtype=jnp.float32),
        shared=model.shared, count=count, steps=model.steps, rate=model.learning_rate, l2=model.l2)
    return np.asarray(scored, dtype=float).T, {k: np.asarray(v) for k, v in trained.items()}


_TRAINER: Any = None


def _trainer() -> Any:
    """The compiled training loop (made once; JAX keeps a compilation per sizes and settings)."""
    global _TRAINER
    if _TRAINER is not None:
        return _TRAINER
    import functools

    import jax
    import jax.numpy as jnp

    every = jax.vmap(sequence_log_probs, in_axes=(0, 0, 0, 0))
    together = jax.vmap(sequence_log_probs, in_axes=(None, 0, 0, 0))

    @functools.partial(jax.jit, static_argnames=("shared", "count", "steps", "rate", "l2"))
    def train(params: dict[str, Any], inputs: Any, offered: Any, actions: Any, owner: Any, kept: Any, held: Any, *,
              shared: bool, count: int, steps: int, rate: float, l2: float) -> tuple[dict[str, Any], Any]:
        def log_probs(fold_params: dict[str, Any]) -> Any:  # (Q, T) for one fold
            if shared:
                return together(fold_params, inputs, offered, actions)
            return every({k: v[owner] for k, v in fold_params.items()}, inputs, offered, actions)

        def per_participant(values: Any) -> Any:  # (Q,) -> (P,)
            return jax.ops.segment_sum(values, owner, num_segments=count)

        def fold_loss(fold_params: dict[str, Any], mask: Any) -> Any:
            nll = -(log_probs(fold_params) * mask).sum(axis=1)
            squares = sum((fold_params[k] ** 2).reshape((-1,) if shared else (count, -1)).sum(axis=-1)
                          for k in ("wx", "wh", "wo"))
            if shared:
                return nll.sum() / jnp.maximum(mask.sum(), 1.0) + l2 * squares
            counts = per_participant(mask.sum(axis=1))
            return (per_participant(nll) / jnp.maximum(counts, 1.0) + l2 * squares).sum()

        gradient = jax.grad(lambda p: jax.vmap(fold_loss)(p, kept).sum())
        b1, b2, eps = 0.9, 0.999, 1e-8

        def adam(i: Any, state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
            p, m, v = state
            g = gradient(p)
            m = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
            v = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
            t = (i + 1).astype(jnp.float32)
            scale = rate * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            p = jax.tree_util.tree_map(lambda p_, m_, v_: p_ - scale * m_ / (jnp.sqrt(v_) + eps), p, m, v)
            return p, m, v

        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        params, _, _ = jax.lax.fori_loop(0, steps, adam, (params, zeros, zeros))
        scored = jax.vmap(lambda fp, mask: per_participant((log_probs(fp) * mask).sum(axis=1)))(params, held)
        return params, scored

    _TRAINER = train
    return train


def gru_heldout(model: GRUModel, people: Sequence[Sequence[Choices]], shapes: Sequence[Sequence[TaskShape]],
                folds: Any, seed: int) -> np.ndarray:
    """[participant, fold] held-out log-likelihoods of `model` on `folds` (`graphtasks.fitting.cv`)."""
    require_jax(f"{model.name} (a recurrent model)")
    if folds.by == "participant" and not model.shared:
        raise BehaviourError(f"{model.name}: a network per participant cannot score a participant it never saw "
                             f"(--by participant); use gru-{model.units}-shared")
    batch = make_batch(people, shapes)
    kept, held = fold_masks(batch, folds)
    scored, _ = train_and_score(model, batch, kept, held, seed)
    return scored
