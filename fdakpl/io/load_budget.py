"""The memory :func:`fdakpl.io.netcdf_load.load` plans before it reads or builds anything.

Loading a model file allocates in four places: the JSON description (parsed into Python
objects), the arrays read from the file, the dtype each array is converted to (named by the
file, so a forged file could name a wider one: a float array claiming ``'<U256'`` would grow
128-fold), and the small arrays written inline in the description. Every one of them is
planned here from what the file declares (sizes, dtypes, text length), before it happens, and
the total is checked against ``max_bytes``. The ``n x n`` kernel matrix is not rebuilt at load
(results store what they computed from it), so it needs no plan.

The bounds are upper bounds measured with :mod:`tracemalloc` (``tests/test_trust3.py``): a
JSON text of ``c`` characters takes at most ``JSON_FACTOR * c`` bytes once parsed (``[]``, two
characters, is a 56-byte list plus its 8-byte slot in the enclosing one); an object array
holds one Python object per element.

Examples
--------
>>> check_max_bytes(2 ** 20)
1048576.0
>>> plan_array(np.dtype("<f8"), 1000, np.dtype("<U256"))
(1024000, 2088000)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["JSON_FACTOR", "check_max_bytes", "description_dicts", "inline_arrays", "plan_array", "plan_json"]

#: bytes of Python objects per character of JSON text, at most (measured: 35 for ``[[], [], ...]``)
JSON_FACTOR = 48
#: bytes of one Python object (a float, a short str) plus its slot in a list, at most, for object arrays
_OBJECT_BYTES = 64


def check_max_bytes(max_bytes: Any) -> float:
    """``max_bytes`` of :func:`load` as a float: a positive number of bytes (``math.inf``: no limit).

    Raises
    ------
    TypeError
        If it is not a number (``None``, a string, a boolean).
    ValueError
        If it is NaN, zero or negative.

    Examples
    --------
    >>> check_max_bytes(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: max_bytes must be a positive number of bytes (e.g. 2**30 for 1 GiB; math.inf for no limit), got nan
    >>> check_max_bytes("10")
    Traceback (most recent call last):
    ...
    TypeError: max_bytes must be a number of bytes (e.g. 2**30 for 1 GiB; math.inf for no limit), got '10' (str)
    """
    if isinstance(max_bytes, (bool, np.bool_)) or not isinstance(max_bytes, (int, float, np.integer, np.floating)):
        raise TypeError("max_bytes must be a number of bytes (e.g. 2**30 for 1 GiB; math.inf for no limit), got "
                        f"{max_bytes!r} ({type(max_bytes).__name__})")
    value = float(max_bytes)
    if math.isnan(value) or value <= 0:
        raise ValueError("max_bytes must be a positive number of bytes (e.g. 2**30 for 1 GiB; math.inf for no "
                         f"limit), got {max_bytes!r}")
    return value


def plan_json(n_chars: int) -> int:
    """Bytes that parsing (and re-serialising, for the checksum) a JSON text of ``n_chars`` characters may take.

    Examples
    --------
    >>> plan_json(1000)
    50000
    """
    return (JSON_FACTOR + 2) * int(n_chars)


def plan_array(file_dtype: np.dtype, size: int, target: np.dtype) -> tuple[int, int]:
    """``(kept, transient)`` bytes of an array of ``size`` elements read as ``file_dtype`` and restored as
    ``target``: what stays in memory, and the peak while it is read and converted (the file's values, the
    conversion and the result at once).

    Examples
    --------
    >>> plan_array(np.dtype("<i1"), 10, np.dtype("<f8"))
    (80, 90)
    """
    size = int(size)
    read = size * max(int(file_dtype.itemsize), 8 if file_dtype.kind == "O" else 1)
    if target.kind == "O":  # one Python object per element, and tolist()'s list on the way
        kept = size * (_OBJECT_BYTES + 8 + max(int(file_dtype.itemsize), 0))
        return kept, read + 2 * kept
    kept = size * max(int(target.itemsize), 1)
    if target.kind in "US" or file_dtype.kind in "OUS":  # text: astype(str) first, then the named width
        return kept, read + 2 * kept + size * 4 * max(int(file_dtype.itemsize), 1)
    return kept, read + kept


def inline_arrays(obj: Any) -> list[dict[str, Any]]:
    """The arrays written inline in a model description (``{"__ndarray__": dtype, "shape": ..., "data": ...}``).

    Examples
    --------
    >>> inline_arrays({"a": [{"__ndarray__": "<f8", "shape": [0], "data": []}]})
    [{'__ndarray__': '<f8', 'shape': [0], 'data': []}]
    """
    return [d for d in description_dicts(obj, into=lambda d: "__ndarray__" not in d) if "__ndarray__" in d]


def description_dicts(obj: Any, into: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[dict[str, Any]]:
    """Every mapping in a parsed JSON description (lists and mappings walked without recursion, so a forged
    nesting depth cannot exhaust the stack); ``into(d)`` False: ``d``'s values are not walked.

    Examples
    --------
    >>> [sorted(d) for d in description_dicts([{"a": {"b": 1}}, 2])]
    [['a'], ['b']]
    """
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, list):
            stack.extend(cur)
        elif isinstance(cur, dict):
            yield cur
            if into is None or into(cur):
                stack.extend(cur.values())
