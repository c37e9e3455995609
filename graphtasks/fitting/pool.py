"""Where fits and simulations run: a process pool that is safe beside JAX, and `map_jobs`, which
runs jobs here or on a pool, in order, with a progress bar inside `progress()`; `bar` is the
bar every fitting loop draws there (of units that move: fits, optimiser starts, iterations).

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
    options.setdefault("initializer", _silent)  # a worker draws no bar: the driver's counts its jobs
    return ProcessPoolExecutor(max_workers=workers, **options)


def _silent() -> None:
    """A pool worker's start: no progress bars there (a fork copies the driver's `progress()`)."""
    PROGRESS.set(False)


PROGRESS: ContextVar[bool] = ContextVar("graphtasks_fitting_progress", default=False)


@contextmanager
def progress(shown: bool = True) -> Iterator[None]:
    """Show a progress bar of the fits and simulations made inside the block (`bar`; the
    commands decide, `graphtasks.commands.progress.shown`: on a terminal, without
    `--no-progress`); a library call stays silent.

    Parameters
    ----------
    shown : bool, optional
        Draw the bars (False: the block stays silent, as outside one).

    Examples
    --------
    >>> with progress(False):
    ...     map_jobs(abs, [-1, 2], workers=1)
    [1, 2]
    """
    token = PROGRESS.set(shown)
    try:
        yield
    finally:
        PROGRESS.reset(token)


def bar(total: int | None, what: str, unit: str, quiet: bool = False, **options: Any) -> Any:
    """A progress bar (`tqdm.auto`: text in a terminal, a widget in a notebook) of `total` units
    of `what` (None: not known, no remaining time shown), drawn only inside `progress()`.

    Parameters
    ----------
    total : int or None
        Units to come, where known.
    what : str
        What is done, before the bar.
    unit : str
        One unit ("fit", "start", "iteration").
    quiet : bool, optional
        Not drawn even inside `progress()` (a bar of one unit, which would not move).
    **options
        More of tqdm's options.

    Returns
    -------
    tqdm.auto.tqdm
        Disabled outside `progress()` (its `update` does nothing).

    Examples
    --------
    >>> bar(3, "fits", "fit").disable
    True
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit=unit, disable=quiet or not PROGRESS.get(), leave=False, **options)


def map_jobs(function: Any, jobs: list[Any], workers: int | None, what: str = "fits",
             sizes: list[int] | None = None, unit: str = "job") -> list[Any]:
    """`function` of every job, in order: here, or on `workers` processes (None: one per core);
    with a progress bar of `what` inside `progress()`, counting `sizes[i]` units of `unit` when
    job i ends (default: one job each)."""
    sizes = [1] * len(jobs) if sizes is None else sizes
    with bar(sum(sizes), what, unit, quiet=len(jobs) < 2, smoothing=0) as shown:
        if workers == 1 or len(jobs) < 2:
            out = []
            for job, size in zip(jobs, sizes):
                with progress(PROGRESS.get() and shown.disable):  # a job this bar counts draws no bar of its own
                    out.append(function(job))
                shown.update(size)
            return out
        with process_pool(workers) as pool:
            out = []
            for result, size in zip(pool.map(function, jobs), sizes):  # in order: the first unfinished job
                out.append(result)
                shown.update(size)
            return out
