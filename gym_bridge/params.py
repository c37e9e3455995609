"""Checks of the parameters every environment and agent takes, with one wording for each error.

Why one module: the same parameter (a probability, a count, a flag) is checked by several
envs, the vector envs and the agents; one check keeps their messages and rules identical.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from os import PathLike
from typing import Any

import numpy as np

from graphstore import GraphStore
from graphstore.errors import GraphStoreError, GraphtasksError, TaskNotFound


def check_probability(name: str, value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}")
    return float(value)


def check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def check_time_penalty(value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
        raise ValueError(
            f"time_penalty: expected a non-negative number (it is subtracted from every step's reward), got {value!r}"
        )
    return float(value)


def check_episode_length(value: int | None, name: str = "max_episode_steps") -> int:
    """None means no limit, stored as 0; `name` is the parameter as the caller gave it."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer or None, got {value!r}")
    return int(value)


class _NotGiven:
    """The default of a deprecated parameter: tells "not given" from every value, None included."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Any = _NotGiven()
EPISODE_STEPS = "max_episode_steps"  # the one name of an episode's length: docs/limits.md#episode-lengths


def episode_steps(value: int | None, old_value: Any, old_name: str, default: int | None) -> int | None:
    """The episode length an env was given: `max_episode_steps` (`value`), or the family's
    deprecated name for it (`old_value`, with one FutureWarning line).

    Both given: the deprecated name's value when `max_episode_steps` kept its default (gymnasium's
    make_vec passes the registered length), else the tighter (None: no limit).

    Parameters
    ----------
    value : int or None
        `max_episode_steps` as given (or its default).
    old_value : int, None or NOT_GIVEN
        The deprecated parameter as given.
    old_name : str
        The deprecated parameter's name (``"episode_length"``, ``"max_ep_len"``, ...).
    default : int or None
        `max_episode_steps`'s default in this constructor.

    Returns
    -------
    int or None
        The length, unchecked.

    Examples
    --------
    >>> episode_steps(50, NOT_GIVEN, "episode_length", 100)
    50
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     episode_steps(100, 500, "episode_length", 100)
    500
    >>> str(caught[0].message).partition(" (")[0]
    'episode_length is deprecated: use max_episode_steps'
    """
    if old_value is NOT_GIVEN:
        return value
    import warnings

    warnings.warn(f"{old_name} is deprecated: use {EPISODE_STEPS} (one name for every family, gym.make, the "
                  "command line and experiment specs)", FutureWarning, stacklevel=3)
    if value == default or value is None:
        return old_value
    if old_value is None:
        return value
    return min(value, old_value)


def made_by_gymnasium(env_class: type, old_name: str, kwargs: dict[str, Any]) -> Any:
    """`env_class(**kwargs)` as gymnasium's `make` asks for it: its episodes ended by gymnasium's
    `TimeLimit` alone (the registered `max_episode_steps`, or the one `make` was given).

    `gym.make(id, max_episode_steps=N)` gives N to the TimeLimit, never to the env; an env that
    also cut episodes at its own default (100) would cut at that. So the ids' entry points make
    the env without a length of its own, unless one is given by the deprecated name (which
    then warns that the TimeLimit cuts at its own length: `make` does not pass it on).

    Parameters
    ----------
    env_class : type
        The env class.
    old_name : str
        Its deprecated name of the episode length.
    kwargs : dict
        What `make` passes (the id's kwargs and the caller's).

    Returns
    -------
    gymnasium.Env
        The env.
    """
    if old_name in kwargs:
        import warnings

        warnings.warn(f"{old_name} is deprecated: gym.make(id, {EPISODE_STEPS}={kwargs[old_name]!r}) sets the "
                      f"episode length (gymnasium's TimeLimit ends the episodes, at the id's registered length "
                      f"unless make is given {EPISODE_STEPS})", FutureWarning, stacklevel=4)
        with warnings.catch_warnings():  # one line: the constructor's own warning says less
            warnings.filterwarnings("ignore", f"{old_name} is deprecated", FutureWarning)
            return env_class(**kwargs)
    return env_class(**{EPISODE_STEPS: None, **kwargs})


class RenderModes(list):
    """An env's `metadata["render_modes"]` that refuses a non-string mode, and "human", by name.

    Why: gymnasium.make looks the requested mode up here before it builds the env, then calls
    string methods on it; a clear TypeError from this lookup comes first. For "human", which
    these envs do not list, gymnasium.make would wrap an "rgb_array" env in its HumanRendering
    window, which fails only at the first reset (without pygame) or opens a window no test or
    server wants: the lookup refuses it, naming the modes there are.
    """

    def __contains__(self, mode: object) -> bool:
        if mode is not None and not isinstance(mode, str):
            raise TypeError(f"render_mode: expected one of {list(self)} or None, got {type(mode).__name__} {mode!r}")
        if mode == "human" and not super().__contains__(mode):
            frames = "; render_mode='rgb_array' returns the frames to show" if super().__contains__("rgb_array") else ""
            expected = f"render_mode: expected one of {list(self)} or None"
            raise ValueError(f"{expected}, got 'human' (these envs draw no window{frames})")
        return super().__contains__(mode)


def check_render_mode(value: Any, modes: list[str]) -> str | None:
    if value is not None and value not in RenderModes(modes):
        raise ValueError(f"render_mode: expected one of {list(modes)} or None, got {value!r}")
    return value


def check_number(name: str, value: Any) -> float:
    """A finite real number (NaN and infinities would poison every return)."""
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not numeric or not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


def check_choice(name: str, value: Any, choices: Iterable[str], unknown: str = "") -> str:
    """One of `choices`; with `unknown` (e.g. 'observation type') the message lists them as a menu."""
    options = list(choices)
    listed = " or ".join(map(repr, options)) if len(options) == 2 else "one of " + ", ".join(map(repr, options))
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected {listed}, got {type(value).__name__} {value!r}")
    if value not in options:
        if unknown:
            raise ValueError(f"{name}: unknown {unknown} {value!r}; choose from {', '.join(options)}")
        raise ValueError(f"{name}: expected {listed}, got {value!r}")
    return value


def check_type(name: str, value: Any, types: tuple[type, ...], expected: str) -> Any:
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise TypeError(f"{name}: expected {expected}, got {type(value).__name__} {value!r}")
    return value


def check_store(value: Any) -> Any:
    """A store object, a location (path or bolt:// URI) or None (the default store)."""
    return check_type("store", value, (GraphStore, str, PathLike, type(None)), "a GraphStore, a location or None")


class LoadError(GraphtasksError, ValueError):
    """What a parameter names (a task, a world, a store) cannot be loaded.

    A ValueError for gymnasium users, and one of the project's own errors, so the command line
    reports it as one line.
    """


@contextmanager
def named(name: str) -> Iterator[None]:
    """Errors while loading what parameter `name` names (task=, world=, template=) carry that name.

    A missing task (a KeyError of the store) becomes a ValueError; a failure of the store itself
    names `store`.
    """
    try:
        yield
    except TaskNotFound as exc:
        raise LoadError(f"{name}: {exc}") from None
    except GraphStoreError as exc:
        raise LoadError(f"store: {exc}") from None
    except ValueError as exc:
        if re.match(rf"{name}\b", str(exc)):
            raise
        raise _renamed(exc, f"{name}: {exc}") from None


def _renamed(exc: ValueError, message: str) -> ValueError:
    """The same kind of error with `message`: its class, or the nearest base built from a message alone."""
    for cls in type(exc).__mro__:
        if issubclass(cls, ValueError):
            try:
                return cls(message)
            except TypeError:  # a class with its own constructor arguments (e.g. file, line, column)
                continue
    return ValueError(message)
