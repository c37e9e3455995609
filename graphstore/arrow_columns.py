"""Arrow arrays laid from their buffers, without `pyarrow.array`.

`pyarrow.array` imports pandas on its first call (when pandas is installed): 0.3 s or more of
every process that writes a first table, which is more than a small sweep spends playing. The
columns the stores and the record chunks write (numbers, flags and text, with gaps) are laid
into Arrow buffers here instead: the same arrays, so the same Parquet bytes and the same rows
copied into a store. Anything else goes through `pyarrow.array`, as before.

Examples
--------
>>> import pyarrow as pa
>>> from graphstore.arrow_columns import arrow_array
>>> arrow_array(["a", None, "b"], pa.string()).to_pylist()
['a', None, 'b']
>>> arrow_array([1, 2, 3], pa.int32()).type
DataType(int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _validity(valid: np.ndarray) -> tuple[Any, int]:
    """The validity bitmap of a column (None when nothing is missing) and its null count."""
    import pyarrow as pa

    missing = int(len(valid) - valid.sum())
    return (None if missing == 0 else pa.py_buffer(np.packbits(valid, bitorder="little"))), missing


def _strings(values: Any) -> Any:
    """A string array of str or None values."""
    import pyarrow as pa

    n = len(values)
    valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
    encoded = [v.encode("utf-8") if v is not None else b"" for v in values]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    mask, missing = _validity(valid)
    return pa.Array.from_buffers(pa.string(), n, [mask, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))],
                                 null_count=missing)


def arrow_array(values: Any, kind: Any) -> Any:
    """`values` (a list, or a numpy array for numbers) as an Arrow array of type `kind`.

    Parameters
    ----------
    values : sequence or numpy array
        The column's values; None is a gap (null).
    kind : pyarrow.DataType
        The array's type: strings, dictionaries of strings, integers, floats and booleans are
        laid from buffers; other types are converted by `pyarrow.array`.

    Returns
    -------
    pyarrow.Array
        The same array `pyarrow.array(values, kind)` makes; a value that does not fit the
        type (a fraction or a too large number in an integer column, a text in a number
        column) is refused by Arrow's own conversion, in its words.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from graphstore.arrow_columns import arrow_array
    >>> arrow_array(["x", "y", "x", None], pa.dictionary(pa.int32(), pa.string())).to_pylist()
    ['x', 'y', 'x', None]
    """
    import pyarrow as pa

    if isinstance(values, pa.Array):
        return values
    n = len(values)
    if pa.types.is_dictionary(kind) and pa.types.is_string(kind.value_type) and pa.types.is_int32(kind.index_type):
        if any(v is not None and not isinstance(v, str) for v in values):
            return pa.array(values, kind)
        words: dict[str, int] = {}
        codes = np.fromiter((0 if v is None else words.setdefault(v, len(words)) for v in values), np.int32, n)
        mask, missing = _validity(np.fromiter((v is not None for v in values), dtype=bool, count=n))
        indices = pa.Array.from_buffers(pa.int32(), n, [mask, pa.py_buffer(codes)], null_count=missing)
        return pa.DictionaryArray.from_arrays(indices, _strings(list(words)))
    if pa.types.is_string(kind):
        if any(v is not None and not isinstance(v, str) for v in values):
            return pa.array(values, kind)
        return _strings(values)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
            given = values
            valid = np.ones(n, dtype=bool)
        else:
            if any(isinstance(v, (str, bytes)) for v in values) or (
                    pa.types.is_boolean(kind) and any(v is not None and not isinstance(v, (bool, np.bool_))
                                                      for v in values)):
                return pa.array(values, kind)  # Arrow refuses a text in a number column, in its words
            valid = np.fromiter((v is not None for v in values), dtype=bool, count=n)
            given = np.array([0 if v is None else v for v in values]) if n else np.zeros(0)
        if given.dtype.kind not in "biuf":
            return pa.array(values, kind)
        numpy_kind = np.bool_ if pa.types.is_boolean(kind) else kind.to_pandas_dtype()
        array = np.ascontiguousarray(given, dtype=numpy_kind)
        if given.dtype != array.dtype and not np.array_equal(array, given):
            return pa.array(values, kind)  # a value numpy would cut to fit (1.5, 2**40): Arrow refuses it
        mask, missing = _validity(valid)
        data = pa.py_buffer(np.packbits(array, bitorder="little")) if pa.types.is_boolean(kind) else pa.py_buffer(array)
        return pa.Array.from_buffers(kind, n, [mask, data], null_count=missing)
    return pa.array(values, kind)


def numpy_of(column: Any) -> np.ndarray:
    """A number column (an Arrow array or chunked array without gaps) as a numpy array.

    `to_numpy` imports pandas (as `pyarrow.array` does); the values are read from the
    column's buffer instead. A column with gaps, or not of fixed-width numbers, goes through
    `to_numpy` (with its copy).

    Parameters
    ----------
    column : pyarrow.Array or pyarrow.ChunkedArray
        Integers or floats.

    Returns
    -------
    numpy.ndarray
        Its values, read-only where they are Arrow's buffer.

    Examples
    --------
    >>> import numpy as np
    >>> from graphstore.arrow_columns import arrow_array, numpy_of
    >>> import pyarrow as pa
    >>> numpy_of(arrow_array(np.arange(3), pa.int32())).tolist()
    [0, 1, 2]
    """
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if array.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return np.asarray(array.to_numpy(zero_copy_only=False))
    values = np.frombuffer(array.buffers()[1], dtype=kind.to_pandas_dtype())
    return values[array.offset:array.offset + len(array)]
