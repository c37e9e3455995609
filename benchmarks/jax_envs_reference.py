"""Env-steps/s of gymnax and navix (JAX) at N = 1, 16, 256, 4096, the comparison for vector_fixed_cost.py.

JAX is not a dependency of this project: run this in a separate virtual environment
(`python -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax gymnax navix`), on the
same machine and close in time to `benchmarks/vector_fixed_cost.py`, and compare the figures.

Two ways of stepping, both with random actions drawn in advance and auto-reset inside the env:
- `loop`: a jitted, vmapped step called once per step from Python (what a Python agent
  loop pays, as our vector envs are stepped);
- `scan`: `jax.lax.scan` over 100 steps in one jitted call (how JAX code trains: no Python per step).
Best of `--repeats` runs; the baseline in the same run is the N = 1 `loop` figure of each env.
(navix's FourRooms, with its default egocentric observation, did not finish in 15 minutes on the
shared 2-core machine, so navix is measured on Empty-5x5.)

    /tmp/jaxvenv/bin/python benchmarks/jax_envs_reference.py [--repeats 3] [--budget 0.5]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp

SIZES = (1, 16, 256, 4096)


def gymnax_env(name: str) -> tuple[Callable, Callable, int]:
    import gymnax

    env, params = gymnax.make(name)

    def reset(key: Any) -> Any:
        return env.reset(key, params)[1]

    def step(key: Any, state: Any, action: Any) -> tuple[Any, Any]:
        obs, state, reward, done = env.step(key, state, action, params)[:4]  # gymnax 1.x adds a 6th item
        return state, (obs, reward, done)

    return reset, step, int(env.action_space(params).n)


def navix_env(name: str) -> tuple[Callable, Callable, int]:
    import navix

    env = navix.make(name, max_steps=100)

    def reset(key: Any) -> Any:
        return env.reset(key)

    def step(key: Any, state: Any, action: Any) -> tuple[Any, Any]:
        state = env.step(state, action)
        return state, (state.observation, state.reward, state.is_done())

    return reset, step, int(env.action_space.n)


def rates(make: Callable[[], tuple[Callable, Callable, int]], n: int, budget: float, repeats: int) -> dict[str, float]:
    reset, step, n_actions = make()
    keys = jax.random.split(jax.random.PRNGKey(0), n)
    state = jax.jit(jax.vmap(reset))(keys)
    vstep = jax.jit(jax.vmap(step))
    pool = jax.random.randint(jax.random.PRNGKey(1), (64, n), 0, n_actions)
    step_keys = jax.random.split(jax.random.PRNGKey(2), 64 * n).reshape(64, n, -1)

    def rollout(state: Any) -> Any:
        def body(s: Any, i: Any) -> tuple[Any, Any]:
            s, out = vstep(step_keys[i % 64], s, pool[i % 64])
            return s, out[1].sum()

        return jax.lax.scan(body, state, jnp.arange(100))

    scan = jax.jit(rollout)
    state, out = vstep(step_keys[0], state, pool[0])
    jax.block_until_ready(out)
    jax.block_until_ready(scan(state))
    best = {"loop": 0.0, "scan": 0.0}
    for _ in range(repeats):
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget:
            for i in range(64):
                state, out = vstep(step_keys[i], state, pool[i])
            steps += 64
        jax.block_until_ready(out)
        best["loop"] = max(best["loop"], steps * n / (time.perf_counter() - start))
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < budget:
            state, total = scan(state)
            calls += 1
        jax.block_until_ready(total)
        best["scan"] = max(best["scan"], calls * 100 * n / (time.perf_counter() - start))
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    envs = {
        "gymnax FourRooms-misc": lambda: gymnax_env("FourRooms-misc"),
        "navix Navix-Empty-5x5-v0": lambda: navix_env("Navix-Empty-5x5-v0"),
    }
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; env-steps/s, best of {args.repeats}")
    print(f"{'env':<28}{'mode':<6}" + "".join(f"{'N=' + str(n):>10}" for n in SIZES) + "  N=256 / N=1 loop")
    results: dict[str, Any] = {}
    for name, make in envs.items():
        row = {str(n): rates(make, n, args.budget, args.repeats) for n in SIZES}
        results[name] = row
        for mode in ("loop", "scan"):
            figures = "".join(f"{row[str(n)][mode]:>10,.0f}" for n in SIZES)
            print(f"{name:<28}{mode:<6}{figures}  {row['256'][mode] / row['1']['loop']:.1f}x")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
