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
squares. Leaving a group of curves out (several curves of one subject) is the
same identity on the block of all the group's points. One ``N x N`` eigendecomposition serves the whole path, so it is
meant for sparse responses (``N`` up to a few thousand points).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..data.functional import Observations
from ..data.validation import check_grid
from ..kernels import Kernel
from ..ridge.path import PathCriteria
from ..ridge.problem import KPLProblem
from ..ridge.quadratics import group_indices

__all__ = ["MAX_POINTS", "exact_partial_path", "partial_scorer"]

#: largest number of observed points for which the exact path is computed (one N x N eigendecomposition)
MAX_POINTS = 3000


def exact_partial_path(K: np.ndarray, B: np.ndarray, phi_points: np.ndarray, obs: Observations,
                       weights: np.ndarray, lams: Iterable[float], lam_unit: float = 1.0,
                       groups: Any = None) -> PathCriteria:
    """Training error, edf, GCV and exact leave-one-curve-out (and leave-one-group-out) error of the exact
    partial ridge along a path.

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
    lam_unit : float
        The unit of the lambdas (:attr:`fdakpl.ridge.problem.KPLProblem.lam_unit`): the ridge runs at
        ``lam * lam_unit``; the criteria are returned along ``lams`` as given.
    groups : array-like, optional
        One label per curve: ``group_loo`` then leaves out the curves of each group together.

    Returns
    -------
    PathCriteria
        Same fields and weighting as :func:`fdakpl.ridge.path.RidgePath.criteria` (``group_loo`` with
        ``groups``).

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
    curve_blocks = _blocks([np.flatnonzero(idx == i) for i in range(n)])
    members = None if groups is None else group_indices(groups)
    if groups is not None and members is None:  # every group is one curve: leave-one-group-out is LOO
        members = [np.array([i]) for i in range(n)]
    group_blocks = None if members is None else _blocks([np.flatnonzero(np.isin(idx, g)) for g in members])
    out = {k: np.empty(lams.size) for k in ("train_mse", "edf", "loo", "group_loo")}
    for j, lam in enumerate(lams * lam_unit):
        g = e / (e + lam)
        fitted = (Q @ (g * z)) / sw
        r = y - fitted
        Qg = Q * g
        out["train_mse"][j] = float(np.sum(weights * r**2)) / n
        out["loo"][j] = float(np.sum(weights * _left_out(r, Q, Qg, sw, curve_blocks) ** 2)) / n
        if group_blocks is not None:
            out["group_loo"][j] = float(np.sum(weights * _left_out(r, Q, Qg, sw, group_blocks) ** 2)) / n
        out["edf"][j] = float(g.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        gcv = out["train_mse"] / (1.0 - out["edf"] / N) ** 2
    gcv = np.where(out["edf"] < N, gcv, np.inf)
    return PathCriteria(lams, out["train_mse"], out["edf"], gcv, out["loo"],
                        None if group_blocks is None else out["group_loo"], N)


def _blocks(points: list[np.ndarray]) -> list[np.ndarray]:
    """Blocks of points left out together, stacked by size: arrays ``(blocks, size)`` of point positions (blocks
    of one size are solved together)."""
    sizes = np.array([p.size for p in points])
    return [np.stack([p for p in points if p.size == m]) for m in np.unique(sizes[sizes > 0])]


def _left_out(r: np.ndarray, Q: np.ndarray, Qg: np.ndarray, sw: np.ndarray, blocks: list[np.ndarray]) -> np.ndarray:
    """Residuals of each block's points when the block is left out: ``(I - S_bb)^{-1} r_b``."""
    out = np.empty(r.size)
    for rows in blocks:
        m = rows.shape[1]
        S_bb = np.matmul(Qg[rows], Q[rows].transpose(0, 2, 1)) * (sw[rows][:, None, :] / sw[rows][:, :, None])
        out[rows] = np.linalg.solve(np.eye(m)[None] - S_bb, r[rows][:, :, None])[:, :, 0]
    return out


def partial_scorer(problem: KPLProblem, lams: np.ndarray, key: str, groups: Any = None
                   ) -> Callable[[Kernel, np.ndarray, list[tuple[np.ndarray, bool]]], Iterator[tuple[np.ndarray, Any]]]:
    """A scorer for :func:`fdakpl.tuning.search.search`: each candidate kernel and ``B`` by the exact partial ridge's
    criterion ``key`` (``"gcv"``, ``"loo"`` or ``"group_loo"`` with ``groups``) along ``lams``, in the responses' units;
    the fitted value of a candidate is its :class:`~fdakpl.ridge.path.PathCriteria`.

    Examples
    --------
    >>> from fdakpl.kernels import Gaussian
    >>> from fdakpl.ridge.problem import prepare_problem
    >>> rng = np.random.default_rng(0)
    >>> Y = rng.normal(size=(6, 5)); Y[rng.uniform(size=Y.shape) < 0.5] = np.nan; Y[:, 0] = 1.0
    >>> p = prepare_problem(rng.normal(size=(6, 1)), Y, np.linspace(0, 1, 5), dictionary="bspline")
    >>> score = partial_scorer(p, np.array([1e-3, 1.0]), "loo")
    >>> k = Gaussian(1.0)
    >>> [(s.shape, c.loo is s) for s, c in score(k, p.kernel_matrix(k), [p.output_matrix(None)])]
    [((2,), True)]
    """
    obs = problem.centred
    phi = problem.dictionary.evaluate(obs.location)

    def score(kernel: Kernel, K: np.ndarray, outputs: list[tuple[np.ndarray, bool]]
              ) -> Iterator[tuple[np.ndarray, Any]]:
        for B, _ in outputs:  # one N x N eigendecomposition per candidate
            crit = exact_partial_path(K, B, phi, obs, problem.weights, lams, problem.lam_unit, groups)
            yield getattr(crit, key), crit

    return score
