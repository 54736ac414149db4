"""Column conventions shared by the two R bridges (rpy2 converters and reticulate entry points):
the locations of a curve column, and checks of per-column options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data.functional import SAMPLE

__all__ = ["check_matrix_names", "check_names", "check_option_keys", "location_grid", "na_level_label", "numeric_names"]


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


def na_level_label(taken: list[str]) -> str:
    """The label of a factor's NA level (R's ``addNA()``) among its other levels ``taken``: ``"NA"``,
    unless a real level is so called (North America), then ``"<NA>"`` (as R prints it), made unique.
    The R package labels it alike.

    Examples
    --------
    >>> na_level_label(["a", "b"]), na_level_label(["Europe", "NA"])
    ('NA', '<NA>')
    """
    label = "NA"
    while label in taken:
        label = "<NA>" if label == "NA" else label + "'"
    return label


def numeric_names(colnames: list[str] | None, name: str) -> Any:
    """The locations that a matrix column's names give when they are all numbers and strictly
    monotone, else ``"index"`` (the rule of the R package's ``kpl()``: irregular times, wavenumbers).

    Examples
    --------
    >>> numeric_names(["0.5", "2", "2.25"], "y"), numeric_names(["t1", "t2"], "y")
    ([0.5, 2.0, 2.25], 'index')
    """
    if colnames is None:
        return "index"
    try:
        values = [float(v) for v in colnames]
    except ValueError:
        return "index"
    steps = np.diff(values)
    if not all(np.isfinite(values)) or not (np.all(steps > 0) or np.all(steps < 0)):
        return "index"
    return values


def check_names(names: list[str | None]) -> None:
    """Refuse R column names that cannot name the variables of a Dataset: NA, empty, duplicated,
    ``sample`` (the sample dim) or ``r_row_name`` (the coordinate of the row names).

    Examples
    --------
    >>> check_names(["a", None])
    Traceback (most recent call last):
    ...
    ValueError: column 2 has an NA name; give every column a name in R
    """
    for i, name in enumerate(names):
        if name is None:
            raise ValueError(f"column {i + 1} has an NA name; give every column a name in R")
        if not name:
            raise ValueError(f"column {i + 1} has an empty name; give every column a name in R")
        if names.count(name) > 1:
            raise ValueError(f"{names.count(name)} columns are named {name!r}; make the names unique in R, "
                             "e.g. names(df) <- make.unique(names(df))")
    if SAMPLE in names:
        raise ValueError(f"a column is named {SAMPLE!r}, the name of the sample dim; rename it in R")
    if "r_row_name" in names:
        raise ValueError("a column is named 'r_row_name', the coordinate that keeps the row names; rename it in R")


def check_matrix_names(names: list[str], matrices: list[str]) -> None:
    """Refuse a column named like a coordinate made for a matrix column (``x_loc`` next to ``x``).

    Examples
    --------
    >>> check_matrix_names(["x", "x_loc"], ["x"])
    Traceback (most recent call last):
    ...
    ValueError: column 'x_loc' has the name of a coordinate made for the matrix column 'x'; rename it in R
    """
    for m in matrices:
        for suffix in ("_loc", "_colname", "_rowname"):
            if m + suffix in names:
                raise ValueError(f"column {m + suffix!r} has the name of a coordinate made for the matrix column "
                                 f"{m!r}; rename it in R")
