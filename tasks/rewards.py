"""Reward sources: typed specifications (stored as Reward nodes) and their runtime.

Every draw comes from the environment's seeded generator through a `RandomStream`, so the
same seed gives the same outcomes on every store. A source keeps its state (drifting
probability, pseudo-random deck) across trials of one session; `reset(stream)` starts a
new session (gym's `reset(seed=...)`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Mapping, Protocol, TypeVar

import numpy as np

from graphstore.errors import GraphtasksError

T = TypeVar("T")

KINDS = ("fixed", "probabilistic", "drifting", "pseudorandom")


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


@dataclass(frozen=True)
class RewardSpec:
    """What a Reward node holds."""

    kind: str
    values: tuple[float, ...]
    probs: tuple[float, ...] | None = None
    borders: tuple[float, float] | None = None
    sd: float | None = None

    def node_props(self) -> dict[str, Any]:
        props: dict[str, Any] = {"kind": self.kind, "values": list(self.values)}
        if self.probs is not None:
            props["probs"] = list(self.probs)
        if self.borders is not None:
            props["borders"] = list(self.borders)
        if self.sd is not None:
            props["sd"] = self.sd
        return props

    def probabilities(self) -> tuple[float, ...]:
        """`probs`, which a probabilistic reward has."""
        return _present(self.probs, "probs", self.kind)

    def drift_borders(self) -> tuple[float, float]:
        """`borders`, which a drifting reward has."""
        return _present(self.borders, "borders", self.kind)

    def drift_sd(self) -> float:
        """`sd`, which a drifting reward has."""
        return _present(self.sd, "sd", self.kind)

    @property
    def expected(self) -> float:
        """Expected value of one draw (drifting: at the middle of its borders)."""
        if self.kind == "fixed":
            return self.values[0]
        if self.kind == "probabilistic":
            return float(np.dot(self.values, self.probabilities()))
        if self.kind == "drifting":
            p = sum(self.drift_borders()) / 2
            return p * self.values[0] + (1 - p) * self.values[1]
        return float(np.mean(self.values))


def finite_number(value: Any) -> bool:
    """A real number that is not a bool, NaN or infinite (JSON's NaN/Infinity, or 1e400 read as inf)."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _present(value: T | None, field: str, kind: str) -> T:
    if value is None:
        raise RewardSpecError(f"a {kind} reward needs {field}")
    return value


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
    kind = value.get("kind", "fixed")
    if kind not in KINDS:
        raise RewardSpecError(f"{where}: 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    known = {"kind", "values", "probs", "borders", "sd"}
    unknown = sorted(set(value) - known)
    if unknown:
        raise RewardSpecError(f"{where}: unknown field(s) {', '.join(unknown)}")
    if "values" not in value:
        raise RewardSpecError(f"{where}: '{kind}' reward needs 'values'")
    values = _numbers(value["values"], "values", where)
    if kind == "fixed":
        if len(values) != 1:
            raise RewardSpecError(f"{where}: a fixed reward has one value, got {len(values)}")
        return RewardSpec(kind, values)
    if kind == "probabilistic":
        probs = _numbers(value.get("probs", ()), "probs", where) if "probs" in value else None
        if probs is None or len(probs) != len(values):
            raise RewardSpecError(f"{where}: 'probs' must give one probability per value")
        if any(p < 0 for p in probs) or abs(sum(probs) - 1) > 1e-6:
            raise RewardSpecError(f"{where}: 'probs' must be non-negative and sum to 1, got {list(probs)}")
        return RewardSpec(kind, values, probs)
    if kind == "drifting":
        if len(values) != 2:
            raise RewardSpecError(f"{where}: a drifting reward has two values (drawn with p, 1 - p)")
        borders = _numbers(value.get("borders", (0.25, 0.75)), "borders", where)
        if len(borders) != 2 or not 0 <= borders[0] <= borders[1] <= 1:
            raise RewardSpecError(f"{where}: 'borders' must be [low, high] within [0, 1], got {list(borders)}")
        sd = value.get("sd", 0.025)
        if not finite_number(sd) or sd < 0:
            raise RewardSpecError(f"{where}: 'sd' must be a finite non-negative number, got {sd!r}")
        return RewardSpec(kind, values, None, (borders[0], borders[1]), float(sd))
    return RewardSpec(kind, values)  # pseudorandom: the deck


def spec_from_props(props: Mapping[str, Any]) -> RewardSpec:
    """A spec from a stored Reward node's properties."""
    return RewardSpec(
        props["kind"],
        tuple(props["values"]),
        tuple(props["probs"]) if props.get("probs") is not None else None,
        tuple(props["borders"]) if props.get("borders") is not None else None,
        props.get("sd"),
    )


class RewardSource(Protocol):
    def reset(self, stream: RandomStream) -> None: ...
    def draw(self, stream: RandomStream) -> float: ...


class FixedSource:
    def __init__(self, spec: RewardSpec) -> None:
        self.value = spec.values[0]

    def reset(self, stream: RandomStream) -> None:
        pass

    def draw(self, stream: RandomStream) -> float:
        return self.value


class ProbabilisticSource:
    def __init__(self, spec: RewardSpec) -> None:
        self.values = list(spec.values)
        self.cumulative = np.cumsum(spec.probabilities()).tolist()
        self.cumulative[-1] = 1.0

    def reset(self, stream: RandomStream) -> None:
        pass

    def draw(self, stream: RandomStream) -> float:
        u = stream.uniform()
        for value, c in zip(self.values, self.cumulative):
            if u < c:
                return value
        return self.values[-1]


class DriftingSource:
    """Pays values[0] with probability p, else values[1]; p walks with N(0, sd), reflected into borders."""

    def __init__(self, spec: RewardSpec) -> None:
        self.high_value, self.low_value = spec.values
        self.low, self.high = spec.drift_borders()
        self.sd = spec.drift_sd()
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


_SOURCES: dict[str, Callable[[RewardSpec], RewardSource]] = {
    "fixed": FixedSource,
    "probabilistic": ProbabilisticSource,
    "drifting": DriftingSource,
    "pseudorandom": PseudoRandomSource,
}


def make_source(spec: RewardSpec) -> RewardSource:
    return _SOURCES[spec.kind](spec)
