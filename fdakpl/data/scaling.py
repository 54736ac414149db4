"""Exact rescaling by powers of two, so that sums of squares neither overflow nor underflow at extreme scales."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["median", "power_of_two_scale"]


def power_of_two_scale(values: Any) -> float:
    """The power of two just above the largest ``|value|`` (NaN ignored); 1 when that is 0, infinite or absent.

    Dividing by it is exact in floating point (only the exponents change), so results computed on the
    rescaled values and scaled back are those of the raw values, without overflow near 1e200 or underflow
    near 1e-200.

    Examples
    --------
    >>> power_of_two_scale([3.0, -5.0]), power_of_two_scale([np.nan, 0.0]), power_of_two_scale([np.inf])
    (8.0, 1.0, 1.0)
    """
    arr = np.abs(np.asarray(values, dtype=float))
    top = float(np.nanmax(arr)) if arr.size and not np.isnan(arr).all() else 0.0
    return float(2.0 ** np.frexp(top)[1]) if 0.0 < top < np.inf else 1.0


def median(values: Any) -> float:
    """``numpy.median`` of the values (NaN when there are none), without its overhead on small arrays.

    The middle value of the sorted values, or the mean of the two middle ones: the same number.

    Examples
    --------
    >>> median(np.array([3, 1, 2])), median(np.array([4.0, 1.0, 2.0, 3.0]))
    (2.0, 2.5)
    """
    a = np.sort(np.asarray(values), axis=None)
    k = a.size
    if k == 0:
        return float("nan")
    return float(a[k // 2]) if k % 2 else float(np.mean(a[k // 2 - 1:k // 2 + 1]))
