"""What an agent's likelihood forms for fitting are: the shapes its module writes them in, and
the registry row names them (`AgentInfo.vectorised`, `AgentInfo.jax`) beside its batched and
compiled forms.

The forms are the agent's rule written for fitting (`graphtasks.fitting`), which hands them
what they work on, so this layer imports nothing of fitting:

- a vectorised form, ``form(settings, plan) -> float | None``: the log-likelihood of a
  sequence of choices computed over all trials at once, or None where the settings select a
  rule it does not have. `plan` (`graphtasks.fitting.vectorised`'s plan of the choices) gives
  the trial's stages, value series, the delta-rule filter and the softmax's sum.
- a JAX form (`JaxForm`): the settings the JAX likelihood knows with its defaults, and the
  agent's part of the one `jax.lax.scan` over choices (`graphtasks.fitting.bayes.log_likelihoods`):
  the initial values, the values a choice is made on, and the step's learning. JAX is imported
  inside the functions, never with the agent's module.

Examples
--------
>>> from gym_bridge.agents import AGENT_INFO
>>> sorted(AGENT_INFO["q"].jax.settings)
['beta', 'gamma', 'lr', 'q_init']
>>> AGENT_INFO["sr"].vectorised is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# (settings, plan) -> log-likelihood, or None where these settings' rule is not the form's
VectorisedForm = Callable[[dict[str, Any], Any], "float | None"]


@dataclass(frozen=True)
class Carry:
    """What the JAX scan carries per participant between choices: Q (P x S x A), transition
    counts (P x S x A x S, the weak prior 1e-3), an eligibility trace (P x S x A), whether a
    choice of this trial was learnt from (`begun`, P) and the previous first choice (P x A)."""

    q: Any
    counts: Any
    trace: Any
    begun: Any
    previous: Any


@dataclass(frozen=True)
class Step:
    """One choice of every participant, as the JAX scan sees it (one-hot rows, P first):
    `s`, `a`, `n` the state, action and next state; `r` the reward; `do` whether it is learnt
    from; `pair` s x a (P x S x A); `row` Q of s (P x A); `future` the best Q of s' (0 where the
    trial ended); `current` Q of the pair."""

    s: Any
    a: Any
    r: Any
    n: Any
    do: Any
    pair: Any
    row: Any
    future: Any
    current: Any


@dataclass(frozen=True)
class JaxForm:
    """An agent's JAX likelihood: its settings with their defaults (`settings`), fixed settings
    it also takes at one value (`takes`: the rule it has, e.g. Q's ``optimism = 1``), whether a
    softmax is needed (`needs_beta`), and its part of the scan.

    `q_init(p)` is added to zeros to start Q; `values(p, s, row, carry)` gives the values a
    choice is made in state `s` (one-hot, P x S) whose Q is `row` (P x A); `learn(p, step,
    carry)` the carry after the choice. `p` maps each setting to a (P, 1) array."""

    settings: dict[str, float]
    q_init: Callable[[dict[str, Any]], Any]
    values: Callable[[dict[str, Any], Any, Any, Carry], Any]
    learn: Callable[[dict[str, Any], Step, Carry], Carry]
    takes: dict[str, Any] = field(default_factory=dict)
    needs_beta: bool = False
