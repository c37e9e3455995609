"""Shared benchmark helpers: timing a random policy with actions drawn in advance."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

# benchmarks/results in a source checkout; an installed copy writes to the working directory instead
_HERE = Path(__file__).resolve().parent
RESULTS = _HERE / "results" if (_HERE.parent / "pyproject.toml").is_file() else Path.cwd() / "benchmark-results"


def play(env, actions: list[int]) -> None:
    """The loop every benchmark times: step through `actions`, resetting when an episode ends."""
    step, reset = env.step, env.reset
    for a in actions:
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            reset()


def random_actions(env, n_steps: int, seed: int = 0) -> list[int]:
    """Actions drawn in advance, so the timed loop measures the env, not the generator."""
    return np.random.default_rng(seed).integers(0, env.action_space.n, n_steps).tolist()


def steps_per_second(env, n_steps: int, seed: int = 0, repeats: int = 3) -> float:
    """Best of `repeats` runs of a random policy on the unwrapped env (resets counted in)."""
    env = env.unwrapped
    actions = random_actions(env, n_steps, seed)
    best = 0.0
    for _ in range(repeats):
        env.reset(seed=seed)
        start = time.perf_counter()
        play(env, actions)
        best = max(best, n_steps / (time.perf_counter() - start))
    return best


def best_time(fn: Callable[[], Any], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def python_loop_baseline(n_steps: int = 1_000_000) -> float:
    """Steps/s of an empty Python loop over the same kind of action list: the machine's ceiling."""
    actions = np.random.default_rng(0).integers(0, 4, n_steps).tolist()
    start = time.perf_counter()
    total = 0
    for a in actions:
        total += a
    return n_steps / (time.perf_counter() - start)


def save(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(), **payload}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    return path
