"""Turn user inputs and responses into arrays for the solvers, and back.

* :func:`prepare_inputs` -- arrays, functional DataArrays or a mapping of
  named terms → float arrays plus quadrature weights (curves use L2 geometry).
* :func:`prepare_response` -- dense DataArray / array / long DataFrame →
  :class:`~fdakpl.data.functional.Observations` plus the labels needed to put
  predictions back on a labelled grid.
* :class:`MeanFunction` -- the training mean curve used for output centring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from sklearn.utils import check_array

from ..notices import InterpolationWarning, warn
from .functional import (
    SAMPLE,
    Observations,
    interpolate_missing,
    location_dim,
    observations_from_long,
    quadrature_weights,
    validate_functional,
)

__all__ = ["InputSpec", "MeanFunction", "ResponseInfo", "check_same_samples", "n_samples_of", "prepare_inputs",
           "prepare_response"]


@dataclass
class InputSpec:
    """What the training inputs looked like, to check and convert new inputs alike."""

    kind: str  # "array", "curve" or "terms"
    n_features: Any  # int, tuple, or mapping term -> InputSpec
    grid: np.ndarray | None = None
    location_dim: str | None = None
    terms: dict[str, InputSpec] = field(default_factory=dict)


def _is_curve(X: Any) -> bool:
    """A 2-d DataArray whose non-sample dim has a numeric coordinate is a curve; else a vector."""
    if not (isinstance(X, xr.DataArray) and X.ndim == 2 and SAMPLE in X.dims):
        return False
    loc = next(d for d in X.dims if d != SAMPLE)
    return loc in X.coords and np.issubdtype(X[loc].dtype, np.number)


def _one_input(X: Any, name: str, interpolate: bool, spec: InputSpec | None) -> tuple[np.ndarray, Any, InputSpec]:
    if _is_curve(X):
        da = validate_functional(X, name)
        loc = location_dim(da, name)
        grid = da[loc].values.astype(float)
        if spec is not None and spec.kind == "curve":
            if spec.grid is not None and (grid.shape != spec.grid.shape or not np.allclose(grid, spec.grid)):
                raise ValueError(
                    f"{name!r} is sampled on a different grid than at fit time ({grid.size} vs "
                    f"{spec.grid.size} points); interpolate it first, e.g. "
                    f"new.interp({loc}=fitted_grid)"
                )
        values = _finite_or_interpolate(da.values, grid, name, interpolate, _labels_of(da))
        w = quadrature_weights(grid)
        return values, w, InputSpec("curve", grid.size, grid=grid, location_dim=loc)
    labels = _labels_of(X)
    if isinstance(X, xr.DataArray):
        if SAMPLE not in X.dims or X.ndim > 2:
            raise ValueError(f"{name!r} has dims {X.dims}; inputs are scalars (sample), vectors (sample, feature) "
                             "or curves (sample, location with a numeric coordinate)")
        X = X.values[:, None] if X.ndim == 1 else X.transpose(SAMPLE, ...).values
    if isinstance(X, pd.Series):
        X = X.to_numpy()[:, None]
    if sp.issparse(X):
        raise TypeError(f"sparse input is not supported: {name} is a sparse matrix; pass {name}.toarray()")
    raw = np.asarray(X)
    if raw.dtype.kind in "USO" and (raw.dtype.kind != "O" or any(isinstance(v, (str, bytes)) for v in raw.flat)):
        raise TypeError(f"{name!r} holds text (dtype {raw.dtype}); kernels need numbers: encode categories as "
                        "numbers (the formula interface does this with C(...)), or convert numeric text with "
                        ".astype(float)")
    try:
        arr = check_array(X, accept_sparse=False, dtype=np.float64, ensure_2d=True, allow_nd=True,
                          ensure_all_finite=False, input_name=name, ensure_min_samples=0)
    except TypeError as err:
        raise TypeError(f"{name!r} must be numeric; encode categories as numbers (the formula interface does "
                        f"this with C(...)): {err}") from None
    if arr.ndim == 2 and np.isnan(arr).any() and interpolate:
        arr = _finite_or_interpolate(arr, np.arange(arr.shape[1], dtype=float), name, True, labels)
    if not np.all(np.isfinite(arr)):
        rows = np.nonzero(~np.isfinite(arr.reshape(arr.shape[0], -1)).all(axis=1))[0]
        raise ValueError(
            f"{name!r} has NaN or infinite values for {_samples_text(rows, labels)}; drop those samples, or pass "
            "interpolate_inputs=True to fill NaN by linear interpolation along the location dim"
        )
    shape = arr.shape[1:]
    k = shape if len(shape) > 1 else shape[0]
    if spec is not None and spec.n_features != k:
        raise ValueError(f"{name} has {k} features, but KPLRegressor is expecting {spec.n_features} features as input")
    return arr, None, InputSpec("array", shape if len(shape) > 1 else shape[0])


def _samples_text(rows: np.ndarray, labels: np.ndarray | None, limit: int = 10) -> str:
    """``samples ['2017_1', ...]`` by label when the data have labels, else ``samples at positions [16, ...]``."""
    more = f" and {rows.size - limit} more" if rows.size > limit else ""
    if labels is not None:
        return f"samples {[str(v) for v in labels[rows[:limit]]]}{more}"
    return f"samples at positions {rows[:limit].tolist()}{more}"


def _finite_or_interpolate(values: np.ndarray, grid: np.ndarray, name: str, interpolate: bool,
                           labels: np.ndarray | None = None) -> np.ndarray:
    if np.isinf(values).any():
        rows = np.nonzero(np.isinf(values).reshape(values.shape[0], -1).any(axis=1))[0]
        raise ValueError(f"{name!r} has infinite values for {_samples_text(rows, labels)}; replace them by NaN "
                         "or drop those samples")
    if np.isnan(values).any():
        rows = np.nonzero(np.isnan(values).reshape(values.shape[0], -1).any(axis=1))[0]
        if not interpolate:
            raise ValueError(
                f"{name!r} has NaN for {_samples_text(rows, labels)}; kernels need complete "
                "input curves: pass interpolate_inputs=True to fill them by linear interpolation along "
                "the location dim, or drop those samples"
            )
        n_bad = int(np.isnan(values).sum())
        warn(f"{name!r}: filled {n_bad} missing input values of {_samples_text(rows, labels)} by linear "
             "interpolation (interpolate_inputs=True)", InterpolationWarning)
        values = interpolate_missing(values, grid, name)
    return values


def prepare_inputs(X: Any, *, interpolate: bool = False, spec: InputSpec | None = None,
                   name: str | None = None) -> tuple[Any, Any, InputSpec, np.ndarray | None]:
    """Inputs → (values, quadrature weights, spec, sample labels).

    ``X`` may be an array ``(n, p)`` (vectors) or ``(n, T, q)`` (vector-valued
    curves), a functional DataArray ``(sample, location)`` (curves, L2
    geometry), or a mapping / Dataset of named terms (for :class:`~fdakpl.kernels.Product`
    and :class:`~fdakpl.kernels.Sum` kernels). With ``spec`` (from the fit),
    new inputs are checked against the training ones.

    Examples
    --------
    >>> vals, w, spec, labels = prepare_inputs(np.zeros((3, 2)))
    >>> vals.shape, w, spec.kind
    ((3, 2), None, 'array')
    """
    if name is None:  # messages name the user's variable: a named DataArray's name, else X
        name = str(X.name) if isinstance(X, xr.DataArray) and X.name is not None else "X"
    if sp.issparse(X):
        raise TypeError(f"sparse input is not supported: {name} is a sparse matrix; pass {name}.toarray()")
    if isinstance(X, xr.Dataset):
        X = {str(k): X[k] for k in X.data_vars}
    if isinstance(X, Mapping):
        vals, ws, specs = {}, {}, {}
        n = None
        labels = None
        for term, v in X.items():
            sub = None if spec is None else spec.terms.get(term)
            if spec is not None and sub is None:
                continue
            if not isinstance(v, xr.DataArray) and np.ndim(v) == 1:
                v = np.asarray(v)[:, None]  # a scalar covariate term
            a, w, s = _one_input(v, str(term), interpolate, sub)
            if n is not None and a.shape[0] != n:
                raise ValueError(f"input term {term!r} has {a.shape[0]} samples, others have {n}")
            n = a.shape[0]
            vals[term], ws[term], specs[term] = a, w, s
            if labels is None:
                labels = _labels_of(v)
        if spec is not None:
            missing = set(spec.terms) - set(vals)
            if missing:
                raise ValueError(f"new data lacks input terms {sorted(missing)}")
        return vals, ws, InputSpec("terms", None, terms=specs), labels
    a, w, s = _one_input(X, name, interpolate, spec)
    return a, w, s, _labels_of(X)


def _labels_of(X: Any) -> np.ndarray | None:
    labels = None
    if isinstance(X, xr.DataArray) and SAMPLE in X.dims and SAMPLE in X.coords:
        labels = np.asarray(X[SAMPLE].values)
    elif isinstance(X, (pd.DataFrame, pd.Series)):
        labels = np.asarray(X.index)
    if labels is not None and not pd.Index(labels).is_unique:
        idx = pd.Index(labels)
        raise ValueError(f"the inputs have duplicated sample labels {idx[idx.duplicated()].unique()[:5].tolist()}; "
                         "labels must identify curves: relabel them")
    return labels


@dataclass
class ResponseInfo:
    """Labels of the training response, to label predictions."""

    name: str | None
    location_dim: str
    grid: np.ndarray | None  # common grid (dense input) else None
    labels: np.ndarray | None
    kind: str  # "dataarray", "array", "vector", "long"
    domain: tuple[float, float]


def prepare_response(Y: Any, locations: Any = None, domain: Any = None,
                     name: str = "Y") -> tuple[Observations, ResponseInfo]:
    """Responses → (:class:`Observations`, :class:`ResponseInfo`).

    ``Y`` may be a dense functional DataArray (NaN = unobserved), an array
    ``(n, m)`` observed at ``locations`` (default: the midpoints
    ``(j + 0.5) / m`` of ``[0, 1]``), a 1-d array (one location), or a long
    DataFrame with columns ``sample``, ``location``, ``value`` (irregular
    sampling).

    Examples
    --------
    >>> obs, info = prepare_response(np.array([[1.0, np.nan], [2.0, 3.0]]))
    >>> obs.counts, info.domain
    (array([1, 2]), (0.0, 1.0))
    """
    if isinstance(Y, pd.DataFrame):
        obs, labels = observations_from_long(Y)
        dom = domain or (float(obs.location.min()), float(obs.location.max()))
        info = ResponseInfo(Y.attrs.get("name"), Y.attrs.get("location_dim", "location"), None, labels,
                            "long", (float(dom[0]), float(dom[1])))
    elif isinstance(Y, xr.DataArray):
        da = validate_functional(Y, name if Y.name is None else str(Y.name))
        loc = location_dim(da)
        grid = da[loc].values.astype(float)
        obs = Observations.from_dense(da.values, grid)
        dom = domain or (float(grid[0]), float(grid[-1]))
        labels = np.asarray(da[SAMPLE].values) if SAMPLE in da.coords else None
        info = ResponseInfo(None if da.name is None else str(da.name), loc, grid, labels, "dataarray",
                            (float(dom[0]), float(dom[1])))
    else:
        try:
            arr = np.asarray(Y, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be numeric, got {type(Y).__name__}") from None
        kind = "vector" if arr.ndim == 1 else "array"
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"{name} must be 1-d or 2-d (n_samples, n_locations), got shape {arr.shape}")
        m = arr.shape[1]
        if locations is None:
            grid = (np.arange(m) + 0.5) / m
            dom = domain or (0.0, 1.0)
        else:
            grid = np.asarray(locations, dtype=float)
            if grid.shape != (m,):
                raise ValueError(f"locations has shape {grid.shape}; expected ({m},) to match {name}")
            if m > 1 and np.any(np.diff(grid) <= 0):
                raise ValueError("locations must be strictly increasing")
            dom = domain or (float(grid[0]), float(grid[-1]))
        obs = Observations.from_dense(arr, grid)
        info = ResponseInfo(None, "location", grid, None, kind, (float(dom[0]), float(dom[1])))
    if obs.n_samples == 0:
        raise ValueError(f"{name} has no samples")
    empty = np.nonzero(obs.counts == 0)[0]
    if empty.size:
        shown = (empty[:10] if info.labels is None else np.asarray(info.labels)[empty[:10]]).tolist()
        raise ValueError(
            f"{name} has no observed point for samples {shown}"
            f"{' (and more)' if empty.size > 10 else ''}; drop them, e.g. "
            "ds.dropna('sample', how='all', subset=[<response>])"
        )
    return obs, info


def check_same_samples(n_x: int, x_labels: Any, n_y: int, y_labels: Any, who: str = "KPL") -> None:
    """Inputs and responses must describe the same (at least 2) samples, in the same order.

    Examples
    --------
    >>> check_same_samples(3, None, 3, ["a", "b", "c"])
    >>> check_same_samples(2, None, 3, None)
    Traceback (most recent call last):
    ...
    ValueError: X has 2 samples but Y has 3; they must describe the same samples
    """
    if n_x != n_y:
        raise ValueError(f"X has {n_x} samples but Y has {n_y}; they must describe the same samples")
    if x_labels is not None and y_labels is not None and not np.array_equal(
            np.asarray(x_labels).astype(str), np.asarray(y_labels).astype(str)):
        raise ValueError("X and Y have different sample labels (or order); align them, e.g. with "
                         "xr.align(X, Y, join='exact')")
    if n_y < 2:
        raise ValueError(f"{who} needs at least 2 samples, got n_samples = {n_y}")


def n_samples_of(values: Any) -> int:
    """Number of samples of prepared inputs (an array or a mapping of term arrays)."""
    return next(iter(values.values())).shape[0] if isinstance(values, dict) else values.shape[0]


class MeanFunction:
    """Training mean curve, stored on a grid and interpolated linearly.

    On a common grid (a dense response, or long data whose distinct locations
    are shared by several curves: at most 512 of them, each observed at least
    twice on median) it is the pointwise mean of the observed values (grid
    points where no curve is observed are interpolated). For irregular
    sampling (each curve at its own locations) it is the mean of the observed
    values in equal bins of the domain -- 64 bins, fewer when there are under
    20 points per bin -- placed at the bins' mean locations.

    Parameters
    ----------
    obs : Observations
    domain : (float, float)

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, 3.0], [3.0, np.nan]]), np.array([0.0, 1.0]))
    >>> MeanFunction(obs, (0.0, 1.0))(np.array([0.0, 0.5, 1.0]))
    array([2. , 2.5, 3. ])
    """

    def __init__(self, obs: Observations, domain: tuple[float, float]) -> None:
        uniq, per_location = np.unique(obs.location, return_counts=True)
        if obs.grid is not None and obs.grid_index is not None:
            grid = obs.grid
            cols = obs.grid_index
        elif uniq.size <= 512 and np.median(per_location) >= 2:
            grid = uniq
            cols = np.searchsorted(grid, obs.location)
        else:
            n_bins = int(np.clip(obs.location.size // 20, 2, 64))
            edges = np.linspace(domain[0], domain[1], n_bins + 1)
            cols = np.clip(np.searchsorted(edges, obs.location, side="right") - 1, 0, n_bins - 1)
            cnt_b = np.bincount(cols, minlength=n_bins)
            centre = 0.5 * (edges[1:] + edges[:-1])
            loc_sum = np.bincount(cols, weights=obs.location, minlength=n_bins)
            grid = np.where(cnt_b > 0, loc_sum / np.maximum(cnt_b, 1), centre)
        sums = np.bincount(cols, weights=obs.value, minlength=grid.size)
        cnt = np.bincount(cols, minlength=grid.size)
        ok = cnt > 0
        vals = np.full(grid.size, np.nan)
        vals[ok] = sums[ok] / cnt[ok]
        if not ok.all():
            vals[~ok] = np.interp(grid[~ok], grid[ok], vals[ok])
        self.grid = grid
        self.values = vals

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(theta, dtype=float), self.grid, self.values)
