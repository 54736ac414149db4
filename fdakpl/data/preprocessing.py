"""Turn user inputs and responses into arrays for the solvers, and back.

* :func:`prepare_inputs` -- arrays, functional DataArrays or a mapping of
  named terms → float arrays plus quadrature weights (curves use L2 geometry).
* :func:`prepare_response` -- dense DataArray / array / long DataFrame →
  :class:`~fdakpl.data.functional.Observations` plus the labels needed to put
  predictions back on a labelled grid.
* :func:`center_responses` and :class:`MeanFunction` -- the training centre of the responses (mean or
  robust location, on the cells of :func:`location_cells`), the one centring step of every estimator;
  :func:`response_scale` -- their robust scale (for unit-free robust losses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from sklearn.utils import check_array

from ..utils.notices import InterpolationWarning, warn
from ..utils.saved import saved
from .functional import (
    SAMPLE,
    Observations,
    check_domain,
    check_locations,
    interpolate_missing,
    location_dim,
    masked_to_nan,
    observations_from_long,
    quadrature_weights,
    validate_functional,
)
from .labels import check_same_samples, coordinate_values, feature_names, index_labels, sample_index, samples_text
from .pairing import input_labels
from .scaling import median

__all__ = ["MAD_NORMAL", "InputSpec", "MeanFunction", "ResponseInfo", "cell_locations", "center_responses",
           "check_same_samples", "location_cells", "n_samples_of", "prepare_inputs",
           "prepare_response", "response_scale"]


@saved("kind", "n_features", "grid", "location_dim", "terms", "feature_names")
@dataclass
class InputSpec:
    """What the training inputs looked like, to check and convert new inputs alike."""

    kind: str  # "array", "curve" or "terms"
    n_features: Any  # int, tuple, or mapping term -> InputSpec
    grid: np.ndarray | None = None
    location_dim: str | None = None
    terms: dict[str, InputSpec] = field(default_factory=dict)
    feature_names: list[str] | None = None  # DataFrame column names at fit (as scikit-learn's feature_names_in_)


def _is_curve(X: Any) -> bool:
    """A 2-d DataArray whose non-sample dim has a numeric coordinate is a curve; else a vector."""
    if not (isinstance(X, xr.DataArray) and X.ndim == 2 and SAMPLE in X.dims):
        return False
    loc = next(d for d in X.dims if d != SAMPLE)
    return loc in X.coords and np.issubdtype(X.coords.variables[loc].dtype, np.number)


def _one_input(X: Any, name: str, interpolate: bool,
               spec: InputSpec | None) -> tuple[np.ndarray, Any, InputSpec, np.ndarray | None]:
    if _is_curve(X):
        da = validate_functional(X, name)
        loc = location_dim(da, name)
        grid = coordinate_values(da, loc).astype(float)
        if spec is not None and spec.kind == "curve":
            if spec.grid is not None and (grid.shape != spec.grid.shape or not (np.array_equal(grid, spec.grid)
                                                                               or np.allclose(grid, spec.grid))):
                raise ValueError(
                    f"{name!r} is sampled on a different grid than at fit time ({grid.size} vs "
                    f"{spec.grid.size} points); interpolate it first, e.g. "
                    f"new.interp({loc}=fitted_grid)"
                )
        labels = input_labels(da)  # read once: for a message about missing values, and for the caller
        values = _finite_or_interpolate(da.values, grid, name, interpolate, labels)
        w = quadrature_weights(grid)
        return values, w, InputSpec("curve", grid.size, grid=grid, location_dim=loc), labels
    labels = input_labels(X)
    X = masked_to_nan(X)
    if isinstance(X, xr.DataArray):
        if SAMPLE not in X.dims or X.ndim > 2:
            raise ValueError(f"{name!r} has dims {X.dims}; inputs are scalars (sample), vectors (sample, feature) "
                             "or curves (sample, location with a numeric coordinate)")
        X = X.values[:, None] if X.ndim == 1 else X.transpose(SAMPLE, ...).values
    names = feature_names(X)
    if spec is not None and spec.kind == "array" and spec.feature_names is not None and names is not None \
            and names != spec.feature_names:
        raise ValueError(f"{name} has the columns {names}, but the model was fitted on {spec.feature_names} (in "
                         f"that order); select them by name, e.g. {name}[{spec.feature_names!r}]")
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
        fast = isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim >= 2 and X.shape[1] > 0
        arr = X if fast else check_array(X, accept_sparse=False, dtype=np.float64, ensure_2d=True, allow_nd=True,
                                         ensure_all_finite=False, input_name=name, ensure_min_samples=0)
    except TypeError as err:
        raise TypeError(f"{name!r} must be numeric; encode categories as numbers (the formula interface does "
                        f"this with C(...)): {err}") from None
    if interpolate and arr.ndim == 2 and np.isnan(arr).any():
        arr = _finite_or_interpolate(arr, np.arange(arr.shape[1], dtype=float), name, True, labels)
    if not np.all(np.isfinite(arr)):
        rows = np.nonzero(~np.isfinite(arr.reshape(arr.shape[0], -1)).all(axis=1))[0]
        raise ValueError(
            f"{name!r} has NaN or infinite values for {samples_text(rows, labels)}; drop those samples, or pass "
            "interpolate_inputs=True to fill NaN by linear interpolation along the location dim"
        )
    shape = arr.shape[1:]
    k = shape if len(shape) > 1 else shape[0]
    if spec is not None and spec.n_features != k:
        raise ValueError(f"{name} has {k} features, but KPLRegressor is expecting {spec.n_features} features as input")
    return arr, None, InputSpec("array", shape if len(shape) > 1 else shape[0], feature_names=names), labels


def _finite_or_interpolate(values: np.ndarray, grid: np.ndarray, name: str, interpolate: bool,
                           labels: np.ndarray | None = None) -> np.ndarray:
    """``values``, or with NaN filled (``interpolate``); ``labels`` name the samples in messages."""
    if np.isfinite(values).all():
        return values
    nan = np.isnan(values)
    if np.isinf(values).any():
        rows = np.nonzero(np.isinf(values).reshape(values.shape[0], -1).any(axis=1))[0]
        raise ValueError(f"{name!r} has infinite values for {samples_text(rows, labels)}; replace them by NaN "
                         "or drop those samples")
    if nan.any():
        rows = np.nonzero(nan.reshape(values.shape[0], -1).any(axis=1))[0]
        if not interpolate:
            raise ValueError(
                f"{name!r} has NaN for {samples_text(rows, labels)}; kernels need complete "
                "input curves: pass interpolate_inputs=True to fill them by linear interpolation along "
                "the location dim, or drop those samples"
            )
        n_bad = int(np.count_nonzero(nan))
        warn(f"{name!r}: filled {n_bad} missing input values of {samples_text(rows, labels)} by linear "
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
    new inputs are checked against the training ones. Curves are validated here
    (:func:`~fdakpl.data.functional.validate_functional`), once per call.

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
            a, w, s, term_labels = _one_input(v, str(term), interpolate, sub)
            if n is not None and a.shape[0] != n:
                raise ValueError(f"input term {term!r} has {a.shape[0]} samples, others have {n}")
            n = a.shape[0]
            vals[term], ws[term], specs[term] = a, w, s
            if labels is None:
                labels = term_labels
        if spec is not None:
            missing = set(spec.terms) - set(vals)
            if missing:
                raise ValueError(f"new data lacks input terms {sorted(missing)}")
        return vals, ws, InputSpec("terms", None, terms=specs), labels
    return _one_input(X, name, interpolate, spec)


@saved("name", "location_dim", "grid", "labels", "kind", "domain")
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
    sampling). A DataArray is validated here
    (:func:`~fdakpl.data.functional.validate_functional`), once per call.

    Examples
    --------
    >>> obs, info = prepare_response(np.array([[1.0, np.nan], [2.0, 3.0]]))
    >>> obs.counts, info.domain
    (array([1, 2]), (0.0, 1.0))
    """
    domain = check_domain(domain)
    if isinstance(Y, pd.DataFrame):
        obs, labels = observations_from_long(Y)
        dom = domain or (float(obs.location.min()), float(obs.location.max()))
        info = ResponseInfo(Y.attrs.get("name"), Y.attrs.get("location_dim", "location"), None, labels,
                            "long", (float(dom[0]), float(dom[1])))
    elif isinstance(Y, xr.DataArray):
        da = validate_functional(Y, name if Y.name is None else str(Y.name))
        loc = location_dim(da)
        grid = coordinate_values(da, loc).astype(float)
        obs = Observations.from_dense(da.values, grid)
        dom = domain or (float(grid[0]), float(grid[-1]))
        labels = index_labels(sample_index(da)) if SAMPLE in da.coords else None
        info = ResponseInfo(None if da.name is None else str(da.name), loc, grid, labels, "dataarray",
                            (float(dom[0]), float(dom[1])))
    else:
        try:
            arr = np.asarray(masked_to_nan(Y), dtype=float)
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
            grid = check_locations(locations, "locations", increasing=True)
            if grid.shape != (m,):
                raise ValueError(f"locations has shape {grid.shape}; expected ({m},) to match {name}")
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


def n_samples_of(values: Any) -> int:
    """Number of samples of prepared inputs (an array or a mapping of term arrays)."""
    return next(iter(values.values())).shape[0] if isinstance(values, dict) else values.shape[0]


#: consistency constant of the median absolute deviation at the normal distribution
MAD_NORMAL = 1.482602218505602


def location_cells(location: np.ndarray, domain: tuple[float, float],
                   counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Cells where the training centre of the responses is estimated: the one binning rule.

    When the distinct locations are shared by several curves (each observed by
    at least two curves on median: a dense response, possibly with missing
    points, or long data on a common grid), every distinct location is a
    cell. Otherwise (irregular sampling: most locations seen once, as in long
    data with random locations or the dense form of such data made by
    :func:`~fdakpl.data.functional.from_long`) the cells are equal bins of the
    domain: 64 bins, fewer when there are under 20 points per bin. The rule
    depends on the locations only, so the long and the dense (NaN-padded)
    forms of the same data get the same cells.

    Parameters
    ----------
    location : numpy.ndarray, shape (N,)
        Locations of the observed points (or, with ``counts``, distinct locations).
    domain : (float, float)
    counts : numpy.ndarray, optional
        Number of observed points at each of the distinct ``location`` (e.g.
        per grid point, from streamed sums and counts).

    Returns
    -------
    cells : numpy.ndarray, shape (k,)
        Location of each cell (a distinct location, or the centre of a bin).
    cell_of : numpy.ndarray of int, shape (N,)
        Cell of each point (of each location with ``counts``).
    binned : bool
        Whether the cells are bins.

    Examples
    --------
    >>> location_cells(np.array([0.0, 1.0, 0.0, 1.0]), (0.0, 1.0))
    (array([0., 1.]), array([0, 1, 0, 1]), False)
    >>> cells, cell_of, binned = location_cells(np.linspace(0, 1, 200), (0.0, 1.0))
    >>> cells.size, binned
    (10, True)
    """
    location = np.asarray(location, dtype=float)
    if counts is None:
        uniq, inverse, per_location = np.unique(location, return_inverse=True, return_counts=True)
    else:
        uniq, inverse, per_location = location, np.arange(location.size), np.asarray(counts)
    seen = per_location[per_location > 0]
    if seen.size and median(seen) >= 2:
        return uniq, inverse.astype(np.intp), False
    n_bins = int(np.clip(int(seen.sum()) // 20, 2, 64))
    edges = np.linspace(domain[0], domain[1], n_bins + 1)
    cell_of = np.clip(np.searchsorted(edges, location, side="right") - 1, 0, n_bins - 1).astype(np.intp)
    return 0.5 * (edges[1:] + edges[:-1]), cell_of, True


def cell_locations(value: np.ndarray, cell_of: np.ndarray, n_cells: int,
                   derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                   counts: np.ndarray | None = None) -> np.ndarray:
    """Per-cell location of the values: the mean, or the M-estimate of a loss.

    With ``derivative`` (``d l(y, mu) / d mu`` of a convex loss, e.g. a
    :class:`~fdakpl.losses.GroundLoss`'s ``derivative``), the location of a
    cell is ``argmin_mu sum_p l(y_p, mu)``, found by bisection on ``sum_p
    l'(y_p, mu) = 0`` between the smallest and largest value of the cell; the
    mean is kept where the derivative does not change sign there. Empty
    cells are NaN.

    Examples
    --------
    >>> y = np.array([0.0, 1.0, 2.0, 3.0, 100.0]); cells = np.zeros(5, dtype=int)
    >>> cell_locations(y, cells, 1), cell_locations(y, cells, 1, lambda y, mu: np.sign(mu - y))
    (array([21.2]), array([2.]))
    """
    cnt = np.bincount(cell_of, minlength=n_cells) if counts is None else counts  # points per cell, if known
    ok = cnt > 0
    out = np.full(n_cells, np.nan)
    out[ok] = np.bincount(cell_of, weights=value, minlength=n_cells)[ok] / cnt[ok]
    if derivative is None:
        return out
    lo = np.full(n_cells, np.inf)
    hi = np.full(n_cells, -np.inf)
    np.minimum.at(lo, cell_of, value)
    np.maximum.at(hi, cell_of, value)
    lo[~ok] = hi[~ok] = 0.0

    def dsum(mu: np.ndarray) -> np.ndarray:
        return np.bincount(cell_of, weights=derivative(value, mu[cell_of]), minlength=n_cells)

    bracket = ok & (dsum(lo) <= 0) & (dsum(hi) >= 0)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        up = dsum(mid) < 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    out[bracket] = 0.5 * (lo + hi)[bracket]
    return out


@saved("grid", "values", "smoothed")
class MeanFunction:
    """Training centre of the responses (mean curve or robust location), interpolated linearly.

    The cells are those of :func:`location_cells`. On a common grid the
    centre is the pointwise mean of the observed values (or the pointwise
    M-estimate of a loss, :func:`cell_locations`), stored at the observed
    locations; grid points that no curve observes are interpolated. For irregular sampling (most locations seen
    once) the per-bin means are smoothed by a cubic smoothing spline, weighted
    by the bins' counts, with its smoothing parameter chosen by GCV
    (:func:`scipy.interpolate.make_smoothing_spline`), and stored on 257
    points spanning the bins; with fewer than 5 non-empty bins the bin means
    are interpolated. (Before, the pointwise mean of such data took each
    location's single value, so every centred response was 0.) In the
    benchmark ``benchmarks/sparse_responses.py`` (200 curves at 3-8 random
    locations, 10 draws) the smoothed bins' excess error as a predictor of
    the test curves was a third of the raw bins' (0.016 vs 0.051 of the
    variance of the truth); a spline through the raw points (GCV per point)
    sometimes nearly interpolated them (0.18 +- 0.11).

    Parameters
    ----------
    obs : Observations
    domain : (float, float)
    derivative : callable, optional
        ``d l(y, mu) / d mu`` of a convex loss for a robust centre
        (:func:`cell_locations`); the mean when omitted.

    Attributes
    ----------
    grid, values : numpy.ndarray
        The centre at the stored locations.
    smoothed : bool
        Whether the centre was smoothed (irregular sampling).

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, 3.0], [3.0, np.nan]]), np.array([0.0, 1.0]))
    >>> MeanFunction(obs, (0.0, 1.0))(np.array([0.0, 0.5, 1.0]))
    array([2. , 2.5, 3. ])
    """

    def __init__(self, obs: Observations, domain: tuple[float, float],
                 derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> None:
        grid = obs.grid is not None and obs.grid_index is not None  # same cells, without sorting every point
        counts = np.bincount(obs.grid_index, minlength=obs.grid.size) if grid else None
        cells, cell_of, binned = location_cells(obs.grid, domain, counts) if grid else location_cells(obs.location,
                                                                                                      domain)
        if grid:  # the cell of a grid point is that point, unless binned
            cell_of = cell_of[obs.grid_index] if binned else obs.grid_index
        k = cells.size
        cnt = counts if grid and not binned else np.bincount(cell_of, minlength=k)
        self._set(cells, cell_locations(obs.value, cell_of, k, derivative, cnt), cnt.astype(float),
                  np.bincount(cell_of, weights=obs.location, minlength=k) if binned else None, binned)

    @classmethod
    def from_sums(cls, grid: np.ndarray, sums: np.ndarray, counts: np.ndarray,
                  domain: tuple[float, float]) -> MeanFunction:
        """The mean curve from the sums and counts of the observed values at each grid point.

        Same cells and smoothing as from the points themselves (streamed
        data, :mod:`fdakpl.estimators.approx`).

        Examples
        --------
        >>> grid = np.linspace(0, 1, 5)
        >>> MeanFunction.from_sums(grid, 2.0 * grid * 3, np.full(5, 3.0), (0.0, 1.0))(grid)
        array([0. , 0.5, 1. , 1.5, 2. ])
        """
        grid = np.asarray(grid, dtype=float)
        counts = np.asarray(counts, dtype=float)
        cells, cell_of, binned = location_cells(grid, domain, counts)
        k = cells.size
        cnt = np.bincount(cell_of, weights=counts, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            vals = np.where(cnt > 0, np.bincount(cell_of, weights=sums, minlength=k) / cnt, np.nan)
        out = cls.__new__(cls)
        out._set(cells, vals, cnt, np.bincount(cell_of, weights=grid * counts, minlength=k), binned)
        return out

    def _set(self, cells: np.ndarray, vals: np.ndarray, cnt: np.ndarray, location_sums: np.ndarray | None,
             binned: bool) -> None:
        """Store the centre from per-cell values, counts and sums of locations (bins: smoothed).

        Only observed cells are stored; the linear interpolation of :meth:`__call__` fills the others.
        """
        ok = cnt > 0
        # a bin sits at the mean location of its points
        cells = location_sums[ok] / cnt[ok] if binned and location_sums is not None else cells[ok]
        vals, cnt = vals[ok], cnt[ok]
        self.smoothed = False
        if binned and cells.size >= 5:
            spline = _smoothing_spline(cells, vals, cnt)
            if spline is not None:
                cells = np.linspace(cells[0], cells[-1], 257)
                vals = spline(cells)
                self.smoothed = True
        self.grid = cells
        self.values = vals

    @classmethod
    def from_values(cls, grid: np.ndarray, values: np.ndarray) -> MeanFunction:
        """A centre given by its values on a grid.

        Examples
        --------
        >>> MeanFunction.from_values(np.array([0.0, 1.0]), np.array([1.0, 3.0]))(np.array([0.25]))
        array([1.5])
        """
        out = cls.__new__(cls)
        out.grid = np.asarray(grid, dtype=float)
        out.values = np.asarray(values, dtype=float)
        out.smoothed = False
        return out

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(theta, dtype=float), self.grid, self.values)


def _smoothing_spline(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> Any:
    from scipy.interpolate import make_smoothing_spline

    try:
        return make_smoothing_spline(x, y, w=weights.astype(float))
    except (ValueError, np.linalg.LinAlgError):  # degenerate GCV (e.g. constant values): keep the bins
        return None


def response_scale(obs: Observations, domain: tuple[float, float]) -> float:
    """Robust scale of the responses: the MAD of their deviations from the pointwise median.

    ``1.4826 * median |y_ip - med(theta_ip)|``, with ``med`` the pointwise
    median curve on the cells of :func:`location_cells` (consistent for the
    standard deviation of normal deviations). It is in the units of the
    response, so losses whose parameters are relative to it (``relative=True``
    in :mod:`fdakpl.losses`) give the same model in any unit. When more than
    half of the deviations are 0, the mean absolute deviation is used (times
    ``sqrt(pi / 2)``), and 1.0 when all are 0.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 5.0]]), np.array([0.0, 1.0]))
    >>> response_scale(obs, (0.0, 1.0))
    1.482602218505602
    >>> response_scale(obs.with_values(100 * obs.value), (0.0, 1.0)) / response_scale(obs, (0.0, 1.0))
    100.0
    """
    cells, cell_of, _ = location_cells(obs.location, domain)
    med = cell_locations(obs.value, cell_of, cells.size, lambda y, mu: np.sign(mu - y))
    dev = np.abs(obs.value - med[cell_of])
    scale = MAD_NORMAL * float(np.median(dev))
    if scale <= 0:
        scale = float(np.sqrt(np.pi / 2) * dev.mean())
    return scale if scale > 0 and np.isfinite(scale) else 1.0


def center_responses(obs: Observations, domain: tuple[float, float], center: bool = True,
                     derivative: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                     ) -> tuple[MeanFunction | None, Observations]:
    """Centre the responses: the one centring step of every estimator and loss.

    Parameters
    ----------
    obs : Observations
    domain : (float, float)
    center : bool
        When False the responses are returned unchanged (and no centre).
    derivative : callable, optional
        ``d l(y, mu) / d mu`` of the ground loss for a robust centre (the
        pointwise location minimising the loss; median-like for logcosh, so
        outliers do not leak into it); the mean when omitted (square loss).

    Returns
    -------
    mean : MeanFunction or None
    centred : Observations

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[0.0], [1.0], [2.0], [3.0], [100.0]]), np.array([0.5]))
    >>> mean, _ = center_responses(obs, (0.0, 1.0))
    >>> median, _ = center_responses(obs, (0.0, 1.0), derivative=lambda y, mu: np.tanh(50 * (mu - y)))
    >>> float(mean(0.5)), round(float(median(0.5)), 6)
    (21.2, 2.0)
    """
    if not center:
        return None, obs
    mean = MeanFunction(obs, domain, derivative)
    if obs.grid is not None and obs.grid_index is not None:  # the same numbers: points sit on grid points
        return mean, obs.with_values(obs.value - mean(obs.grid)[obs.grid_index])
    return mean, obs.with_values(obs.value - mean(obs.location))
