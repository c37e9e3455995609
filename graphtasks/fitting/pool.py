"""Where fits and simulations run: a process pool that is safe beside JAX, and `map_jobs`, which
runs jobs here or on a pool, in order, with a progress bar inside `progress()`.

The maximum-likelihood, hierarchical and recovery modules all fan out through these; this
module imports none of them.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator


def process_pool(workers: int | None, **options: Any) -> Any:
    """A process pool for fits: forked as usual, but started by a fork server once JAX is
    imported (the NUTS backend), since forking a process whose JAX threads run can deadlock."""
    import sys
    from concurrent.futures import ProcessPoolExecutor

    if "jax" in sys.modules:
        import multiprocessing

        options["mp_context"] = multiprocessing.get_context("forkserver")
    return ProcessPoolExecutor(max_workers=workers, **options)


PROGRESS: ContextVar[bool] = ContextVar("graphtasks_fitting_progress", default=False)


@contextmanager
def progress(shown: bool = True) -> Iterator[None]:
    """Show a progress bar of the fits and simulations `map_jobs` makes inside the block (the
    commands' default; a library call stays silent)."""
    token = PROGRESS.set(shown)
    try:
        yield
    finally:
        PROGRESS.reset(token)


def map_jobs(function: Any, jobs: list[Any], workers: int | None, what: str = "fits") -> list[Any]:
    """`function` of every job, in order: here, or on `workers` processes (None: one per core);
    with a progress bar of `what` inside `progress()`."""
    from tqdm.auto import tqdm

    bar = tqdm(total=len(jobs), desc=what, unit="job", disable=not PROGRESS.get() or len(jobs) < 2, leave=False)
    try:
        if workers == 1 or len(jobs) < 2:
            out = []
            for job in jobs:
                out.append(function(job))
                bar.update(1)
            return out
        with process_pool(workers) as pool:
            out = []
            for result in pool.map(function, jobs):  # in order: the bar follows the first unfinished job
                out.append(result)
                bar.update(1)
            return out
    finally:
        bar.close()
