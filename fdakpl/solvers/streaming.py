"""Chunked passes over the samples, in memory or on dask (local scheduler or ``dask.distributed``).

The approximate KPL fit (:mod:`fdakpl.estimators.approx`) touches the data only through
sums over samples, so it streams:

* :func:`mean_pass` -- sums and counts of the response per grid point (the
  mean function, and whether every curve is fully observed);
* :func:`stats_pass` -- the sufficient statistics ``[Z N]^T [Z N]`` (features
  ``Z`` of the inputs, inner products ``N`` of the centred responses: quadrature
  weights for fully observed curves, plug-in ``|Theta| / m_i`` per curve
  otherwise, NaN = unobserved);
* :func:`predict_pass` -- predictions, chunk by chunk.

For NumPy data the chunks are ``chunk_size`` consecutive samples processed in
this process. When any input or the response is a dask array (e.g. a
DataArray from ``xr.open_zarr`` or ``xr.open_dataset(..., chunks=...)``),
every array is rechunked to the response's chunks along ``sample`` (one chunk
along the other dims), one ``dask.delayed`` task per chunk computes its
contribution under a one-thread BLAS limit (``threadpoolctl``), and the
contributions are summed by a ``dask.delayed`` tree reduction. ``dask.compute``
runs it on the active scheduler: the threaded one by default, or a
``dask.distributed`` cluster when a ``Client`` exists.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

from ..data.functional import SAMPLE, interpolate_missing, interpolate_rows, validate_functional
from ..data.preprocessing import InputSpec, ResponseInfo, prepare_inputs, prepare_response
from ..utils.progress import progress as _progress

__all__ = [
    "ChunkPlan",
    "InputLayout",
    "Inputs",
    "PredictContext",
    "Response",
    "StatsContext",
    "as_inputs",
    "as_response",
    "filled_block",
    "is_dask",
    "mean_pass",
    "predict_pass",
    "reduce_pass",
    "stats_pass",
    "take_rows",
]

_SPLIT_EVERY = 8


def is_dask(a: Any) -> bool:
    """Whether ``a`` is a dask collection (False when dask is not installed).

    Examples
    --------
    >>> is_dask(np.zeros(3))
    False
    """
    try:
        import dask
    except ImportError:  # pragma: no cover - dask is an optional extra
        return False
    return bool(dask.is_dask_collection(a))


def take_rows(a: Any, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` (sorted) of a NumPy or dask array, as NumPy.

    Examples
    --------
    >>> take_rows(np.arange(6.0).reshape(3, 2), np.array([0, 2]))
    array([[0., 1.],
           [4., 5.]])
    """
    out = a[np.asarray(idx, dtype=np.intp)]
    return np.asarray(out.compute() if is_dask(out) else out, dtype=float)


# --------------------------------------------------------------------------
# inputs and responses as sample-first arrays
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class InputLayout:
    """Turns raw chunks of the input arrays into what kernels and feature maps take.

    Attributes
    ----------
    names : tuple of str or None
        Term names (a mapping / Dataset input), or None for one input.
    weights : array, None or dict
        Quadrature weights as from :func:`~fdakpl.data.preprocessing.prepare_inputs`.
    grids : tuple of numpy.ndarray
        Per term, the locations along axis 1 (for ``interpolate``).
    interpolate : bool
        Fill NaN by linear interpolation along axis 1 instead of raising.
    """

    names: tuple[str, ...] | None
    weights: Any
    grids: tuple[np.ndarray, ...]
    interpolate: bool

    def assemble(self, blocks: Any, start: int = 0) -> Any:
        """Validated float arrays (one array, or a dict by term) from raw chunks starting at sample ``start``.

        Examples
        --------
        >>> lay = InputLayout(None, None, (np.arange(2.0),), False)
        >>> lay.assemble([np.ones((2, 2))]).shape
        (2, 2)
        """
        out = []
        for name, b, grid in zip(self.names or ("X",), blocks, self.grids, strict=True):
            a = np.asarray(b, dtype=float)
            if not np.isfinite(a).all():
                if np.isinf(a).any():
                    raise ValueError(f"{name!r} has infinite values; replace them by NaN or drop those samples")
                if not self.interpolate or a.ndim != 2:
                    rows = start + np.nonzero(np.isnan(a.reshape(a.shape[0], -1)).any(axis=1))[0]
                    raise ValueError(
                        f"{name!r} has NaN for samples at positions {rows[:10].tolist()}; kernels need complete "
                        "input curves: pass interpolate_inputs=True to fill them by linear interpolation along "
                        "the location dim, or drop those samples")
                a = interpolate_missing(a, grid, name)
            out.append(a)
        return out[0] if self.names is None else dict(zip(self.names, out, strict=True))


@dataclass(frozen=True)
class Inputs:
    """Inputs as sample-first arrays (NumPy or dask) with their spec and labels."""

    arrays: tuple[Any, ...]
    layout: InputLayout
    spec: InputSpec
    labels: np.ndarray | None
    n: int

    def take(self, idx: np.ndarray) -> tuple[Any, Any]:
        """Prepared ``(values, weights)`` of the samples ``idx`` (sorted), loading only those rows."""
        idx = np.asarray(idx, dtype=np.intp)
        parts = [a[idx] for a in self.arrays]
        if any(is_dask(p) for p in parts):
            import dask

            parts = list(dask.compute(*parts))
        return self.layout.assemble(parts, 0), self.layout.weights


def _sample_labels(v: Any) -> np.ndarray | None:
    if isinstance(v, (xr.DataArray, xr.Dataset)) and SAMPLE in v.coords:
        return np.asarray(v[SAMPLE].values)
    if isinstance(v, (pd.DataFrame, pd.Series)):
        return np.asarray(v.index)
    return None


def _head(v: Any, h: int) -> Any:
    if isinstance(v, (xr.DataArray, xr.Dataset)):
        if SAMPLE not in v.dims:
            return v  # prepare_inputs / prepare_response raise the informative error
        return v.isel({SAMPLE: slice(0, h)})
    if isinstance(v, Mapping):
        return {k: _head(t, h) for k, t in v.items()}
    if isinstance(v, (pd.DataFrame, pd.Series)):
        return v.iloc[:h]
    if is_dask(v):
        return np.asarray(v[:h].compute())
    arr = np.asarray(v)
    return arr[:h] if arr.ndim else arr


def _raw_array(v: Any, name: str) -> Any:
    """Sample-first array (NumPy or dask) of one input term, unvalidated values."""
    if isinstance(v, xr.DataArray):
        if SAMPLE not in v.dims:
            raise ValueError(f"{name!r} has dims {v.dims} but no 'sample' dim")
        if v.ndim == 2 and all(d in v.coords and np.issubdtype(v[d].dtype, np.number) for d in v.dims if d != SAMPLE):
            v = validate_functional(v, name)
        data = v.transpose(SAMPLE, ...).data
    elif isinstance(v, (pd.DataFrame, pd.Series)):
        data = v.to_numpy(dtype=float)
    elif is_dask(v):
        data = v
    else:
        data = np.asarray(v, dtype=float)
    return data[:, None] if data.ndim == 1 else data


def as_inputs(X: Any, *, interpolate: bool = False, spec: InputSpec | None = None) -> Inputs:
    """Normalise inputs (arrays, DataArrays, Datasets / mappings of terms; NumPy or dask) without loading them.

    The first samples go through :func:`~fdakpl.data.preprocessing.prepare_inputs`
    (checks, against ``spec`` when given, and quadrature weights); values are
    validated chunk by chunk later.

    Examples
    --------
    >>> inp = as_inputs(np.zeros((5, 2)))
    >>> inp.n, inp.layout.names
    (5, None)
    """
    if sp.issparse(X):
        raise TypeError("sparse input is not supported: X is a sparse matrix; pass X.toarray()")
    h = 2
    _, weights, spec_out, _ = prepare_inputs(_head(X, h), interpolate=interpolate, spec=spec)
    if isinstance(X, xr.Dataset):
        X = {str(k): X[k] for k in X.data_vars}
    if isinstance(X, Mapping):
        names = tuple(str(k) for k in X if spec is None or str(k) in spec.terms)
        arrays = tuple(_raw_array(X[k], k) for k in names)
        labels = next((lab for lab in (_sample_labels(X[k]) for k in names) if lab is not None), None)
        grids = tuple(_grid_of(spec_out.terms[k], a) for k, a in zip(names, arrays, strict=True))
        layout = InputLayout(names, weights, grids, interpolate)
    else:
        arrays = (_raw_array(X, "X"),)
        labels = _sample_labels(X)
        layout = InputLayout(None, weights, (_grid_of(spec_out, arrays[0]),), interpolate)
    sizes = {int(a.shape[0]) for a in arrays}
    if len(sizes) != 1 or any(np.isnan(a.shape[0]) for a in arrays):
        raise ValueError(f"input terms have different or unknown numbers of samples: {sorted(sizes)}")
    return Inputs(arrays, layout, spec if spec is not None else spec_out, labels, sizes.pop())


def _grid_of(spec: InputSpec, a: Any) -> np.ndarray:
    if spec.kind == "curve" and spec.grid is not None:
        return spec.grid
    return np.arange(a.shape[1] if a.ndim > 1 else 1, dtype=float)


@dataclass(frozen=True)
class Response:
    """Dense responses ``(n, m)`` on a grid (NumPy or dask, NaN = unobserved) and their labels."""

    values: Any
    info: ResponseInfo
    n: int


def as_response(Y: Any, locations: Any = None, domain: Any = None) -> Response:
    """Normalise dense responses without loading them.

    Examples
    --------
    >>> r = as_response(np.ones((4, 3)))
    >>> r.n, r.info.grid
    (4, array([0.16666667, 0.5       , 0.83333333]))
    """
    if isinstance(Y, pd.DataFrame):
        raise TypeError("streaming / approximate KPL needs dense responses on a grid (NaN = unobserved); convert "
                        "long data with fdakpl.data.functional.from_long(df, grid=...) or use KPLRegressor "
                        "without approx")
    if sp.issparse(Y):
        raise TypeError("sparse input is not supported: Y is a sparse matrix; pass Y.toarray()")
    _, info = prepare_response(_head(Y, 2), locations, domain)
    if isinstance(Y, xr.DataArray):
        da = validate_functional(Y, "Y" if Y.name is None else str(Y.name))
        values = da.data
        labels = _sample_labels(da)
    else:
        values = Y if is_dask(Y) else np.asarray(Y, dtype=float)
        values = values[:, None] if values.ndim == 1 else values
        labels = None
    info = ResponseInfo(info.name, info.location_dim, info.grid, labels, info.kind, info.domain)
    if np.isnan(values.shape[0]):
        raise ValueError("the response has chunks of unknown size; call .compute_chunk_sizes() first")
    return Response(values, info, int(values.shape[0]))


# --------------------------------------------------------------------------
# chunking
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkPlan:
    """Arrays aligned on common sample chunks: the inputs, then the response (if any)."""

    arrays: tuple[Any, ...]
    bounds: tuple[tuple[int, int], ...]
    dask: bool
    has_response: bool

    @classmethod
    def of(cls, inputs: Inputs, response: Response | None, chunk_size: int) -> ChunkPlan:
        """Chunks of the response (else of the first dask input) for dask data, ``chunk_size`` rows otherwise.

        Examples
        --------
        >>> ChunkPlan.of(as_inputs(np.zeros((5, 1))), None, 2).bounds
        ((0, 2), (2, 4), (4, 5))
        """
        arrays = list(inputs.arrays) + ([response.values] if response is not None else [])
        n = inputs.n
        if not any(is_dask(a) for a in arrays):
            bounds = tuple((s, min(s + chunk_size, n)) for s in range(0, n, chunk_size))
            return cls(tuple(arrays), bounds, False, response is not None)
        import dask.array as da

        ref = next(a for a in reversed(arrays) if is_dask(a))
        chunks0 = tuple(int(c) for c in ref.chunks[0])
        aligned = []
        for a in arrays:
            spec = (chunks0, *tuple((int(s),) for s in a.shape[1:]))
            aligned.append(a.rechunk(spec) if is_dask(a) else da.from_array(a, chunks=spec))
        ends = np.cumsum(chunks0)
        bounds = tuple((int(e - c), int(e)) for e, c in zip(ends, chunks0, strict=True))
        return cls(tuple(aligned), bounds, True, response is not None)

    def blocks(self) -> list[list[Any]]:
        """Per chunk, the list of blocks (NumPy slices, or dask delayed objects)."""
        if not self.dask:
            return [[a[s:e] for a in self.arrays] for s, e in self.bounds]
        per_array = [a.to_delayed().reshape(len(self.bounds), -1)[:, 0] for a in self.arrays]
        return [[p[i] for p in per_array] for i in range(len(self.bounds))]


def _shared(obj: Any) -> Any:
    """One graph node holding ``obj`` (shipped once to the workers, not once per task)."""
    from dask import delayed

    return delayed(obj, name=f"fdakpl-context-{uuid.uuid4().hex}", traverse=False)


def _sum(parts: list[Any]) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def _tree_sum(parts: list[Any]) -> Any:
    from dask import delayed

    while len(parts) > 1:
        parts = [delayed(_sum)(parts[i:i + _SPLIT_EVERY]) for i in range(0, len(parts), _SPLIT_EVERY)]
    return parts[0]


def _compute(obj: Any, enabled: bool | None) -> Any:
    import dask

    from ..utils.progress import progress_enabled

    show = progress_enabled(enabled)
    ctx: Any = contextlib.nullcontext()
    if show:
        from dask.diagnostics import ProgressBar

        ctx = ProgressBar()
    with ctx:
        return dask.compute(obj)[0]


@contextlib.contextmanager
def _blas_limit(limit: bool):  # type: ignore[no-untyped-def]
    if not limit:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


# --------------------------------------------------------------------------
# pass 1: mean function
# --------------------------------------------------------------------------


def _block_mean(y: np.ndarray, start: int) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if np.isinf(y).any():
        raise ValueError("the response has infinite values; replace them by NaN to mark them unobserved")
    ok = ~np.isnan(y)
    empty = np.nonzero(~ok.any(axis=1))[0]
    if empty.size:
        raise ValueError(f"the response has no observed point for samples at positions {(start + empty[:10]).tolist()}"
                         "; drop them, e.g. ds.dropna('sample', how='all', subset=[<response>])")
    m = y.shape[1]
    per_curve = np.bincount(ok.sum(axis=1), minlength=m + 1).astype(float)  # curves with k points, k = 0..m
    return np.concatenate([np.where(ok, y, 0.0).sum(axis=0), ok.sum(axis=0).astype(float), per_curve])


def mean_pass(plan: ChunkPlan, progress: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums and counts of the observed response values per grid point, and the histogram of the numbers of
    points per curve (``[k]``: curves observed at ``k`` grid points; what ``integration="auto"`` needs).

    Examples
    --------
    >>> plan = ChunkPlan.of(as_inputs(np.zeros((3, 1))), as_response(np.array([[1.0, np.nan], [3.0, 4.0],
    ...                     [5.0, 6.0]])), 2)
    >>> mean_pass(plan)
    (array([ 9., 10.]), array([3., 2.]), array([0, 1, 2]))
    """
    if not plan.has_response:
        raise ValueError("mean_pass needs a plan with a response")
    blocks = plan.blocks()
    if not plan.dask:
        acc = None
        for (s, _), b in zip(plan.bounds, _progress(blocks, "mean", progress), strict=True):
            part = _block_mean(b[-1], s)
            acc = part if acc is None else acc + part
        assert acc is not None
    else:
        from dask import delayed

        parts = [delayed(_block_mean)(b[-1], s) for (s, _), b in zip(plan.bounds, blocks, strict=True)]
        acc = _compute(_tree_sum(parts), progress)
    m = (acc.size - 1) // 3
    return acc[:m], acc[m:2 * m], np.rint(acc[2 * m:]).astype(np.int64)


# --------------------------------------------------------------------------
# pass 2: sufficient statistics
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StatsContext:
    """What each chunk needs to compute its statistics (shipped once per worker).

    Attributes
    ----------
    features : fitted feature map (``transform(values, weights)``)
    layout : InputLayout
    mean : numpy.ndarray or None
        Mean function on the response grid (None: no centring).
    phi : numpy.ndarray, shape (m, d)
        Atoms on the response grid.
    quad_weights : numpy.ndarray, shape (m,)
        Quadrature weights of the grid.
    length : float
        Length of the domain ``|Theta|`` (plug-in weights ``|Theta| / m_i``).
    mode : {"quadrature", "interpolate", "plugin"}
    columns : numpy.ndarray or None
        With ``"interpolate"``: the grid columns some curve observes; ``mean``, ``phi`` and ``quad_weights`` are
        then on those columns, and each chunk's centred curves are filled there by linear interpolation
        (:func:`filled_block`), as the exact fits do (:func:`fdakpl.data.integration.fill_gaps`).
    locations : numpy.ndarray or None
        With ``"interpolate"``: the locations of ``columns``.
    """

    features: Any
    layout: InputLayout
    mean: np.ndarray | None
    phi: np.ndarray
    quad_weights: np.ndarray
    length: float
    mode: str
    columns: np.ndarray | None = None
    locations: np.ndarray | None = None


def filled_block(ctx: StatsContext, y: np.ndarray) -> np.ndarray:
    """A chunk's centred curves on ``ctx.columns``, their gaps filled by linear interpolation (``"interpolate"``).

    Examples
    --------
    >>> ctx = StatsContext(None, None, np.zeros(2), np.ones((2, 1)), np.array([0.5, 0.5]), 1.0, "interpolate",
    ...                    np.array([0, 2]), np.array([0.0, 1.0]))
    >>> filled_block(ctx, np.array([[2.0, 7.0, np.nan], [1.0, np.nan, 3.0]]))
    array([[2., 2.],
           [1., 3.]])
    """
    assert ctx.columns is not None and ctx.locations is not None
    y = np.asarray(y, dtype=float)[:, ctx.columns]
    return interpolate_rows(y - ctx.mean if ctx.mean is not None else y, ctx.locations)


def chunk_nu(ctx: StatsContext, y: np.ndarray, start: int = 0) -> np.ndarray:
    """Inner products ``nu`` (``b x d``) of a chunk of (centred) responses, NaN = unobserved.

    Examples
    --------
    >>> ctx = StatsContext(None, None, None, np.ones((2, 1)), np.array([0.5, 0.5]), 1.0, "plugin")
    >>> chunk_nu(ctx, np.array([[2.0, np.nan], [1.0, 3.0]]))
    array([[2.],
           [2.]])
    """
    y = np.asarray(y, dtype=float)
    if np.isinf(y).any():
        raise ValueError("the response has infinite values; replace them by NaN to mark them unobserved")
    if ctx.mode == "interpolate":
        return (filled_block(ctx, y) * ctx.quad_weights) @ ctx.phi
    ok = ~np.isnan(y)
    yc = y - ctx.mean if ctx.mean is not None else y
    yc = np.where(ok, yc, 0.0)
    if ctx.mode == "quadrature":
        if not ok.all():
            raise ValueError("integration='quadrature' needs every curve observed on the whole grid; use 'plugin'")
        return (yc * ctx.quad_weights) @ ctx.phi
    m = ok.sum(axis=1)
    empty = np.nonzero(m == 0)[0]
    if empty.size:
        raise ValueError(f"the response has no observed point for samples at positions {(start + empty[:10]).tolist()}")
    return (yc @ ctx.phi) * (ctx.length / m)[:, None]


def _block_stats(ctx: StatsContext, start: int, limit: bool, *blocks: Any) -> np.ndarray:
    with _blas_limit(limit):
        Xv = ctx.layout.assemble(blocks[:-1], start)
        F = np.concatenate([ctx.features.transform(Xv, ctx.layout.weights), chunk_nu(ctx, blocks[-1], start)], axis=1)
        return F.T @ F


def stats_pass(plan: ChunkPlan, ctx: StatsContext, progress: bool | None = None) -> Any:
    """Sufficient statistics :class:`~fdakpl.estimators.approx.SufficientStats` summed over the chunks.

    Examples
    --------
    >>> from fdakpl.estimators.approx import Nystroem
    >>> from fdakpl.kernels import Gaussian
    >>> X, Y = np.zeros((4, 1)), np.ones((4, 2))
    >>> inp, resp = as_inputs(X), as_response(Y)
    >>> fm = Nystroem(1).fit(Gaussian(), inp.take, 4)
    >>> ctx = StatsContext(fm, inp.layout, None, np.ones((2, 1)), np.array([0.5, 0.5]), 1.0, "quadrature")
    >>> stats_pass(ChunkPlan.of(inp, resp, 3), ctx).T
    array([[4., 4.],
           [4., 4.]])
    """
    from .primal import SufficientStats

    T = reduce_pass(plan, _block_stats, ctx, progress, "sufficient statistics")
    return SufficientStats(np.asarray(T), int(plan.bounds[-1][1]), int(ctx.features.n_features_))


def reduce_pass(plan: ChunkPlan, fn: Any, ctx: Any, progress: bool | None = None, desc: str = "pass") -> Any:
    """Sum of the arrays ``fn(ctx, start, limit_blas, *blocks)`` over the chunks (NumPy loop or dask tree).

    Examples
    --------
    >>> inp, resp = as_inputs(np.zeros((5, 1))), as_response(np.ones((5, 2)))
    >>> reduce_pass(ChunkPlan.of(inp, resp, 2), lambda c, s, lim, x, y: np.nansum(y, axis=0), None)
    array([5., 5.])
    """
    if not plan.has_response:
        raise ValueError("a pass over the samples needs a plan with a response")
    blocks = plan.blocks()
    if not plan.dask:
        out = None
        for (s, _), b in zip(plan.bounds, _progress(blocks, desc, progress), strict=True):
            part = fn(ctx, s, False, *b)
            out = part if out is None else out + part
        return out
    from dask import delayed

    shared = _shared(ctx)
    parts = [delayed(fn)(shared, s, True, *b) for (s, _), b in zip(plan.bounds, blocks, strict=True)]
    return _compute(_tree_sum(parts), progress)


# --------------------------------------------------------------------------
# prediction
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PredictContext:
    """Fitted pieces for prediction: ``z(x)^T M`` (then ``@ phi(theta)^T + mean`` when ``phi`` is given)."""

    features: Any
    layout: InputLayout
    M: np.ndarray
    phi: np.ndarray | None
    mean: np.ndarray | None


def _block_predict(ctx: PredictContext, start: int, limit: bool, *blocks: Any) -> np.ndarray:
    with _blas_limit(limit):
        Xv = ctx.layout.assemble(blocks, start)
        H = ctx.features.transform(Xv, ctx.layout.weights) @ ctx.M
        if ctx.phi is None:
            return H
        out = H @ ctx.phi.T
        if ctx.mean is not None:
            out += ctx.mean
        return out


def predict_pass(plan: ChunkPlan, ctx: PredictContext, progress: bool | None = None) -> Any:
    """Predictions chunk by chunk: a NumPy array, or a lazy dask array for dask inputs.

    Examples
    --------
    >>> from fdakpl.estimators.approx import Nystroem
    >>> from fdakpl.kernels import Gaussian
    >>> inp = as_inputs(np.zeros((3, 1)))
    >>> fm = Nystroem(1).fit(Gaussian(), inp.take, 3)
    >>> predict_pass(ChunkPlan.of(inp, None, 2), PredictContext(fm, inp.layout, np.ones((1, 2)), None, None))
    array([[1., 1.],
           [1., 1.],
           [1., 1.]])
    """
    k = ctx.M.shape[1] if ctx.phi is None else ctx.phi.shape[0]
    blocks = plan.blocks()
    if not plan.dask:
        out = np.empty((plan.bounds[-1][1] if plan.bounds else 0, k))
        for (s, e), b in zip(plan.bounds, _progress(blocks, "predict", progress), strict=True):
            out[s:e] = _block_predict(ctx, s, False, *b)
        return out
    import dask.array as da
    from dask import delayed

    shared = _shared(ctx)
    parts = [da.from_delayed(delayed(_block_predict)(shared, s, True, *b), shape=(e - s, k), dtype=float)
             for (s, e), b in zip(plan.bounds, blocks, strict=True)]
    return da.concatenate(parts, axis=0)
