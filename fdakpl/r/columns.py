"""Column conventions shared by the two R bridges (rpy2 converters and reticulate entry points):
the locations of a curve column, and checks of per-column options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["check_option_keys", "location_grid"]


def location_grid(name: str, m: int, spec: Any, monotone: bool = False) -> np.ndarray:
    """Locations of a curve column with ``m`` values.

    Parameters
    ----------
    name : str
        The column (for messages).
    m : int
        Number of locations.
    spec : "index", "unit", None or array-like
        ``1..m`` (``"index"`` or None), ``linspace(0, 1, m)`` (``"unit"``) or
        ``m`` strictly increasing locations.
    monotone : bool
        Also accept strictly decreasing locations (the R converter keeps columns in R's order).

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> location_grid("y", 3, "unit").tolist(), location_grid("y", 2, None).tolist()
    ([0.0, 0.5, 1.0], [1.0, 2.0])
    """
    if spec is None or isinstance(spec, str):
        if spec in (None, "index", "unit"):
            return np.linspace(0.0, 1.0, m) if spec == "unit" else np.arange(1.0, m + 1.0)
        raise ValueError(f"grid for {name!r} is {spec!r}; use 'index', 'unit' or an array of {m} locations")
    grid = np.asarray(spec, dtype=float).ravel()
    if grid.size != m:
        raise ValueError(f"grid for {name!r} has {grid.size} locations but the matrix column has {m} columns")
    steps = np.diff(grid)
    if not np.all(np.isfinite(grid)) or not (np.all(steps > 0) or (monotone and np.all(steps < 0))):
        raise ValueError(f"grid for {name!r} must be strictly increasing{' (or decreasing)' if monotone else ''} "
                         "finite numbers")
    return grid


def check_option_keys(option: str, given: Any, allowed: Mapping[str, str], want: str) -> None:
    """Refuse keys of ``grids=`` / ``factor_levels=`` that name no suitable column (a typo would be ignored).

    Examples
    --------
    >>> check_option_keys("grids=", {"y": "unit"}, {"y": "matrix"}, "matrix")
    """
    if not isinstance(given, Mapping):
        return
    bad = sorted(str(k) for k in given if str(k) not in allowed or allowed[str(k)] != want)
    if bad:
        fit = sorted(k for k, kind in allowed.items() if kind == want)
        raise ValueError(f"{option} names {bad}, which are not {want} columns; the {want} columns are {fit} "
                         "(check the spelling)")
