"""Exact leave-one-curve-out and GCV along a lambda path for the exact partial ridge (sparse responses).

The exact partial ridge (:func:`fdakpl.solvers.partial.exact_partial_ridge`) minimises::

    (1/n) sum_i sum_p c_ip (y_ip - phi(theta_ip)^T h(x_i))^2 + lam ||h||^2

over the vector-valued RKHS of ``k(x, x') B``. Its fitted values at the ``N``
observed points are those of a scalar kernel ridge regression on the points,
with the point kernel ``M[(i,p), (j,q)] = k(x_i, x_j) phi(theta_ip)^T B
phi(theta_jq)`` and weights ``w_ip = c_ip / n``: ``f = S y`` with ``S = W^{-1/2}
Q diag(e / (e + lam)) Q^T W^{1/2}`` for ``W^{1/2} M W^{1/2} = Q diag(e) Q^T``.
Leaving curve ``i`` out (its loss terms dropped, ``n``, ``lam``, the weights
and the centring held fixed, as in :meth:`fdakpl.ridge.path.RidgePath.criteria`) gives
the residuals ``r_i^(-i) = (I - S_ii)^{-1} r_i`` with ``S_ii`` the ``m_i x
m_i`` block of curve ``i``: the usual identity for penalised weighted least
squares. One ``N x N`` eigendecomposition serves the whole path, so it is
meant for sparse responses (``N`` up to a few thousand points).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..data.functional import Observations
from ..data.validation import check_grid
from ..ridge.path import PathCriteria

__all__ = ["MAX_POINTS", "exact_partial_path"]

#: largest number of observed points for which the exact path is computed (one N x N eigendecomposition)
MAX_POINTS = 3000


def exact_partial_path(K: np.ndarray, B: np.ndarray, phi_points: np.ndarray, obs: Observations,
                       weights: np.ndarray, lams: Iterable[float]) -> PathCriteria:
    """Training error, edf, GCV and exact leave-one-curve-out error of the exact partial ridge along a path.

    Parameters
    ----------
    K : numpy.ndarray, shape (n, n)
        Input kernel matrix.
    B : numpy.ndarray, shape (d, d)
        Output matrix.
    phi_points : numpy.ndarray, shape (N, d)
        Atoms at the observed points.
    obs : Observations
        The (centred) training responses, sorted by curve.
    weights : numpy.ndarray, shape (N,)
        Integration weights ``c_ip``.
    lams : iterable of float

    Returns
    -------
    PathCriteria
        Same fields and weighting as :func:`fdakpl.ridge.path.RidgePath.criteria`.

    Examples
    --------
    >>> from fdakpl.solvers.points import point_design
    >>> from fdakpl.solvers.partial import exact_partial_ridge
    >>> obs = Observations(np.array([0, 0, 1, 2]), np.array([0.2, 0.8, 0.5, 0.1]), np.array([1.0, 2.0, 0.5, 1.5]), 3)
    >>> phi = np.c_[np.ones(4), obs.location]
    >>> K, B, w = np.exp(-np.subtract.outer([0.0, 1.0, 2.0], [0.0, 1.0, 2.0]) ** 2), np.eye(2), np.ones(4)
    >>> crit = exact_partial_path(K, B, phi, obs, w, [0.1])
    >>> fit = exact_partial_ridge(K, B, point_design(obs, phi, w), 0.1)
    >>> r = obs.value - np.einsum("pd,pd->p", phi, fit.fitted_coef[obs.index])
    >>> bool(np.isclose(crit.train_mse[0], np.sum(w * r**2) / 3))
    True
    """
    lams = check_grid(list(lams), "lams", sort=False)
    idx = np.asarray(obs.index, dtype=np.intp)
    if np.any(np.diff(idx) < 0):
        raise ValueError("obs.index must be sorted by curve")
    n, N = obs.n_samples, idx.size
    weights = np.asarray(weights, dtype=float)
    if np.any(weights <= 0):
        raise ValueError("the integration weights must be > 0")
    y = np.asarray(obs.value, dtype=float)
    w = weights / n
    sw = np.sqrt(w)
    M = np.asarray(K, dtype=float)[np.ix_(idx, idx)] * (phi_points @ B @ phi_points.T)
    e, Q = np.linalg.eigh(sw[:, None] * M * sw[None, :])
    e = np.clip(e, 0.0, None)
    z = Q.T @ (sw * y)
    counts = np.bincount(idx, minlength=n)
    starts = np.concatenate([[0], np.cumsum(counts)])
    # curves with the same number of points are handled together: rows (curves, m) of point positions
    groups = [starts[:-1][counts == m][:, None] + np.arange(m)[None, :] for m in np.unique(counts[counts > 0])]
    out = {k: np.empty(lams.size) for k in ("train_mse", "edf", "loo")}
    for j, lam in enumerate(lams):
        g = e / (e + lam)
        fitted = (Q @ (g * z)) / sw
        r = y - fitted
        r_loo = np.empty(N)
        Qg = Q * g
        for rows in groups:
            m = rows.shape[1]
            S_ii = np.matmul(Qg[rows], Q[rows].transpose(0, 2, 1)) * (sw[rows][:, None, :] / sw[rows][:, :, None])
            r_loo[rows] = np.linalg.solve(np.eye(m)[None] - S_ii, r[rows][:, :, None])[:, :, 0]
        out["train_mse"][j] = float(np.sum(weights * r**2)) / n
        out["loo"][j] = float(np.sum(weights * r_loo**2)) / n
        out["edf"][j] = float(g.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        gcv = out["train_mse"] / (1.0 - out["edf"] / N) ** 2
    gcv = np.where(out["edf"] < N, gcv, np.inf)
    return PathCriteria(lams, out["train_mse"], out["edf"], gcv, out["loo"], None, N)
