"""Optional extras on the command line: a command that needs one refuses in one line naming it.

A plain `pip install graphtasks` has no matplotlib (the `plot` extra), scipy (`fit`), pyshacl
(`shacl`), ... A command that draws checks for matplotlib before it does any work
(`require_plotting`), and `graphtasks.cli.main` turns any import of a missing extra's module
into the same one line (`missing_extra`), not a traceback.
"""

from __future__ import annotations

import importlib.util

from .errors import CommandError

# The top-level module of each optional dependency, and the extra that brings it (pyproject.toml).
EXTRAS: dict[str, str] = {
    "matplotlib": "plot",
    "scipy": "fit",
    "numpyro": "bayes",
    "jax": "bayes",
    "pyshacl": "shacl",
    "starlette": "web",
    "uvicorn": "web",
    "dask": "dask",
    "distributed": "dask",
    "pandas": "tables",
    "numba": "fast",
    "pygame": "play",
}


def installed(module: str) -> bool:
    """Whether `module` can be imported (found on the path), without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a finder that refuses it, or a module without a spec
        return False


def require_plotting(what: str) -> None:
    """Refuse `what` in one line naming the `plot` extra when matplotlib is not installed.

    Parameters
    ----------
    what : str
        What needs the drawing, as the line names it: a command or an option.

    Raises
    ------
    CommandError
        matplotlib is missing: "`what` needs matplotlib: pip install 'graphtasks[plot]'".

    Examples
    --------
    >>> require_plotting("render")  # matplotlib is installed here: nothing happens
    """
    if not installed("matplotlib"):
        raise CommandError(f"{what} needs matplotlib: pip install 'graphtasks[plot]'")


def missing_extra(exc: ImportError) -> str | None:
    """The one line for an ImportError that is a missing extra, or None for any other (a bug).

    Parameters
    ----------
    exc : ImportError
        The error: the library's own "... pip install 'graphtasks[x]'" ImportError, or a
        ModuleNotFoundError of an optional dependency's module.

    Returns
    -------
    str or None
        The line naming the extra to install.

    Examples
    --------
    >>> missing_extra(ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"))
    "matplotlib is not installed: pip install 'graphtasks[plot]'"
    >>> missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    True
    """
    text = " ".join(str(exc).split())
    if "pip install 'graphtasks[" in text:
        return text
    top = (exc.name or "").partition(".")[0]
    if isinstance(exc, ModuleNotFoundError) and top in EXTRAS:
        return f"{top} is not installed: pip install 'graphtasks[{EXTRAS[top]}]'"
    return None
