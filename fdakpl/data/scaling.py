"""Exact rescaling by powers of two, so that sums of squares neither overflow nor underflow at extreme scales."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["power_of_two_scale"]


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
