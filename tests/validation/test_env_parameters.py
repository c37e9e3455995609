"""Every constructor parameter of every `graphtasks/` id refuses a wrong type and a wrong value with a
ValueError or TypeError that names the parameter, raised by the env's own checks (never a crash deep inside).

The parameters come from the env classes' signatures and the bad values from their annotations, so a
parameter added later is covered without touching this file.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import load_env_creator

import gym_bridge  # noqa: F401  (registers the ids)
from gym_bridge import registered_ids
from tests.budget import QUICK_GYM_IDS


def _alternatives(annotation: str) -> set[str]:
    """Top-level alternatives of an annotation string by outer name: 'dict[str, Any] | None' -> {'dict', 'None'}."""
    parts, depth, current = [], 0, ""
    for ch in annotation:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return {p.strip().split("[")[0] for p in parts}


# the episode length's old names (docs/limits.md): typed Any in the signatures (a sentinel tells
# "not given"), they take what max_episode_steps takes
OLD_EPISODE_LENGTHS = {"episode_length", "max_ep_len", "max_step", "max_steps"}


def bad_values(name: str, annotation: str) -> Iterator[tuple[str, Any]]:
    """(label, value): one wrong type, then the wrong values a parameter of that type can get."""
    kinds = _alternatives("int | None" if name in OLD_EPISODE_LENGTHS else annotation)
    numeric = kinds & {"bool", "int", "float"}
    yield "wrong type", "1" if numeric else 5
    yield "unrelated object", object()
    if "float" in kinds:
        yield "nan", math.nan
        yield "inf", math.inf
    elif "int" in kinds:  # gym.make(id, max_episode_steps=-1) is gymnasium's "no TimeLimit"
        yield "negative", -2 if name == "max_episode_steps" else -1
    if "str" in kinds and not kinds & {"GraphStore"}:  # any path names a store: no wrong string exists
        yield "unknown name", "no-such-value"
    if kinds & {"dict", "Mapping"}:
        yield "unknown key", {"no_such_key": 1}
    if "tuple" in kinds:
        yield "off the map", (-1, -1)


def _cases() -> Iterator[Any]:
    # ids made by one entry point (the twenty grid templates, say) check its every parameter once,
    # on the id of the quick run where there is one; the others, what they pass it themselves
    ids = sorted(registered_ids(), key=lambda i: (i not in QUICK_GYM_IDS, i))
    checked: set[Any] = set()
    for env_id in ids:
        spec = gym.spec(env_id)
        creator = load_env_creator(spec.entry_point)
        shared = creator in checked
        checked.add(creator)
        for name, param in inspect.signature(creator).parameters.items():
            if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                continue
            if shared and name not in {"render_mode", "store", *spec.kwargs}:
                continue
            for label, value in bad_values(name, str(param.annotation)):
                marks = [] if env_id in QUICK_GYM_IDS else [pytest.mark.slow]  # one id per family in a quick run
                yield pytest.param(env_id, name, value, id=f"{env_id}-{name}-{label}", marks=marks)


CASES = list(_cases())


def test_cases_cover_every_id_and_the_render_mode() -> None:
    ids = {case.values[0] for case in CASES}
    assert ids == set(registered_ids()) and len(ids) > 10
    assert all({"render_mode", "store"} <= {c.values[1] for c in CASES if c.values[0] == i} for i in ids)


@pytest.mark.parametrize("env_id, name, value", CASES)
def test_bad_parameter_is_refused_naming_it(env_id: str, name: str, value: Any, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a string parameter naming a path must not write next to the tests
    with pytest.raises((ValueError, TypeError)) as info:
        gym.make(env_id, **{name: value})
    message = str(info.value)
    assert re.search(rf"(?<![\w]){name}(?![\w])", message), f"{type(info.value).__name__}: {message}"
