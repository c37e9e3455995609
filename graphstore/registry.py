"""One registry type for every plug-in table, as rdflib keeps one table of plugins.

Every table the code adds to by name (store backends, knowledge providers, task and bridge
families, reward kinds, entity classes, observation types, agents, fit models, hBayesDM
layouts) is a `Registry`: a dict by name, with

- ``register(name, item, replace=False)``: a name taken already is refused on one line,
  unless ``replace=True``;
- ``lookup(name)``: an unknown name is refused on one line naming the kind of thing, the
  name, the nearest known names (did you mean) and every known one;
- ``names()``, ``in``, iteration and ``len``, as a dict's;
- an entry-point group read once, lazily, the first time the table is read (not when it is
  filled at import), so a package adds to a table by an entry point without any import.

It lives in `graphstore`, the bottom layer, so every package may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, TypeVar

from .errors import GraphtasksError, did_you_mean

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

T = TypeVar("T")


class UnknownName(GraphtasksError, KeyError):
    """A name no registry entry has (a KeyError, so `except KeyError` still catches it)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(dict[str, T]):
    """A table of named plug-ins of one kind.

    Parameters
    ----------
    kind : str
        What it holds, for messages: ``"store backend"``, ``"reward kind"``, ...
    entries : callable, optional
        ``entries()``: the entry points of the table's group, read once, on the first read of
        the table (not on `register`): ``lambda: entry_points(group=GROUP)``, written in the
        table's module so that the group is read where its table is (tests/test_entry_point_groups.py
        finds every group read that way).
    load_entry : callable, optional
        ``load_entry(entry)`` adds one entry point's plug-in (default: register
        ``entry.load()`` under the entry's name; an import error propagates).
    before_entries : callable, optional
        ``before_entries(registry)``, run once just before the group is read (the built-in
        items a table holds first).
    error : callable, optional
        The exception class `lookup` raises (default `UnknownName`, a KeyError).
    message : callable, optional
        ``message(name, known)``: `lookup`'s one line for an unknown name (default:
        ``unknown <kind> 'name'; did you mean ...; known: a, b``).

    Examples
    --------
    >>> from graphstore.registry import Registry
    >>> colours = Registry("colour")
    >>> colours.register("red", 0xFF0000)
    16711680
    >>> colours.register("red", 1)
    Traceback (most recent call last):
    ...
    ValueError: colour 'red' exists; pass replace=True to replace it
    >>> colours.lookup("rde")
    Traceback (most recent call last):
    ...
    graphstore.registry.UnknownName: unknown colour 'rde'; did you mean 'red'?; known: red
    >>> colours.names(), "red" in colours, len(colours)
    (['red'], True, 1)
    """

    def __init__(
        self,
        kind: str,
        *,
        entries: Callable[[], Iterable[EntryPoint]] | None = None,
        load_entry: Callable[[EntryPoint], object] | None = None,
        before_entries: Callable[[Registry[T]], object] | None = None,
        error: Callable[[str], Exception] = UnknownName,
        message: Callable[[str, list[str]], str] | None = None,
    ) -> None:
        super().__init__()
        self.kind = kind
        self._entries = entries
        self._load_entry = load_entry
        self._before_entries = before_entries
        self._error = error
        self._message = message
        self._loaded = entries is None and before_entries is None

    # -- filling ---------------------------------------------------------------------------------
    def register(self, name: str, item: T, *, replace: bool = False) -> T:
        """Add `item` under `name`; a name taken already is a ValueError unless `replace`.

        Parameters
        ----------
        name : str
            Its name.
        item : object
            The plug-in.
        replace : bool, optional
            Replace an item of the same name.

        Returns
        -------
        object
            `item`.

        Examples
        --------
        >>> from graphstore.registry import Registry
        >>> sizes = Registry("size")
        >>> sizes.register("small", 1), sizes.register("small", 2, replace=True)
        (1, 2)
        >>> sizes.register("small", 3)
        Traceback (most recent call last):
        ...
        ValueError: size 'small' exists; pass replace=True to replace it
        """
        if dict.__contains__(self, name) and not replace:
            raise ValueError(f"{self.kind} {name!r} exists; pass replace=True to replace it")
        dict.__setitem__(self, name, item)
        return item

    def load(self) -> Registry[T]:
        """Read the entry-point group (once; later calls do nothing) and return the registry.

        Returns
        -------
        Registry
            Itself.
        """
        if not self._loaded:
            self._loaded = True  # set first: a plug-in that fails to load is not read again
            if self._before_entries is not None:
                self._before_entries(self)
            if self._entries is not None:
                for entry in self._entries():
                    if self._load_entry is not None:
                        self._load_entry(entry)
                    else:
                        self.register(entry.name, entry.load())
        return self

    @property
    def loaded(self) -> bool:
        """Whether the entry-point group has been read."""
        return self._loaded

    # -- reading ---------------------------------------------------------------------------------
    def unknown(self, name: str) -> str:
        """The one line `lookup` gives for a name it lacks.

        Parameters
        ----------
        name : str
            The unknown name.

        Returns
        -------
        str
            The message.
        """
        known = list(dict.keys(self))
        if self._message is not None:
            return self._message(name, known)
        return f"unknown {self.kind} {name!r}{did_you_mean(str(name), known)}; known: {', '.join(known) or 'none'}"

    def lookup(self, name: str) -> T:
        """The item called `name`; an unknown name is one line naming the known ones.

        Parameters
        ----------
        name : str
            Its name.

        Returns
        -------
        object
            The item (the error class given to the registry otherwise).

        Examples
        --------
        >>> from graphstore.backends import _BACKENDS
        >>> _BACKENDS.lookup("bolt").schemes[:2]
        ('bolt', 'bolt+s')
        >>> _BACKENDS.lookup("neo")
        Traceback (most recent call last):
        ...
        graphstore.registry.UnknownName: unknown store backend 'neo'; known: ladybug, bolt
        """
        self.load()
        if not dict.__contains__(self, name):
            raise self._error(self.unknown(name)) from None
        return dict.__getitem__(self, name)

    def names(self) -> list[str]:
        """Every name, in the order registered.

        Returns
        -------
        list of str
        """
        return list(self.load().keys())

    def __missing__(self, name: str) -> T:
        if not self._loaded:
            self.load()
            if dict.__contains__(self, name):
                return dict.__getitem__(self, name)
        error = self._error(self.unknown(name))
        raise error if isinstance(error, KeyError) else UnknownName(str(error))

    def __contains__(self, name: object) -> bool:
        self.load()
        return dict.__contains__(self, name)

    def __iter__(self) -> Iterator[str]:
        self.load()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.load()
        return dict.__len__(self)

    def keys(self) -> dict_keys[str, T]:
        self.load()
        return dict.keys(self)

    def values(self) -> dict_values[str, T]:
        self.load()
        return dict.values(self)

    def items(self) -> dict_items[str, T]:
        self.load()
        return dict.items(self)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {dict.__repr__(self)})"
