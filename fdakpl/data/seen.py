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

__all__ = ["remember_valid", "seen_valid"]

_SEEN: OrderedDict[tuple, tuple] = OrderedDict()
_MAX = 32


def _key(da: Any, loc: str) -> tuple[tuple, tuple] | None:
    xindexes = da.xindexes
    loc_index = xindexes.get(loc)
    sample_index = xindexes.get(SAMPLE)
    if loc_index is None or (sample_index is None and SAMPLE in da.coords):
        return None  # a coordinate without an index may be edited in place
    data = da.variable.data
    try:
        refs = (weakref.ref(data), weakref.ref(loc_index), None if sample_index is None else weakref.ref(sample_index))
    except TypeError:
        return None
    key = (id(data), type(data), getattr(data, "dtype", None), da.dims, da.shape, id(loc_index), id(sample_index))
    return key, refs


def _alive(refs: tuple, da: Any, loc: str) -> bool:
    objs = (da.variable.data, da.xindexes.get(loc), da.xindexes.get(SAMPLE))
    return all((r is None and o is None) or (r is not None and r() is o) for r, o in zip(refs, objs, strict=True))


def seen_valid(da: Any, loc: str) -> bool:
    """Whether ``da`` (with location dim ``loc``) is made of the objects of a variable found valid before."""
    found = _key(da, loc)
    if found is None:
        return False
    refs = _SEEN.get(found[0])
    return refs is not None and _alive(refs, da, loc)


def remember_valid(da: Any, loc: str) -> None:
    """Remember that ``da`` was found valid (weakly: by the identity of its values array and indexes)."""
    found = _key(da, loc)
    if found is None:
        return
    _SEEN[found[0]] = found[1]
    _SEEN.move_to_end(found[0])
    while len(_SEEN) > _MAX:
        _SEEN.popitem(last=False)
