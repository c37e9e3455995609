"""Whether the `fast` extra (numba) is installed: the compiled loops run only where it is.

Its own module so that what asks (the batched agents, the compiled lane loop) need not import
each other.

Examples
--------
>>> from gym_bridge.fast import available
>>> isinstance(available(), bool)
True
"""

from __future__ import annotations

import functools
import importlib.util


@functools.cache
def available() -> bool:
    """Whether numba is installed (the `fast` extra), so compiled loops can run here.

    Returns
    -------
    bool
        True when numba can be imported.

    Examples
    --------
    >>> from gym_bridge.fast import available
    >>> available() in (True, False)
    True
    """
    return importlib.util.find_spec("numba") is not None
