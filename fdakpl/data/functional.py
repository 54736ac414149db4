"""Functional data on xarray: conventions, validation, dense and long forms.

Conventions
-----------
* Every variable shares the dimension ``sample``.
* A *functional* variable has exactly one more dimension, its *location*
  dimension, with a numeric, strictly increasing coordinate.
* ``NaN`` in the dense form means "not observed"; the long form never stores
  ``NaN``.

Inside the package, observations are carried by :class:`Observations`, a plain
container of NumPy arrays (one entry per observed point), so that the solvers
never see labels.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from .labels import SAMPLE, coordinate_values, sample_index

__all__ = [
    "SAMPLE",
    "Observations",
    "as_dataset",
    "check_domain",
    "check_locations",
    "from_long",
    "interpolate_missing",
    "interpolate_rows",
    "location_dim",
    "masked_to_nan",
    "quadrature_weights",
    "to_long",
    "validate_functional",
]


def location_dim(da: xr.DataArray, name: str | None = None) -> str:
    """Return the location dimension of a functional DataArray.

    Parameters
    ----------
    da : xarray.DataArray
        A functional variable with dims ``("sample", <location>)``.
    name : str, optional
        Name used in error messages (defaults to ``da.name``).

    Returns
    -------
    str
        The name of the dimension that is not ``sample``.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.zeros((2, 3)), dims=("sample", "t"),
    ...                   coords={"t": [0.0, 0.5, 1.0]})
    >>> location_dim(da)
    't'
    """
    label = name or da.name or "variable"
    others = [d for d in da.dims if d != SAMPLE]
    if SAMPLE not in da.dims:
        raise ValueError(
            f"{label!r} has dims {da.dims} but no 'sample' dim; rename the sample "
            f"dim with da.rename({{'<old>': 'sample'}})"
        )
    if len(others) != 1:
        raise ValueError(
            f"{label!r} has dims {da.dims}; a functional variable needs exactly one "
            "location dim besides 'sample' (stack or select the extra dims first)"
        )
    return str(others[0])


def validate_functional(da: Any, name: str | None = None) -> xr.DataArray:
    """Check that ``da`` is a well-formed functional variable and return it.

    The result is transposed to ``("sample", <location>)`` and cast to float.
    The input is never modified.

    Parameters
    ----------
    da : xarray.DataArray
        Functional variable.
    name : str, optional
        Name used in error messages.

    Returns
    -------
    xarray.DataArray
        A float64 view with dims ordered ``("sample", <location>)``.

    Raises
    ------
    TypeError
        If ``da`` is not a DataArray or holds non-numeric values.
    ValueError
        If the location coordinate is missing, non-numeric, not strictly
        increasing, or contains non-finite values, or if sample labels are
        duplicated.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.ones((2, 3)), dims=("sample", "t"),
    ...                   coords={"t": [0.0, 0.5, 1.0]}, name="y")
    >>> validate_functional(da).dims
    ('sample', 't')
    """
    if not isinstance(da, xr.DataArray):
        raise TypeError(
            f"{name or 'variable'!r} must be an xarray.DataArray with dims "
            f"('sample', <location>), got {type(da).__name__}"
        )
    label = name or da.name or "variable"
    loc = location_dim(da, label)
    _check_functional(da, label, loc)
    out = da if da.dims == (SAMPLE, loc) else da.transpose(SAMPLE, loc)
    return out if out.dtype == np.float64 else out.astype(np.float64)


def _check_functional(da: xr.DataArray, label: str, loc: str) -> None:
    if not np.issubdtype(da.dtype, np.number) or np.issubdtype(da.dtype, np.complexfloating):
        raise TypeError(f"{label!r} has dtype {da.dtype}; functional values must be real numbers (convert with "
                        "da.astype(float))")
    if loc not in da.coords:
        raise ValueError(f"{label!r}: location dim {loc!r} has no coordinate; assign one with "
                         f"da.assign_coords({loc}=np.linspace(0, 1, {da.sizes[loc]}))")
    coord = coordinate_values(da, loc)
    if coord.dtype.kind in "mM":
        unit = "np.timedelta64(1, 's')" if coord.dtype.kind == "m" else "np.timedelta64(1, 'D')"
        start = "" if coord.dtype.kind == "m" else f" - da[{loc!r}][0]"
        raise ValueError(
            f"{label!r}: location coordinate {loc!r} holds {'durations' if coord.dtype.kind == 'm' else 'dates'}; "
            f"locations must be numbers in the unit you mean, e.g. "
            f"da.assign_coords({loc}={'(' if start else ''}da[{loc!r}]{start}{')' if start else ''} / {unit})")
    if not np.issubdtype(coord.dtype, np.number):
        raise ValueError(f"{label!r}: location coordinate {loc!r} has dtype {coord.dtype}; it must be numeric "
                         f"(assign numbers with da.assign_coords({loc}=...))")
    if coord.dtype.kind in "iu" and np.unique(coord).size != np.unique(coord.astype(float)).size:
        raise ValueError(f"{label!r}: location coordinate {loc!r} has distinct integers that are equal as floats "
                         f"(beyond 2**53); subtract an offset first, e.g. da.assign_coords({loc}=da[{loc!r}] - "
                         f"da[{loc!r}][0])")
    coord = coord.astype(float)
    if not np.all(np.isfinite(coord)):
        raise ValueError(f"{label!r}: location coordinate {loc!r} has non-finite values")
    if coord.size > 1 and np.any(coord[1:] <= coord[:-1]):
        raise ValueError(f"{label!r}: location coordinate {loc!r} is not strictly increasing; sort it with "
                         f"da.sortby({loc!r}) and drop duplicated locations")
    if SAMPLE in da.coords and not sample_index(da).is_unique:
        dup = pd.Index(da[SAMPLE].values)
        shown = dup[dup.duplicated()].unique()[:5].tolist()
        raise ValueError(
            f"{label!r} has duplicated sample labels {shown}; labels must identify curves (predictions, "
            "cross-validation and alignment use them): relabel, e.g. "
            "da.assign_coords(sample=np.arange(da.sizes['sample']))"
        )


def quadrature_weights(grid: np.ndarray, domain: tuple[float, float] | None = None) -> np.ndarray:
    """Trapezoidal quadrature weights of a grid over a domain.

    The grid points split the domain into cells; each point carries half the
    length of its neighbouring intervals, and the first and last points also
    carry the stretch between them and the domain's ends, so the weights sum
    to the length of the domain. On the paper's normalised domain ``[0, 1]``
    they sum to 1.

    Parameters
    ----------
    grid : array_like, shape (m,)
        Strictly increasing locations.
    domain : (float, float), optional
        Integration domain; defaults to ``(grid[0], grid[-1])``.

    Returns
    -------
    numpy.ndarray, shape (m,)

    Examples
    --------
    >>> quadrature_weights(np.linspace(0, 1, 5))
    array([0.125, 0.25 , 0.25 , 0.25 , 0.125])
    """
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError("grid must be a non-empty 1-d array of locations")
    lo, hi = (grid[0], grid[-1]) if domain is None else map(float, domain)
    tol = 1e-12 * max(hi - lo, abs(lo), abs(hi))  # relative: the same check in any unit of the locations
    if grid[0] < lo - tol or grid[-1] > hi + tol:
        raise ValueError(f"grid [{grid[0]}, {grid[-1]}] leaves the domain [{lo}, {hi}]")
    if grid.size == 1:
        return np.array([hi - lo if hi > lo else 1.0])
    mid = 0.5 * (grid[1:] + grid[:-1])
    edges = np.concatenate([[lo], mid, [hi]])
    return np.diff(edges)


def masked_to_nan(values: Any) -> Any:
    """A numpy masked array → float array with NaN at the masked entries; anything else unchanged.

    ``np.asarray`` drops the mask of a masked array (netCDF4 returns them), which would let the
    hidden values into the fit; NaN is how fdakpl marks a value as missing.

    Examples
    --------
    >>> masked_to_nan(np.ma.masked_array([1.0, 99.0], mask=[False, True]))
    array([ 1., nan])
    """
    if isinstance(values, np.ma.MaskedArray):
        return np.ma.filled(np.ma.asarray(values, dtype=float), np.nan)
    return values


@dataclass(frozen=True)
class Observations:
    """Observed points of ``n`` curves, one entry per observed point.

    Parameters
    ----------
    index : numpy.ndarray of int, shape (N,)
        Which curve (0 .. n-1) each point belongs to; sorted.
    location : numpy.ndarray of float, shape (N,)
        Where each point was observed.
    value : numpy.ndarray of float, shape (N,)
        The observed values (finite).
    n_samples : int
        Number of curves ``n``.
    grid : numpy.ndarray, optional
        The common grid when the data came from a dense form.
    grid_index : numpy.ndarray of int, optional
        Position of each point on ``grid`` (dense form only).

    Examples
    --------
    >>> Y = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    >>> obs = Observations.from_dense(Y, np.array([0.0, 0.5, 1.0]))
    >>> obs.counts
    array([2, 3])
    """

    index: np.ndarray
    location: np.ndarray
    value: np.ndarray
    n_samples: int
    grid: np.ndarray | None = None
    grid_index: np.ndarray | None = None

    @classmethod
    def from_dense(cls, values: np.ndarray, grid: np.ndarray) -> Observations:
        """Build from an ``(n, m)`` array on a common grid, NaN meaning unobserved."""
        values = np.asarray(values, dtype=float)
        grid = np.asarray(grid, dtype=float)
        if values.ndim != 2 or values.shape[1] != grid.size:
            raise ValueError(f"dense values have shape {values.shape}; expected (n_samples, {grid.size})")
        mask = np.isfinite(values)  # observed: not NaN (and no infinite value)
        if not mask.all() and np.isinf(values).any():
            raise ValueError("response has infinite values; replace them by NaN to mark them unobserved")
        flat = np.flatnonzero(mask)  # row by row
        rows = flat // values.shape[1]
        cols = flat - rows * values.shape[1]  # np.divmod's numbers, at half its cost
        out = cls(index=rows, location=grid[cols], value=values.ravel()[flat], n_samples=values.shape[0], grid=grid,
                  grid_index=cols)
        counts = mask.sum(axis=1)  # np.count_nonzero's numbers (and dtype), faster along an axis
        counts.flags.writeable = False
        out.__dict__["counts"] = counts  # what the property computes, from the mask
        return out

    @functools.cached_property
    def counts(self) -> np.ndarray:
        """Number of observed points per curve, ``m_i`` (computed once; read-only)."""
        out = np.bincount(self.index, minlength=self.n_samples)
        out.flags.writeable = False
        return out

    @property
    def fully_observed(self) -> bool:
        """True when every curve is observed at every point of a common grid."""
        return self.grid is not None and self.index.size == self.n_samples * self.grid.size

    def to_dense(self) -> np.ndarray:
        """The ``(n, m)`` dense array on ``grid`` (NaN where unobserved)."""
        if self.grid is None or self.grid_index is None:
            raise ValueError("these observations have no common grid; use from_long(..., grid=...)")
        out = np.full((self.n_samples, self.grid.size), np.nan)
        out[self.index, self.grid_index] = self.value
        return out

    def subset(self, rows: np.ndarray) -> Observations:
        """Observations of the curves ``rows`` (re-indexed 0 .. len(rows)-1)."""
        rows = np.asarray(rows, dtype=np.intp)
        pos = np.full(self.n_samples, -1, dtype=np.intp)
        pos[rows] = np.arange(rows.size)
        keep = pos[self.index] >= 0
        new_index = pos[self.index[keep]]
        order = np.argsort(new_index, kind="stable")
        return Observations(
            index=new_index[order],
            location=self.location[keep][order],
            value=self.value[keep][order],
            n_samples=rows.size,
            grid=self.grid,
            grid_index=None if self.grid_index is None else self.grid_index[keep][order],
        )

    def with_values(self, value: np.ndarray) -> Observations:
        """Same points, new values."""
        out = Observations(self.index, self.location, np.asarray(value, float), self.n_samples, self.grid,
                           self.grid_index)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k == "counts"})  # same points, counts
        return out


def to_long(da: xr.DataArray, name: str | None = None) -> pd.DataFrame:
    """Dense functional DataArray → long DataFrame of observed points.

    Parameters
    ----------
    da : xarray.DataArray
        Functional variable, dims ``("sample", <location>)``; NaN = unobserved.
    name : str, optional
        Name for error messages.

    Returns
    -------
    pandas.DataFrame
        Columns ``sample``, ``location``, ``value``; one row per observed point,
        ordered by sample then location. ``attrs`` keep the variable and
        location names and the sample order.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray([[1.0, np.nan], [3.0, 4.0]], dims=("sample", "t"),
    ...                   coords={"sample": ["a", "b"], "t": [0.0, 1.0]}, name="y")
    >>> to_long(da)
      sample  location  value
    0      a       0.0    1.0
    1      b       0.0    3.0
    2      b       1.0    4.0
    """
    da = validate_functional(da, name)
    loc = location_dim(da)
    labels = da[SAMPLE].values if SAMPLE in da.coords else np.arange(da.sizes[SAMPLE])
    obs = Observations.from_dense(da.values, da[loc].values)
    df = pd.DataFrame({SAMPLE: labels[obs.index], "location": obs.location, "value": obs.value})
    df.attrs.update({"name": da.name, "location_dim": loc, "samples": list(labels)})
    return df


def check_locations(values: Any, name: str, *, increasing: bool = False) -> np.ndarray:
    """Locations as a 1-d float array, with an error naming ``name`` for what would hide the cause later.

    Refuses a 2-d array, NaN or infinite values (with their positions),
    distinct integer locations that collide in float64 (beyond 2**53), and,
    with ``increasing=True``, locations that are not strictly increasing.

    Examples
    --------
    >>> check_locations([0, 0.5, 1], "at")
    array([0. , 0.5, 1. ])
    >>> check_locations([0.0, float("nan")], "at")
    Traceback (most recent call last):
    ...
    ValueError: at has NaN or infinite values at positions [1]; locations must be finite numbers
    """
    raw = np.asarray(values)
    if raw.ndim > 1:
        raise ValueError(f"{name} has shape {raw.shape}; locations are a 1-d list of numbers, e.g. "
                         "np.linspace(0, 1, 50)")
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"{name} has dtype {raw.dtype}; locations must be numbers (convert durations or dates to "
                        "numbers in the unit you mean, e.g. t / np.timedelta64(1, 's'))")
    out = np.atleast_1d(raw.astype(float))
    bad = np.nonzero(~np.isfinite(out))[0] if not np.isfinite(out).all() else ()
    if len(bad):
        raise ValueError(f"{name} has NaN or infinite values at positions {bad[:10].tolist()}; locations must be "
                         "finite numbers")
    if raw.dtype.kind in "iu" and np.unique(raw).size != np.unique(out).size:
        raise ValueError(f"{name} has distinct integer locations that are equal as floats (beyond 2**53); "
                         "subtract an offset (e.g. the first location) or rescale them first")
    if increasing and out.size > 1 and np.any(out[1:] <= out[:-1]):
        raise ValueError(f"{name} must be strictly increasing; sort it and drop duplicated locations")
    return out


def check_domain(domain: Any, name: str = "domain") -> tuple[float, float] | None:
    """``None`` or two finite numbers ``lo < hi``.

    Examples
    --------
    >>> check_domain((0, 2))
    (0.0, 2.0)
    >>> check_domain(1)
    Traceback (most recent call last):
    ...
    ValueError: domain must be None or two finite numbers (lo, hi) with lo < hi, e.g. domain=(0, 1); got 1
    """
    if domain is None:
        return None
    msg = f"{name} must be None or two finite numbers (lo, hi) with lo < hi, e.g. {name}=(0, 1); got {domain!r}"
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(msg)
    return lo, hi


def from_long(
    df: pd.DataFrame,
    grid: np.ndarray | None = None,
    *,
    samples: Any = None,
    name: str | None = None,
    location_dim_name: str | None = None,
) -> xr.DataArray:
    """Long DataFrame (sample, location, value) → dense DataArray with NaN.

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``sample``, ``location``, ``value``.
    grid : array_like, optional
        Locations of the dense grid; defaults to the sorted unique locations.
        Every observed location must lie on the grid (no silent rounding).
    samples : array_like, optional
        Sample labels and their order; defaults to ``df.attrs['samples']`` or
        the order of first appearance. Samples without points become all-NaN rows.
    name, location_dim_name : str, optional
        Name of the variable and of its location dim (default ``"location"``).

    Returns
    -------
    xarray.DataArray

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sample": ["a", "b", "b"], "location": [0.0, 0.0, 1.0],
    ...                    "value": [1.0, 3.0, 4.0]})
    >>> from_long(df, name="y").values
    array([[ 1., nan],
           [ 3.,  4.]])
    """
    missing = {SAMPLE, "location", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"long data lacks columns {sorted(missing)}; it needs 'sample', 'location', 'value'")
    loc_vals = check_locations(df["location"].to_numpy(), "the long data's 'location' column")
    vals = df["value"].to_numpy(dtype=float)
    if not np.all(np.isfinite(vals)):
        raise ValueError("long data has non-finite 'value' entries; drop them (the long form never stores NaN)")
    if samples is None:
        samples = df.attrs.get("samples")
    if samples is None:
        samples = pd.unique(df[SAMPLE])
    samples = np.asarray(samples)
    grid = np.unique(loc_vals) if grid is None else check_locations(grid, "grid")
    if grid.size > 1 and not np.all(np.diff(grid) > 0):
        raise ValueError("grid must be increasing without repeated values, e.g. np.unique(grid)")
    # the nearest grid point on either side (a location a round-off below or above a grid point is on it)
    right = np.clip(np.searchsorted(grid, loc_vals), 0, grid.size - 1)
    left = np.clip(right - 1, 0, grid.size - 1)
    col = np.where(np.abs(grid[left] - loc_vals) <= np.abs(grid[right] - loc_vals), left, right)
    off = np.abs(grid[col] - loc_vals) > 1e-12 * float(np.abs(grid).max())  # relative: any unit
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"the long-form location {float(loc_vals[i])!r} is not on the requested grid (nearest "
                         f"grid point {float(grid[col[i]])!r}; {int(off.sum())} such locations); pass grid=None to "
                         "use the locations' own grid, or a grid that contains every location")
    row_of = pd.Index(samples).get_indexer(df[SAMPLE])
    if (row_of < 0).any():
        raise ValueError("long data has sample labels that are not in `samples`")
    out = np.full((samples.size, grid.size), np.nan)
    if pd.DataFrame({"r": row_of, "c": col}).duplicated().any():
        raise ValueError("long data has two values for the same (sample, location); aggregate them first")
    out[row_of, col] = vals
    ldim = location_dim_name or df.attrs.get("location_dim") or "location"
    return xr.DataArray(out, dims=(SAMPLE, ldim), coords={SAMPLE: samples, ldim: grid},
                        name=name if name is not None else df.attrs.get("name"))


def observations_from_long(df: pd.DataFrame, samples: Any = None) -> tuple[Observations, np.ndarray]:
    """Long DataFrame → (:class:`Observations`, sample labels), irregular locations kept.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"sample": [0, 0, 1], "location": [0.1, 0.7, 0.3],
    ...                    "value": [1.0, 2.0, 3.0]})
    >>> obs, labels = observations_from_long(df)
    >>> obs.counts
    array([2, 1])
    """
    missing = {SAMPLE, "location", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"long data lacks columns {sorted(missing)}; it needs 'sample', 'location', 'value'")
    if samples is None:
        samples = df.attrs.get("samples")
    if samples is None:
        samples = pd.unique(df[SAMPLE])
    samples = np.asarray(samples)
    rows = pd.Index(samples).get_indexer(df[SAMPLE])
    if (rows < 0).any():
        raise ValueError("long data has sample labels that are not in `samples`")
    loc = df["location"].to_numpy(dtype=float)
    val = df["value"].to_numpy(dtype=float)
    if not (np.all(np.isfinite(loc)) and np.all(np.isfinite(val))):
        raise ValueError("long data has non-finite 'location' or 'value'; drop those rows")
    order = np.lexsort((loc, rows))
    return Observations(rows[order].astype(np.intp), loc[order], val[order], samples.size), samples


def interpolate_missing(values: np.ndarray, grid: np.ndarray, name: str = "input") -> np.ndarray:
    """Fill NaN along each row by linear interpolation (constant beyond the ends).

    Parameters
    ----------
    values : numpy.ndarray, shape (n, m)
    grid : numpy.ndarray, shape (m,)
    name : str
        Name for error messages.

    Returns
    -------
    numpy.ndarray
        A new array without NaN.

    Examples
    --------
    >>> interpolate_missing(np.array([[1.0, np.nan, 3.0]]), np.array([0.0, 1.0, 2.0]))
    array([[1., 2., 3.]])
    """
    out = np.array(values, dtype=float, copy=True)
    bad = np.isnan(out)
    if not bad.any():
        return out
    empty = np.flatnonzero(bad.all(axis=1))
    if empty.size:
        raise ValueError(f"{name!r} has a sample with no observed value (row {empty[0]}); drop it")
    return interpolate_rows(out, np.asarray(grid, dtype=float))


def interpolate_rows(Y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each row's linear interpolant at ``x`` between its observed (non-NaN) values, constant beyond its first
    and last ones, 0 for a row without values: row by row what :func:`numpy.interp` gives (the same
    expression ``slope (x - x_j) + y_j``, so the same numbers), for all rows at once.

    Examples
    --------
    >>> interpolate_rows(np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, np.nan]]), np.array([0.0, 1.0, 4.0]))
    array([[1. , 1.5, 3. ],
           [2. , 2. , 2. ]])
    """
    seen = ~np.isnan(Y)
    gappy = np.flatnonzero(~seen.all(axis=1))
    if gappy.size < Y.shape[0]:  # complete rows are their own interpolants: only the others are computed
        out = np.array(Y, dtype=float, copy=True)
        if gappy.size:
            out[gappy] = _interpolated(Y[gappy], seen[gappy], x)
        return out
    return _interpolated(Y, seen, x)


def _interpolated(Y: np.ndarray, seen: np.ndarray, x: np.ndarray) -> np.ndarray:
    n, m = Y.shape
    cols = np.arange(m)
    prev = np.maximum.accumulate(np.where(seen, cols, -1), axis=1)  # last observed column <= p
    nxt = np.minimum.accumulate(np.where(seen, cols, m)[:, ::-1], axis=1)[:, ::-1]  # first observed >= p
    first = np.where(seen.any(axis=1), seen.argmax(axis=1), 0)
    last = m - 1 - seen[:, ::-1].argmax(axis=1)
    rows = np.arange(n)
    out = np.where(seen, Y, 0.0)
    inside = ~seen & (prev >= 0) & (nxt < m)
    i, p = np.nonzero(inside)
    j, k = prev[i, p], nxt[i, p]
    slope = (Y[i, k] - Y[i, j]) / (x[k] - x[j])
    out[i, p] = slope * (x[p] - x[j]) + Y[i, j]
    before = ~seen & (prev < 0) & (nxt < m)
    out[before] = np.broadcast_to(Y[rows, first][:, None], (n, m))[before]
    after = ~seen & (nxt >= m) & (prev >= 0)
    out[after] = np.broadcast_to(Y[rows, last][:, None], (n, m))[after]
    return out


def as_dataset(data: Any) -> xr.Dataset:
    """The data of a model as an :class:`xarray.Dataset`: a Dataset as it is, or a mapping of DataArrays
    (refusing what xarray would silently pad with NaN: different sample labels or location coordinates).

    Examples
    --------
    >>> import xarray as xr
    >>> ds = as_dataset({"a": xr.DataArray([1.0, 2.0], dims="sample")})
    >>> list(ds.data_vars)
    ['a']
    """
    if isinstance(data, xr.Dataset):
        return data
    if isinstance(data, Mapping):
        plain = [str(k) for k, v in data.items() if not isinstance(v, (xr.DataArray, xr.Variable, tuple))]
        if plain:
            raise TypeError(
                f"data[{plain[0]!r}] is a plain array, so its dims are unknown; give each variable its dims, e.g. "
                "{'y': (('sample', 't'), y), 'z': ('sample', z)} with coords for the location dims, or build an "
                "xr.Dataset (a DataArray also works)")
        _check_mapping(data)
        return xr.Dataset({k: v for k, v in data.items()})
    raise TypeError(f"data must be an xarray.Dataset (or a mapping of DataArrays), got {type(data).__name__}")


def _check_mapping(data: Mapping) -> None:
    """Refuse what ``xr.Dataset(mapping)`` would silently pad with NaN: different sample labels, or one
    location dim with different coordinates in two variables."""
    samples: tuple[str, set] | None = None
    dims: dict[str, tuple[str, np.ndarray]] = {}
    for name, da in data.items():
        if not isinstance(da, xr.DataArray):
            continue
        if SAMPLE in da.coords:
            labels = set(da[SAMPLE].values.tolist())
            if samples is not None and labels != samples[1]:
                raise ValueError(
                    f"{name!r} and {samples[0]!r} have different sample labels; xarray would pad the missing "
                    "samples with NaN: select the common samples first, e.g. xr.align(*arrays, join='inner')")
            samples = samples or (str(name), labels)
        for dim in da.dims:
            if dim == SAMPLE or dim not in da.coords:
                continue
            coord = np.asarray(da[dim].values)
            if dim in dims:
                other, ref = dims[dim]
                if coord.shape != ref.shape or not np.array_equal(coord, ref):
                    raise ValueError(
                        f"{name!r} and {other!r} share the location dim {dim!r} with different coordinates; "
                        f"give each variable its own dim, e.g. {name}.rename({{{dim!r}: '{dim}_{name}'}})")
            else:
                dims[str(dim)] = (str(name), coord)
