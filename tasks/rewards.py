"""Reward kinds: typed specifications (stored as Reward nodes) and their runtime.

Each kind is one `RewardKind` in `REWARD_KINDS`: its own fields (a frozen `RewardParams`
dataclass, `RewardKind.params`: what its Reward nodes hold besides kind and values; a
`RewardSpec` is the kind, its values and an instance of it), how a data file writes it
(checked), its expected value, the single env's source (`source`: one draw at a time from a
`RandomStream`) and the vector env's batched draws (`batch`: one column per reward of the
kind, one row per copy), side by side. Adding a kind is its two classes registered with
`register_reward_kind`; the graph env, the graph vector env and the Reward node's schema
(`reward_properties`) find it there.

Every draw comes from the environment's seeded generator, so the same seed gives the same
outcomes on every store. A source keeps its state (drifting probability, pseudo-random
deck) across trials of one session; `reset(stream)` / `new_session(rng, copies)` starts a
new session (gym's `reset(seed=...)`).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import MISSING, dataclass, fields
from numbers import Real
from typing import Any, ClassVar, Mapping, Protocol, TypeVar

import numpy as np

from graphstore.errors import GraphtasksError
from graphstore.registry import Registry
from graphstore.schema import GROUP_PROPERTY, KINDS, SCHEMA, Property


class RewardSpecError(GraphtasksError, ValueError):
    """A reward specification is invalid; the message names the field."""


class RandomStream:
    """Uniform and normal draws from a numpy Generator, fetched in blocks for speed.

    Drawing blocks keeps the sequence a pure function of the generator's seed.
    """

    BLOCK = 1024

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._u: list[float] = []
        self._ui = 0
        self._n: list[float] = []
        self._ni = 0

    def uniform(self) -> float:
        i = self._ui
        if i >= len(self._u):
            self._u = self.rng.random(self.BLOCK).tolist()
            i = 0
        self._ui = i + 1
        return self._u[i]

    def normal(self) -> float:
        i = self._ni
        if i >= len(self._n):
            self._n = self.rng.standard_normal(self.BLOCK).tolist()
            i = 0
        self._ni = i + 1
        return self._n[i]

    def below(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return min(int(self.uniform() * n), n - 1)

    def shuffled(self, items: list[Any]) -> list[Any]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):  # Fisher-Yates on the stream
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


P = TypeVar("P", bound="RewardParams")


def param(store: str, doc: str, default: Any = MISSING) -> Any:
    """A field of a kind's `RewardParams`: `store` is its Reward node property's type ("float",
    "float[]", "int", "bool"), `doc` what it holds; no `default`: the field is required."""
    return dataclasses.field(default=default, metadata={"store": store, "doc": doc})


@dataclass(frozen=True)
class RewardParams:
    """A reward kind's own parameters, besides `values`: each kind declares a frozen dataclass of
    them (`RewardKind.params`), one `param` per field. A field without a default is required;
    a field defaulting to None may be left out of a Reward node. A field is stored on the node
    under its name (a tuple as a list), so the node's properties are the kind's fields.

    Examples
    --------
    >>> from tasks.rewards import DriftingParams
    >>> DriftingParams.build("drifting", {"borders": [0.25, 0.75], "sd": 0.025}).props()
    {'borders': [0.25, 0.75], 'sd': 0.025}
    >>> DriftingParams.build("drifting", {"sd": 0.025, "probs": [1.0]})
    Traceback (most recent call last):
    ...
    tasks.rewards.RewardSpecError: a drifting reward has no field 'probs' (its fields: borders, sd)
    """

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The kind's field names, in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def build(cls: type[P], kind: str, given: Mapping[str, Any]) -> P:
        """The parameters from their values by name (lists become tuples).

        Parameters
        ----------
        kind : str
            The kind's name, for the messages.
        given : Mapping
            Field values by name; a value of None counts as absent.

        Returns
        -------
        RewardParams
            An instance of `cls`.

        Raises
        ------
        RewardSpecError
            In one line naming the kind and the field: a field the kind does not have, or a
            required one missing.
        """
        names = cls.names()
        present = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if v is not None}
        for name in present:
            if name not in names:
                known = ", ".join(names) or "none"
                raise RewardSpecError(f"a {kind} reward has no field {name!r} (its fields: {known})")
        for f in fields(cls):
            if f.name not in present and f.default is MISSING:
                raise RewardSpecError(f"a {kind} reward needs {f.name!r}")
        return cls(**present)

    def props(self) -> dict[str, Any]:
        """The fields a Reward node stores: every field that is not None, a tuple as a list."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def of(cls: type[P], spec: RewardSpec) -> P:
        """`spec.params` as this kind's parameters (a spec of another kind is refused)."""
        if not isinstance(spec.params, cls):
            given = type(spec.params).__name__
            raise RewardSpecError(f"a {spec.kind} reward's parameters are {given}, not {cls.__name__}")
        return spec.params


@dataclass(frozen=True)
class NoParams(RewardParams):
    """The parameters of a kind that has none besides `values` (fixed, pseudorandom)."""


@dataclass(frozen=True)
class RewardSpec:
    """What a Reward node holds: the kind, its values and the kind's own parameters.

    `params` is an instance of the kind's `RewardKind.params` (checked); `RewardSpec.of` makes
    one from fields by name, refusing a field the kind does not have.

    Examples
    --------
    >>> from tasks.rewards import RewardSpec
    >>> spec = RewardSpec.of("probabilistic", (1.0, 0.0), probs=(0.8, 0.2))
    >>> spec.node_props(), spec.expected
    ({'kind': 'probabilistic', 'values': [1.0, 0.0], 'probs': [0.8, 0.2]}, 0.8)
    >>> RewardSpec.of("fixed", (1.0,), sd=0.1)
    Traceback (most recent call last):
    ...
    tasks.rewards.RewardSpecError: a fixed reward has no field 'sd' (its fields: none)
    """

    kind: str
    values: tuple[float, ...]
    params: RewardParams = NoParams()

    def __post_init__(self) -> None:
        declared = reward_kind(self.kind).params
        if type(self.params) is not declared:
            raise RewardSpecError(
                f"a {self.kind} reward's parameters are {declared.__name__}, got {type(self.params).__name__}"
            )

    @classmethod
    def of(cls, kind: str, values: tuple[float, ...], **given: Any) -> RewardSpec:
        """A spec of `kind` from its fields by name (see `RewardParams.build`).

        Parameters
        ----------
        kind : str
            A registered reward kind.
        values : tuple of float
            The outcome values.
        **given
            The kind's fields; None counts as absent.

        Returns
        -------
        RewardSpec

        Raises
        ------
        RewardSpecError
            An unknown kind, a field the kind does not have, or a required field missing.
        """
        return cls(kind, tuple(values), reward_kind(kind).params.build(kind, given))

    def node_props(self) -> dict[str, Any]:
        """The Reward node's properties: kind, values and the kind's fields that are set."""
        return {"kind": self.kind, "values": list(self.values), **self.params.props()}

    @property
    def expected(self) -> float:
        """Expected value of one draw (drifting: at the middle of its borders)."""
        return reward_kind(self.kind).expected(self)


def finite_number(value: Any) -> bool:
    """A real number that is not a bool, NaN or infinite (JSON's NaN/Infinity, or 1e400 read as inf)."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _numbers(value: Any, field: str, where: str) -> tuple[float, ...]:
    if isinstance(value, Real) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise RewardSpecError(f"{where}: '{field}' must be a non-empty list of numbers, got {value!r}")
    for v in value:
        if not finite_number(v):
            raise RewardSpecError(f"{where}: '{field}' must hold finite numbers, got {v!r}")
    return tuple(float(v) for v in value)


def reward_spec(value: Any, where: str = "reward") -> RewardSpec:
    """A spec from a data-file value: a number (fixed) or {"kind": ..., ...}; validated."""
    if isinstance(value, Real) and not isinstance(value, bool):
        if not finite_number(value):
            raise RewardSpecError(f"{where}: expected a finite number, got {value!r}")
        return RewardSpec("fixed", (float(value),))
    if not isinstance(value, Mapping):
        raise RewardSpecError(f"{where}: expected a number or an object with 'kind', got {value!r}")
    name = value.get("kind", "fixed")
    kind = REWARD_KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise RewardSpecError(f"{where}: 'kind' must be one of {', '.join(REWARD_KINDS)}, got {name!r}")
    unknown = sorted(set(value) - {"kind", "values"} - set(kind.params.names()))
    if unknown:
        raise RewardSpecError(f"{where}: unknown field(s) {', '.join(unknown)}: a {name} reward has "
                              f"{', '.join(kind.params.names()) or 'no fields'} besides values")
    if "values" not in value:
        raise RewardSpecError(f"{where}: '{name}' reward needs 'values'")
    return kind.check(_numbers(value["values"], "values", where), value, where)


STORE_PROPERTIES = frozenset({"uid", "task", GROUP_PROPERTY})  # a stored node's bookkeeping, not the reward's


def spec_from_props(props: Mapping[str, Any]) -> RewardSpec:
    """A spec from a stored Reward node's properties (the store's own `uid`, `task` and
    `group` aside; a property of None is absent, as a store reads an unset column).

    Parameters
    ----------
    props : Mapping
        The node's properties, as `RewardSpec.node_props` wrote them.

    Returns
    -------
    RewardSpec

    Raises
    ------
    RewardSpecError
        An unknown kind, a property the kind does not have or a required one missing,
        naming the kind and the property.

    Examples
    --------
    >>> from tasks.rewards import spec_from_props
    >>> spec_from_props({"kind": "drifting", "values": [1.0, 0.0], "borders": [0.25, 0.75], "sd": 0.025}).params
    DriftingParams(borders=(0.25, 0.75), sd=0.025)
    """
    given = {k: v for k, v in props.items() if k not in ("kind", "values") and k not in STORE_PROPERTIES}
    return RewardSpec.of(props["kind"], tuple(props["values"]), **given)


class RewardSource(Protocol):
    """One reward's draws in one env."""

    def reset(self, stream: RandomStream) -> None: ...
    def draw(self, stream: RandomStream) -> float: ...


class BatchSource(Protocol):
    """The draws of every reward of one kind in N copies: slot k is the kind's k-th reward
    (in state order); per-copy state is kept per (copy, slot)."""

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None: ...
    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray: ...


class RewardKind(ABC):
    """One kind of reward, single and batched draws side by side.

    `params` is the kind's own `RewardParams` dataclass: the fields a task file and a Reward
    node give besides kind and values (the Reward node's schema declares every registered
    kind's fields, `reward_properties`). `constant` kinds pay their expected value without
    drawing. `stateful` kinds move a state on every draw, so a draw happens even when a
    condition fixes what is paid.
    """

    name: ClassVar[str]
    params: ClassVar[type[RewardParams]] = NoParams
    constant: ClassVar[bool] = False
    stateful: ClassVar[bool] = False

    @abstractmethod
    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        """The spec of a data-file value of this kind, or RewardSpecError naming `where`."""

    @abstractmethod
    def expected(self, spec: RewardSpec) -> float:
        """Expected value of one draw."""

    @abstractmethod
    def source(self, spec: RewardSpec) -> RewardSource:
        """The single env's source of one reward."""

    @abstractmethod
    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        """The vector env's draws of these rewards (the kind's slots, in order) in `n_envs` copies."""

    def sources(self, specs: list[RewardSpec]) -> list[RewardSource]:
        """The single env's sources of every reward of this kind in one task (in state order),
        made together: a kind whose rewards share a state (walks that all move when any of
        them pays) overrides this; by default each is its own `source`."""
        return [self.source(spec) for spec in specs]



class SharedStateKind(RewardKind):
    """A kind whose rewards in one task share a state (walks that all move when any pays, a
    reversal's better option, a game's arms): the single env's sources are made together around
    one `group_type(specs)`, reward k as `source_type(group, k)`; the vector env's draws are
    `batch_type(specs, n_envs)`."""

    group_type: ClassVar[Any]  # a class: (specs) -> the shared state
    source_type: ClassVar[Any]  # a class: (group, k) -> RewardSource
    batch_type: ClassVar[Any]  # a class: (specs, n_envs) -> BatchSource

    def source(self, spec: RewardSpec) -> RewardSource:
        return self.sources([spec])[0]

    def sources(self, specs: list[RewardSpec]) -> list[RewardSource]:
        group = self.group_type(specs)
        return [self.source_type(group, k) for k in range(len(specs))]

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return self.batch_type(specs, n_envs)


REWARD_KINDS: Registry[RewardKind] = Registry(
    "reward kind", error=RewardSpecError,
    message=lambda name, known: f"unknown reward kind {name!r}; known: {', '.join(known)}",
)


def register_reward_kind(kind: RewardKind, replace: bool = False) -> RewardKind:
    """Make `kind.name` usable in task files and Reward nodes.

    Parameters
    ----------
    kind : RewardKind
        The kind; its `params` dataclass declares its fields, which become Reward node
        properties (`reward_properties`: a field another kind also has must have its type).
    replace : bool, optional
        Replace a registered kind of the same name.

    Returns
    -------
    RewardKind
        `kind`.

    Examples
    --------
    >>> from tasks.rewards import REWARD_KINDS, register_reward_kind
    >>> register_reward_kind(REWARD_KINDS["fixed"])
    Traceback (most recent call last):
    ...
    ValueError: reward kind 'fixed' exists; pass replace=True to replace it
    """
    if kind.name in REWARD_KINDS and not replace:
        raise ValueError(f"reward kind {kind.name!r} exists; pass replace=True to replace it")
    stores = {name: store for other in REWARD_KINDS.values() if other.name != kind.name
              for name, store, _ in _declared(other)}
    for f in fields(kind.params):
        if f.metadata.get("store") not in KINDS:
            raise ValueError(f"reward kind {kind.name!r}: field {f.name!r} is not declared with param(store, doc) "
                             f"(store: one of {', '.join(KINDS)})")
    for name, store, _ in _declared(kind):
        if name in ("kind", "values") or name in STORE_PROPERTIES:
            raise ValueError(f"reward kind {kind.name!r}: field {name!r} is a Reward node property of every kind")
        if stores.get(name, store) != store:
            raise ValueError(f"reward kind {kind.name!r}: field {name!r} is stored as {store}, another kind's as "
                             f"{stores[name]}")
    REWARD_KINDS.register(kind.name, kind, replace=True)  # a duplicate was refused above, before the checks
    if SCHEMA.loaded:  # a kind registered after the schema was read: its fields join the Reward node's
        SCHEMA.add_node("Reward", reward_properties())
    return kind


def _declared(kind: RewardKind) -> list[tuple[str, str, str]]:
    """(name, store type, doc) of each of the kind's fields."""
    return [(f.name, f.metadata["store"], f.metadata["doc"]) for f in fields(kind.params)]


def reward_properties() -> list[Property]:
    """The Reward node's properties: kind, values and every registered kind's fields, each once
    (its doc names the kinds that have it). The graph tasks' schema fragment declares these.

    Returns
    -------
    list of Property

    Examples
    --------
    >>> from tasks.rewards import reward_properties
    >>> [p.name for p in reward_properties()][:4]
    ['kind', 'values', 'probs', 'borders']
    """
    out = [Property("kind", "str", True, f"a reward kind: {', '.join(REWARD_KINDS)}"),
           Property("values", "float[]", True, "outcome values")]
    stores: dict[str, str] = {}
    docs: dict[str, list[str]] = {}
    for kind in REWARD_KINDS.values():
        for name, store, doc in _declared(kind):
            stores.setdefault(name, store)
            docs.setdefault(name, []).append(f"{kind.name}: {doc}")
    return out + [Property(name, stores[name], False, "; ".join(docs[name])) for name in stores]


def reward_kind(name: str) -> RewardKind:
    return REWARD_KINDS.lookup(name)


def make_source(spec: RewardSpec) -> RewardSource:
    return reward_kind(spec.kind).source(spec)


def make_sources(specs: list[RewardSpec | None] | tuple[RewardSpec | None, ...]) -> list[RewardSource | None]:
    """One source per reward of a task (None where a state pays none), each kind's made
    together by `RewardKind.sources` as the vector env makes each kind's batch."""
    out: list[RewardSource | None] = [None] * len(specs)
    for name in dict.fromkeys(spec.kind for spec in specs if spec is not None):
        at = [i for i, spec in enumerate(specs) if spec is not None and spec.kind == name]
        for i, source in zip(at, reward_kind(name).sources([specs[i] for i in at])):  # type: ignore[misc]
            out[i] = source
    return out


class NoDraws:
    """The batch of a kind without per-copy state that never draws (constant kinds)."""

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        pass

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        raise AssertionError("a constant reward is paid from the fixed table, never drawn")


# -- fixed ------------------------------------------------------------------------------------------
class FixedSource:
    def __init__(self, spec: RewardSpec) -> None:
        self.value = spec.values[0]

    def reset(self, stream: RandomStream) -> None:
        pass

    def draw(self, stream: RandomStream) -> float:
        return self.value


class Fixed(RewardKind):
    """One value, always."""

    name = "fixed"
    constant = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        if len(values) != 1:
            raise RewardSpecError(f"{where}: a fixed reward has one value, got {len(values)}")
        return RewardSpec(self.name, values)

    def expected(self, spec: RewardSpec) -> float:
        return spec.values[0]

    def source(self, spec: RewardSpec) -> RewardSource:
        return FixedSource(spec)

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return NoDraws()


# -- probabilistic ----------------------------------------------------------------------------------
class ProbabilisticSource:
    def __init__(self, spec: RewardSpec) -> None:
        self.values = list(spec.values)
        self.cumulative = np.cumsum(ProbabilisticParams.of(spec).probs).tolist()
        self.cumulative[-1] = 1.0

    def reset(self, stream: RandomStream) -> None:
        pass

    def draw(self, stream: RandomStream) -> float:
        u = stream.uniform()
        for value, c in zip(self.values, self.cumulative):
            if u < c:
                return value
        return self.values[-1]


class ProbabilisticBatch:
    """Values and cumulative probabilities per slot, padded (a uniform never passes the padding)."""

    PAD = 2.0

    def __init__(self, specs: list[RewardSpec]) -> None:
        width = max((len(spec.values) for spec in specs), default=1)
        self.values = np.zeros((len(specs), width))
        self.cumulative = np.full((len(specs), width), self.PAD)
        for k, spec in enumerate(specs):
            cumulative = np.cumsum(ProbabilisticParams.of(spec).probs)
            cumulative[-1] = 1.0  # as the single source: the last value takes the rest
            self.values[k, : len(spec.values)] = spec.values
            self.cumulative[k, : len(spec.values)] = cumulative

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        pass

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        u = rng.random(slots.size)
        width = self.values.shape[1]
        flat = slots * width
        for k in range(width - 1):  # the last value takes every u past the other boundaries
            flat += u >= self.cumulative[:, k].take(slots)
        return self.values.reshape(-1).take(flat)


@dataclass(frozen=True)
class ProbabilisticParams(RewardParams):
    probs: tuple[float, ...] = param("float[]", "probabilities of `values`")


class Probabilistic(RewardKind):
    """values[i] with probability probs[i]."""

    name = "probabilistic"
    params = ProbabilisticParams

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        probs = _numbers(value.get("probs", ()), "probs", where) if "probs" in value else None
        if probs is None or len(probs) != len(values):
            raise RewardSpecError(f"{where}: 'probs' must give one probability per value")
        if any(p < 0 for p in probs) or abs(sum(probs) - 1) > 1e-6:
            raise RewardSpecError(f"{where}: 'probs' must be non-negative and sum to 1, got {list(probs)}")
        return RewardSpec(self.name, values, ProbabilisticParams(probs))

    def expected(self, spec: RewardSpec) -> float:
        return float(np.dot(spec.values, ProbabilisticParams.of(spec).probs))

    def source(self, spec: RewardSpec) -> RewardSource:
        return ProbabilisticSource(spec)

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return ProbabilisticBatch(specs)


# -- drifting ----------------------------------------------------------------------------------------
def reflect(p: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Fold values back into [low, high] by reflection at the borders (as many times as needed)."""
    width = high - low
    period = np.where(width > 0, 2 * width, 1.0)
    x = np.mod(p - low, period)
    x = np.where(x > width, period - x, x)
    return np.where(width > 0, low + x, low)


class DriftingSource:
    """Pays values[0] with probability p, else values[1]; p walks with N(0, sd), reflected into borders."""

    def __init__(self, spec: RewardSpec) -> None:
        self.high_value, self.low_value = spec.values
        params = DriftingParams.of(spec)
        self.low, self.high = params.borders
        self.sd = params.sd
        self.p = (self.low + self.high) / 2

    def reset(self, stream: RandomStream) -> None:
        self.p = self.low + (self.high - self.low) * stream.uniform()

    def draw(self, stream: RandomStream) -> float:
        value = self.high_value if stream.uniform() < self.p else self.low_value
        p = self.p + self.sd * stream.normal()
        low, high = self.low, self.high
        while p < low or p > high:  # reflect at the borders
            p = 2 * low - p if p < low else 2 * high - p
        self.p = p
        return value


class DriftingBatch:
    """`p[copy, slot]`: each copy's probability of the high value, walking between the borders."""

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        self.high_value = np.array([spec.values[0] for spec in specs])
        self.low_value = np.array([spec.values[1] for spec in specs])
        params = [DriftingParams.of(spec) for spec in specs]
        self.low = np.array([p.borders[0] for p in params])
        self.high = np.array([p.borders[1] for p in params])
        self.sd = np.array([p.sd for p in params], dtype=float)
        self.p = np.tile((self.low + self.high) / 2, (n_envs, 1))

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        """Each copy's probabilities start uniformly within their borders."""
        if self.low.size:
            u = rng.random((copies.size, self.low.size))
            self.p[copies] = self.low + (self.high - self.low) * u

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        p = self.p[copies, slots]
        u = rng.random(copies.size)
        out = np.where(u < p, self.high_value[slots], self.low_value[slots])
        p = p + self.sd[slots] * rng.standard_normal(copies.size)
        self.p[copies, slots] = reflect(p, self.low[slots], self.high[slots])
        return out


@dataclass(frozen=True)
class DriftingParams(RewardParams):
    borders: tuple[float, float] = param("float[]", "bounds of the drifting probability")
    sd: float = param("float", "step size of the drifting probability")


class Drifting(RewardKind):
    """values[0] with a probability that drifts (Gaussian steps of `sd`) within `borders`, else values[1]."""

    name = "drifting"
    params = DriftingParams
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        if len(values) != 2:
            raise RewardSpecError(f"{where}: a drifting reward has two values (drawn with p, 1 - p)")
        borders = _numbers(value.get("borders", (0.25, 0.75)), "borders", where)
        if len(borders) != 2 or not 0 <= borders[0] <= borders[1] <= 1:
            raise RewardSpecError(f"{where}: 'borders' must be [low, high] within [0, 1], got {list(borders)}")
        sd = value.get("sd", 0.025)
        if not finite_number(sd) or sd < 0:
            raise RewardSpecError(f"{where}: 'sd' must be a finite non-negative number, got {sd!r}")
        return RewardSpec(self.name, values, DriftingParams((borders[0], borders[1]), float(sd)))

    def expected(self, spec: RewardSpec) -> float:
        p = sum(DriftingParams.of(spec).borders) / 2
        return p * spec.values[0] + (1 - p) * spec.values[1]

    def source(self, spec: RewardSpec) -> RewardSource:
        return DriftingSource(spec)

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return DriftingBatch(specs, n_envs)


# -- pseudorandom ------------------------------------------------------------------------------------
class PseudoRandomSource:
    """Deals the deck in a shuffled order without replacement; reshuffles when empty."""

    def __init__(self, spec: RewardSpec) -> None:
        self.deck = list(spec.values)
        self.pending: list[float] = []

    def reset(self, stream: RandomStream) -> None:
        self.pending = stream.shuffled(self.deck)

    def draw(self, stream: RandomStream) -> float:
        if not self.pending:
            self.pending = stream.shuffled(self.deck)
        return self.pending.pop()


class DeckBatch:
    """`order[copy, slot]`: each copy's shuffled deck; `position[copy, slot]`: cards dealt from it."""

    PAD = 2.0  # sort key of padding cards: after every real card

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        size = max((len(spec.values) for spec in specs), default=1)
        self.size = np.array([len(spec.values) for spec in specs], dtype=np.int64)
        self.values = np.zeros((len(specs), size))
        for k, spec in enumerate(specs):
            self.values[k, : len(spec.values)] = spec.values
        self.order = np.tile(np.arange(size, dtype=np.int64), (n_envs, len(specs), 1))
        self.position = np.zeros((n_envs, len(specs)), dtype=np.int64)

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        n_decks = self.size.size
        if n_decks:
            self._shuffle(rng, np.repeat(copies, n_decks), np.tile(np.arange(n_decks), copies.size))

    def _shuffle(self, rng: np.random.Generator, copies: np.ndarray, decks: np.ndarray,
                 keys: np.ndarray | None = None) -> None:
        """New random order for each (copy, deck) pair: argsort of uniform keys, padding last."""
        width = self.order.shape[2]
        if keys is None:
            keys = rng.random((copies.size, width))
        keys[np.arange(width) >= self.size[decks][:, None]] = self.PAD
        self.order[copies, decks] = np.argsort(keys, axis=1)
        self.position[copies, decks] = 0

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        pos = self.position[copies, slots]
        n_decks, width = self.order.shape[1:]
        card = self.order.reshape(-1).take((copies * n_decks + slots) * width + pos)
        out = self.values.reshape(-1).take(slots * width + card)
        pos += 1
        self.position[copies, slots] = pos
        empty = pos >= self.size[slots]
        # every drawing copy draws the keys of a reshuffle, used where its deck ran out: a copy's
        # draws must not depend on other copies' decks (`rng` may be per-copy lane streams)
        keys = rng.random((copies.size, self.order.shape[2]))
        if empty.any():
            self._shuffle(rng, copies[empty], slots[empty], keys[empty])
        return out


class PseudoRandom(RewardKind):
    """The values as a deck, dealt in a shuffled order without replacement, reshuffled when empty."""

    name = "pseudorandom"
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        return RewardSpec(self.name, values)

    def expected(self, spec: RewardSpec) -> float:
        return float(np.mean(spec.values))

    def source(self, spec: RewardSpec) -> RewardSource:
        return PseudoRandomSource(spec)

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return DeckBatch(specs, n_envs)


# -- sequence ----------------------------------------------------------------------------------------
class SequenceSource:
    """Card i of the deck pays gains[i] + losses[i]; card i is the number of cards dealt so far
    in this session, modulo the deck's length (the sequence repeats)."""

    def __init__(self, spec: RewardSpec) -> None:
        losses = SequenceParams.of(spec).losses
        self.cards = [gain + loss for gain, loss in zip(spec.values, losses)]
        self.position = 0

    def reset(self, stream: RandomStream) -> None:
        self.position = 0

    def draw(self, stream: RandomStream) -> float:
        value = self.cards[self.position]
        self.position = (self.position + 1) % len(self.cards)
        return value


class SequenceBatch:
    """`position[copy, slot]`: the next card of each copy's deck; `cards[slot]`: net outcomes, padded."""

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        width = max((len(spec.values) for spec in specs), default=1)
        self.size = np.array([len(spec.values) for spec in specs], dtype=np.int64)
        self.cards = np.zeros((len(specs), width))
        for k, spec in enumerate(specs):
            self.cards[k, : len(spec.values)] = np.add(spec.values, SequenceParams.of(spec).losses)
        self.position = np.zeros((n_envs, len(specs)), dtype=np.int64)

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        self.position[copies] = 0

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        position = self.position[copies, slots]
        out = self.cards[slots, position]
        self.position[copies, slots] = (position + 1) % self.size[slots]
        return out


@dataclass(frozen=True)
class SequenceParams(RewardParams):
    losses: tuple[float, ...] = param("float[]", "the loss (<= 0) of each card beside its gain in `values`")


class Sequence(RewardKind):
    """A fixed sequence of cards, each with a gain (`values`) and a loss (`losses`, <= 0) that
    are paid together (gain + loss), dealt in order and repeated when the sequence ends: the
    Iowa gambling task's decks (Bechara et al. 1994)."""

    name = "sequence"
    params = SequenceParams
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        if "losses" not in value:
            raise RewardSpecError(f"{where}: a sequence reward needs 'losses', one per gain in 'values' (0: none)")
        losses = _numbers(value["losses"], "losses", where)
        if len(losses) != len(values):
            raise RewardSpecError(
                f"{where}: 'losses' must give one loss per gain in 'values' ({len(values)}), got {len(losses)}"
            )
        if any(loss > 0 for loss in losses):
            raise RewardSpecError(f"{where}: 'losses' are amounts lost, written <= 0, got {max(losses)!r}")
        return RewardSpec(self.name, values, SequenceParams(losses))

    def expected(self, spec: RewardSpec) -> float:
        return float(np.mean(np.add(spec.values, SequenceParams.of(spec).losses)))

    def source(self, spec: RewardSpec) -> RewardSource:
        return SequenceSource(spec)

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        return SequenceBatch(specs, n_envs)


# -- walk: Gaussian random walks -----------------------------------------------------------------------
@dataclass(frozen=True)
class WalkParams(RewardParams):
    decay: float = param("float", "the share of its mean a walk keeps per step")
    center: float = param("float", "the mean it decays towards")
    sd: float = param("float", "sd of a step of the mean")
    noise: float = param("float", "sd of a payoff around the mean")
    borders: tuple[float, float] | None = param("float[]", "bounds of a payoff", None)
    rounded: bool | None = param("bool", "payoffs rounded to whole numbers", None)


@dataclass(frozen=True)
class WalkSettings:
    """The walks of one task's rewards of kind walk, one entry per reward, as arrays."""

    start: np.ndarray
    decay: np.ndarray
    center: np.ndarray
    sd: np.ndarray
    noise: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rounded: np.ndarray

    @classmethod
    def of(cls, specs: list[RewardSpec]) -> WalkSettings:
        params = [WalkParams.of(spec) for spec in specs]
        borders = [p.borders or (-math.inf, math.inf) for p in params]
        return cls(
            np.array([spec.values[0] for spec in specs]), np.array([p.decay for p in params], dtype=float),
            np.array([p.center for p in params], dtype=float), np.array([p.sd for p in params], dtype=float),
            np.array([p.noise for p in params], dtype=float), np.array([b[0] for b in borders]),
            np.array([b[1] for b in borders]), np.array([bool(p.rounded) for p in params]),
        )

    def payoff(self, mean: np.ndarray, normal: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """A payoff around each mean: N(mean, noise), rounded where asked, within the borders."""
        value = mean + self.noise[slots] * normal
        value = np.where(self.rounded[slots], np.round(value), value)
        return np.clip(value, self.low[slots], self.high[slots])

    def step(self, means: np.ndarray, normal: np.ndarray) -> np.ndarray:
        """Every walk one step on: decay towards the center plus N(0, sd)."""
        return self.decay * means + (1 - self.decay) * self.center + self.sd * normal


class WalkGroup:
    """The means of every walk of one task in one env: each pays from its own mean, and
    whenever any pays, all take one step (once per trial in a bandit)."""

    def __init__(self, specs: list[RewardSpec]) -> None:
        self.settings = WalkSettings.of(specs)
        self.means = self.settings.start.copy()

    def pay(self, k: int, stream: RandomStream) -> float:
        slot = np.array([k])
        value = float(self.settings.payoff(self.means[slot], np.array([stream.normal()]), slot)[0])
        self.means = self.settings.step(self.means, np.array([stream.normal() for _ in range(self.means.size)]))
        return value


class WalkSource:
    """Walk k of a `WalkGroup`."""

    def __init__(self, group: WalkGroup, k: int) -> None:
        self.group, self.k = group, k

    def reset(self, stream: RandomStream) -> None:
        self.group.means[self.k] = self.group.settings.start[self.k]

    def draw(self, stream: RandomStream) -> float:
        return self.group.pay(self.k, stream)


class WalkBatch:
    """`means[copy, slot]`: each copy's walks; a copy's walks all step when one of them pays."""

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        self.settings = WalkSettings.of(specs)
        self.means = np.tile(self.settings.start, (n_envs, 1))

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        self.means[copies] = self.settings.start

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        out = self.settings.payoff(self.means[copies, slots], rng.standard_normal(copies.size), slots)
        self.means[copies] = self.settings.step(self.means[copies], rng.standard_normal(self.means[copies].shape))
        return out


class Walk(SharedStateKind):
    """A payoff drawn around a mean that follows a decaying Gaussian random walk (Daw et al. 2006's
    restless bandit): pays N(mean, `noise`) (rounded if `rounded`, clipped to `borders`), then
    every walk of the task moves: mean <- decay * mean + (1 - decay) * center + N(0, sd).
    `values` = [the mean a session starts from]."""

    name = "walk"
    group_type, source_type, batch_type = WalkGroup, WalkSource, WalkBatch
    params = WalkParams
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        if len(values) != 1:
            raise RewardSpecError(f"{where}: a walk reward has one value (the mean it starts from), got {len(values)}")
        settings: dict[str, float] = {}
        for field, default in (("decay", 1.0), ("center", 0.0), ("sd", 1.0), ("noise", 0.0)):
            number = value.get(field, default)
            if not finite_number(number):
                raise RewardSpecError(f"{where}: '{field}' must be a finite number, got {number!r}")
            settings[field] = float(number)
        if not 0 <= settings["decay"] <= 1:
            raise RewardSpecError(f"{where}: 'decay' must be within [0, 1], got {settings['decay']!r}")
        for field in ("sd", "noise"):
            if settings[field] < 0:
                raise RewardSpecError(f"{where}: '{field}' must be >= 0, got {settings[field]!r}")
        borders = None
        if "borders" in value:
            given = _numbers(value["borders"], "borders", where)
            if len(given) != 2 or given[0] > given[1]:
                raise RewardSpecError(f"{where}: 'borders' must be [low, high] with low <= high, got {list(given)}")
            borders = (given[0], given[1])
        rounded = value.get("rounded", False)
        if not isinstance(rounded, bool):
            raise RewardSpecError(f"{where}: 'rounded' must be true or false, got {rounded!r}")
        return RewardSpec(self.name, values, WalkParams(settings["decay"], settings["center"], settings["sd"],
                                                        settings["noise"], borders, rounded))

    def expected(self, spec: RewardSpec) -> float:
        return spec.values[0]


# -- reversal: the better option changes after a run of correct choices --------------------------------
@dataclass(frozen=True)
class ReversalParams(RewardParams):
    probs: tuple[float, float] = param("float[]", "[P(win) when better, P(win) when worse]")
    criterion: int = param("int", "correct choices in a row before the better option changes")


class ReversalGroup:
    """The options of one task in one env: which is better now (the first in state order at the
    start of a session) and how many times in a row it has been chosen."""

    def __init__(self, specs: list[RewardSpec]) -> None:
        self.specs = specs
        self.better = 0
        self.streak = 0

    def pay(self, k: int, stream: RandomStream) -> float:
        spec = self.specs[k]
        correct = k == self.better
        params = ReversalParams.of(spec)
        p_win = params.probs[0 if correct else 1]
        value = spec.values[0] if stream.uniform() < p_win else spec.values[1]
        self.streak = self.streak + 1 if correct else 0
        if self.streak >= params.criterion:
            self.better = (self.better + 1) % len(self.specs)
            self.streak = 0
        return value


class ReversalSource:
    """Option k of a `ReversalGroup`."""

    def __init__(self, group: ReversalGroup, k: int) -> None:
        self.group, self.k = group, k

    def reset(self, stream: RandomStream) -> None:
        self.group.better = self.group.streak = 0

    def draw(self, stream: RandomStream) -> float:
        return self.group.pay(self.k, stream)


class ReversalBatch:
    """`better[copy]`, `streak[copy]`: each copy's better option and its run of correct choices."""

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        self.n_options = len(specs)
        self.win = np.array([spec.values[0] for spec in specs])
        self.lose = np.array([spec.values[1] for spec in specs])
        params = [ReversalParams.of(spec) for spec in specs]
        self.p_better = np.array([p.probs[0] for p in params])
        self.p_worse = np.array([p.probs[1] for p in params])
        self.criterion = np.array([p.criterion for p in params])
        self.better = np.zeros(n_envs, dtype=np.int64)
        self.streak = np.zeros(n_envs, dtype=np.int64)

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        self.better[copies] = 0
        self.streak[copies] = 0

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        correct = slots == self.better[copies]
        p_win = np.where(correct, self.p_better[slots], self.p_worse[slots])
        out = np.where(rng.random(copies.size) < p_win, self.win[slots], self.lose[slots])
        streak = np.where(correct, self.streak[copies] + 1, 0)
        reverse = streak >= self.criterion[slots]
        self.better[copies] = np.where(reverse, (self.better[copies] + 1) % self.n_options, self.better[copies])
        self.streak[copies] = np.where(reverse, 0, streak)
        return out


class Reversal(SharedStateKind):
    """Options of a probabilistic reversal task, one reward per option (all of the task's rewards
    of this kind are its options): the better option pays values[0] with probs[0], the others
    with probs[1] (else values[1]); after `criterion` choices of the better option in a row the
    next option (in state order) becomes the better one. The first option is better when a
    session starts."""

    name = "reversal"
    group_type, source_type, batch_type = ReversalGroup, ReversalSource, ReversalBatch
    params = ReversalParams
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        if len(values) != 2:
            raise RewardSpecError(f"{where}: a reversal reward has two values (win, loss), got {len(values)}")
        probs = _numbers(value.get("probs", ()), "probs", where) if "probs" in value else ()
        if len(probs) != 2 or not all(0 <= p <= 1 for p in probs):
            raise RewardSpecError(
                f"{where}: 'probs' must be [P(win) when better, P(win) when worse] within [0, 1], got {list(probs)}"
            )
        criterion = value.get("criterion")
        if isinstance(criterion, bool) or not isinstance(criterion, int) or criterion < 1:
            raise RewardSpecError(f"{where}: 'criterion' must be a whole number of choices >= 1, got {criterion!r}")
        return RewardSpec(self.name, values, ReversalParams((probs[0], probs[1]), criterion))

    def expected(self, spec: RewardSpec) -> float:
        p = sum(ReversalParams.of(spec).probs) / 2
        return p * spec.values[0] + (1 - p) * spec.values[1]


# -- game: Gaussian arms whose means are drawn anew for every game (Wilson et al. 2014) -------------------
@dataclass(frozen=True)
class GameParams(RewardParams):
    gaps: tuple[float, ...] = param("float[]", "differences of the other arms' means from the drawn one")
    arm: int = param("int", "the arm that pays here")
    first: bool | None = param("bool", "a draw here starts a new game with new means", None)
    noise: float | None = param("float", "sd of a payoff around its arm's mean", None)
    borders: tuple[float, float] | None = param("float[]", "bounds of a payoff", None)
    rounded: bool | None = param("bool", "payoffs rounded to whole numbers", None)


@dataclass(frozen=True)
class GameSettings:
    """The arms of one task's rewards of kind game, one entry per reward, as arrays."""

    base: np.ndarray  # the means one arm of a new game may take (`values` of the first reward)
    gaps: np.ndarray  # the differences the other arms' means may have from it (either sign)
    n_arms: int
    arm: np.ndarray
    first: np.ndarray
    noise: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rounded: np.ndarray

    @classmethod
    def of(cls, specs: list[RewardSpec]) -> GameSettings:
        params = [GameParams.of(spec) for spec in specs]
        borders = [p.borders or (-math.inf, math.inf) for p in params]
        arm = np.array([p.arm for p in params], dtype=np.int64)
        return cls(
            np.asarray(specs[0].values, dtype=float), np.asarray(params[0].gaps, dtype=float),
            int(arm.max()) + 1, arm, np.array([bool(p.first) for p in params]),
            np.array([p.noise or 0.0 for p in params]), np.array([b[0] for b in borders]),
            np.array([b[1] for b in borders]), np.array([bool(p.rounded) for p in params]),
        )

    def start(self) -> np.ndarray:
        """The means before the first game of a session: every arm at the first base mean."""
        return np.full(self.n_arms, self.base[0])

    def means(self, base: np.ndarray, which: np.ndarray, gap: np.ndarray) -> np.ndarray:
        """New games' means (one row per game): arm `which` at `base`, every other at base + its `gap`."""
        out = base[:, None] + gap
        out[np.arange(len(base)), which] = base
        return out

    def payoff(self, mean: np.ndarray, normal: np.ndarray, slots: np.ndarray) -> np.ndarray:
        value = mean + self.noise[slots] * normal
        value = np.where(self.rounded[slots], np.round(value), value)
        return np.clip(value, self.low[slots], self.high[slots])


class GameGroup:
    """The arms of one task in one env: their means in the current game."""

    def __init__(self, specs: list[RewardSpec]) -> None:
        self.settings = GameSettings.of(specs)
        self.current = self.settings.start()

    def new_game(self, stream: RandomStream) -> None:
        s = self.settings
        base = s.base[stream.below(len(s.base))]
        which = stream.below(s.n_arms)
        gap = np.array([s.gaps[stream.below(len(s.gaps))] * (1.0 if stream.uniform() < 0.5 else -1.0)
                        for _ in range(s.n_arms)])
        self.current = s.means(np.array([base]), np.array([which]), gap[None, :])[0]

    def pay(self, k: int, stream: RandomStream) -> float:
        s = self.settings
        if s.first[k]:
            self.new_game(stream)
        slot = np.array([k])
        return float(s.payoff(self.current[s.arm[slot]], np.array([stream.normal()]), slot)[0])


class GameSource:
    """Reward k of a `GameGroup`."""

    def __init__(self, group: GameGroup, k: int) -> None:
        self.group, self.k = group, k

    def reset(self, stream: RandomStream) -> None:
        self.group.current = self.group.settings.start()

    def draw(self, stream: RandomStream) -> float:
        return self.group.pay(self.k, stream)


class GameBatch:
    """`means[copy, arm]`: each copy's arms in its current game."""

    def __init__(self, specs: list[RewardSpec], n_envs: int) -> None:
        self.settings = GameSettings.of(specs)
        self.means = np.tile(self.settings.start(), (n_envs, 1))

    def new_session(self, rng: np.random.Generator, copies: np.ndarray) -> None:
        self.means[copies] = self.settings.start()

    def draw(self, rng: np.random.Generator, copies: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Every drawing copy draws a new game's numbers, used only where its slot starts a game:
        a copy's draws must not depend on whether other copies start games (`rng` may be the
        copies' own lane streams, `gym_bridge.vector.lanes`)."""
        s = self.settings
        n = copies.size
        base = s.base[rng.integers(len(s.base), size=n)]
        which = rng.integers(s.n_arms, size=n)
        sign = np.where(rng.random((n, s.n_arms)) < 0.5, 1.0, -1.0)
        gap = s.gaps[rng.integers(len(s.gaps), size=(n, s.n_arms))] * sign
        first = s.first[slots]
        if first.any():
            self.means[copies[first]] = s.means(base[first], which[first], gap[first])
        return s.payoff(self.means[copies, s.arm[slots]], rng.standard_normal(copies.size), slots)


class Game(SharedStateKind):
    """An arm of a game of a two-armed (or n-armed) bandit whose means are drawn anew for every
    game, as in Wilson et al.'s (2014) horizon task. The task's rewards of this kind are the arms
    of its games (`arm`: which one pays here); a draw at a reward marked `first` starts a new
    game: one arm, drawn at random, gets a mean drawn from `values` (the first reward's), every
    other arm that mean plus one of `gaps` with a random sign. A payoff is N(mean, `noise`),
    rounded if `rounded`, clipped to `borders`."""

    name = "game"
    group_type, source_type, batch_type = GameGroup, GameSource, GameBatch
    params = GameParams
    stateful = True

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        gaps = _numbers(value.get("gaps"), "gaps", where) if "gaps" in value else ()
        if not gaps or any(g < 0 for g in gaps):
            raise RewardSpecError(f"{where}: 'gaps' must be a non-empty list of differences >= 0, got {list(gaps)}")
        arm = value.get("arm")
        if isinstance(arm, bool) or not isinstance(arm, int) or arm < 0:
            raise RewardSpecError(f"{where}: 'arm' must be a whole number >= 0, got {arm!r}")
        noise = value.get("noise", 0.0)
        if not finite_number(noise) or noise < 0:
            raise RewardSpecError(f"{where}: 'noise' must be a finite number >= 0, got {noise!r}")
        borders = None
        if "borders" in value:
            given = _numbers(value["borders"], "borders", where)
            if len(given) != 2 or given[0] > given[1]:
                raise RewardSpecError(f"{where}: 'borders' must be [low, high] with low <= high, got {list(given)}")
            borders = (given[0], given[1])
        for flag in ("rounded", "first"):
            if not isinstance(value.get(flag, False), bool):
                raise RewardSpecError(f"{where}: '{flag}' must be true or false, got {value[flag]!r}")
        return RewardSpec(self.name, values, GameParams(gaps, arm, bool(value.get("first")), float(noise), borders,
                                                        bool(value.get("rounded"))))

    def expected(self, spec: RewardSpec) -> float:
        return float(np.mean(spec.values))


for _kind in (Fixed(), Probabilistic(), Drifting(), PseudoRandom(), Sequence(), Walk(), Reversal(), Game()):
    register_reward_kind(_kind)
