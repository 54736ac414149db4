"""Functional variables already found valid, recognised by the identity of what validity depends on.

:func:`~fdakpl.data.functional.validate_functional` checks dims, dtype, the location coordinate and the
sample labels; none of the values. A model's data pass it several times (the formula at construction, the
fit, each prediction): the checks are skipped when the values array, its dims and shape, and the pandas
indexes of the location and sample coordinates are the very objects found valid before (indexes are
immutable; a replaced array or coordinate is a new object). Only weak references are held: nothing is kept
alive by this memory, and an entry whose objects are gone never matches.

Examples
--------
>>> import numpy as np, xarray as xr
>>> da = xr.DataArray(np.zeros((2, 3)), dims=("sample", "t"), coords={"t": [0.0, 0.5, 1.0], "sample": ["a", "b"]})
>>> seen_valid(da, "t")
False
>>> remember_valid(da, "t"); seen_valid(da, "t")
True
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

from .labels import SAMPLE

__all__ = ["carry_valid", "remember_valid", "seen_valid"]

_SEEN: OrderedDict[tuple, tuple] = OrderedDict()
_MAX = 32


def _parts(da: Any, loc: str, name: str | None = None) -> tuple[Any, Any, Any, tuple, tuple] | None:
    """The values array, the location and sample indexes, dims and shape of the DataArray ``da`` (or of the
    variable ``name`` of the Dataset ``da``); None when it cannot be remembered."""
    xindexes = da.xindexes
    loc_index = xindexes.get(loc)
    sample_index = xindexes.get(SAMPLE)
    if loc_index is None or (sample_index is None and SAMPLE in da.coords):
        return None  # a coordinate without an index may be edited in place
    var = da.variable if name is None else da.variables[name]
    return var.data, loc_index, sample_index, var.dims, var.shape


def _key(parts: tuple[Any, Any, Any, tuple, tuple]) -> tuple:
    data, loc_index, sample_index, dims, shape = parts
    return id(data), type(data), getattr(data, "dtype", None), dims, shape, id(loc_index), id(sample_index)


def seen_valid(da: Any, loc: str) -> bool:
    """Whether ``da`` (with location dim ``loc``) is made of the objects of a variable found valid before.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> seen_valid(xr.DataArray(np.zeros((1, 2)), dims=("sample", "t"), coords={"t": [0.0, 1.0]}), "t")
    False
    """
    return _seen(_parts(da, loc))


def _seen(parts: tuple | None) -> bool:
    refs = None if parts is None else _SEEN.get(_key(parts))
    return refs is not None and all((r is None and o is None) or (r is not None and r() is o)
                                    for r, o in zip(refs, parts[:3], strict=True))


def remember_valid(da: Any, loc: str) -> None:
    """Remember that ``da`` was found valid (weakly: by the identity of its values array and indexes).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.zeros((1, 2)), dims=("sample", "t"), coords={"t": [0.0, 1.0]})
    >>> remember_valid(da, "t"); seen_valid(da, "t"), seen_valid(da.copy(deep=True), "t")
    (True, False)
    """
    _remember(_parts(da, loc))


def _remember(parts: tuple | None) -> None:
    if parts is None:
        return
    try:
        refs = tuple(None if o is None else weakref.ref(o) for o in parts[:3])
    except TypeError:  # values that cannot be referenced weakly
        return
    key = _key(parts)
    try:
        _SEEN[key] = refs
        _SEEN.move_to_end(key)
        while len(_SEEN) > _MAX:
            _SEEN.popitem(last=False)
    except KeyError:  # pragma: no cover - another thread trimmed the memory meanwhile: only a lost entry
        pass


def carry_valid(source: Any, copy: Any, variables: dict[str, str]) -> None:
    """Remember the variables of ``copy``, a deep copy of the Dataset ``source``, as valid where their
    originals were found valid (a deep copy has the same dims, dtype, coordinates and labels).

    ``variables`` maps a variable's name to its location dim.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> ds = xr.Dataset({"y": (("sample", "t"), np.zeros((1, 2)))}, coords={"t": [0.0, 1.0]})
    >>> remember_valid(ds["y"], "t"); twin = ds.copy(deep=True); carry_valid(ds, twin, {"y": "t"})
    >>> seen_valid(twin["y"], "t")
    True
    """
    for name, loc in variables.items():
        if _seen(_parts(source, loc, name)):
            _remember(_parts(copy, loc, name))
