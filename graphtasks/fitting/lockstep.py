"""Many optimisers in lockstep: every optimiser's likelihood requests of a round in one pass.

A fit of P participants from S starts runs P x S local optimisations (scipy's L-BFGS-B, or
BFGS for the hierarchical E-step), each asking for a likelihood and its finite-difference
gradient (d + 1 likelihoods) at every step. Here each optimisation runs in a thread of its
own; its objective hands its d + 1 points to a coordinator and waits. When every running
optimisation waits, the coordinator evaluates all their points at once (one pass of a
batched agent, `graphtasks.fitting.batched`), hands each its numbers and lets them go on. The
optimisers are scipy's own, so each takes the same steps it would take alone; only where the
numbers are computed changes. The gradient is scipy's default forward difference (the same
absolute steps, `eps`, turned back at a bound), computed from the d + 1 numbers of one request.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

MAX_OPTIMISERS = 1024  # threads of one lockstep; larger groups go in parts (the same numbers: lanes are independent)
Request = list[tuple[int, dict[str, Any]]]  # (participant, settings) pairs
Ask = Callable[[int, Sequence[dict[str, Any]]], np.ndarray]
RELATIVE_STEP = float(np.sqrt(np.finfo(float).eps))  # scipy's '2-point' relative step (a fallback)


class _Slot:
    __slots__ = ("job", "request", "result", "ready")

    def __init__(self, job: int, request: Request) -> None:
        self.job, self.request = job, request
        self.result: np.ndarray | None = None
        self.ready = threading.Event()


def run_lockstep(
    jobs: Sequence[Callable[[Ask], Any]], evaluate: Callable[[Request], np.ndarray]
) -> list[Any]:
    """Run every job (a function of `ask`) in a thread of its own; `ask(participant, settings)`
    blocks until every running job asks or ends, then `evaluate` computes all the requests of
    the round in one call (jobs in their order, so a round's order depends only on which jobs
    run). Returns the jobs' results in order; the first error of a job is raised."""
    if len(jobs) == 1:  # nothing to wait for
        return [jobs[0](lambda participant, points: evaluate([(participant, dict(p)) for p in points]))]
    lock = threading.Lock()
    round_ready = threading.Event()
    pending: list[_Slot] = []
    running = [len(jobs)]
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException] = []

    def check() -> None:  # under the lock
        if running[0] == 0 or len(pending) == running[0]:
            round_ready.set()

    def runner(index: int) -> None:
        def ask(participant: int, points: Sequence[dict[str, Any]]) -> np.ndarray:
            slot = _Slot(index, [(participant, dict(p)) for p in points])
            with lock:
                pending.append(slot)
                check()
            slot.ready.wait()
            if slot.result is None:
                raise RuntimeError("lockstep: stopped")
            return slot.result

        try:
            results[index] = jobs[index](ask)
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            with lock:
                errors.append(error)
        finally:
            with lock:
                running[0] -= 1
                check()

    threads = [threading.Thread(target=runner, args=(i,), daemon=True) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    try:
        while True:
            round_ready.wait()
            with lock:
                round_ready.clear()
                if running[0] == 0:
                    break
                if len(pending) < running[0]:
                    continue
                batch = sorted(pending, key=lambda s: s.job)
                pending.clear()
            flat = [pair for slot in batch for pair in slot.request]
            try:
                values = evaluate(flat) if not errors else None
            except BaseException as error:  # noqa: BLE001
                errors.append(error)
                values = None
            start = 0
            for slot in batch:
                if values is not None:
                    slot.result = np.asarray(values[start:start + len(slot.request)], dtype=float)
                start += len(slot.request)
                slot.ready.set()
    finally:
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    return results


LBFGSB_STEP = 1e-8  # scipy's L-BFGS-B `eps`: the absolute step of its default gradient
BFGS_STEP = RELATIVE_STEP  # scipy's BFGS `eps`


def forward_steps(x: np.ndarray, step: float, bounds: Sequence[tuple[float, float]] | None) -> np.ndarray:
    """The steps of scipy's default gradient (`approx_derivative`, '2-point', an absolute step
    `step`): `step` forward, or sqrt(eps) * max(1, |x|) signed as x where `step` would vanish
    against x, turned back where it would leave the bounds."""
    sign = (x >= 0).astype(float) * 2 - 1
    h = np.full(x.shape, float(step))
    h = np.where((x + h) - x == 0, RELATIVE_STEP * sign * np.maximum(1.0, np.abs(x)), h)
    if bounds is not None:
        low = np.array([b[0] for b in bounds], dtype=float)
        high = np.array([b[1] for b in bounds], dtype=float)
        moved = x + h
        violated = (moved < low) | (moved > high)
        fitting = np.abs(h) <= np.maximum(x - low, high - x)
        h[violated & fitting] *= -1
    return h


def value_and_gradient(
    f: Callable[[Sequence[np.ndarray]], np.ndarray], x: np.ndarray, bounds: Sequence[tuple[float, float]] | None,
    step: float = LBFGSB_STEP,
) -> tuple[float, np.ndarray]:
    """f(x) and its forward-difference gradient (scipy's default for the method whose `eps` is
    `step`), from one call of `f` on the d + 1 points."""
    x = np.asarray(x, dtype=float)
    h = forward_steps(x, step, bounds)
    points = [x]
    for i in range(x.size):
        moved = x.copy()
        moved[i] += h[i]
        points.append(moved)
    values = np.asarray(f(points), dtype=float)
    centre = float(values[0])
    steps = np.array([points[i + 1][i] - x[i] for i in range(x.size)])
    return centre, (values[1:] - centre) / steps
