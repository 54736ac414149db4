"""Integration over the response domain: quadrature on each curve's observed points or of its interpolant, or the
paper's plug-in ``|Theta| / m_i``.

The KPL data term and the projections ``nu_i = <y_i, phi>`` are integrals over the response domain,
estimated by sums ``sum_p c_ip y_ip phi(theta_ip)``. ``"quadrature"`` takes ``c_ip`` from the trapezoidal
rule on the curve's own sorted observed locations over the domain (on a common grid with every curve
fully observed, the grid's quadrature weights); across a gap it bridges the product ``y phi`` linearly,
which misses atoms that oscillate within the gap. ``"interpolate"`` integrates each (centred) curve's
linear interpolant on the common grid (constant beyond the curve's first and last points) by the
grid's quadrature: the atoms are then integrated exactly on the grid and only the curve is bridged.
``"plugin"`` gives every observed point of curve ``i`` the same weight ``|Theta| / m_i`` (Definition 4.1
of the paper), which is right for points drawn uniformly over the domain but not for uneven grids or gaps.

How well a curve's weights integrate is measured on the atoms themselves: the atoms' Gram matrix
under the curve's weights, ``G_i = sum_p c_ip phi(theta_ip) phi(theta_ip)^T``, against the exact one
(:func:`gram_deviation`).
"""

from __future__ import annotations

import numpy as np

from ..utils.arrays import distinct_rows
from .functional import Observations, interpolate_rows, quadrature_weights

__all__ = [
    "GRAM_TOLERANCE",
    "MAX_INTERPOLATION_GRID",
    "MODES",
    "SPARSE_COUNT",
    "auto_integration",
    "curve_quadrature_weights",
    "describe_integration",
    "fill_gaps",
    "gram_deviation",
    "histogram_median",
    "integration_rule",
    "integration_weights",
    "observed_locations",
    "points_of",
    "projection_points",
]

#: the integration options
MODES = ("auto", "interpolate", "quadrature", "plugin")

#: integration="auto" takes the plug-in on sparse curves: on median fewer points than this (the
#: default dictionary's size) and under half the distinct locations (the front end's sparse route)
SPARSE_COUNT = 21

#: integration="auto" interpolates on at most this many distinct observed locations (else per-curve quadrature)
MAX_INTERPOLATION_GRID = 5000

#: a curve's weights integrate the atoms well when ``max |G_i - G| <= GRAM_TOLERANCE * max |diag G|``
GRAM_TOLERANCE = 0.1


def curve_quadrature_weights(obs: Observations, domain: tuple[float, float]) -> np.ndarray:
    """Trapezoidal weights of each curve on its own observed locations over the domain.

    Each observed point carries half the length of the intervals to its neighbours on the same curve;
    the first and last points of a curve also carry the stretch to the domain's ends, so the weights of
    every curve sum to the domain's length. On a common grid with every curve fully observed these are
    the grid's quadrature weights; across a gap the trapezoid bridges the gap linearly. A curve with a
    single point carries the whole domain on it.

    Parameters
    ----------
    obs : Observations
        Observed points, sorted by curve (they are by construction).
    domain : (float, float)
        The integration domain.

    Returns
    -------
    numpy.ndarray, shape (N,)

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 2.0, 3.0]]), np.array([0.0, 0.5, 0.75, 1.0]))
    >>> curve_quadrature_weights(obs, (0.0, 1.0))
    array([0.375, 0.5  , 0.125])
    """
    idx, loc = obs.index, obs.location
    n_pts = idx.size
    if n_pts == 0:
        return np.zeros(0)
    order = np.lexsort((loc, idx))
    if not np.array_equal(order, np.arange(n_pts)):  # keep the caller's point order
        w = np.empty(n_pts)
        w[order] = curve_quadrature_weights(Observations(idx[order], loc[order], obs.value[order], obs.n_samples),
                                            domain)
        return w
    lo, hi = float(domain[0]), float(domain[1])
    first = np.ones(n_pts, dtype=bool)
    first[1:] = idx[1:] != idx[:-1]
    last = np.ones(n_pts, dtype=bool)
    last[:-1] = idx[1:] != idx[:-1]
    mid = 0.5 * (loc[1:] + loc[:-1])
    left = np.empty(n_pts)
    left[0] = lo
    left[1:] = mid
    left[first] = lo
    right = np.empty(n_pts)
    right[-1] = hi
    right[:-1] = mid
    right[last] = hi
    return right - left


def observed_locations(obs: Observations) -> np.ndarray:
    """The sorted distinct locations where at least one curve is observed (the interpolants' grid).

    Examples
    --------
    >>> Y = np.array([[1.0, np.nan, 2.0, np.nan], [3.0, np.nan, np.nan, 4.0]])
    >>> observed_locations(Observations.from_dense(Y, np.array([0.0, 0.5, 1.0, 2.0])))
    array([0., 1., 2.])
    """
    if obs.grid is not None and obs.grid_index is not None:
        return obs.grid[np.bincount(obs.grid_index, minlength=obs.grid.size) > 0]
    return np.unique(obs.location)


def auto_integration(obs: Observations) -> str:
    """The integration ``"auto"`` uses: quadrature, of the curves' interpolants where they have gaps, except the
    plug-in on sparse curves.

    ``"quadrature"`` when the curves are fully observed on a common grid, or spread over more than
    :data:`MAX_INTERPOLATION_GRID` distinct locations; ``"interpolate"`` when they are dense with gaps
    (on the distinct observed locations, in dense or long form alike); the plug-in when they are sparse
    (on median fewer than :data:`SPARSE_COUNT` points and under half the distinct locations): the front
    end fits those by the exact partial ridge, whose default was chosen with the plug-in's equal
    weights. Chosen by held-out error in ``benchmarks/partial_observation.py``.

    Examples
    --------
    >>> grid = np.linspace(0, 1, 50)
    >>> Y = np.ones((3, 50)); Y[0, 10:20] = np.nan
    >>> auto_integration(Observations.from_dense(Y, grid))
    'interpolate'
    >>> Y[:, :] = np.nan; Y[0, :5] = Y[1, 5:10] = Y[2, 10:15] = 1.0  # 5 points each, 15 locations
    >>> auto_integration(Observations.from_dense(Y, grid))
    'plugin'
    """
    if obs.fully_observed:
        return "quadrature"
    return integration_rule(np.bincount(obs.counts), int(observed_locations(obs).size))


def integration_rule(count_histogram: np.ndarray, q: int) -> str:
    """:func:`auto_integration` for curves that are not all fully observed, from a histogram of the numbers of
    points per curve (``count_histogram[k]`` curves have ``k`` points) and the number ``q`` of distinct observed
    locations: what a streaming pass can sum chunk by chunk.

    Examples
    --------
    >>> integration_rule(np.bincount([50, 45, 48]), 50), integration_rule(np.bincount([5, 5, 5]), 15)
    ('interpolate', 'plugin')
    """
    hist = np.asarray(count_histogram, dtype=np.int64)
    seen = np.flatnonzero(hist)
    if seen.size and seen[0] < SPARSE_COUNT:
        mid = histogram_median(hist)
        if mid < SPARSE_COUNT and mid < 0.5 * q:
            return "plugin"
    return "interpolate" if q <= MAX_INTERPOLATION_GRID else "quadrature"


def histogram_median(hist: np.ndarray) -> float:
    """The median of the values ``k`` counted ``hist[k]`` times (the mean of the two middle ones for an even
    total, as :func:`statistics.median`), without expanding them: a streamed fit may count millions of curves.

    Examples
    --------
    >>> histogram_median(np.bincount([3, 1, 4, 1])), histogram_median(np.bincount([5, 2, 9]))
    (2.0, 5.0)
    """
    cum = np.cumsum(hist)
    total = int(cum[-1])
    lo, hi = np.searchsorted(cum, [(total - 1) // 2 + 1, total // 2 + 1])
    return (int(lo) + int(hi)) / 2


def describe_integration(requested: str, used: str, fully_observed: bool) -> str:
    """The summary's line on the integration: which ran and why.

    Examples
    --------
    >>> describe_integration("auto", "interpolate", False)
    "interpolate: trapezoid on the grid of each curve's linear interpolant (auto: dense curves with gaps)"
    """
    if used == "quadrature":
        what = ("quadrature: trapezoid on the common grid" if fully_observed
                else "quadrature: trapezoid on each curve's observed points")
    elif used == "interpolate":
        what = "interpolate: trapezoid on the grid of each curve's linear interpolant"
    else:
        what = "plugin: |Theta| / m_i per observed point (Def. 4.1)"
    if requested != "auto":
        return f"{what} (requested)"
    why = ("fully observed curves" if fully_observed else "sparse curves" if used == "plugin" else
           "dense curves with gaps" if used == "interpolate" else "curves spread over many distinct locations")
    return f"{what} (auto: {why})"


def integration_weights(obs: Observations, domain: tuple[float, float], mode: str = "auto") -> tuple[np.ndarray, str]:
    """Per-point weights ``c_ip`` that turn sums over observed points into L2 inner products.

    ``"quadrature"``: trapezoidal weights of each curve on its own observed locations over the domain
    (:func:`curve_quadrature_weights`; the common grid's weights when every curve is fully observed);
    ``"interpolate"``: the same weights for the observed points (the fit integrates the curves'
    interpolants on the distinct observed locations, :func:`projection_points`; the points' weights serve
    the point-wise solvers);
    ``"plugin"``: ``|Theta| / m_i``, the paper's plug-in estimator (Definition 4.1);
    ``"auto"``: :func:`auto_integration`.

    Returns
    -------
    weights : numpy.ndarray, shape (N,)
    mode : str
        The mode actually used.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 2.0]]), np.array([0.0, 0.5, 1.0]))
    >>> integration_weights(obs, (0.0, 1.0), "quadrature")
    (array([0.5, 0.5]), 'quadrature')
    >>> integration_weights(obs, (0.0, 1.0), "plugin")
    (array([0.5, 0.5]), 'plugin')
    """
    if mode not in MODES:
        raise ValueError(f"integration must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if mode == "auto":
        mode = auto_integration(obs)
    if mode in {"quadrature", "interpolate"}:
        if obs.fully_observed:
            assert obs.grid is not None and obs.grid_index is not None
            return quadrature_weights(obs.grid, domain)[obs.grid_index], mode
        return curve_quadrature_weights(obs, domain), mode
    length = domain[1] - domain[0]
    return (length / obs.counts)[obs.index], mode


def fill_gaps(obs: Observations) -> Observations:
    """Every curve on the distinct observed locations (:func:`observed_locations`): its linear interpolant between
    its observed points, constant beyond its first and last points (a curve without points is 0 everywhere: on
    centred values, the centre). Dense and long forms of the same data give the same result; locations where
    no curve is observed are left out.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 3.0, np.nan]]), np.array([0.0, 0.5, 1.0, 2.0]))
    >>> fill_gaps(obs).to_dense(), fill_gaps(obs).grid
    (array([[1., 3.]]), array([0., 1.]))
    """
    grid = observed_locations(obs)
    n = obs.n_samples
    if _one_point_per_cell(obs):  # dense curves: all at once
        assert obs.grid is not None
        return Observations.from_dense(interpolate_rows(obs.to_dense()[:, np.isin(obs.grid, grid)], grid), grid)
    out = np.zeros((n, grid.size))
    bounds = np.concatenate([[0], np.cumsum(obs.counts)])
    order = np.lexsort((obs.location, obs.index))
    loc, val = obs.location[order], obs.value[order]
    for i in range(n):
        a, b = bounds[i], bounds[i + 1]
        if b > a:
            out[i] = np.interp(grid, loc[a:b], val[a:b])
    return Observations.from_dense(out, grid)


def _one_point_per_cell(obs: Observations) -> bool:
    """Whether the observations sit on an increasing grid with at most one point per curve and location (then
    :meth:`Observations.to_dense` holds them all)."""
    if obs.grid is None or obs.grid_index is None or obs.grid.size < 2 or np.any(np.diff(obs.grid) <= 0):
        return False
    m = obs.grid.size
    cells = np.asarray(obs.index) * m + np.asarray(obs.grid_index)
    return not (cells.size and np.bincount(cells, minlength=obs.n_samples * m).max() > 1)


def projection_points(obs: Observations, domain: tuple[float, float], mode: str = "auto"
                      ) -> tuple[Observations, np.ndarray, str]:
    """The points and weights whose sums estimate the integrals of the fit: ``(points, weights, mode)``.

    With ``"interpolate"`` (partially observed curves) the points are every curve on the distinct observed
    locations (:func:`fill_gaps`; ``points.grid``) with their quadrature weights over the domain; otherwise
    the observed points with :func:`integration_weights`.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 3.0]]), np.array([0.0, 0.5, 1.0]))
    >>> pts, w, mode = projection_points(obs, (0.0, 1.0))
    >>> pts.value, w, mode
    (array([1., 3.]), array([0.5, 0.5]), 'interpolate')
    """
    weights, mode = integration_weights(obs, domain, mode)
    return (*points_of(obs, weights, mode, domain), mode)


def points_of(obs: Observations, weights: np.ndarray, mode: str, domain: tuple[float, float]
              ) -> tuple[Observations, np.ndarray]:
    """:func:`projection_points` for observations whose :func:`integration_weights` ``(weights, mode)`` are
    known: ``(points, weights)``, the observations and their own weights unless ``mode`` is ``"interpolate"``
    and some curve has gaps.

    Examples
    --------
    >>> obs = Observations.from_dense(np.array([[1.0, np.nan, 3.0]]), np.array([0.0, 0.5, 1.0]))
    >>> w, mode = integration_weights(obs, (0.0, 1.0), "interpolate")
    >>> pts, pw = points_of(obs, w, mode, (0.0, 1.0))
    >>> pts.grid, pw
    (array([0., 1.]), array([0.5, 0.5]))
    """
    if mode != "interpolate" or obs.fully_observed:
        return obs, weights
    filled = fill_gaps(obs)
    assert filled.grid is not None and filled.grid_index is not None
    return filled, quadrature_weights(filled.grid, domain)[filled.grid_index]


def gram_deviation(obs: Observations, weights: np.ndarray, phi: np.ndarray, gram: np.ndarray,
                   chunk: int = 1 << 20) -> np.ndarray:
    """Per curve, how far the atoms' Gram matrix under its weights is from the exact one.

    ``max_kl |G_i - G|_kl / max_k G_kk`` with ``G_i = sum_p c_ip phi(theta_ip) phi(theta_ip)^T``: 0 when
    the weights integrate products of atoms exactly, about 1 when they miss the atoms' geometry (a curve
    with fewer points than atoms cannot reach 0).

    Parameters
    ----------
    obs : Observations
    weights : numpy.ndarray, shape (N,)
    phi : numpy.ndarray
        The atoms on ``obs.grid`` ``(m, d)`` when the observations carry a grid, else at the observed
        points ``(N, d)`` (as :class:`fdakpl.ridge.problem.KPLProblem` holds them).
    gram : numpy.ndarray, shape (d, d)
        The dictionary's exact Gram matrix.
    chunk : int
        Entries of the work arrays per block (memory): points x atoms^2 off a grid, curves x atoms x
        max(atoms, grid points) on one.

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    >>> grid = np.linspace(0, 1, 201)
    >>> phi = np.stack([np.ones_like(grid), np.sqrt(2) * np.cos(2 * np.pi * grid)], axis=1)
    >>> Y = np.ones((2, 201)); Y[1, 60:100] = np.nan
    >>> obs = Observations.from_dense(Y, grid)
    >>> w, _ = integration_weights(obs, (0.0, 1.0), "plugin")
    >>> np.round(gram_deviation(obs, w, phi, np.eye(2)), 3)
    array([0.007, 0.272])
    """
    n, d = obs.n_samples, gram.shape[0]
    scale = max(float(np.max(np.diag(gram))), 1e-300)
    if obs.fully_observed and np.allclose(weights.reshape(n, -1), weights[: obs.grid.size]):  # type: ignore[union-attr]
        Gi = (phi * weights[: phi.shape[0], None]).T @ phi
        return np.full(n, float(np.abs(Gi - gram).max()) / scale)
    out = np.ones(n)  # a curve without points: G_i = 0
    counts = obs.counts
    if obs.grid is not None and obs.grid_index is not None and phi.shape[0] == obs.grid.size:
        # on a grid: G_i = Phi^T diag(W_i) Phi for blocks of curves in one batched product, once per distinct row of
        # weights (curves seen at the same points share G_i: most curves, in most designs)
        m = obs.grid.size
        W = np.nan_to_num(obs.with_values(weights).to_dense())  # 0 where a curve has no point
        W, curve_row = distinct_rows(W)
        rows = max(1, chunk // max(d * max(d, m), 1))
        dev = np.empty(W.shape[0])
        for i in range(0, W.shape[0], rows):
            Gs = np.matmul(phi.T[None, :, :] * W[i:i + rows, None, :], phi)  # (k, d, d), Phi^T diag(W_i) Phi
            Gs -= gram
            dev[i:i + rows] = np.abs(Gs, out=Gs).max(axis=(1, 2)) / scale
        out = dev[curve_row]
        out[counts == 0] = 1.0
        return out
    at = phi[obs.grid_index] if obs.grid is not None and obs.grid_index is not None else phi
    bounds = np.concatenate([[0], np.cumsum(counts)])
    step = max(1, chunk // max(d * d, 1))
    i = 0
    while i < n:  # whole curves per block, about `step` points each
        j = int(np.searchsorted(bounds, bounds[i] + step, side="right")) - 1
        j = min(max(j, i + 1), n)
        a, b = int(bounds[i]), int(bounds[j])
        seen = np.flatnonzero(counts[i:j] > 0)
        if b > a:
            P = at[a:b]
            outer = (P * weights[a:b, None])[:, :, None] * P[:, None, :]
            Gs = np.add.reduceat(outer, (bounds[i:j][seen] - a).astype(np.intp), axis=0)
            out[i + seen] = np.abs(Gs - gram).max(axis=(1, 2)) / scale
        i = j
    return out
